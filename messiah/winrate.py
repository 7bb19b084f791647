"""Win rate <-> centipawns: winrate = sigmoid(a * cp + b) (docs/method.md section 5).

The defaults are those fitted on the shipped teacher data's results (fairy-stockfish at depth 8, see
../shared/data/README.md): 1/a = 875 cp, b = -0.08. The training targets made from teacher evals use the
same scale without the bias (:func:`zero_sum`): the bias is an edge of the side to move in that data's
results, not something an eval says. The engine reports its score cp with ``MESSIAH``, whose scale is fitted
from its own games (``messiah fit-winrate``) and which has no bias either: a score is zero-sum, cp(w) = -cp(1 - w),
so a 50% win rate is 0 cp for either side, and a GUI's graph of black's view does not jump with the side to move.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_CP = 30000  # the largest |cp| reported; win rates of exactly 0 or 1 map to it
TEACHER_SCALE = 875.0  # cp per logit of the shared teacher data's evals (fitted; the common 600 is too steep)


@dataclass(frozen=True)
class WinRateScale:
    a: float = 1 / TEACHER_SCALE
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


TEACHER = WinRateScale()  # the teacher data's evals against its game results, as fitted


def zero_sum(scale: float = TEACHER_SCALE) -> WinRateScale:
    """The zero-sum curve of ``scale`` cp per logit: sigmoid(cp / scale), no bias. It turns a teacher eval into a
    training target (pretraining in torch, the self-play records' cp, ``messiah evaluate``) and a win rate into
    the engine's printed score (ScoreScale)."""
    return WinRateScale(1.0 / scale, 0.0)


# messiah's ScoreScale, calibrated on its own games by `messiah fit-winrate` (docs/strength.md, "The score's
# calibration"): a cp the engine prints, read on the teacher's zero-sum curve sigmoid(cp / TEACHER_SCALE), is
# the win rate its games showed at that score.
MESSIAH_SCALE = 1887
MESSIAH = zero_sum(MESSIAH_SCALE)
