"""`messiah bench soak`: many games against ONE engine process, driven over raw pipes as a GUI drives it
(usinewgame, position ... moves, go under a real clock, pondering with ponderhit or stop, isready and stop in a
search, setoption between games), counting what went wrong: illegal moves, time losses, missing or doubled
bestmoves, lines that are not USI; and the process's resident memory after each game. Not a speed figure: the
engine must never die and never break the protocol, whatever the GUI sends and however long it runs.

The opponent is inside the soak and costs nothing: a random legal move, or half the time the move the engine
said it would ponder on (so that ponderhit happens), after thinking 0 to ``opponent_ms``.
"""

from __future__ import annotations

import contextlib
import queue
import random
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cshogi
import numpy as np

from messiah.config import at_least, setting, within
from messiah.errors import UserError
from messiah.position import perpetual_check_winner


@dataclass
class SoakBench:
    """Many games against one engine process, driven over raw pipes as a GUI drives it: what went wrong."""

    games: int = 100
    """games to play, the engine's colour alternating"""
    engine: str = ""
    """the engine's command (empty: this installation's messiah-usi)"""
    byoyomi: int = 200
    """ms per move after the main time (0: none)"""
    time: int = 0
    """main time in ms (0: none)"""
    inc: int = 0
    """Fischer increment per move in ms"""
    ponder: bool = True
    """think on the opponent's time: USI_Ponder on, go ponder after each engine move, then ponderhit or stop"""
    max_plies: int = 256
    """a game still going at this ply is a draw"""
    opponent_ms: int = 100
    """the opponent (random moves, or the engine's ponder move half the time) thinks 0 to this many ms a move"""
    stop_rate: float = 0.05
    """share of the engine's searches sent a stop at a random moment"""
    isready_rate: float = 0.05
    """share of the engine's searches (ponder searches included) sent an isready at a random moment"""
    setoption_rate: float = 0.2
    """share of games begun with an option changed (MultiPV, BatchSize or USI_Hash, those the engine has)"""
    tolerance: int = 100
    """ms a move may take past its clock before it counts as a time loss (and a stop's answer as slow)"""
    timeout: int = 10000
    """ms past a move's clock (or after a stop) before its bestmove counts as missing"""
    peek: int = 10
    """ms to watch for a second bestmove after each one"""
    options: dict[str, str] = setting(factory=dict, flag="--option")
    """a USI option of the engine, e.g. NodesLimit=100; repeatable"""
    seed: int = 0
    """seed of the opponent's moves and of when stop, isready and setoption are sent"""
    progress: bool = True
    """show a progress bar over the games on stderr"""

    def __post_init__(self) -> None:
        at_least(self, 1, "games", "max_plies")
        at_least(self, 0, "byoyomi", "time", "inc", "opponent_ms", "tolerance", "timeout", "peek")
        within(self, 0, 1, "stop_rate", "isready_rate", "setoption_rate")
        if not (self.time or self.inc or self.byoyomi):
            raise UserError("a clock needs --time, --inc or --byoyomi")



USI_WORDS = frozenset({"id", "usiok", "readyok", "bestmove", "info", "option"})  # what an engine may write to us
SOAK_READY_SECONDS = 60.0  # for usiok and readyok: the first isready loads the model, a setoption rebuilds it
SOAK_QUIT_SECONDS = 10.0
SOAK_EXAMPLES = 5  # examples kept of each kind of problem
# Options changed between games when the engine declares them; none of them loads another model.
SOAK_SETOPTIONS = {"MultiPV": ("1", "2"), "BatchSize": ("4", "8"), "USI_Hash": ("128", "256")}
# What the soak counts as the engine's faults, in the order the verdict names them.
SOAK_PROBLEMS = ("illegal_moves", "time_losses", "missing_bestmoves", "doubled_bestmoves", "early_ponder_bestmoves",
                 "non_usi_lines", "illegal_ponder_moves", "missing_readyok", "unexpected_readyok", "slow_stops",
                 "info_string_errors")


class EngineGone(Exception):
    """The engine process closed its output (it died) or its input."""


