"""The searches, behind one interface (:class:`search.base.Searcher`), and their registry.

A search is one module with a :class:`~search.base.Searcher` subclass that sets ``name`` and declares the USI
options it takes (``options``), plus one entry in :data:`SEARCHERS`. The engine's option table (the
``Search`` combo and every search's own options) and every ``--search`` choice are made from this registry.
"""

from __future__ import annotations

from collections.abc import Mapping

from messiah.errors import UserError
from messiah.evaluator import Evaluator
from messiah.search.alphabeta import AlphaBeta
from messiah.search.base import Limits, Searcher, SearchOption, SearchResult
from messiah.search.mcts import Puct, Ucb1
from messiah.search.timeman import Clock, TimeBudget

# The registered searches, in the order the engine offers them.
SEARCHERS: dict[str, type[Searcher]] = {cls.name: cls for cls in (Puct, AlphaBeta, Ucb1)}
SEARCH_NAMES = tuple(SEARCHERS)
# The strongest search by matches: PUCT beat alpha-beta and UCB1 at every time control tried (docs/search.md,
# "Which search: decided by matches").
DEFAULT_SEARCH = "puct"

__all__ = ["DEFAULT_SEARCH", "SEARCHERS", "SEARCH_NAMES", "Clock", "Limits", "SearchOption",
           "SearchResult", "Searcher", "TimeBudget", "make_searcher", "search_options"]


def search_options(searchers: Mapping[str, type[Searcher]] = SEARCHERS) -> dict[str, SearchOption]:
    """The USI options of ``searchers`` by name, each once. Searches may share an option (the bandit searches
    share BatchSize) only with one declaration; ValueError when two differ."""
    found: dict[str, SearchOption] = {}
    for cls in searchers.values():
        for option in cls.options:
            if found.setdefault(option.name, option) != option:
                raise ValueError(f"the searches declare USI option {option.name} twice, differently: "
                                 f"{found[option.name]} and {option}")
    return found


def make_searcher(name: str, evaluator: Evaluator, **arguments) -> Searcher:
    """The searcher called ``name`` (one of SEARCH_NAMES) with constructor ``arguments``. Raises ValueError for
    an unknown name."""
    if name not in SEARCHERS:
        raise UserError(f"unknown search {name!r}: choose one of {', '.join(SEARCHERS)}")
    return SEARCHERS[name](evaluator, **arguments)
