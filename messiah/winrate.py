"""Win rate <-> centipawns: winrate = sigmoid(a * cp + b) (docs/method.md section 5).

The defaults are those fitted on the shipped teacher data's results (fairy-stockfish at depth 8, see
../shared/data/README.md): 1/a = 875 cp, b = -0.08. The training targets made from teacher evals use the
same scale without the bias (:func:`eval_target`): the bias is an edge of the side to move in that data's
results, not something an eval says. The engine reports its score cp with ``MESSIAH``, fitted from its own
games (``messiah fit-winrate``).
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

    @classmethod
    def from_options(cls, scale: float, bias_thousandths: float) -> WinRateScale:
        """From the USI options ScoreScale (cp per unit of logit) and ScoreBias (b in thousandths)."""
        return cls(1 / scale, bias_thousandths / 1000)

    def to_cp(self, winrate: float) -> int:
        """Centipawns for a win rate, clipped to +-MAX_CP."""
        if winrate <= 0.0:
            return -MAX_CP
        if winrate >= 1.0:
            return MAX_CP
        cp = (math.log(winrate / (1.0 - winrate)) - self.b) / self.a
        return int(round(max(-MAX_CP, min(MAX_CP, cp))))


TEACHER = WinRateScale()  # the teacher data's evals against its game results, as fitted


def eval_target(scale: float = TEACHER_SCALE) -> WinRateScale:
    """The curve that turns an eval of ``scale`` cp per logit into a training target: sigmoid(cp / scale), no
    bias. Pretraining (in torch), the self-play records' cp and ``messiah evaluate`` all use it."""
    return WinRateScale(1.0 / scale, 0.0)


# messiah's score cp, calibrated on its own games by `messiah fit-winrate` (docs/strength.md, "The score's
# calibration"): these options make a cp the engine prints read on the TEACHER curve as the win rate its games
# showed.
MESSIAH_OPTIONS = (742, -135)  # ScoreScale, ScoreBias
MESSIAH = WinRateScale.from_options(*MESSIAH_OPTIONS)