class EngineHung(Exception):
    """The engine stopped answering usi or isready."""


class _Pipe:
    """An engine process over raw pipes: every line it writes goes into a queue with the time it was read (None
    at the end of its output), so that nothing it says is lost or hidden."""

    def __init__(self, argv: list[str], stderr) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        self.lines: queue.Queue[tuple[float, str | None]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for raw in iter(self.proc.stdout.readline, b""):
            self.lines.put((time.perf_counter(), raw.decode("utf-8", errors="replace").rstrip("\r\n")))
        self.lines.put((time.perf_counter(), None))

    def write(self, line: str) -> None:
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise EngineGone(f"the engine's input is closed (writing {line!r})") from None

    def rss_mb(self) -> float | None:
        """The process's resident memory (VmRSS), None where /proc cannot tell."""
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except (OSError, ValueError, IndexError):
            pass
        return None


def _position(moves: list[str]) -> str:
    return "position startpos" + (" moves " + " ".join(moves) if moves else "")


def _answer(kind: str) -> bool:
    return kind == "answer"


def _never(kind: str) -> bool:
    return False


class _Soak:
    """One soak: the engine's pipe, the game being played, and what was counted."""

    def __init__(self, cfg: SoakBench, pipe: _Pipe) -> None:
        self.cfg, self.pipe = cfg, pipe
        self.rng = random.Random(cfg.seed)
        self.counts: Counter[str] = Counter()
        self.examples: dict[str, list[str]] = {}
        self.owed = 0  # bestmoves owed: a go sent, its bestmove not yet read
        self.readyok_owed: list[float] = []  # when each isready not yet answered was sent
        self.declared: set[str] = set()  # the options the engine declared
        self.endings: Counter[str] = Counter()
        self.results: Counter[str] = Counter()
        self.move_ms: list[float] = []  # each answer's time, from go (or ponderhit) to bestmove
        self.over_ms: list[float] = []  # and how far that was past the move's whole clock
        self.stop_ms: list[float] = []  # from a stop in a search to its bestmove
        self.ponder_stop_ms: list[float] = []  # from the stop of a ponder search (the move was not the one
        # pondered) to its bestmove
        self.hit_ms: list[float] = []  # the answers after a ponderhit, from the ponderhit
        self.game_index = 0
        self.eof = False  # the engine's output has ended

    def problem(self, kind: str, example: str | None = None) -> None:
        self.counts[kind] += 1
        if example is not None and len(self.examples.setdefault(kind, [])) < SOAK_EXAMPLES:
            self.examples[kind].append(f"game {self.game_index + 1}: {example}")

    def note(self, line: str | None) -> str:
        """Count one line of the engine's. Its kind: 'answer' (the bestmove a go is owed), 'stray' (a bestmove no
        go is owed: doubled), '?' (not USI), else its first word."""
        if line is None:
            self.eof = True
            raise EngineGone("the engine closed its output (it died?)")
        words = line.split()
        head = words[0] if words else ""
        if head not in USI_WORDS:
            self.problem("non_usi_lines", repr(line[:200]))
            return "?"
        if head == "bestmove":
            if self.owed:
                self.owed -= 1
                return "answer"
            self.problem("doubled_bestmoves", line)
            return "stray"
        if head == "readyok":
            if self.readyok_owed:
                self.readyok_owed.pop(0)
            else:
                self.problem("unexpected_readyok")
        elif head == "option" and words[1:2] == ["name"]:
            self.declared.add(" ".join(words[2 : words.index("type")] if "type" in words else words[2:3]))
        elif line.startswith("info string error"):
            self.problem("info_string_errors", line[:200])
        return head

    def wait(self, done: Callable[[str], bool], deadline: float, events: list[list] | None = None
             ) -> tuple[float, str] | None:
        """Read the engine's lines until one whose kind ``done`` accepts (returned with the time it was read), or
        None at ``deadline`` (perf_counter seconds; the lines already there are read even when it has passed).
        ``events``: [time, command, None] lists, each command sent when its time comes (its third item then
        the time it was sent)."""
        while True:
            now = time.perf_counter()
            for event in events or ():
                if event[2] is None and event[0] <= now:
                    self.write(event[1])
                    event[2] = now
            if now >= deadline:
                for _ in range(self.pipe.lines.qsize()):  # what is there already, without waiting
                    at, line = self.pipe.lines.get_nowait()
                    if done(self.note(line)):
                        return at, line
                return None
            until = min([deadline] + [e[0] for e in events or () if e[2] is None])
            try:
                at, line = self.pipe.lines.get(timeout=max(0.0, until - now))
            except queue.Empty:
                continue
            if done(self.note(line)):
                return at, line

    def write(self, command: str) -> None:
        if command == "isready":
            self.readyok_owed.append(time.perf_counter())
        self.pipe.write(command)

    def send(self, command: str) -> None:
        """Write a command after reading what the engine has written so far: a bestmove no go is owed is counted
        before the next command, and so is an isready left unanswered for longer than the timeout."""
        self.wait(_never, 0.0)
        now = time.perf_counter()
        while self.readyok_owed and now - self.readyok_owed[0] > self.cfg.timeout / 1000:
            self.readyok_owed.pop(0)
            self.problem("missing_readyok", f"before {command!r}")
        self.write(command)

    def ready(self) -> None:
        self.send("isready")
        if self.wait(lambda kind: kind == "readyok" and not self.readyok_owed,
                     time.perf_counter() + SOAK_READY_SECONDS) is None:
            self.counts["missing_readyok"] += len(self.readyok_owed)
            raise EngineHung(f"no readyok within {SOAK_READY_SECONDS:.0f} s")

    def start(self) -> None:
        self.send("usi")
        if self.wait(lambda kind: kind == "usiok", time.perf_counter() + SOAK_READY_SECONDS) is None:
            raise EngineHung(f"no usiok within {SOAK_READY_SECONDS:.0f} s")
        if self.cfg.ponder:
            self.send("setoption name USI_Ponder value true")
        for name, value in self.cfg.options.items():
            self.send(f"setoption name {name} value {value}")

    def clock(self, left: list[float]) -> str:
        cfg = self.cfg
        return (f"btime {round(left[0])} wtime {round(left[1])}" + (f" byoyomi {cfg.byoyomi}" if cfg.byoyomi else "")
                + (f" binc {cfg.inc} winc {cfg.inc}" if cfg.inc else ""))

    def lost_bestmove(self, what: str) -> None:
        """A go left without its bestmove: counted; then stop, one more wait for it, and isready (EngineHung when
        even that is not answered)."""
        self.problem("missing_bestmoves", what)
        self.send("stop")
        if self.wait(_answer, time.perf_counter() + self.cfg.timeout / 1000) is None:
            self.owed = 0  # given up on: should it come after all, it counts as doubled
        self.ready()

    def engine_turn(self, moves: list[str], left: list[float], side: int, hit_at: float | None
                    ) -> tuple[str, str | None, str, bool] | None:
        """The engine's answer: bestmove's move, its ponder move, how long it took (said) and whether that lost on
        time;
        after a ponderhit sent at ``hit_at``, else after position and go (a stop or an isready sent in the search
        at random). None when no bestmove came (counted; the engine resynced). The engine's clock is kept as
        ``messiah bench clock`` keeps it."""
        cfg = self.cfg
        allowance = left[side] + cfg.inc + cfg.byoyomi  # ms: the whole clock of this move
        events: list[list] = []
        go = f"go {self.clock(left)}"
        if hit_at is None:
            self.send(_position(moves))
            typical = cfg.byoyomi + (left[side] + cfg.inc) / 20
            for command, rate in (("stop", cfg.stop_rate), ("isready", cfg.isready_rate)):
                if self.rng.random() < rate:
                    events.append([self.rng.uniform(0, typical) / 1000, command, None])
            self.send(go)
            start = time.perf_counter()
            self.owed += 1
            for event in events:
                event[0] += start
        else:
            start = hit_at
        got = self.wait(_answer, start + (allowance + cfg.timeout) / 1000, events)
        sent = {command: at for _, command, at in events if at is not None}
        self.counts["stops_sent"] += "stop" in sent
        self.counts["isready_in_search"] += "isready" in sent
        if got is None:
            self.lost_bestmove(f"{_position(moves)} / {'ponderhit' if hit_at else go}")
            return None
        at, line = got
        ms = (at - start) * 1000
        if "stop" in sent:
            self.stop_ms.append((at - sent["stop"]) * 1000)
            if self.stop_ms[-1] > cfg.tolerance:
                self.problem("slow_stops", f"{_position(moves)}: go, bestmove {self.stop_ms[-1]:.0f} ms after stop")
        self.counts["engine_moves"] += 1
        self.move_ms.append(ms)
        if hit_at is not None:
            self.hit_ms.append(ms)
        self.over_ms.append(ms - allowance)
        left[side] += cfg.inc - ms
        late = False
        if left[side] < 0:
            late = -left[side] > cfg.byoyomi + cfg.tolerance
            left[side] = 0
        self.wait(_never, time.perf_counter() + cfg.peek / 1000)  # a second bestmove is counted as it comes
        words = line.split()
        ponder = words[3] if len(words) > 3 and words[2] == "ponder" else None
        took = f"{ms:.0f} ms after {'ponderhit' if hit_at else 'go'}" + (" and a stop" if "stop" in sent else "")
        return (words[1] if len(words) > 1 else ""), ponder, took, late

    def opponent_turn(self, board: cshogi.Board, moves: list[str], left: list[float], side: int,
                      predicted: str | None) -> tuple[str, bool]:
        """The opponent's move: the engine's ponder move half the time when it is legal, else a random legal
        move, after thinking 0 to ``opponent_ms`` ms; the engine ponders meanwhile when it named a move (an
        isready sent in that search at random). Returns the move and whether the engine is still pondering."""
        cfg = self.cfg
        legal = [cshogi.move_to_usi(m) for m in board.legal_moves]
        pondering = False
        if predicted is not None and cfg.ponder:
            if predicted in legal:
                self.send(_position([*moves, predicted]))
                self.send(f"go ponder {self.clock(left)}")
                self.owed += 1
                pondering = True
            else:
                self.problem("illegal_ponder_moves", f"{_position(moves)}: ponder {predicted}")
        move = predicted if predicted in legal and self.rng.random() < 0.5 else self.rng.choice(legal)
        think = self.rng.uniform(0, cfg.opponent_ms)
        start = time.perf_counter()
        events = ([[start + self.rng.uniform(0, think) / 1000, "isready", None]]
                  if pondering and self.rng.random() < cfg.isready_rate else [])
        if self.wait(_answer, start + think / 1000, events) is not None:
            self.problem("early_ponder_bestmoves", f"{_position([*moves, predicted])}: bestmove before ponderhit "
                         "or stop")
            pondering = False  # answered already: there is nothing to stop
        self.counts["isready_in_search"] += any(e[2] is not None for e in events)
        left[side] = max(0.0, left[side] + cfg.inc - think)
        return move, pondering

    def ended(self, board: cshogi.Board, seen: Counter, plies: int, engine: int) -> tuple[str, str] | None:
        """How the game ended with the last move, as (the engine's result: win, lose or draw, why); None: on."""
        if board.is_game_over():
            return ("lose" if board.turn == engine else "win"), "mate"
        key = board.zobrist_hash()
        seen[key] += 1
        if seen[key] >= 4:
            winner = perpetual_check_winner(board, board.is_draw())
            if winner is None:
                return "draw", "repetition"
            return ("win" if winner == engine else "lose"), "perpetual check"
        if plies >= self.cfg.max_plies:
            return "draw", "max plies"
        return None

    def game(self, index: int) -> None:
        """One game: maybe a setoption first, isready, usinewgame, the moves, gameover."""
        cfg = self.cfg
        self.game_index = index
        names = [name for name in SOAK_SETOPTIONS if name in self.declared]
        if index and names and self.rng.random() < cfg.setoption_rate:
            name = self.rng.choice(names)
            self.send(f"setoption name {name} value {self.rng.choice(SOAK_SETOPTIONS[name])}")
            self.counts["setoptions"] += 1
        self.ready()
        self.send("usinewgame")
        board, moves, seen = cshogi.Board(), [], Counter({cshogi.Board().zobrist_hash(): 1})
        engine = index % 2  # black (cshogi.BLACK, 0) in odd-numbered games
        left = [float(cfg.time), float(cfg.time)]
        hit_at: float | None = None
        predicted: str | None = None
        ending = None
        while ending is None:
            if board.turn == engine:
                answer = self.engine_turn(moves, left, engine, hit_at)
                hit_at = None
                if answer is None:
                    ending = ("lose", "missing bestmove")
                    break
                move, predicted, took, late = answer
                legal = {cshogi.move_to_usi(m) for m in board.legal_moves}
                if late:
                    self.problem("time_losses", f"{_position(moves)}: {took}, clock {self.clock(left)}")
                    self.counts["time_losses_after_ponderhit"] += "after ponderhit" in took
                    ending = ("lose", "time")
                elif move == "resign":
                    ending = ("lose", "resign")
                elif move == "win" and board.is_nyugyoku():
                    ending = ("win", "declaration")
                elif move not in legal:
                    self.problem("illegal_moves", f"{_position(moves)}: bestmove {move}")
                    ending = ("lose", "illegal move")
                else:
                    board.push_usi(move)
                    moves.append(move)
                    ending = self.ended(board, seen, len(moves), engine)
            else:
                move, pondering = self.opponent_turn(board, moves, left, 1 - engine, predicted)
                board.push_usi(move)
                moves.append(move)
                ending = self.ended(board, seen, len(moves), engine)
                if pondering and move == predicted and ending is None:
                    self.send("ponderhit")
                    hit_at = time.perf_counter()
                    self.counts["ponderhits"] += 1
                elif pondering:
                    self.send("stop")
                    stopped = time.perf_counter()
                    self.counts["ponder_stops"] += 1
                    got = self.wait(_answer, stopped + cfg.timeout / 1000)
                    if got is None:
                        self.lost_bestmove(f"{_position(moves[:-1])} {predicted} / go ponder, stop")
                    else:
                        self.ponder_stop_ms.append((got[0] - stopped) * 1000)
                        if self.ponder_stop_ms[-1] > cfg.tolerance:
                            self.problem("slow_stops", f"{_position(moves[:-1])} {predicted}: go ponder, bestmove "
                                         f"{self.ponder_stop_ms[-1]:.0f} ms after stop")
                        self.wait(_never, time.perf_counter() + cfg.peek / 1000)  # a second bestmove?
                predicted = None
        self.endings[ending[1]] += 1
        self.results[ending[0]] += 1
        self.send(f"gameover {ending[0]}")

    def quit(self) -> int | None:
        """quit, and the exit status (None: it had to be killed); what it wrote till then is counted."""
        try:
            self.send("quit")
            self.pipe.proc.stdin.close()
        except (EngineGone, OSError):
            pass
        try:
            code = self.pipe.proc.wait(SOAK_QUIT_SECONDS)
        except subprocess.TimeoutExpired:
            self.pipe.proc.kill()
            self.pipe.proc.wait()
            code = None
        while not self.eof:  # its last lines: the reader ends with None once the pipe closes
            try:
                _, line = self.pipe.lines.get(timeout=SOAK_QUIT_SECONDS)
            except queue.Empty:
                break
            if line is None:
                self.eof = True
                break
            self.note(line)
        return code


def bench_soak(cfg: SoakBench) -> dict:
    """``cfg.games`` games against ONE engine process driven over raw pipes as a GUI drives it, the engine's
    colour alternating, against a cheap opponent inside the bench; what went wrong (illegal moves, time losses,
    missing or doubled bestmoves, lines that are not USI, ...) and the process's resident memory after each
    game. The process must live to the end and exit on quit."""
    import shutil

    from tqdm import tqdm

    from messiah.arena.match import messiah_command

    argv = shlex.split(cfg.engine) if cfg.engine else [messiah_command()]
    if not argv or not shutil.which(argv[0]):
        raise UserError(f"engine command not found: {cfg.engine!r}")
    rss: list[float] = []
    failure = None
    began = time.perf_counter()
    with tempfile.TemporaryFile() as stderr:
        pipe = _Pipe(argv, stderr)
        soak = _Soak(cfg, pipe)
        bar = tqdm(range(cfg.games), unit="game", file=sys.stderr, disable=not cfg.progress, desc="soak")
        try:
            soak.start()
            for index in bar:
                soak.game(index)
                rss.append(round(pipe.rss_mb() or 0.0, 1))
                bar.set_postfix(moves=soak.counts["engine_moves"], problems=sum(soak.counts[k] for k in SOAK_PROBLEMS),
                                rss_mb=f"{rss[-1]:.0f}")
        except (EngineGone, EngineHung) as e:
            failure = f"game {soak.game_index + 1}: {e}"
        finally:
            bar.close()
        if soak.eof:  # its output closed: give a dying process the moment it takes to exit
            with contextlib.suppress(subprocess.TimeoutExpired):
                pipe.proc.wait(SOAK_QUIT_SECONDS)
        alive = pipe.proc.poll() is None
        try:
            exit_code = soak.quit()
        except EngineGone:
            exit_code = pipe.proc.returncode
        stderr.seek(0)
        err = stderr.read().decode("utf-8", errors="replace").splitlines()
    counts = soak.counts
    problems = [f"{counts[k]} {k.replace('_', ' ')}" for k in SOAK_PROBLEMS if counts[k]]
    if failure:
        problems.insert(0, failure)
    if not alive:
        problems.append("the engine was not alive at the end")
    if exit_code != 0:
        problems.append(f"quit: exit status {exit_code}" if exit_code is not None else "quit: it did not exit")
    base_game = 10 if len(rss) >= 10 else 1
    growth = rss[-1] - rss[base_game - 1] if rss else None
    memory = (f"RSS {rss[base_game - 1]:.1f} MB after game {base_game}, {rss[-1]:.1f} MB after game {len(rss)}: "
              f"{growth:+.1f} MB" if rss else "no game finished")
    out: dict = {
        "engine": " ".join(argv), "clock": soak.clock([cfg.time, cfg.time]), "ponder": cfg.ponder,
        "games": len(rss), "engine_moves": counts["engine_moves"],
        "engine_wins": soak.results["win"], "engine_losses": soak.results["lose"], "draws": soak.results["draw"],
        "endings": dict(soak.endings),
        **{kind: counts[kind] for kind in SOAK_PROBLEMS},
        "time_losses_after_ponderhit": counts["time_losses_after_ponderhit"],
        "ponderhits": counts["ponderhits"], "ponder_stops": counts["ponder_stops"],
        "stops_sent": counts["stops_sent"], "isready_in_search": counts["isready_in_search"],
        "setoptions": counts["setoptions"],
        "move_ms_median": float(np.median(soak.move_ms)) if soak.move_ms else None,
        "move_ms_max": max(soak.move_ms, default=None),
        "over_clock_ms_max": max(soak.over_ms, default=None),
        "ponderhit_move_ms_max": max(soak.hit_ms, default=None),
        "stop_answer_ms_max": max(soak.stop_ms, default=None),
        "ponder_stop_answer_ms_max": max(soak.ponder_stop_ms, default=None),
        "rss_mb": rss,
        "memory_growth_mb": None if growth is None else round(growth, 1),
        "alive_at_end": alive, "exit_code": exit_code, "stderr_lines": len(err),
        "seconds": time.perf_counter() - began,
    }
    out |= {f"{kind}_examples": examples for kind, examples in soak.examples.items() if examples}
    if failure or not alive or exit_code != 0:
        out["stderr_tail"] = err[-10:]
    out["verdict"] = ("PROBLEMS: " + "; ".join(problems) if problems else "clean") + f"; {memory}"
    return out
