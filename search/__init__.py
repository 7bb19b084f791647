"""The searches, behind one interface (:class:`search.base.Searcher`), chosen by name."""

from __future__ import annotations

from messiah.evaluator import Evaluator
from search.alphabeta import AlphaBeta
from search.base import Limits, Searcher, SearchResult
from search.mcts import Puct, Ucb1

SEARCHERS: dict[str, type[Searcher]] = {cls.name: cls for cls in (AlphaBeta, Ucb1, Puct)}

__all__ = ["SEARCHERS", "Limits", "SearchResult", "Searcher", "make_searcher"]


def make_searcher(name: str, evaluator: Evaluator, **options) -> Searcher:
    """The searcher called ``name`` (alphabeta, ucb1, puct). Raises ValueError for an unknown name."""
    if name not in SEARCHERS:
        raise ValueError(f"unknown search {name!r}: choose one of {', '.join(SEARCHERS)}")
    return SEARCHERS[name](evaluator, **options)
