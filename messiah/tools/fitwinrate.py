"""`messiah fit-winrate`: fit winrate = sigmoid(a * cp + b) to game results (docs/method.md section 5).

Samples are (eval in cp for the side to move, 1 if that side went on to win else 0), taken from CSA
records as ``cshogi.cli --csa`` (and ``messiah match``) writes them, whose move comments ``** <cp> ...``
carry the mover's engine score from black's point of view, or from hcpe files with evals and results.
Evals beyond +-1000 cp (decided positions, mate scores) and drawn games are left out. Both fits are
printed: least squares on the win rate (the method's) and log-loss (logistic regression), and, for
records of messiah's own games, the ScoreScale/ScoreBias options that calibrate its ``score cp`` by them.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import cshogi
import numpy as np
from cshogi import CSA

from messiah.config import setting
from messiah.errors import DataError, UserError
from messiah.features import hcp_arrays
from messiah.winrate import MESSIAH, MESSIAH_OPTIONS, TEACHER, WinRateScale

MAX_ABS_CP = 1000
CP_UNIT = 1000.0  # cp are divided by this inside the fits, which keeps the two parameters on one scale


@dataclass
class FitConfig:
    """``messiah fit-winrate``: the records to fit, and what the plot and the derived options need."""

    records: list[str] = setting(positional=True)
    """CSA records (files, or directories of *.csa) and/or hcpe files"""
    player: str | None = None
    """only the moves of the player of this name (CSA records)"""
    png: str = "winrate_fit.png"
    """where to write the plot"""
    made_with: tuple[float, float] = setting(tuple(MESSIAH_OPTIONS), metavar=("SCALE", "BIAS"))
    """messiah's ScoreScale and ScoreBias when the records were made"""

    def paths(self) -> list[str]:
        """The record files: a directory's *.csa files, sorted, in its place."""
        out = []
        for path in map(Path, self.records):
            out += sorted(str(p) for p in path.glob("*.csa")) if path.is_dir() else [str(path)]
        return out


@dataclass
class Samples:
    cp: np.ndarray  # float64, eval for the side to move
    win: np.ndarray  # float64, 1 when the side to move won
    dropped_cp: int  # samples with |cp| > MAX_ABS_CP
    dropped_draws: int  # samples from drawn games
    games: int


def samples_from_csa(paths: list[str | os.PathLike], player: str | None = None) -> Samples:
    """(cp, win) for every commented move of the records, optionally only the moves of the player named
    exactly ``player`` (a prefix would also take "messiah-old" for "messiah"). Raises ValueError naming a
    file cshogi cannot parse, or when no record has a player of that name."""
    cps, wins, dropped_draws, games, names = [], [], 0, 0, set()
    for path in paths:
        try:
            parsers = CSA.Parser.parse_file(str(path))
        except Exception as e:  # cshogi raises assorted errors on foreign input
            raise DataError(f"{path}: not a CSA record ({e})") from None
        for p in parsers:
            games += 1
            names.update(n for n in p.names if n)
            for i, (score, comment) in enumerate(zip(p.scores, p.comments, strict=False)):
                if not comment:
                    continue  # an opening move, or an engine that printed no score
                mover = i % 2 if not p.sfen or p.sfen.split()[1] == "b" else 1 - i % 2
                if player is not None and player != p.names[mover]:
                    continue
                if p.win == cshogi.DRAW:
                    dropped_draws += 1
                    continue
                cps.append(score if mover == cshogi.BLACK else -score)
                wins.append(float(p.win == (cshogi.BLACK_WIN if mover == cshogi.BLACK else cshogi.WHITE_WIN)))
    if player is not None and games and player not in names:
        raise UserError(f"no player named {player!r} in the records (players: {', '.join(sorted(names))})")
    return _keep(np.array(cps, np.float64), np.array(wins, np.float64), dropped_draws, games)


def samples_from_hcpe(paths: list[str | os.PathLike]) -> Samples:
    """(cp, win) for the records' evals and results."""
    from messiah.train.data import read_hcpe

    cps, wins, dropped_draws = [], [], 0
    for path in paths:
        records = read_hcpe(path)
        turns = hcp_arrays(records["hcp"]).turns
        result = records["gameResult"]
        decided = result != cshogi.DRAW
        dropped_draws += int((~decided).sum())
        winner = np.where(result == cshogi.BLACK_WIN, cshogi.BLACK, cshogi.WHITE)
        cps.append(records["eval"][decided].astype(np.float64))
        wins.append((winner == turns)[decided].astype(np.float64))
    return _keep(np.concatenate(cps), np.concatenate(wins), dropped_draws, 0)


def _keep(cp: np.ndarray, win: np.ndarray, dropped_draws: int, games: int) -> Samples:
    inside = np.abs(cp) <= MAX_ABS_CP
    return Samples(cp[inside], win[inside], int((~inside).sum()), dropped_draws, games)


def fit_logloss(cp: np.ndarray, win: np.ndarray, iterations: int = 50) -> tuple[float, float]:
    """(a, b) minimising the log-loss: logistic regression by Newton's method (the loss is convex)."""
    x = np.stack([cp / CP_UNIT, np.ones_like(cp)], 1)
    theta = np.zeros(2)
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-x @ theta))
        grad = x.T @ (p - win)
        hess = (x * (p * (1 - p))[:, None]).T @ x + 1e-9 * np.eye(2)
        step = np.linalg.solve(hess, grad)
        theta -= step
        if np.abs(step).max() < 1e-12:
            break
    return theta[0] / CP_UNIT, theta[1]


