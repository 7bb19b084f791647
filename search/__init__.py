"""The searches, behind one interface (:class:`search.base.Searcher`), chosen by name."""

from __future__ import annotations

from messiah.evaluator import Evaluator
from messiah.search.alphabeta import AlphaBeta
from messiah.search.base import Limits, Searcher, SearchResult
from messiah.search.mcts import Puct, Ucb1

SEARCHERS: dict[str, type[Searcher]] = {cls.name: cls for cls in (AlphaBeta, Ucb1, Puct)}
# The strongest search by matches (README, "Which search"): PUCT beat alpha-beta and UCB1 19-1 each at
# byoyomi 300 and was confirmed against alpha-beta at byoyomi 1000 and at a Fischer clock.
DEFAULT_SEARCH = "puct"

__all__ = ["DEFAULT_SEARCH", "SEARCHERS", "Limits", "SearchResult", "Searcher", "make_searcher"]


def make_searcher(name: str, evaluator: Evaluator, **options) -> Searcher:
    """The searcher called ``name`` (alphabeta, ucb1, puct). Raises ValueError for an unknown name."""
    if name not in SEARCHERS:
        raise ValueError(f"unknown search {name!r}: choose one of {', '.join(SEARCHERS)}")
    return SEARCHERS[name](evaluator, **options)
