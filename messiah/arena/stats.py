"""Match statistics: a game's result from the first engine's side, the Elo difference with its 95% interval,
and the pentanomial SPRT that stops a match once it can tell elo0 from elo1 (fishtest's model)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from messiah.errors import UserError

Z95 = 1.959964  # two-sided 95% quantile of the normal distribution
FORFEITS = ("%TIME_UP", "%ILLEGAL_MOVE")  # the endings a correct engine never suffers
SPRT_ALPHA = SPRT_BETA = 0.05  # the SPRT's error rates, fishtest's
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)  # a colour-swapped pair's score per game: 0-2, 1/2-3/2, ... 2-0
EMPTY_BIN = 1e-3  # a pentanomial count never seen, as fishtest regularises it (a variance must exist)
SPRT_MIN_PAIRS = 10  # no decision before: the normal approximation needs a variance estimated from real pairs


@dataclass
class Game:
    """One finished game, from the first engine's side."""

    number: int
    opening: int
    first_is_black: bool
    outcome: str  # "win", "loss" or "draw" for the first engine
    ending: str  # the CSA end code, e.g. %TORYO, %TIME_UP, %SENNICHITE
    plies: int
    record: str
    ponders: int = 0  # the first engine's go ponder commands, when its debug log was read (messiah's only)
    ponderhits: int = 0  # and how many of them the opponent's move turned into its move (ponderhit)


