"""`messiah ladder`: messiah against a ladder of real opponents at equal time, to say how strong it is.

The rungs are Debian's engines: fairy-stockfish 11.1 at Skill Level -20 .. 20 and gpsshogi 0.7.0, each on
one thread, like messiah; and, given its binary (``--yaneuraou``), YaneuraOu-KP256 held to a number of nodes a
move (its ``NodesLimit``): a second ladder, of one strong engine's search size. Every rung plays ``games`` games
(colour-swapped pairs from the opening set) and ``more`` again where the score is near 50%, where a rung says
most. The result is a table, a plot (PNG and SVG) of score and Elo interval by rung, and on each ladder the rung
where messiah would score 50% (interpolated in Elo between the rungs around it). Ladders of the same engine played
apart (more games at a rung, another session) combine rung by rung with ``merge_rows``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from messiah.arena.match import MatchConfig, play_matches
from messiah.arena.stats import elo_interval, elo_range, summarize
from messiah.config import at_least, setting
from messiah.errors import DataError, UserError
from messiah.files import write_json

FAIRY = "/usr/games/fairy-stockfish"
GPSSHOGI = "/usr/games/gpsusi"
SKILLS = (-20, -10, 0, 5, 10, 15, 20)
YANEURAOU = "YaneuraOu-KP256 NodesLimit"  # its rungs' names: this and the nodes
# YaneuraOu's nodes a move by rung (m7 scored 11-5 at 3,000 and 3-7 at 10,000, m9 7-13 at 10,000, issue 94; 5,000
# halves the gap where the models' 50% lies). Its options: the
# evaluation beside the binary, no book, one thread, and no network delay, which would spend a one-second byoyomi
# (its README in the shared engines folder).
YANEURAOU_NODES = (1_000, 3_000, 5_000, 10_000, 30_000)
YANEURAOU_OPTIONS = {"BookFile": "no_book", "Threads": "1", "USI_Hash": "64", "NetworkDelay": "0",
                     "NetworkDelay2": "0"}
NEAR_EVEN = (0.25, 0.75)  # scores at which a rung gets its extra games
MORE_SEED = 1000  # the extra games of rung k draw their openings with seed + k + MORE_SEED


@dataclass
class LadderConfig:
    """A ladder: messiah against every rung at equal time, or earlier ladders combined."""

    games: int = 20
    """games per rung (colour-swapped pairs); 0: play nothing, only combine the --merge ladders"""
    more: int = 20
    """extra games at rungs scored between 25% and 75%"""
    byoyomi: int = 1000
    """ms per move for both sides"""
    jobs: int = 1
    """games played at once"""
    options: dict[str, str] = setting(factory=lambda: {"Threads": "1"}, flag="--option")
    """a USI option of messiah; repeatable"""
    rungs: str = ""
    """only the rungs whose names contain these comma-separated words, e.g. 'Skill 0,gpsshogi' or
    'NodesLimit 3000,NodesLimit 10000'"""
    yaneuraou: str = ""
    """YaneuraOu-KP256's binary, its evaluation in eval/ beside it (../shared/engines/yaneuraou/YaneuraOu-kp256):
    adds its rungs, NodesLimit 1000 .. 30000 a move; without it they are not played"""
    openings: str = "auto"
    """file of 'startpos moves ...' lines (24 plies are played); 'random': 8 random legal moves from the start
    position, drawn by each rung's seed; 'auto': the shared set ($MESSIAH_DATA/openings/records2016_10818.sfen)
    when it is there, else 'random'. A second set tells whether a result holds beyond the openings the
    constants were tuned on"""
    seed: int = 0
    """which openings are drawn"""
    merge: list[str] = setting(factory=list, repeat=True, metavar="DIR")
    """count the games of an earlier ladder of the same engine and clock (DIR/ladder.json, or that file) with
    this run's, rung by rung; repeatable; a rung's openings seed may not come twice (replay with another
    --seed)"""
    out: str = "runs/ladder"
    """directory for the records, ladder.md/json/png/svg"""

    def __post_init__(self) -> None:
        if self.games <= 0 and not self.merge:
            raise UserError("--games 0 plays nothing: name the ladders to combine with --merge DIR")
        at_least(self, 0, "games", "more")
        at_least(self, 1, "byoyomi", "jobs")
        if self.yaneuraou and not Path(self.yaneuraou).is_file():
            raise UserError(f"--yaneuraou {self.yaneuraou}: no such file (YaneuraOu-KP256's binary)")


@dataclass(frozen=True)
class Rung:
    name: str
    command: str
    options: dict[str, str] = field(default_factory=dict)


def default_rungs(yaneuraou: str = "") -> list[Rung]:
    """The ladder's rungs, weakest first on each ladder: fairy-stockfish by Skill Level, gpsshogi, and with
    ``yaneuraou`` (its binary) YaneuraOu-KP256 by nodes a move."""
    rungs = [Rung(f"fairy-stockfish Skill {s}", FAIRY, {"Skill Level": str(s), "Threads": "1"}) for s in SKILLS]
    rungs.append(Rung("gpsshogi 0.7.0", GPSSHOGI, {"Thread": "1"}))
    if yaneuraou:
        evaldir = str(Path(yaneuraou).resolve().parent / "eval")
        rungs += [Rung(f"{YANEURAOU} {n}", yaneuraou, {**YANEURAOU_OPTIONS, "EvalDir": evaldir, "NodesLimit": str(n)})
                  for n in YANEURAOU_NODES]
    return rungs


def names_rung(words: str, name: str) -> bool:
    """Whether ``words`` (from --rungs) pick the rung ``name``: they occur in it, a number whole ('NodesLimit 1000'
    is not 'NodesLimit 10000', nor 'Skill 1' 'Skill 10')."""
    return re.search(re.escape(words) + r"(?!\d)", name) is not None


def rung_order() -> dict[str, int]:
    """Each known rung's place in ladder order, by name."""
    return {rung.name: k for k, rung in enumerate(default_rungs(yaneuraou="YaneuraOu-kp256"))}


