"""`messiah fit-winrate`: fit winrate = sigmoid(a * cp + b) to game results (docs/method.md section 5).

Samples are (eval in cp for the side to move, 1 if that side went on to win else 0), taken from CSA
records as ``cshogi.cli --csa`` (and ``messiah match``) writes them, whose move comments ``** <cp> ...``
carry the mover's engine score from black's point of view, or from hcpe files with evals and results.
Evals beyond +-1000 cp (decided positions, mate scores) and drawn games are left out. Both fits are
printed: least squares on the win rate (the method's) and log-loss (logistic regression), and, for
records of messiah's own games, the ScoreScale that calibrates its zero-sum ``score cp`` by them, with a 95%
interval from resampling whole games (a game's positions are not independent). The fitted bias is the side to
move's edge in those games; it is reported, and kept out of the score (docs/strength.md).
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
from messiah.winrate import MESSIAH, MESSIAH_SCALE, TEACHER_SCALE, WinRateScale

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
    made_with: tuple[float, float] = setting((MESSIAH_SCALE, 0.0), metavar=("SCALE", "BIAS"))
    """messiah's ScoreScale when the records were made, and its ScoreBias (thousandths; 0 since the score is
    zero-sum, -135 for records made by versions up to 0.2.0)"""
    resamples: int = 1000
    """bootstrap resamples of the games for the ScoreScale's interval (0: none)"""

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
    game: np.ndarray  # int64, which game (CSA) or file (hcpe) the sample came from: the bootstrap's unit
    dropped_cp: int  # samples with |cp| > MAX_ABS_CP
    dropped_draws: int  # samples from drawn games
    games: int


def samples_from_csa(paths: list[str | os.PathLike], player: str | None = None) -> Samples:
    """(cp, win) for every commented move of the records, optionally only the moves of the player named
    exactly ``player`` (a prefix would also take "messiah-old" for "messiah"). Raises ValueError naming a
    file cshogi cannot parse, or when no record has a player of that name."""
    cps, wins, game_of, dropped_draws, games, names = [], [], [], 0, 0, set()
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
                game_of.append(games)
    if player is not None and games and player not in names:
        raise UserError(f"no player named {player!r} in the records (players: {', '.join(sorted(names))})")
    return _keep(np.array(cps, np.float64), np.array(wins, np.float64), np.array(game_of, np.int64), dropped_draws,
                 games)


def samples_from_hcpe(paths: list[str | os.PathLike]) -> Samples:
    """(cp, win) for the records' evals and results."""
    from messiah.records import read_hcpe

    cps, wins, game_of, dropped_draws = [], [], [], 0
    for number, path in enumerate(paths):
        records = read_hcpe(path)
        turns = hcp_arrays(records["hcp"]).turns
        result = records["gameResult"]
        decided = result != cshogi.DRAW
        dropped_draws += int((~decided).sum())
        winner = np.where(result == cshogi.BLACK_WIN, cshogi.BLACK, cshogi.WHITE)
        cps.append(records["eval"][decided].astype(np.float64))
        wins.append((winner == turns)[decided].astype(np.float64))
        game_of.append(np.full(int(decided.sum()), number, np.int64))
    return _keep(np.concatenate(cps), np.concatenate(wins), np.concatenate(game_of), dropped_draws, 0)


def _keep(cp: np.ndarray, win: np.ndarray, game: np.ndarray, dropped_draws: int, games: int) -> Samples:
    inside = np.abs(cp) <= MAX_ABS_CP
    return Samples(cp[inside], win[inside], game[inside], int((~inside).sum()), dropped_draws, games)


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


def score_scale(fit: tuple[float, float], made_with: WinRateScale) -> tuple[float, float]:
    """messiah's ScoreScale that calibrates its zero-sum ``score cp`` by a fit of its own games, and the side to
    move's edge that the fit found (in logits: a win rate Q of 50% won sigmoid(edge) of those games).

    The records' cp were printed as cp = (logit(Q) - b0) / a0 (``made_with``), and the fit says the side to move
    won sigmoid(a_f * cp + b_f) = sigmoid(k * logit(Q) + edge), with k = a_f / a0 and edge = b_f - k * b0. The
    score cp' = ScoreScale * logit(Q) read on the teacher's zero-sum curve sigmoid(cp' / TEACHER_SCALE) is that
    win rate without the edge when ScoreScale = k * TEACHER_SCALE. The edge belongs to the games (who moved
    first, the opponents) and stays out of the score."""
    (a_f, b_f), a0, b0 = fit, made_with.a, made_with.b
    k = a_f / a0
    return k * TEACHER_SCALE, b_f - k * b0


def bootstrap_scale(samples: Samples, made_with: WinRateScale, resamples: int, seed: int = 0) -> tuple[float, float]:
    """The 95% interval of the ScoreScale over ``resamples`` resamplings of whole games with replacement."""
    rng = np.random.default_rng(seed)
    games = np.unique(samples.game)
    rows = [np.flatnonzero(samples.game == g) for g in games]
    scales = []
    for _ in range(resamples):
        take = np.concatenate([rows[i] for i in rng.integers(0, len(games), len(games))])
        if samples.win[take].min() == samples.win[take].max():
            continue  # a resample of only won (or only lost) positions fits nothing
        scales.append(score_scale(fit_mse(samples.cp[take], samples.win[take]), made_with)[0])
    low, high = np.percentile(scales, [2.5, 97.5])
    return float(low), float(high)


def fit_files(paths: list[str], player: str | None = None, png: str | None = None,
              made_with: WinRateScale = MESSIAH, resamples: int = 0) -> dict:
    """Read the samples (CSA or hcpe by extension), fit both ways, optionally plot (PNG, or SVG by the name's
    extension); the figures as a dict, with the ScoreScale's interval from ``resamples`` bootstrap resamples."""
    hcpe = [p for p in paths if str(p).endswith(".hcpe")]
    csa = [p for p in paths if not str(p).endswith(".hcpe")]
    parts = ([samples_from_csa(csa, player)] if csa else []) + ([samples_from_hcpe(hcpe)] if hcpe else [])
    offsets = np.cumsum([0] + [int(s.game.max(initial=-1)) + 1 for s in parts])  # game numbers stay apart
    samples = Samples(np.concatenate([s.cp for s in parts]), np.concatenate([s.win for s in parts]),
                      np.concatenate([s.game + o for s, o in zip(parts, offsets, strict=False)]),
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
    scale, edge = score_scale(fits["mse"], made_with)
    out["messiah"] = {"made_with": {"ScoreScale": 1 / made_with.a, "ScoreBias": round(1000 * made_with.b)},
                      "ScoreScale": round(scale), "edge": edge, "won_at_50_percent": 1 / (1 + math.exp(-edge))}
    if resamples:
        low, high = bootstrap_scale(samples, made_with, resamples)
        out["messiah"]["ScoreScale_95"] = [round(low), round(high)]
    if png:
        out["png"] = str(plot(samples, fits, png, f"{len(samples.cp):,} samples" + (f", {player}" if player else "")))
    return out
