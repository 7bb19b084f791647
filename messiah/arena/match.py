"""`messiah match`: games between two USI engines, a thin layer over ``cshogi.cli``.

cshogi.cli plays the games (clocks, adjudication, CSA records); this module only adds what it lacks:
games in parallel processes (each process plays one opening with both colours), one CSA file per game
under a single directory, a progress bar on stderr, and a summary with the Elo difference and its 95%
interval, how each game ended and how many were lost on time or by an illegal move; and, with ``sprt``, a
sequential test that stops the match as soon as it can tell elo0 from elo1.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import hashlib
import io
import json
import os
import random
import shlex
import shutil
import stat
import sys
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

import cshogi
from cshogi import CSA
from tqdm import tqdm

from messiah.arena.stats import Game, elo_range, merge, parse_sprt, summarize
from messiah.arena.watchdog import GRACE_SECONDS
from messiah.config import at_least, setting
from messiah.environment import environment
from messiah.errors import DataError, UserError
from messiah.files import write_json
from messiah.paths import SHARED_DATA
from messiah.protocol import parse_go
from messiah.rules import DRAW_PLY

DEFAULT_OPENINGS = SHARED_DATA / "openings" / "records2016_10818.sfen"
OPENING_PLIES = 24
# Without the shared set, openings of this many random legal moves: enough for varied games, few enough that
# one side is rarely lost before the engines play.
RANDOM_OPENING_PLIES = 8
BYOYOMI = 1000  # ms per move of a match that names no clock
WATCHDOG_GRACE = GRACE_SECONDS  # s past a move's whole clock before a silent engine is resigned for


@dataclass
class MatchConfig:
    """Everything one match needs. Times are in milliseconds; options are USI option name -> value."""

    opponent: str
    """the other engine's command, e.g. /usr/games/fairy-stockfish"""
    engine: str = ""
    """the first engine's command (empty: this installation's messiah-usi)"""
    options: dict[str, str] = setting(factory=dict, flag="--option")
    """a USI option of the first engine; repeatable"""
    opponent_options: dict[str, str] = setting(factory=dict, flag="--opponent-option")
    """a USI option of the opponent, e.g. 'Skill Level=-20'; repeatable"""
    games: int = 2
    """games, in pairs of one opening with colours swapped"""
    jobs: int = 1
    """games played at once, each in its own process"""
    byoyomi: int | None = None
    """ms per move after the main time (default: 1000 when there is no --time)"""
    time: int | None = None
    """main time in ms (sudden death, or Fischer with --inc)"""
    inc: int | None = None
    """increment per move in ms"""
    openings: str | None = "auto"
    """file of 'startpos moves ...' lines (24 plies are played; each pair plays a line drawn by --seed);
    'random': a new opening for each pair, 8 random legal moves from the start position made from --seed and
    written to OUT/openings.sfen (a set no engine was tuned or trained on); 'auto': the shared set
    ($MESSIAH_DATA/openings/records2016_10818.sfen) when it is there, else 'random'; 'none': every game from
    the start position"""
    seed: int = 0
    """which openings are drawn"""
    draw: int = DRAW_PLY
    """a game still going at this ply is a draw"""
    opponent_go: str = ""
    """a fixed search for the opponent instead of the clock, as go's arguments: 'depth 8', 'nodes 100000' or
    'movetime 500' (every go it is sent becomes 'go ARGS'; the first engine keeps the clock). For reference
    rungs such as a teacher's fixed depth; byoyomi clocks are not enforced, so no game is lost on time"""
    ponder: bool = False
    """think on the opponent's time (cshogi.cli's ponder): sets USI_Ponder for both engines; an
    --opponent-option USI_Ponder=false leaves messiah as the opponent without pondering. messiah as the first
    engine logs its USI lines (WriteDebugLog) so that the report counts its ponderhits"""
    out: str = "runs/match"
    """directory for the CSA records and match.log"""
    sprt: tuple[float, float] | None = setting(None, parse=parse_sprt, metavar="ELO0,ELO1")
    """stop as soon as a sequential probability ratio test (pentanomial GSPRT, alpha = beta = 0.05) accepts
    elo0 or elo1; --games is the most; write --sprt=-30,30 when elo0 is negative"""

    def __post_init__(self) -> None:
        if self.byoyomi is None and self.time is None:
            self.byoyomi = BYOYOMI
        if self.openings in ("", "none"):
            self.openings = None
        at_least(self, 1, "games", "jobs", "draw")
        self.opponent_go = fixed_go(self.opponent_go, self.ponder)
        self.options, self.opponent_options = absolute_files(self.options), absolute_files(self.opponent_options)