def ladders(rows: list[dict]) -> dict[str, list[dict]]:
    """The rows by ladder, each in its own order of strength: the Debian engines', and YaneuraOu's by nodes (one
    scale would mix two engines' strengths, so each has its own 50% rung)."""
    out = {"fairy-stockfish and gpsshogi": [r for r in rows if not r["rung"].startswith(YANEURAOU)],
           "YaneuraOu-KP256": [r for r in rows if r["rung"].startswith(YANEURAOU)]}
    return {name: part for name, part in out.items() if part}


def ladder(cfg: LadderConfig) -> dict:
    """Play the ladder (``cfg.games`` > 0) and combine it with the ``cfg.merge`` ladders; write ladder.json, .md,
    .png and .svg to ``cfg.out`` and return their paths (:func:`write_ladder`)."""
    merge = [Path(d) for d in cfg.merge]
    if len({d.resolve() for d in merge}) < len(merge):
        raise UserError("a ladder named twice in --merge would count its games twice")
    if cfg.games > 0 and Path(cfg.out).resolve() in {(d if d.is_dir() else d.parent).resolve() for d in merge}:
        raise UserError(f"--out {cfg.out} is a ladder being merged: its records would be overwritten; "
                         "play into another --out")
    earlier = [read_ladder(d) for d in merge]
    rungs = default_rungs(cfg.yaneuraou)
    if cfg.rungs:
        wanted = [w.strip() for w in cfg.rungs.split(",")]
        rungs = [r for r in rungs if any(names_rung(w, r.name) for w in wanted)]
        if not rungs:
            names = ", ".join(r.name for r in default_rungs(cfg.yaneuraou))
            raise UserError(f"no rung matches {cfg.rungs!r}: choose from {names}"
                            + ("" if cfg.yaneuraou else " (YaneuraOu's with --yaneuraou)"))
    base = MatchConfig(opponent="", options=dict(cfg.options), jobs=cfg.jobs, byoyomi=cfg.byoyomi, seed=cfg.seed,
                       openings=cfg.openings, out=cfg.out)
    rows = merge_rows(*earlier, run_ladder(base, rungs, cfg.games, cfg.more, earlier) if cfg.games > 0 else [])
    if not rows:
        raise UserError("the merged ladders hold no games")
    return write_ladder(rows, cfg.out)


def needs_more(score: float) -> bool:
    return NEAR_EVEN[0] <= score <= NEAR_EVEN[1]


