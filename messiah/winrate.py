"""Win rate <-> centipawns: winrate = sigmoid(a * cp + b) (METHOD.md section 5).

The defaults are those fitted on the shipped teacher data (fairy-stockfish at depth 8, see
../shared/data/README.md): 1/a = 875 cp, b = -0.08. An engine should fit its own from its own games.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_CP = 30000  # the largest |cp| reported; win rates of exactly 0 or 1 map to it


@dataclass(frozen=True)
class WinRateScale:
    a: float = 1 / 875
    b: float = -0.08

    def to_winrate(self, cp: float) -> float:
        return 1.0 / (1.0 + math.exp(-(self.a * cp + self.b)))

    def to_cp(self, winrate: float) -> int:
        """Centipawns for a win rate, clipped to +-MAX_CP."""
        if winrate <= 0.0:
            return -MAX_CP
        if winrate >= 1.0:
            return MAX_CP
        cp = (math.log(winrate / (1.0 - winrate)) - self.b) / self.a
        return int(round(max(-MAX_CP, min(MAX_CP, cp))))
