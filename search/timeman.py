"""The running move's clock, which every search polls: when it started, its time budget, the stability factors
and the stop flag.

What a search was asked for (nodes, depth, movetime) is :class:`search.base.Limits`; how a ``go`` clock becomes
a budget is the engine's policy (:mod:`messiah.engine.thinktime`). Only the clock changes while a search runs:
``stop`` from the protocol thread, and ``ponderhit``, which swaps in a new budget as one immutable object, so
the search thread sees either the old budget or the new one, never a mix of the two (Stockfish keeps the
request, LimitsType, apart from the clock, TimeManagement, in the same way).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

# Stability factors applied to the optimum time (the USI options TimeObvious and TimeUnstable set them): tuned
# with TimeHorizon by `messiah tune` at a Fischer clock, where they beat the reasoned 0.4 and 2.0
# (docs/search.md, "Time management, tuned at a Fischer clock").
OBVIOUS = 0.54  # the best move has not changed and is far ahead of the rest
UNSTABLE = 3.8  # the best move changed in the last iteration(s)


@dataclass(frozen=True)
class TimeBudget:
    """Seconds a move may take, from the clock's start. ``minimum``: always searched, because unused byoyomi is
    lost; ``optimum``: a normal move's time, which the search shortens when its best move is obvious and
    stretches when it keeps changing; ``maximum``: the hard limit. None: no limit of that kind."""

    minimum: float = 0.0
    optimum: float | None = None
    maximum: float | None = None

    def after(self, seconds: float) -> TimeBudget:
        """This budget starting ``seconds`` after the clock's start (a ponder search that became a move)."""
        return TimeBudget(seconds + self.minimum, None if self.optimum is None else seconds + self.optimum,
                          None if self.maximum is None else seconds + self.maximum)


class Clock:
    """The clock of one search. ``budget`` is replaced whole, never changed in place: a reader takes it once
    and uses that object throughout. ``stop`` (None: none) ends the search when set; a clock with neither a
    hard limit nor a stop flag cannot end a search, which then stops at its own default limit."""

    def __init__(self, budget: TimeBudget | None = None, obvious: float = OBVIOUS, unstable: float = UNSTABLE,
                 stop: threading.Event | None = None, ponder: TimeBudget | None = None):
        self.start = time.perf_counter()
        self.budget = budget or TimeBudget()
        self.obvious = obvious  # stability factor of an obvious best move
        self.unstable = unstable  # stability factor of a best move that keeps changing
        self.stop = stop
        self.ponder = ponder  # a ponder search's: the budget it gets at ponderhit (counted from then)

    def sizing(self) -> TimeBudget:
        """The budget that sizes work a stop cannot interrupt (the root's df-pn): the move's own, or, while a
        ponder search waits for ponderhit or stop, the one it will get at ponderhit: either may come at once."""
        budget = self.budget
        if budget.maximum is None and budget.optimum is None and self.ponder is not None:
            return self.ponder
        return budget

    @classmethod
    def hard(cls, seconds: float | None) -> Clock:
        """A clock that only stops at ``seconds`` (None: never)."""
        return cls(TimeBudget(0.0, None, seconds))

    def bounded(self) -> bool:
        """Whether this clock can end a search: a hard limit, or a stop flag someone may set."""
        return self.budget.maximum is not None or self.stop is not None

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def out_of_time(self) -> bool:
        if self.stop is not None and self.stop.is_set():
            return True
        maximum = self.budget.maximum
        return maximum is not None and self.elapsed() >= maximum

    def past_optimum(self, factor: float) -> bool:
        """Whether a search whose best move has stability ``factor`` (1 normal, <1 obvious, >1 unstable) has
        used its share of the time."""
        budget = self.budget  # once: minimum and optimum of the same budget
        return budget.optimum is not None and self.elapsed() >= max(budget.minimum, budget.optimum * factor)

    def ponderhit(self, budget: TimeBudget) -> None:
        """The pondered move was played: from now on the move has ``budget`` (counted from now). Safe while a
        search reads the clock: one assignment swaps the whole budget."""
        self.budget = budget.after(self.elapsed())