def fit_mse(cp: np.ndarray, win: np.ndarray, iterations: int = 200) -> tuple[float, float]:
    """(a, b) minimising the mean squared error of the win rate: Levenberg-Marquardt from the log-loss
    fit (the squared error of a sigmoid is not convex, so it starts near the answer)."""
    a, b = fit_logloss(cp, win)
    x = np.stack([cp / CP_UNIT, np.ones_like(cp)], 1)
    theta, damping = np.array([a * CP_UNIT, b]), 1e-3

    def loss(t: np.ndarray) -> float:
        return float(np.mean((1 / (1 + np.exp(-x @ t)) - win) ** 2))

    current = loss(theta)
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-x @ theta))
        jac = x * (p * (1 - p))[:, None]
        step = np.linalg.solve(jac.T @ jac + damping * np.eye(2), jac.T @ (p - win))
        trial = theta - step
        if loss(trial) < current:
            theta, current, damping = trial, loss(trial), damping / 3
            if np.abs(step).max() < 1e-10:
                break
        else:
            damping *= 4
    return theta[0] / CP_UNIT, theta[1]


def binned(samples: Samples, width: int = 100) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bin centres, empirical win rates and counts over cp bins of ``width``."""
    edges = np.arange(-MAX_ABS_CP, MAX_ABS_CP + width, width)
    which = np.clip(np.digitize(samples.cp, edges) - 1, 0, len(edges) - 2)
    counts = np.bincount(which, minlength=len(edges) - 1)
    sums = np.bincount(which, weights=samples.win, minlength=len(edges) - 1)
    keep = counts > 0
    return ((edges[:-1] + edges[1:]) / 2)[keep], sums[keep] / counts[keep], counts[keep]


def plot(samples: Samples, fits: dict[str, tuple[float, float]], path: str | os.PathLike, title: str) -> Path:
    """A PNG of the binned empirical win rates (marker size by count) and the fitted curves."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    centres, rates, counts = binned(samples)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.scatter(centres, rates, s=10 + 90 * counts / counts.max(), color="black", alpha=0.6,
               label="empirical (100 cp bins)")
    xs = np.linspace(-MAX_ABS_CP, MAX_ABS_CP, 400)
    for (name, (a, b)), style in zip(fits.items(), ("-", "--"), strict=False):
        ax.plot(xs, 1 / (1 + np.exp(-(a * xs + b))), style, label=f"{name}: 1/a = {1 / a:.0f} cp, b = {b:+.3f}")
    ax.set(xlabel="eval for the side to move (cp)", ylabel="win rate", title=title, ylim=(0, 1))
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def engine_coefficients(fit: tuple[float, float], made_with: WinRateScale,
                        target: WinRateScale = TEACHER) -> tuple[int, int]:
    """messiah's ScoreScale and ScoreBias options that calibrate its ``score cp`` by a fit of its own games.

    The records' cp were printed as cp = (logit(Q) - b0) / a0 (``made_with``); the fit says the real win
    rate was sigmoid(a_f * cp + b_f). The new options print the cp whose reading on the ``target`` curve
    (the teacher's scale, which the network was trained on) is that real win rate:
    cp' = (a_f * cp + b_f - b_t) / a_t, again of the form (logit(Q) - b') * scale'."""
    (a_f, b_f), a0, b0, a_t, b_t = fit, made_with.a, made_with.b, target.a, target.b
    scale = a_f / (a0 * a_t)
    bias = b0 - (b_f - b_t) * a0 / a_f
    return round(scale), round(1000 * bias)


def fit_files(paths: list[str], player: str | None = None, png: str | None = None,
              made_with: WinRateScale = MESSIAH) -> dict:
    """Read the samples (CSA or hcpe by extension), fit both ways, optionally plot; the figures as a dict."""
    hcpe = [p for p in paths if str(p).endswith(".hcpe")]
    csa = [p for p in paths if not str(p).endswith(".hcpe")]
    parts = ([samples_from_csa(csa, player)] if csa else []) + ([samples_from_hcpe(hcpe)] if hcpe else [])
    samples = Samples(np.concatenate([s.cp for s in parts]), np.concatenate([s.win for s in parts]),
                      sum(s.dropped_cp for s in parts), sum(s.dropped_draws for s in parts),
                      sum(s.games for s in parts))
    if len(samples.cp) < 2 or samples.win.min() == samples.win.max():
        raise UserError(f"{len(samples.cp)} samples with |cp| <= {MAX_ABS_CP} from decided games: a fit needs "
                         "both won and lost positions")
    fits = {"mse": fit_mse(samples.cp, samples.win), "logloss": fit_logloss(samples.cp, samples.win)}
    out = {"samples": len(samples.cp), "games": samples.games, "dropped_abs_cp_over_1000": samples.dropped_cp,
           "dropped_draws": samples.dropped_draws}
    for name, (a, b) in fits.items():
        out[name] = {"a": a, "b": b, "scale_cp": 1 / a if a else math.inf}
    scale, bias = engine_coefficients(fits["mse"], made_with)
    out["messiah_options"] = {"ScoreScale": scale, "ScoreBias": bias}
    if png:
        out["png"] = str(plot(samples, fits, png, f"{len(samples.cp):,} samples" + (f", {player}" if player else "")))
    return out
