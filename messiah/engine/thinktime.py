"""Time management (sudden death, Fischer, main time before byoyomi), after YaneuraOu's and Stockfish's: the
policy that turns a ``go`` clock into a move's :class:`~search.timeman.TimeBudget`. The clock the searches
poll while they run is :class:`search.timeman.Clock`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import cshogi

from messiah.search.timeman import TimeBudget

__all__ = ["GAME_PLY_HORIZON", "MAX_STRETCH", "MIN_MOVES_TO_GO", "NETWORK_DELAY2", "Delays", "TimeBudget",
           "think_time"]

# ms kept back from the hard deadline of a move for the engine's own overshoot and the pipes (NetworkDelay2):
# what `messiah bench --latency` measured stays well under it (docs/search.md, "How the engine spends its
# clock"). YaneuraOu's 1120 is for a server that counts whole seconds over a network.
NETWORK_DELAY2 = 50
# The main time left is shared over the moves the game is still expected to last: half the plies left to this
# ply. Tuned with TimeObvious and TimeUnstable by `messiah tune` at a Fischer clock, where it beat a reasoned
# horizon that lay well past the length of a usual game and left the main time unspent (docs/search.md, "Time
# management, tuned at a Fischer clock").
GAME_PLY_HORIZON = 132
MIN_MOVES_TO_GO = 20  # past the horizon a move takes about 1/20 of what is left, so the clock never runs out
MAX_STRETCH = 4  # a hard position may take this many normal shares of the main time


@dataclass(frozen=True)
class Delays:
    """What the time a move has loses to the way to the clock, in ms, with YaneuraOu's option names:
    ``network`` (NetworkDelay) comes off the time the move aims at and may stretch to, ``deadline``
    (NetworkDelay2) off the hard deadline (the engine's overshoot, the pipes, a server's lag), and every move
    thinks at least ``minimum`` (MinimumThinkingTime) where the clock allows."""

    network: int = 0
    deadline: int = NETWORK_DELAY2
    minimum: int = 0

    @classmethod
    def of(cls, settings: Mapping[str, object]) -> Delays:
        return cls(settings["NetworkDelay"], settings["NetworkDelay2"], settings["MinimumThinkingTime"])


def think_time(go: dict[str, int], turn: int, ply: int, delays: Delays = Delays(), horizon: int = GAME_PLY_HORIZON,
               min_moves_to_go: int = MIN_MOVES_TO_GO) -> TimeBudget:
    """The time budget of a ``go`` command's clock for the side ``turn`` at game ply ``ply``: the main time
    left is shared over the moves still expected, half the plies to ``horizon`` but at least ``min_moves_to_go``.

    The deadline's delay comes off the hard deadline only (never more than half of the time this move has),
    not off every share of the clock; the network delay comes off the aimed and the stretched time."""
    if "movetime" in go:
        exact = max(0.0, go["movetime"] - min(delays.deadline, go["movetime"] / 2)) / 1000
        return TimeBudget(exact, None, exact)
    left = go.get("btime" if turn == cshogi.BLACK else "wtime")
    increment = max(0, go.get("binc" if turn == cshogi.BLACK else "winc", 0))
    byoyomi = max(0, go.get("byoyomi", 0))
    if left is None and byoyomi == 0 and increment == 0:
        return TimeBudget()
    left = max(0, left or 0)
    deadline = left + increment + byoyomi  # ms until the flag falls (cshogi.cli credits the increment first)
    hard = deadline - min(delays.deadline, deadline / 2)
    moves_to_go = max(min_moves_to_go, (horizon - ply) / 2)
    share = left / moves_to_go
    # Byoyomi is use-it-or-lose-it once the main time is gone (or too little to matter).
    minimum = max(hard if left < byoyomi else 0.0, min(delays.minimum, hard))
    maximum = max(minimum, min(hard, MAX_STRETCH * share + increment + byoyomi - delays.network))
    optimum = min(maximum, max(minimum, share + increment + byoyomi - delays.network))
    return TimeBudget(minimum / 1000, optimum / 1000, maximum / 1000)