def wilson(mean: float, variance: float, n: int) -> tuple[float, float]:
    """Wilson's 95% interval of a mean of ``n`` outcomes in [0, 1] with the given variance (p(1 - p) for a
    proportion): it stays inside [0, 1] and is still an interval when every outcome was the same."""
    z2 = Z95**2
    centre = (mean + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(variance / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return centre - half, centre + half


def elo_interval(wins: int, losses: int, draws: int) -> tuple[float, float, float]:
    """Elo difference and its 95% interval. The score's interval is Wilson's, with the variance of the
    win/draw/loss outcomes: like the usual normal approximation (cshogi.elo, cutechess) when the score is
    well inside (0, 1), but still a real interval when every game was won or lost."""
    n = wins + losses + draws
    mu = (wins + draws / 2) / n
    low, high = wilson(mu, (wins * (1 - mu) ** 2 + losses * mu**2 + draws * (0.5 - mu) ** 2) / n, n)

    def elo(p: float) -> float:
        if p <= 0:
            return -math.inf
        if p >= 1:
            return math.inf
        return -400 * math.log10(1 / p - 1)

    return elo(mu), elo(low), elo(high)


def pentanomial(games: list[Game]) -> list[int]:
    """How many complete colour-swapped pairs scored 0, 1/2, 1, 3/2 and 2 for the first engine."""
    pairs: dict[int, list[float]] = {}
    for g in games:
        pairs.setdefault((g.number - 1) // 2, []).append({"win": 1.0, "draw": 0.5, "loss": 0.0}[g.outcome])
    counts = [0] * len(PAIR_SCORES)
    for scores in pairs.values():
        if len(scores) == 2:
            counts[round(2 * sum(scores))] += 1
    return counts


def expected_score(elo: float) -> float:
    return 1 / (1 + 10 ** (-elo / 400))


def sprt_llr(counts: list[int], elo0: float, elo1: float) -> float:
    """The generalised SPRT's log-likelihood ratio of elo1 against elo0 (logistic Elo) from pentanomial pair
    counts, in the normal approximation (Van den Bergh's GSPRT note; fishtest's pentanomial model): pairs of
    one opening with colours swapped cancel most of the opening's bias, so their scores vary less than
    single games' and the test ends sooner."""
    n = sum(counts)
    if n == 0:
        return 0.0
    freq = [c if c else EMPTY_BIN for c in counts]
    total = sum(freq)
    mean = sum(f * x for f, x in zip(freq, PAIR_SCORES, strict=True)) / total
    var = sum(f * (x - mean) ** 2 for f, x in zip(freq, PAIR_SCORES, strict=True)) / total
    s0, s1 = expected_score(elo0), expected_score(elo1)
    return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


def sprt_bounds(alpha: float = SPRT_ALPHA, beta: float = SPRT_BETA) -> tuple[float, float]:
    """Wald's bounds: H0 (elo0) is accepted at or below the first, H1 (elo1) at or above the second."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def parse_sprt(text: str) -> tuple[float, float]:
    """'ELO0,ELO1' with elo0 < elo1, the bounds of an SPRT; ValueError otherwise."""
    try:
        elo0, elo1 = (float(x) for x in text.split(","))
    except ValueError:
        raise UserError(f"expected ELO0,ELO1 such as 0,10, got {text!r}") from None
    if not elo0 < elo1:
        raise UserError(f"elo0 must be below elo1, got {text!r}")
    return elo0, elo1


def sprt_state(counts: list[int], elo0: float, elo1: float) -> dict:
    """The SPRT of elo0 against elo1 over these pentanomial pair counts: its LLR, bounds and decision."""
    llr = sprt_llr(counts, elo0, elo1)
    lower, upper = sprt_bounds()
    decision = "continue"
    if sum(counts) >= SPRT_MIN_PAIRS:
        decision = "H1 accepted" if llr >= upper else "H0 accepted" if llr <= lower else "continue"
    return {"elo0": elo0, "elo1": elo1, "alpha": SPRT_ALPHA, "beta": SPRT_BETA, "pentanomial": list(counts),
            "llr": llr, "lower": lower, "upper": upper, "decision": decision}


def summarize(games: list[Game], sprt: tuple[float, float] | None = None) -> dict:
    """W-L-D, score, Elo with its 95% interval, endings, time/illegal losses and pentanomial pairs, from the first
    engine's side; with ``sprt`` (elo0, elo1), the SPRT's state."""
    wins = sum(g.outcome == "win" for g in games)
    losses = sum(g.outcome == "loss" for g in games)
    endings: dict[str, int] = {}
    for g in games:
        endings[g.ending] = endings.get(g.ending, 0) + 1
    counts = {"games": len(games), "wins": wins, "losses": losses, "draws": len(games) - wins - losses,
              "endings": endings, "black": _colour(games, True), "white": _colour(games, False),
              "mean_plies": sum(g.plies for g in games) / len(games) if games else 0.0,
              # games lost by time or an illegal move, by the first engine and by the second
              "forfeits": [sum(g.ending in FORFEITS and g.outcome == o for g in games) for o in ("loss", "win")],
              "pentanomial": pentanomial(games)}
    ponders = sum(g.ponders for g in games)
    if ponders:
        counts["ponder"] = {"ponders": ponders, "hits": sum(g.ponderhits for g in games)}
    return _figures(counts, sprt)


def merge(summaries: list[dict], sprt: tuple[float, float] | None = None) -> dict:
    """Several matches' summaries (:func:`summarize`'s, or a kept ``match-report --json``) counted as one match:
    every count summed, and the score, the Elo with its interval and the SPRT computed from the sums, so the
    figures are those of summarizing all the games at once. How a match played in parts is reported when the
    records of a part are gone and only its summary was kept."""
    n = sum(s["games"] for s in summaries)
    endings: dict[str, int] = {}
    for s in summaries:
        for k, v in s["endings"].items():
            endings[k] = endings.get(k, 0) + v
    counts = {"games": n, **{k: sum(s[k] for s in summaries) for k in ("wins", "losses", "draws")},
              "endings": endings, **{c: _add_colour(s[c] for s in summaries) for c in ("black", "white")},
              "mean_plies": sum(s["mean_plies"] * s["games"] for s in summaries) / n if n else 0.0,
              "forfeits": [sum(s["forfeits"][i] for s in summaries) for i in (0, 1)],
              "pentanomial": [sum(s["pentanomial"][i] for s in summaries) for i in range(len(PAIR_SCORES))]}
    pondered = [s["ponder"] for s in summaries if "ponder" in s]
    if pondered:
        counts["ponder"] = {k: sum(p[k] for p in pondered) for k in ("ponders", "hits")}
    return _figures(counts, sprt)


def _figures(counts: dict, sprt: tuple[float, float] | None) -> dict:
    """A summary's figures computed from its counts: the score, the Elo and its interval, the ponderhit share,
    the SPRT."""
    summary = dict(counts)
    n = counts["games"]
    summary["score"] = (counts["wins"] + counts["draws"] / 2) / n if n else 0.0
    if n:
        elo, low, high = elo_interval(counts["wins"], counts["losses"], counts["draws"])
        summary.update(elo=elo, elo_low=low, elo_high=high)
    if "ponder" in counts:
        summary["ponder"] = {**counts["ponder"], "share": counts["ponder"]["hits"] / counts["ponder"]["ponders"]}
    if sprt is not None:
        summary["sprt"] = sprt_state(counts["pentanomial"], *sprt)
    return summary


def _colour(games: list[Game], black: bool) -> str:
    mine = [g for g in games if g.first_is_black == black]
    return "-".join(str(sum(g.outcome == o for g in mine)) for o in ("win", "loss", "draw"))


def _add_colour(texts) -> str:
    """W-L-D texts ("3-1-0") summed."""
    totals = [0, 0, 0]
    for text in texts:
        for i, x in enumerate(text.split("-")):
            totals[i] += int(x)
    return "-".join(map(str, totals))


def elo_range(elo: float, low: float, high: float, named: bool = False) -> str:
    """An Elo difference and its 95% interval as text, ``+52 (+10 .. +94)``, with ``named`` ``+52 (95% interval +10 ..
    +94)``. An all-won or all-lost match has no estimate and its interval one end: that end, read as the one-sided
    bound it is, ``at least -113 (95%; every game won)``."""
    if elo == math.inf:
        return f"at least {elo_text(low)} (95%; every game won)"
    if elo == -math.inf:
        return f"at most {elo_text(high)} (95%; every game lost)"
    return f"{elo_text(elo)} ({'95% interval ' if named else ''}{elo_text(low)} .. {elo_text(high)})"


def elo_text(x: float) -> str:
    """An Elo difference or bound as text: signed, +inf/-inf for an all-won or all-lost match."""
    if not math.isfinite(x):
        return "+inf" if x > 0 else "-inf"
    return f"{round(x):+d}"  # an even score's -1e-13 reads +0, not -0