def fixed_go(args: str, ponder: bool) -> str:
    """``--opponent-go``'s arguments, checked: a depth, a node count or a movetime (any of them), nothing else."""
    words = args.split()
    if not words:
        return ""
    numbers, flags, ignored = parse_go(words)
    if flags or ignored or not numbers or not numbers.keys() <= {"depth", "nodes", "movetime"}:
        raise UserError(f"--opponent-go {args!r}: give go's 'depth N', 'nodes N' or 'movetime MS', not a clock")
    if ponder:
        raise UserError("--opponent-go and --ponder: an opponent with a fixed search has no clock to ponder on")
    return " ".join(words)


def absolute_files(options: dict[str, str]) -> dict[str, str]:
    """Option values that name a file here (a ModelPath, a BookFile) made absolute: cshogi starts each engine in
    its own folder, where a relative path names nothing, and an engine without its model resigns every game."""
    return {name: os.path.abspath(value) if not os.path.isabs(value) and os.path.isfile(value) else value
            for name, value in options.items()}

def messiah_command() -> str:
    """The messiah-usi script of this installation (beside the running Python), else on PATH."""
    beside = Path(sys.executable).with_name("messiah-usi")
    found = str(beside) if beside.exists() else shutil.which("messiah-usi")
    if not found:
        raise UserError("messiah-usi not found: install the package (pip install .)")
    return found