def run_ladder(base: MatchConfig, rungs: list[Rung], games: int, more: int,
               earlier: Sequence[list[dict]] = ()) -> list[dict]:
    """Play every rung (``base`` gives messiah's side, the clock, the openings and jobs) and return one row
    per rung: its name, W-L-D, score and Elo with its 95% interval, from messiah's side, and the seeds that
    drew its openings. All rungs share one pool of ``base.jobs`` workers, and so do the extra games of the
    rungs near 50%. ``earlier`` ladders, to be merged with this one, are checked before any game is played
    for openings this run would draw again."""
    cfgs = [replace(base, opponent=rung.command, opponent_options=dict(rung.options), games=games,
                    out=str(Path(base.out) / f"rung{k:02d}"), seed=base.seed + k) for k, rung in enumerate(rungs)]
    check_seeds(earlier, rungs, [cfg.seed for cfg in cfgs])
    played = [games for _, games in play_matches(cfgs, base.jobs)]
    near = [k for k, g in enumerate(played) if more and needs_more(summarize(g)["score"])]
    extra = play_matches([replace(cfgs[k], games=more, seed=cfgs[k].seed + MORE_SEED, out=cfgs[k].out + "_more")
                          for k in near], base.jobs) if near else []
    seeds = [[cfg.seed] for cfg in cfgs]
    for k, (_, games_more) in zip(near, extra, strict=True):
        played[k] = played[k] + games_more
        seeds[k].append(cfgs[k].seed + MORE_SEED)
    rows = []
    for rung, games_played, rung_seeds in zip(rungs, played, seeds, strict=True):
        s = summarize(games_played)
        rows.append({"rung": rung.name, "games": s["games"], "wins": s["wins"], "losses": s["losses"],
                     "draws": s["draws"], "score": s["score"], "elo": s["elo"], "elo_low": s["elo_low"],
                     "elo_high": s["elo_high"], "forfeits": s["forfeits"], "seeds": rung_seeds})
    return rows


def merge_rows(*ladders: list[dict]) -> list[dict]:
    """One row per rung from several ladders of the same engine (e.g. a rung replayed for more games, or
    rungs played in different sessions): W-L-D and forfeits add up, the score and Elo interval are those of
    the sums, and the rungs come in ladder order (unknown names last, as first seen).

    A rung whose openings seed comes twice is refused: its games would be the same openings again, and the
    interval would claim more than they say. (Ladders written before rows kept their seeds are not checked.)"""
    merged: dict[str, dict] = {}
    for rows in ladders:
        for r in rows:
            m = merged.setdefault(r["rung"], {"rung": r["rung"], "games": 0, "wins": 0, "losses": 0, "draws": 0,
                                              "forfeits": [0, 0], "seeds": []})
            again = set(m["seeds"]) & set(r.get("seeds", []))
            if again:
                raise UserError(f"{r['rung']}: openings seed {min(again)} counted twice (the same games, or the "
                                 "same openings replayed): play the extra games with another --seed")
            for key in ("games", "wins", "losses", "draws"):
                m[key] += r[key]
            m["forfeits"] = [a + b for a, b in zip(m["forfeits"], r["forfeits"], strict=True)]
            m["seeds"] += r.get("seeds", [])
    order = rung_order()
    rows = sorted((m for m in merged.values() if m["games"]), key=lambda m: order.get(m["rung"], len(order)))
    for m in rows:
        m["score"] = (m["wins"] + m["draws"] / 2) / m["games"]
        m["elo"], m["elo_low"], m["elo_high"] = elo_interval(m["wins"], m["losses"], m["draws"])
    return rows


def check_seeds(earlier: Sequence[list[dict]], rungs: list[Rung], seeds: list[int]) -> None:
    """Raise ValueError if the rungs about to be played with these openings seeds (and their extra games,
    seed + MORE_SEED) would draw openings that the ``earlier`` ladders already drew at the same rung."""
    planned = [{"rung": rung.name, "games": 0, "wins": 0, "losses": 0, "draws": 0, "forfeits": [0, 0],
                "seeds": [seed, seed + MORE_SEED]} for rung, seed in zip(rungs, seeds, strict=True)]
    merge_rows(*earlier, planned)


def read_ladder(out: str | Path) -> list[dict]:
    """The rows a ladder wrote to ``out``/ladder.json (``out`` may name the file itself)."""
    path = Path(out)
    path = path / "ladder.json" if path.is_dir() else path
    try:
        rows = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not a ladder's ladder.json ({exc})") from exc
    if not isinstance(rows, list):
        raise DataError(f"{path}: not a ladder's ladder.json (a list of rows, one per rung)")
    for k, r in enumerate(rows):
        problem = _row_problem(r)
        if problem:
            raise DataError(f"{path}: row {k}: {problem}")
    return rows


