"""A strength setting for people: ``Strength`` 1..20 (0: full strength) weakens the engine as a weaker player
is weak, not by blundering at random. A level searches fewer nodes, so it sees less, and then chooses among
the moves the network likes nearly as much as the search's best, so it does not play the same line every
game. Where each level stands, in games against fairy-stockfish's Skill Levels, is in docs/strength.md.

The choice: every legal move has the network's value for it (a win rate: its move score, what the searches
start from), and the search's best move is put level with the network's favourite, so that it stays among the
likeliest choices whatever the network thought of it before searching. A move whose value is within
``CANDIDATES`` temperatures of the top is drawn with probability proportional to exp((value - top) /
temperature); a proven win is always played.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np

from messiah.evaluator import MoveScores, softmax_weights

LEVELS = 20  # Strength 1 .. LEVELS; 0 is off
# Nodes a move at level s: 2^((s+1)/2), from 2 at level 1 to about 1,450 at level 20 (the full engine searches
# some 5,000 a second on one core). Every two levels double the search.
NODES_AT_LEVEL_0 = math.sqrt(2)
# The temperature of the choice in win rate, falling from TEMPERATURE_AT_1 at level 1 to 0 (always the search's
# best) at level 20 as the square of the levels left, so that the upper levels err seldom: 0.08 at level 1 (a move 5
# points of win rate worse is played half as often as the best), 0.022 at level 10, 0.0055 at level 15.
TEMPERATURE_AT_1 = 0.08
CANDIDATES = 3  # moves more than this many temperatures below the best are never chosen


@dataclass(frozen=True)
class Strength:
    """One level of the ``Strength`` option (1 .. LEVELS)."""

    level: int

    def __post_init__(self) -> None:
        if not 1 <= self.level <= LEVELS:
            raise ValueError(f"Strength must be 1..{LEVELS}, got {self.level}")

    @property
    def nodes(self) -> int:
        """The most nodes a move searches at this level."""
        return max(1, round(NODES_AT_LEVEL_0 * 2 ** (self.level / 2)))

    @property
    def temperature(self) -> float:
        return TEMPERATURE_AT_1 * ((LEVELS - self.level) / (LEVELS - 1)) ** 2

    def choose(self, best: int, proven_win: bool, scores: MoveScores, rng: random.Random) -> int:
        """The move to play: ``best`` (the search's) or, by the draw the module describes, one the network values
        nearly as much. What the engine reports stays the search's value of the position: the level plays a
        weaker move, it does not misjudge the position (a GUI's graph of a weak level's game is as smooth as a
        strong one's)."""
        if proven_win or self.temperature == 0 or len(scores.moves) < 2:
            return best
        values = scores.q.astype(np.float64)
        top = values.max()
        index = np.flatnonzero(scores.moves == best)
        if len(index):
            values[index[0]] = top  # level with the network's favourite; the others as far below it as they are
        near = np.flatnonzero(values >= top - CANDIDATES * self.temperature)
        weights = softmax_weights(values[near], self.temperature, top)
        pick = near[rng.choices(range(len(near)), weights=weights.tolist())[0]]
        return int(scores.moves[pick])