def executable(command: str, out: Path, name: str) -> str:
    """cshogi starts an engine as Popen([command]): a command with arguments gets a wrapper script."""
    if Path(command).is_file() and os.access(command, os.X_OK):
        return command
    words = shlex.split(command)
    if not words or not shutil.which(words[0]):
        raise UserError(f"engine command not found: {command!r}")
    if len(words) == 1:
        return shutil.which(words[0])
    script = out / f"{name}.sh"
    script.write_text("#!/bin/sh\nexec " + " ".join(shlex.quote(w) for w in words) + ' "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def errors_file(out: str | os.PathLike, name: str) -> Path:
    """Where the relay of engine ``name`` ("engine" or "opponent") keeps the errors its engine reported."""
    return Path(out) / f"{name}.errors"


def engine_errors(out: str | os.PathLike) -> dict[str, dict]:
    """The errors each engine of the match in ``out`` reported (``info string error`` lines), by role: their count
    and the first of them; {} for a match played before its relays kept them (no file, not no error)."""
    found = {}
    for name in ("engine", "opponent"):
        path = errors_file(out, name)
        if path.is_file():
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            found[name] = {"count": len(lines), "first": lines[0] if lines else None}
    return found


def _sum_errors(parts: list[dict[str, dict]]) -> dict[str, dict]:
    """The engine errors of several match folders together: counts added, the first one kept."""
    roles = [role for role in ("engine", "opponent") if any(role in p for p in parts)]
    return {role: {"count": sum(p[role]["count"] for p in parts if role in p),
                   "first": next((p[role]["first"] for p in parts if role in p and p[role]["first"]), None)}
            for role in roles}


def watched(command: str, out: Path, name: str, go: str = "") -> str:
    """The engine started through the watchdog relay (messiah.arena.watchdog), as a script cshogi can start:
    an engine that stops answering resigns instead of stalling the match. ``go``: the relay's fixed search."""
    script = (out / f"{name}.watched.sh").resolve()  # cshogi starts an engine in its own folder: absolute paths
    command = os.path.abspath(command) if os.path.exists(command) else command
    fixed = f"--go {shlex.quote(go)} " if go else ""
    kept = errors_file(out, name).resolve()
    kept.touch()  # there, if empty: this match's errors were kept (engine_errors)
    errors = f"--errors {shlex.quote(str(kept))} "
    script.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m messiah.arena.watchdog {fixed}{errors}"
                      f'{WATCHDOG_GRACE} {shlex.quote(command)} "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def engine_names(cfg: MatchConfig, commands: tuple[str, str]) -> tuple[str, str]:
    """Short names for records and reports: the commands' file names (messiah-usi is "messiah")."""
    names = ["messiah" if c == messiah_command() else Path(shlex.split(c)[0]).name
             for c in (cfg.engine or commands[0], cfg.opponent)]
    if names[0] == names[1]:
        names = [f"{names[0]}-1", f"{names[1]}-2"]
    return names[0], names[1]


def check_engines(commands: tuple[str, str], options: tuple[dict, dict]) -> None:
    """Start each engine once and see it answer usi and isready with its options set, with no error said. cshogi.cli
    waits for ever on an engine that dies or does not speak USI (the match sat at 0%): this fails at once, naming it."""
    from messiah.arena.client import EngineError, UsiClient

    for command, opts in zip(commands, options, strict=True):
        try:
            client = UsiClient(command, opts)
        except EngineError as e:
            raise UserError(str(e)) from None
        client.close()
        errors = [line for line in client.said if line.lower().startswith("info string error")]
        if errors:  # e.g. a ModelPath it cannot load: it would resign every game, and the match read as won
            raise UserError(f"{command} reported at isready: {errors[0][len('info string '):]}")


def _play_pair(commands: tuple[str, str], names: tuple[str, str], options: tuple[dict, dict], cfg: MatchConfig,
               opening: int | None, games: int, first_number: int, ponder_log: bool) -> tuple[list[Game], str]:
    """Worker process: one opening with both colours through cshogi.cli; returns the games and the log."""
    out = Path(cfg.out)
    scratch = out / f".pair{first_number:05d}"
    scratch.mkdir(parents=True, exist_ok=True)
    tallies: list[dict] = []
    usi_log = None
    if ponder_log and "WriteDebugLog" not in options[0]:
        usi_log = (scratch / "engine.usi.log").resolve()  # cshogi starts the engine in its own folder
        options = ({**options[0], "WriteDebugLog": str(usi_log)}, options[1])

    def tally(summary: dict) -> bool:
        tallies.append(dict(summary))
        return True

    log = io.StringIO()
    with contextlib.redirect_stdout(log):
        import cshogi.cli

        cshogi.cli.main(commands[0], commands[1], options[0], options[1], names=list(names), games=games,
                        byoyomi=cfg.byoyomi, time=cfg.time, inc=cfg.inc, draw=cfg.draw,
                        opening=cfg.openings if opening is not None else None, opening_moves=OPENING_PLIES,
                        opening_index=opening, csa=str(scratch), ponder=cfg.ponder, print_summary=False,
                        callback=tally)
    ponders = [(0, 0)] * len(tallies)
    if usi_log is not None and usi_log.exists():
        counts = ponder_counts(usi_log.read_text(encoding="utf-8", errors="replace"))
        ponders = ([(0, 0)] * len(tallies) + counts)[-len(tallies):]
        usi_log.unlink()
    records = sorted(scratch.glob("*.csa"), key=lambda p: p.stat().st_mtime_ns)
    result, before = [], {"engine1_won": 0, "engine2_won": 0}
    for i, (summary, path) in enumerate(zip(tallies, records, strict=True)):
        number = first_number + i
        target = out / f"{number:04d}_{path.name}"
        path.replace(target)
        parser = CSA.Parser.parse_file(str(target))[0]
        if summary["engine1_won"] > before["engine1_won"]:
            outcome = "win"
        elif summary["engine2_won"] > before["engine2_won"]:
            outcome = "loss"
        else:
            outcome = "draw"
        before = summary
        result.append(Game(number, -1 if opening is None else opening, i % 2 == 0, outcome,
                           parser.endgame or "", len(parser.moves), str(target), *ponders[i]))
    scratch.rmdir()
    return result, log.getvalue()


def ponder_counts(log: str) -> list[tuple[int, int]]:
    """Per game of a messiah WriteDebugLog (games begin at usinewgame): how many go ponder it was sent, and
    how many of those became its move by ponderhit."""
    games: list[list[int]] = []
    for line in log.splitlines():
        words = line.split()
        if len(words) < 3 or words[1] != ">":
            continue
        if words[2] == "usinewgame":
            games.append([0, 0])
        elif games and words[2] == "go" and "ponder" in words[3:]:
            games[-1][0] += 1
        elif games and words[2] == "ponderhit":
            games[-1][1] += 1
    return [(p, h) for p, h in games]


def random_openings(count: int, seed: int, plies: int = RANDOM_OPENING_PLIES) -> list[str]:
    """``count`` openings of ``plies`` random legal moves from the start position, as 'startpos moves ...'."""
    rng, board, lines = random.Random(seed), cshogi.Board(), []
    while len(lines) < count:
        board.reset()
        for _ in range(plies):
            board.push(rng.choice(list(board.legal_moves)))
            if board.is_game_over():
                break
        else:
            lines.append("startpos moves " + " ".join(cshogi.move_to_usi(m) for m in board.history))
    return lines


def write_random_openings(out: Path, count: int, seed: int, plies: int = RANDOM_OPENING_PLIES) -> Path:
    """OUT/openings.sfen: ``count`` openings of ``plies`` random moves (:func:`random_openings`), for a match
    to draw from."""
    path = out / "openings.sfen"
    path.write_text("\n".join(random_openings(count, seed, plies)) + "\n")
    return path


class Openings(NamedTuple):
    """What each pair of a match plays from."""

    path: str | None
    """the opening file; None: every game from the start position"""
    lines: list[int | None]
    """the line of ``path`` pair k plays"""


def match_openings(cfg: MatchConfig, pairs: int) -> Openings:
    """The openings of a match's ``pairs``: from ``cfg.openings``, a line drawn for each pair by the match's
    seed; for 'auto' from the shared set; for 'random', or 'auto' where the shared set is absent, random
    openings written to OUT/openings.sfen from the match's seed, one for each pair in order (a draw would play
    some twice and others never)."""
    if cfg.openings == "random" or (cfg.openings == "auto" and not DEFAULT_OPENINGS.is_file()):
        count = max(1, pairs)
        path = write_random_openings(Path(cfg.out), count, cfg.seed)
        if cfg.openings == "auto":
            openings = "1 opening" if count == 1 else f"{count} openings"
            print(f"no shared opening set at {DEFAULT_OPENINGS}: {openings} of {RANDOM_OPENING_PLIES} random moves "
                  f"written to {path}", file=sys.stderr)
        return Openings(str(path), list(range(pairs)))
    if not cfg.openings:
        return Openings(None, [None] * pairs)
    path = Path(DEFAULT_OPENINGS if cfg.openings == "auto" else cfg.openings)
    if not path.is_file():
        raise DataError(f"opening file not found: {path}")
    with open(path) as f:
        count = sum(1 for _ in f)
    if count == 0:
        raise DataError(f"{path}: no openings")
    rng = random.Random(cfg.seed)
    return Openings(str(path), [rng.randrange(count) for _ in range(pairs)])


def play_match(cfg: MatchConfig, progress: bool = True) -> tuple[tuple[str, str], list[Game]]:
    """Play ``cfg.games`` games (pairs of one opening with colours swapped), ``cfg.jobs`` at a time: the
    engines' names and the games in order. ``progress``: a progress bar on stderr."""
    return play_matches([cfg], cfg.jobs, progress)[0]


class _Setup(NamedTuple):
    """What play_matches prepares once per match before its pairs are handed out."""

    commands: tuple[str, str]
    names: tuple[str, str]
    openings: list[int | None]
    pairs: int
    ponder_log: bool  # messiah is the first engine of a pondering match: its USI log counts the ponderhits


def play_matches(cfgs: list[MatchConfig], jobs: int, progress: bool = True) -> list[tuple[tuple[str, str], list[Game]]]:
    """Play several matches through one pool of ``jobs`` workers, their pairs in order, so that a ladder's
    rungs keep every core busy instead of each rung's last pairs leaving most of them idle. Each match keeps
    its own records, log, openings and SPRT. Returns each match's engine names and games in order."""
    setups, resolved = [], []
    for cfg in cfgs:
        out = Path(cfg.out)
        out.mkdir(parents=True, exist_ok=True)
        pairs = (cfg.games + 1) // 2
        openings = match_openings(cfg, pairs)
        cfg = replace(cfg, openings=openings.path)
        resolved.append(cfg)
        commands = (executable(cfg.engine or messiah_command(), out, "engine"),
                    executable(cfg.opponent, out, "opponent"))
        check_engines(commands, (cfg.options, cfg.opponent_options))  # the engines themselves, not their relays
        names = engine_names(cfg, commands)
        write_card(cfg, commands, names)
        ponder_log = cfg.ponder and commands[0] == messiah_command()
        commands = (watched(commands[0], out, "engine"), watched(commands[1], out, "opponent", cfg.opponent_go))
        setups.append(_Setup(commands, names, openings.lines, pairs, ponder_log))
    cfgs = resolved
    games: list[list[Game]] = [[] for _ in cfgs]
    decided = [False] * len(cfgs)
    # Pairs are handed out one per free worker, not queued all at once: when an SPRT decides, only the pairs
    # already being played are left to finish (their games are not counted), not the executor's whole queue.
    todo = iter([(m, k) for m, setup in enumerate(setups) for k in range(setup.pairs)])
    names0 = setups[0].names if setups else ("", "")
    bar = tqdm(total=sum(cfg.games for cfg in cfgs), unit="game", file=sys.stderr,
               desc=f"{names0[0]} vs {names0[1]}" if len(cfgs) == 1 else f"{len(cfgs)} matches",
               disable=not progress)
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool, contextlib.ExitStack() as stack:
        logs = [stack.enter_context(open(Path(cfg.out) / "match.log", "a")) for cfg in cfgs]
        running: dict = {}

        def fill() -> None:
            while len(running) < max(1, jobs):
                m, k = next(((m, k) for m, k in todo if not decided[m]), (None, None))
                if m is None:
                    return
                cfg, setup = cfgs[m], setups[m]
                future = pool.submit(_play_pair, setup.commands, setup.names, (cfg.options, cfg.opponent_options),
                                     cfg, setup.openings[k], min(2, cfg.games - 2 * k), 2 * k + 1, setup.ponder_log)
                running[future] = m

        fill()
        while running:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                m = running.pop(future)
                pair, text = future.result()
                if decided[m]:
                    continue
                bar.update(len(pair))
                logs[m].write(text if text.endswith("\n") else text + "\n")
                games[m] += pair
                s = summarize(games[m], cfgs[m].sprt)
                bar.set_postfix_str(("" if len(cfgs) == 1 else f"{setups[m].names[1]} ")
                                    + f"W-L-D {s['wins']}-{s['losses']}-{s['draws']}"
                                    + (f" LLR {s['sprt']['llr']:.2f}" if cfgs[m].sprt else ""))
                decided[m] = bool(cfgs[m].sprt and s["sprt"]["decision"] != "continue")
            fill()
    bar.close()
    return [(setup.names, sorted(played, key=lambda g: g.number)) for setup, played in zip(setups, games, strict=True)]


def report(cfg: MatchConfig, names: tuple[str, str], summary: dict) -> str:
    """The summary as text, first engine's view."""
    clock = (f"byoyomi {cfg.byoyomi} ms" if cfg.byoyomi else "") + (f" time {cfg.time} ms" if cfg.time else "") + \
        (f" inc {cfg.inc} ms" if cfg.inc else "") + (", ponder" if cfg.ponder else "") + \
        (f", {names[1]} at go {cfg.opponent_go}" if cfg.opponent_go else "")
    return _report(f"{names[0]} vs {names[1]}: {summary['games']} games, {clock.strip()}", names, summary,
                   f"records: {cfg.out}/*.csa")


def _report(title: str, names: tuple[str, str], summary: dict, last: str) -> str:
    lines = [title,
             f"W-L-D {summary['wins']}-{summary['losses']}-{summary['draws']}  score {100 * summary['score']:.1f}%",
             f"Elo difference {elo_range(summary['elo'], summary['elo_low'], summary['elo_high'], named=True)}",
             f"as black W-L-D {summary['black']}, as white {summary['white']}, "
             f"mean length {summary['mean_plies']:.0f} plies",
             "endings: " + ", ".join(f"{k or '?'} {v}" for k, v in sorted(summary["endings"].items())),
             f"lost on time or by an illegal move: {names[0]} {summary['forfeits'][0]}, "
             f"{names[1]} {summary['forfeits'][1]}",
             last]
    if "ponder" in summary:
        p = summary["ponder"]
        lines.insert(-1, f"{names[0]} pondered {p['ponders']} times: ponderhit {p['hits']} "
                         f"({100 * p['share']:.1f}%), stopped {p['ponders'] - p['hits']}")
    errors = summary.get("engine_errors", {})
    broken = [f"{name} {errors[role]['count']} (first: {errors[role]['first']})"
              for role, name in zip(("engine", "opponent"), names, strict=True) if errors.get(role, {}).get("count")]
    if broken:
        lines.insert(-1, "WARNING: errors the engines reported, whose games may count as losses they never played: "
                         + "; ".join(broken))
    if "sprt" in summary:
        t = summary["sprt"]
        lines.insert(3, f"SPRT elo0 {t['elo0']:g} elo1 {t['elo1']:g} (alpha {t['alpha']}, beta {t['beta']}, "
                        f"pentanomial pairs {t['pentanomial']}): LLR {t['llr']:.2f} (bounds {t['lower']:.2f}, "
                        f"{t['upper']:.2f}): {t['decision']}")
    return "\n".join(lines)



CARD = "match.json"  # what a match was, beside its records: match-report --json carries it into the summary


def _file_facts(path: str) -> dict:
    return {"path": path, "sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest()}


def write_card(cfg: MatchConfig, commands: tuple[str, str], names: tuple[str, str]) -> None:
    """Write OUT/match.json: the command line, the engines (command, options, and the sha256 of every option that
    names a file, a model or a book), the clock, the openings file with its sha256, the seed and the date. A
    summary committed from these records then says what was played, after the records and the machine are
    gone."""
    def engine(command: str, name: str, options: dict[str, str]) -> dict:
        files = {k: _file_facts(v) for k, v in options.items() if os.path.isfile(v)}
        return {"name": name, "command": command, "options": options, "files": files}

    card = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": shlex.join(sys.argv), "environment": environment(),
            "engine": engine(commands[0], names[0], cfg.options),
            "opponent": engine(commands[1], names[1], cfg.opponent_options),
            "openings": _file_facts(cfg.openings) if cfg.openings else None,
            **{k: v for k, v in dataclasses.asdict(cfg).items() if k not in ("engine", "opponent", "options",
                                                                          "opponent_options", "openings")}}
    write_json(Path(cfg.out) / CARD, card)


RECORD_GLOB = "[0-9]*_*.csa"  # a finished game's record in a match's --out: its number (0001), cshogi's name


@dataclass
class MatchReportConfig:
    """The folders whose recorded games are summed."""

    folders: list[str] = setting(factory=list, positional=True)
    """match folders (each match's --out), or summaries kept from an earlier `match-report --json` of parts whose
    records are gone: their finished games are counted together"""
    sprt: tuple[float, float] | None = setting(None, parse=parse_sprt, metavar="ELO0,ELO1")
    """the state of a sequential probability ratio test (pentanomial GSPRT, alpha = beta = 0.05) of elo0 against
    elo1 over these games: a match played in parts is one SPRT when its parts are read in the order played"""

    def __post_init__(self) -> None:
        if not self.folders:
            raise UserError("name at least one match folder (a match's --out)")


def recorded_games(folder: str | os.PathLike) -> tuple[tuple[str, str], list[Game]]:
    """The engines' names and the finished games a match wrote to ``folder`` (its --out), from the CSA records:
    the first engine played black in the odd-numbered games (each pair plays its opening with the first engine
    black, then white). A match stopped early has left only whole pairs there: a pair's records arrive together."""
    games: list[Game] = []
    names = ("", "")
    numbered = ((path.name.split("_", 1)[0], path) for path in Path(folder).glob(RECORD_GLOB))
    for number, path in sorted((int(n), path) for n, path in numbered if n.isdigit()):
        if games and games[-1].number == number:
            raise DataError(f"{folder}: two records of game {number} ({Path(games[-1].record).name}, {path.name}): "
                            "give each match its own --out")
        try:
            record = CSA.Parser.parse_file(str(path))[0]
        except Exception as e:
            raise DataError(f"{path}: not a CSA record cshogi reads ({e})") from None
        if not record.endgame:
            raise DataError(f"{path}: the game has no end (%TORYO, %SENNICHITE, ...): not a finished game")
        first_is_black = number % 2 == 1
        if not games:
            names = tuple(record.names) if first_is_black else tuple(reversed(record.names))
        if record.win == cshogi.DRAW:
            outcome = "draw"
        else:
            outcome = "win" if (record.win == cshogi.BLACK_WIN) == first_is_black else "loss"
        games.append(Game(number, -1, first_is_black, outcome, record.endgame, len(record.moves), str(path)))
    if not games:
        raise DataError(f"{folder}: no game records ({RECORD_GLOB}): not a match's --out, or no pair finished yet")
    return names, games


def _card(folder: str) -> dict:
    """A match folder's match.json ({} for a match played before matches wrote one)."""
    path = Path(folder) / CARD
    return {"match": json.loads(path.read_text())} if path.is_file() else {}


SUMMARY_COUNTS = ("games", "wins", "losses", "draws", "endings", "black", "white", "mean_plies", "forfeits",
                  "pentanomial")  # what a kept summary must hold to be counted again (stats.merge sums them)


def kept_summary(path: str | os.PathLike) -> dict:
    """A part kept as its summary (``match-report --json`` written to a file) because its records are gone;
    DataError when the file is not one."""
    try:
        summary = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise DataError(f"{path}: not a match summary that can be read ({e})") from None
    missing = [k for k in SUMMARY_COUNTS if not isinstance(summary, dict) or k not in summary]
    if missing:
        raise DataError(f"{path}: not a `messiah match-report --json` summary (no {', '.join(missing)})")
    return summary


def _kept_names(summary: dict) -> tuple[str, str] | None:
    """The engines of a kept summary: its own ``engines``, else (a summary written before it had them) the names
    on its first part's match card; None when neither says."""
    if "engines" in summary:
        return tuple(summary["engines"])
    for part in summary.get("parts", []):
        card = part.get("match", {})
        if "engine" in card and "opponent" in card:
            return card["engine"]["name"], card["opponent"]["name"]
    return None


def match_report(cfg: MatchReportConfig) -> tuple[str, dict]:
    """The games of several match folders counted as one match (a match played in parts, with other seeds or on
    other machines): the report's text and its summary, whose ``parts`` name each folder, its games and what
    its match.json says the match was. A part may also be a summary file kept from an earlier report whose
    records are gone: its counts are added (stats.merge) and its own parts listed. Pairs never span two
    parts."""
    summaries, pairings, parts = [], [], []
    for item in cfg.folders:
        if Path(item).is_file():
            summary = kept_summary(item)
            names = _kept_names(summary)
            parts.append({"summary": str(item), "games": summary["games"], "parts": summary.get("parts", [])})
        else:
            names, played = recorded_games(item)
            summary = summarize(played)
            errors = engine_errors(item)
            parts.append({"folder": item, "games": len(played), **({"engine_errors": errors} if errors else {}),
                          **_card(item)})
        summaries.append(summary)
        if names is not None and names not in pairings:
            pairings.append(names)
    pairings = pairings or [("first engine", "second engine")]
    summary = merge(summaries, cfg.sprt)
    summary["engines"] = list(pairings[0])
    summary["engine_errors"] = _sum_errors([part["engine_errors"] for part in parts if "engine_errors" in part])
    summary["parts"] = parts
    counts = ", ".join(f"{part.get('folder', part.get('summary'))} {part['games']}" for part in parts)
    title = " / ".join(f"{a} vs {b}" for a, b in pairings) + f": {summary['games']} games ({counts})"
    return _report(title, pairings[0], summary, f"pentanomial pairs (0, 1/2, 1, 3/2, 2 points): "
                   f"{summary['pentanomial']}"), summary