def _row_problem(r: object) -> str | None:
    """What is wrong with one row of a ladder.json, or None."""
    def count(x: object) -> bool:
        return isinstance(x, int) and not isinstance(x, bool) and x >= 0

    if not isinstance(r, dict) or not isinstance(r.get("rung"), str):
        return "not a rung's row (an object with rung, games, wins, losses, draws, forfeits)"
    if not all(count(r.get(key)) for key in ("games", "wins", "losses", "draws")):
        return "games, wins, losses and draws must be counts"
    if r["games"] != r["wins"] + r["losses"] + r["draws"]:
        return f"games {r['games']} is not wins + losses + draws"
    forfeits = r.get("forfeits")
    if not (isinstance(forfeits, list) and len(forfeits) == 2 and all(count(f) for f in forfeits)):
        return "forfeits must be two counts (messiah's, the opponent's)"
    if not (isinstance(r.get("seeds", []), list) and all(isinstance(x, int) for x in r.get("seeds", []))):
        return "seeds must be a list of integers"
    return None


def fifty_percent(rows: list[dict]) -> str:
    """Where messiah scores 50%: between the last rung it beats and the first it does not (interpolated by
    Elo), or above/below the whole ladder."""
    for lower, upper in zip(rows, rows[1:], strict=False):
        if lower["score"] >= 0.5 > upper["score"]:
            a, b = lower["elo"], upper["elo"]
            share = 0.5 if not (math.isfinite(a) and math.isfinite(b)) or a == b else a / (a - b)
            return f"between {lower['rung']} and {upper['rung']} ({100 * share:.0f}% of the way up)"
    if rows and all(r["score"] >= 0.5 for r in rows):
        return f"above every rung played ({rows[-1]['rung']} scored {100 * rows[-1]['score']:.0f}%)"
    if rows and all(r["score"] < 0.5 for r in rows):
        return f"below every rung played ({rows[0]['rung']} scored {100 * rows[0]['score']:.0f}%)"
    return "not monotonic: " + ", ".join(f"{r['rung']} {100 * r['score']:.0f}%" for r in rows)


def ladder_table(rows: list[dict]) -> str:
    """The rows as a Markdown table, messiah's view."""
    lines = ["| opponent | games | W-L-D | score | Elo (95% interval) | lost on time / illegal |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['rung']} | {r['games']} | {r['wins']}-{r['losses']}-{r['draws']} | "
                     f"{100 * r['score']:.1f}% | {elo_range(r['elo'], r['elo_low'], r['elo_high'])} | "
                     f"{r['forfeits'][0]} |")
    return "\n".join(lines)


def ladder_plot(rows: list[dict], paths: list[Path]) -> list[Path]:
    """Score and Elo interval by rung, drawn once and saved to each path, as PNG or SVG by its suffix (SVG
    keeps its text, so a README can carry it as text)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    clip = 800  # an all-won or all-lost rung has an infinite bound: drawn at the plot's edge
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    names = [r["rung"].replace("fairy-stockfish ", "fs ") for r in rows]
    xs = range(len(rows))
    ax1.bar(xs, [100 * r["score"] for r in rows], color="tab:blue")
    ax1.axhline(50, color="grey", ls="--")
    ax1.set_ylabel("messiah's score, %")
    elo = [max(-clip, min(clip, r["elo"])) for r in rows]
    low = [max(-clip, min(clip, r["elo_low"])) for r in rows]
    high = [max(-clip, min(clip, r["elo_high"])) for r in rows]
    ax2.errorbar(xs, elo, yerr=[[e - lo for e, lo in zip(elo, low, strict=True)],
                                [h - e for e, h in zip(elo, high, strict=True)]], fmt="o", capsize=4)
    ax2.axhline(0, color="grey", ls="--")
    ax2.set_ylabel(f"messiah's Elo, 95% interval (clip {clip})")
    for ax in (ax1, ax2):
        ax.set_xticks(list(xs), names, rotation=30, ha="right")
    fig.tight_layout()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "messiah"}):
        for path in paths:
            fig.savefig(path, dpi=110, metadata={"Date": None} if path.suffix == ".svg" else None)
    plt.close(fig)
    return paths


def write_ladder(rows: list[dict], out: str | Path) -> dict:
    """ladder.json, ladder.md, ladder.png and ladder.svg under ``out``; returns their paths and the 50% rung."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "ladder.json", rows)
    stands = {name: fifty_percent(part) for name, part in ladders(rows).items()}
    table = ladder_table(rows) + "\n\n" + "".join(f"Against {name}, messiah scores 50% {where}.\n"
                                                  for name, where in stands.items())
    (out / "ladder.md").write_text(table)
    result = {"table": str(out / "ladder.md"), "json": str(out / "ladder.json"), "fifty_percent": stands}
    try:
        png, svg = ladder_plot(rows, [out / "ladder.png", out / "ladder.svg"])
        result["png"], result["svg"] = str(png), str(svg)
    except ImportError:
        result["png"] = result["svg"] = None
    return result
