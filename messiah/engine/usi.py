"""The USI engine (``messiah-usi``, or ``messiah usi``).

The search is chosen by the ``Search`` option (alpha-beta, UCB1, PUCT) and runs on a worker thread, so
``stop``, ``ponderhit`` and ``isready`` are answered while it thinks. Whatever a GUI or a user sends, the
engine answers and lives on: a line it cannot use gets an ``info string`` saying why and the previous state
stays; every ``go`` gets exactly one ``bestmove`` (every ``go mate`` one ``checkmate``); ``position``,
``go``, ``setoption`` and ``usinewgame`` sent during a search wait for its bestmove instead of being
dropped, as in YaneuraOu; and nothing but USI reaches stdout (see :func:`main`).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import cshogi

from messiah import __version__
from messiah.engine.mate import solve_mate
from messiah.evaluator import Evaluator
from messiah.position import PositionError, parse_position
from messiah.search import DEFAULT_SEARCH, Limits, make_searcher
from messiah.search.base import OBVIOUS, UNSTABLE
from messiah.search.mcts import ENGINE_BATCH_SIZE, PUCT_C, PUCT_TEMPERATURE, UCB1_C
from messiah.winrate import MESSIAH, MESSIAH_OPTIONS, WinRateScale

ENGINE_NAME = f"messiah {__version__}"

__all__ = ["OPTIONS", "PositionError", "TimeBudget", "UsiEngine", "UsiError", "main", "parse_go", "parse_int",
           "parse_position", "think_time"]


class UsiError(ValueError):
    """A command the engine cannot carry out; the message goes to the GUI as an info string."""


# ASCII digits only: str.isdigit() also accepts superscripts and other Unicode digits that int() refuses.
INTEGER = re.compile(r"[+-]?[0-9]+")
HUGE = 10**18  # numbers beyond this are clamped (int() of 4,300+ digits raises; so many means no limit)


def parse_int(text: str, what: str) -> int:
    """The integer ``text`` stands for, clamped to +-HUGE; UsiError naming ``what`` otherwise."""
    if not INTEGER.fullmatch(text):
        raise UsiError(f"{what} must be a whole number, got {text[:40]!r}")
    digits = text.lstrip("+-")
    value = HUGE if len(digits) > 18 else min(HUGE, int(digits))
    return -value if text.startswith("-") else value


def one_line(text: object, limit: int = 300) -> str:
    """``text`` as one line of at most ``limit`` characters: what an info string can carry."""
    words = " ".join(str(text).split())
    return words if len(words) <= limit else words[:limit] + "..."


@dataclass
class Option:
    """A USI option: ``kind`` is spin, check, combo, string or filename (a string a GUI offers a file
    picker for)."""

    kind: str
    default: object
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()

    def declaration(self, name: str) -> str:
        default = str(self.default).lower() if self.kind == "check" else self.default
        text = f"option name {name} type {self.kind} default {default}"
        if self.kind == "spin":
            text += f" min {self.low} max {self.high}"
        if self.kind == "combo":
            text += "".join(f" var {c}" for c in self.choices)
        return text

    def parse(self, name: str, value: str) -> object:
        """The option's value from ``value``; raises UsiError (the option stays unchanged)."""
        if self.kind == "spin":
            number = parse_int(value, name) if INTEGER.fullmatch(value) else self.low - 1
            if not self.low <= number <= self.high:
                raise UsiError(f"{name} must be an integer {self.low}..{self.high}, got {value[:40]!r} (unchanged)")
            return number
        if self.kind == "check":
            if value not in ("true", "false"):
                raise UsiError(f"{name} must be true or false, got {value[:40]!r} (unchanged)")
            return value == "true"
        if self.kind == "combo" and value not in self.choices:
            raise UsiError(f"{name} must be one of {', '.join(self.choices)}, got {value[:40]!r} (unchanged)")
        return value or self.default


# ms kept back from the hard deadline of a move for the engine's own overshoot and the pipes: measured with
# `messiah bench --latency` (README), the worst of several hundred moves was well under this.
BYOYOMI_MARGIN = 50

# Time management (sudden death, Fischer, main time before byoyomi), after YaneuraOu's and Stockfish's:
# the main time left is shared over the moves the game is still expected to last.
# The ply by which the main time should be spent. Tuned with TimeObvious and TimeUnstable by `messiah tune` at
# 10 s + 0.1 s Fischer (README): 132 beat the reasoned 200, which lay well past the average game of 107-130
# plies and ended games with two thirds of the main time unspent.
GAME_PLY_HORIZON = 132
MIN_MOVES_TO_GO = 20  # past the horizon a move takes about 1/20 of what is left, so the clock never runs out
MAX_STRETCH = 4  # a hard position may take this many normal shares of the main time

OPTIONS = {
    "ModelPath": Option("filename", "<default>"),
    "Threads": Option("spin", 1, 1, 256),
    "Search": Option("combo", DEFAULT_SEARCH, choices=("puct", "alphabeta", "ucb1")),
    "USI_Hash": Option("spin", 256, 1, 65536),
    "USI_Ponder": Option("check", False),
    "ByoyomiMargin": Option("spin", BYOYOMI_MARGIN, 0, 10000),  # ms kept back from every move's hard deadline
    "MateNodes": Option("spin", 20000, 0, 10_000_000),  # df-pn budget at the root of a search
    "BatchSize": Option("spin", ENGINE_BATCH_SIZE, 1, 1024),  # leaves per forward pass for ucb1/puct
    "Ucb1C": Option("spin", round(100 * UCB1_C), 0, 1000),  # ucb1's exploration constant, in hundredths
    "PuctC": Option("spin", round(100 * PUCT_C), 0, 10000),  # puct's exploration constant, in hundredths
    "PuctTemperature": Option("spin", round(1000 * PUCT_TEMPERATURE), 1, 10000),  # softmax(Q / T), T in 1/1000
    # time management with a main time (sudden death, Fischer): see think_time and search.base.Limits
    "TimeHorizon": Option("spin", GAME_PLY_HORIZON, 1, 1000),  # the ply by which the main time should be spent
    "TimeMinMovesToGo": Option("spin", MIN_MOVES_TO_GO, 1, 1000),  # the main time is shared over at least these
    "TimeObvious": Option("spin", round(100 * OBVIOUS), 1, 1000),  # % of a move's share for an obvious move
    "TimeUnstable": Option("spin", round(100 * UNSTABLE), 1, 1000),  # % of it while the best move keeps changing
    "MultiPV": Option("spin", 1, 1, 600),
    "NodesLimit": Option("spin", 0, 0, 10**9),  # at most this many nodes a move, whatever the clock (0: none)
    "ResignValue": Option("spin", 99999, 0, 99999),  # resign at score cp <= -ResignValue (99999: never)
    "MaxMovesToDraw": Option("spin", 0, 0, 100000),  # a game still going after this ply is a draw (0: none)
    "ScoreScale": Option("spin", MESSIAH_OPTIONS[0], 1, 100000),  # cp = (logit(winrate) - b) * this
    "ScoreBias": Option("spin", MESSIAH_OPTIONS[1], -10000, 10000),  # b of that, in thousandths
}
HASH_ENTRY_BYTES = 256  # rough size of a transposition-table entry in Python
CACHE_ENTRY_BYTES = 1600  # rough size of a cached evaluation (80 moves: move, index, Q + Python overhead)


@dataclass(frozen=True)
class TimeBudget:
    """Seconds a move may take. ``minimum``: always searched, because unused byoyomi is lost; ``optimum``:
    a normal move's time, which the search shortens when its best move is obvious and stretches when it
    keeps changing (search.base.Limits); ``maximum``: the hard limit, a margin before the flag falls.
    None: no limit of that kind."""

    minimum: float = 0.0
    optimum: float | None = None
    maximum: float | None = None


def think_time(go: dict[str, int], turn: int, ply: int, margin_ms: int, horizon: int = GAME_PLY_HORIZON,
               min_moves_to_go: int = MIN_MOVES_TO_GO) -> TimeBudget:
    """The time budget of a ``go`` command's clock for the side ``turn`` at game ply ``ply``: the main time
    left is shared over the moves still expected, half the plies to ``horizon`` but at least ``min_moves_to_go``.

    The margin for the engine's overshoot and the pipes comes off the hard deadline only (never more than
    half of the time this move has), not off every share of the clock."""
    if "movetime" in go:
        exact = max(0.0, go["movetime"] - min(margin_ms, go["movetime"] / 2)) / 1000
        return TimeBudget(exact, None, exact)
    left = go.get("btime" if turn == cshogi.BLACK else "wtime")
    increment = max(0, go.get("binc" if turn == cshogi.BLACK else "winc", 0))
    byoyomi = max(0, go.get("byoyomi", 0))
    if left is None and byoyomi == 0 and increment == 0:
        return TimeBudget()
    left = max(0, left or 0)
    deadline = left + increment + byoyomi  # ms until the flag falls (cshogi.cli credits the increment first)
    hard = deadline - min(margin_ms, deadline / 2)
    moves_to_go = max(min_moves_to_go, (horizon - ply) / 2)
    share = left / moves_to_go
    # Byoyomi is use-it-or-lose-it once the main time is gone (or too little to matter).
    minimum = hard if left < byoyomi else 0.0
    maximum = max(minimum, min(hard, MAX_STRETCH * share + increment + byoyomi))
    optimum = min(maximum, max(minimum, share + increment + byoyomi))
    return TimeBudget(minimum / 1000, optimum / 1000, maximum / 1000)


# Commands that change what a search works on: sent during a search, they wait for its bestmove.
WAITING_COMMANDS = frozenset({"position", "go", "setoption", "usinewgame"})


class UsiEngine:
    """State and command handlers; ``run`` drives it from lines of input. ``go`` searches on a worker
    thread so that ``stop``, ``ponderhit`` and ``isready`` are answered while it thinks."""

    def __init__(self, write: Callable[[str], None]):
        self._lock = threading.Lock()
        self._write = write
        self.options = {name: option.default for name, option in OPTIONS.items()}
        self.evaluator: Evaluator | None = None
        self.searcher = None
        self.board = cshogi.Board()
        self.scale = MESSIAH
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._replied = threading.Event()  # set once the running go's bestmove is written
        self._pondering = False
        self._infinite = False  # go infinite: bestmove waits for stop, whatever other limit ended the search
        self._limits = None
        self._ponder_budget: TimeBudget | None = None

    def write(self, text: str) -> None:
        with self._lock:
            self._write(text)

    def handle(self, line: str) -> bool:
        """Handle one line; returns False on quit. No exception escapes: an error becomes an info string."""
        words = line.split()
        if not words:
            return True
        command, args = words[0], words[1:]
        if command == "quit":
            self._finish_search()
            return False
        handler = getattr(self, f"cmd_{command}", None)
        if handler is None:
            self.write(f"info string unknown command: {one_line(command, 40)}")
            return True
        try:
            if command in WAITING_COMMANDS:
                self._await_search()
            handler(args)
        except UsiError as e:
            self.write(f"info string error: {one_line(e)}")
        except Exception as e:  # noqa: BLE001 - the engine must outlive any command
            self.write(f"info string error: {command} failed: {type(e).__name__}: {one_line(e)}")
        return True

    def run(self, lines: Iterable[str]) -> None:
        for line in lines:
            if not self.handle(line.strip()):
                break
        self._finish_search()

    def cmd_usi(self, args: list[str]) -> None:
        self.write(f"id name {ENGINE_NAME}")
        self.write("id author the messiah developers")
        for name, option in OPTIONS.items():
            self.write(option.declaration(name))
        self.write("usiok")

    def cmd_setoption(self, args: list[str]) -> None:
        if len(args) < 2 or args[0] != "name":
            raise UsiError("setoption: expected 'setoption name <name> value <value>'")
        cut = args.index("value") if "value" in args else len(args)
        name, value = " ".join(args[1:cut]), " ".join(args[cut + 1 :])
        if name not in OPTIONS:
            raise UsiError(f"unknown option {one_line(name, 40)!r}")
        self.options[name] = OPTIONS[name].parse(name, value)
        if name in ("ModelPath", "Threads"):
            self.evaluator = None
        self.searcher = None

    def _load(self) -> Evaluator:
        if self.evaluator is None:
            path = None if self.options["ModelPath"] == "<default>" else self.options["ModelPath"]
            try:
                self.evaluator = Evaluator(path, threads=self.options["Threads"])
                self.evaluator.score(cshogi.Board())  # warm up
            except Exception as e:  # noqa: BLE001 - ModelError, and what a path can raise (too long, a dir)
                self.evaluator = None
                raise UsiError(f"cannot load the model: {one_line(e)}") from None
            self.searcher = None
        if self.searcher is None:
            half = self.options["USI_Hash"] * 2**20 // 2  # the table gets half, the evaluation cache half
            extra: dict[str, float] = {"hash_entries": half // HASH_ENTRY_BYTES}
            if self.options["Search"] == "ucb1":
                extra = {"batch_size": self.options["BatchSize"], "c": self.options["Ucb1C"] / 100}
            elif self.options["Search"] == "puct":
                extra = {"batch_size": self.options["BatchSize"], "c": self.options["PuctC"] / 100,
                         "temperature": self.options["PuctTemperature"] / 1000}
            self.searcher = make_searcher(self.options["Search"], self.evaluator,
                                          mate_nodes=self.options["MateNodes"], **extra)
            self.searcher.cache.max_entries = max(1, half // CACHE_ENTRY_BYTES)
            # A tiny search now compiles (numba) what the first timed move would otherwise compile on its
            # clock: on a fresh install that made the first byoyomi move 240 ms late.
            self.searcher.search(cshogi.Board(), Limits(nodes=2))
            self.searcher.new_game()
        self.searcher.multipv = self.options["MultiPV"]
        self.searcher.draw_ply = self.options["MaxMovesToDraw"]
        self.scale = WinRateScale.from_options(self.options["ScoreScale"], self.options["ScoreBias"])
        return self.evaluator

    def cmd_isready(self, args: list[str]) -> None:
        if not self._searching():
            try:
                self._load()
            except UsiError as e:
                self.write(f"info string error: {e}")
        self.write("readyok")

    def cmd_usinewgame(self, args: list[str]) -> None:
        if self.searcher is not None:
            self.searcher.new_game()

    def cmd_position(self, args: list[str]) -> None:
        try:
            self.board = parse_position(args)
        except PositionError as e:
            raise UsiError(f"position: {e}") from None

    def cmd_go(self, args: list[str]) -> None:
        """Start a search (or a mate search) on the worker thread. Whatever the arguments, exactly one
        bestmove (checkmate for go mate) follows."""
        self._finish_search()  # the previous worker has written its bestmove: join it
        go, flags, ignored = parse_go(args)
        if ignored:
            self.write(f"info string go: ignored {one_line(' '.join(ignored), 100)}")
        board = self.board.copy()
        self._stop.clear()
        self._replied.clear()
        self._pondering = "ponder" in flags
        self._infinite = "infinite" in flags
        if "mate" in flags:
            mate_ms = go.get("mate")
            self._infinite = mate_ms is None  # go mate infinite: until found, proven or stopped
            deadline = None if mate_ms is None else time.perf_counter() + max(0, mate_ms) / 1000
            self._start(self._mate, board, deadline)
            return
        try:
            self._load()
        except UsiError as e:
            self.write(f"info string error: {e}")
            self._reply("bestmove resign")
            return
        budget = think_time(go, board.turn, board.move_number, self.options["ByoyomiMargin"],
                            self.options["TimeHorizon"], self.options["TimeMinMovesToGo"])
        endless = self._infinite or self._pondering
        self._ponder_budget = budget if self._pondering else None
        nodes = go.get("nodes")
        if self.options["NodesLimit"]:  # fixed-node matches: the same work per move whatever the machine's load
            nodes = min(nodes or self.options["NodesLimit"], self.options["NodesLimit"])
        limits = Limits(nodes=nodes, depth=go.get("depth"), stop=self._stop,
                        obvious=self.options["TimeObvious"] / 100, unstable=self.options["TimeUnstable"] / 100)
        if not endless:
            limits.minimum, limits.optimum, limits.movetime = budget.minimum, budget.optimum, budget.maximum
            if limits.nodes is None and limits.depth is None and limits.movetime is None:
                limits.depth = 1  # no usable limit and not infinite: the network's own best move
        self._limits = limits
        self._start(self._search, board, limits)

    def _start(self, target: Callable, *args) -> None:
        self._thread = threading.Thread(target=target, args=args, daemon=True)
        self._thread.start()

    def _reply(self, text: str) -> None:
        """Write a go's final line (bestmove or checkmate), once."""
        self._replied.set()  # before the write: the GUI may answer at once
        self.write(text)

    def _mate(self, board: cshogi.Board, deadline: float | None) -> None:
        """Worker thread of go mate: USI's checkmate answer, once."""
        answer = "checkmate timeout"
        try:
            result = solve_mate(board, deadline, self._stop)
            if result.note:
                self.write(f"info string go mate: {result.note}")
            if result.status == "mate":
                self.write(f"info depth {len(result.pv)} score mate {len(result.pv)} pv "
                           + " ".join(cshogi.move_to_usi(m) for m in result.pv))
            answer = result.usi()
        except Exception as e:  # noqa: BLE001 - go mate must answer whatever happens
            self.write(f"info string error: go mate failed: {type(e).__name__}: {one_line(e)}")
        self._reply(answer)

    def _search(self, board: cshogi.Board, limits) -> None:
        """Worker thread: search, report, wait out a ponder or infinite search, print bestmove once."""
        reply = "bestmove resign"
        try:
            if board.is_nyugyoku():
                reply = "bestmove win"
            elif not board.is_game_over():
                result = self.searcher.search(board, limits, self._info)
                if result.bestmove and self.scale.to_cp(result.winrate) <= -self.options["ResignValue"]:
                    reply = "bestmove resign"
                elif result.bestmove:
                    ponder = f" ponder {cshogi.move_to_usi(result.pv[1])}" if len(result.pv) > 1 else ""
                    reply = f"bestmove {cshogi.move_to_usi(result.bestmove)}{ponder}"
        except Exception as e:  # noqa: BLE001 - the engine must answer go whatever happens
            self.write(f"info string error: search failed: {type(e).__name__}: {one_line(e)}")
            reply = self._fallback_move(board)
        # USI: after go ponder / go infinite, bestmove waits for stop or ponderhit, whatever the answer
        while (self._pondering or self._infinite) and not self._stop.is_set():
            self._stop.wait(0.01)
        self._reply(reply)

    def _fallback_move(self, board: cshogi.Board) -> str:
        """The best move by one forward pass when the search failed, else any legal move."""
        try:
            return f"bestmove {cshogi.move_to_usi(self.searcher.cache.get(board).best()[0])}"
        except Exception:  # noqa: BLE001
            legal = list(board.legal_moves)
            return f"bestmove {cshogi.move_to_usi(legal[0])}" if legal else "bestmove resign"

    def _info(self, r) -> None:
        nps = int(r.nodes / r.elapsed) if r.elapsed > 0 else 0
        hashfull = f" hashfull {self.searcher.hashfull()}"
        head = f"info depth {r.depth} seldepth {r.seldepth} nodes {r.nodes} nps {nps} time {int(r.elapsed * 1000)}"
        lines = r.lines or [(r.winrate, r.mate, r.pv)]
        for k, (winrate, mate, pv) in enumerate(lines, 1):
            score = f"mate {mate}" if mate is not None else f"cp {self.scale.to_cp(winrate)}"
            multipv = f" multipv {k}" if r.lines else ""
            self.write(f"{head}{hashfull}{multipv} score {score} pv {' '.join(cshogi.move_to_usi(m) for m in pv)}")

    def cmd_stop(self, args: list[str]) -> None:
        self._finish_search()

    def cmd_ponderhit(self, args: list[str]) -> None:
        """The expected move was played: the ponder search goes on as a timed search from now."""
        if self._searching() and self._pondering and self._limits is not None:
            budget, now, limits = self._ponder_budget, self._limits.elapsed(), self._limits
            if budget is not None and budget.maximum is not None:
                limits.minimum = now + budget.minimum
                limits.optimum = None if budget.optimum is None else now + budget.optimum
                limits.movetime = now + budget.maximum
            elif limits.nodes is None and limits.depth is None:
                self._stop.set()  # a ponder without a clock or a limit: the search so far is the answer
            self._pondering = False

    def cmd_gameover(self, args: list[str]) -> None:
        self._finish_search()

    def _searching(self) -> bool:
        """Whether a go is still without its bestmove. The worker thread lives on for a moment after
        writing it, and a GUI may send the next position in that moment: that is not a search any more."""
        return self._thread is not None and not self._replied.is_set()

    def _await_search(self) -> None:
        """Let a running search end before the state it works on changes: a timed or counted search ends
        by itself; an endless one (ponder, infinite), which only stop ends, is stopped."""
        if self._thread is None:
            return
        if self._pondering or self._infinite:
            self._finish_search()
            return
        self._thread.join()
        self._thread = None

    def _finish_search(self) -> None:
        """Stop a running search and wait for its bestmove."""
        if self._thread is not None:
            self._pondering = False
            self._stop.set()
            self._thread.join()
            self._thread = None


GO_NUMBERS = ("btime", "wtime", "byoyomi", "binc", "winc", "nodes", "depth", "movetime")


def parse_go(args: list[str]) -> tuple[dict[str, int], set[str], list[str]]:
    """go's numeric arguments, its flags (infinite, ponder, mate) and the words it ignored.

    USI says unknown words are ignored, and a GUI waits for the bestmove whatever it sent, so nothing here
    refuses a go: a limit without a usable number (``byoyomi`` at the end, ``nodes -5``, ``depth ²``) is
    ignored and named. Negative clock times are read as 0. ``mate`` takes milliseconds or ``infinite``."""
    numbers: dict[str, int] = {}
    flags: set[str] = set()
    ignored: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        value = args[i + 1] if i + 1 < len(args) else None
        if word == "mate":
            flags.add("mate")
            if value is not None and INTEGER.fullmatch(value):
                numbers["mate"] = parse_int(value, "go mate")
                i += 1
            elif value == "infinite":
                i += 1
        elif word in GO_NUMBERS:
            if value is None or not INTEGER.fullmatch(value):
                ignored.append(word)
            else:
                number = parse_int(value, word)
                if word in ("nodes", "depth") and number < 1:
                    ignored.append(f"{word} {value}")
                else:
                    numbers[word] = max(0, number)
                i += 1
        elif word in ("infinite", "ponder"):
            flags.add(word)
        else:
            ignored.append(one_line(word, 20))
        i += 1
    return numbers, flags, ignored


def _lines(stream) -> Iterator[str]:
    """Lines of a binary stream as text: bytes that are not UTF-8 become U+FFFD instead of killing the
    engine with a UnicodeDecodeError."""
    for raw in stream:
        yield raw.decode("utf-8", errors="replace")


def protocol_channel() -> Callable[[str], None]:
    """A writer to the real stdout, after pointing file descriptor 1 at stderr.

    stdout is the protocol channel: anything else printed there (cshogi prints board dumps from C++ on some
    inputs, a library may print a warning) would reach the GUI as garbage. From here on, whatever writes to
    fd 1 or sys.stdout goes to stderr, and only this writer reaches the GUI."""
    sys.stdout.flush()
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8", errors="replace", newline="\n")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def write(text: str) -> None:
        try:
            channel.write(text + "\n")
            channel.flush()
        except (BrokenPipeError, OSError):  # the GUI is gone; stdin will end too
            pass

    return write


def main(argv: list[str] | None = None) -> None:
    """``messiah-usi``: the USI engine on stdin/stdout (``--help``, ``--version`` answer and exit)."""
    parser = argparse.ArgumentParser(
        prog="messiah-usi", description="messiah's USI engine: register this executable in a USI GUI "
        "(ShogiHome, ShogiGUI, Shogidokoro) or drive it with python -m cshogi.cli. It reads USI commands "
        "on stdin and answers on stdout; see the README for its options.")
    parser.add_argument("--version", action="version", version=ENGINE_NAME)
    parser.parse_args(argv)
    UsiEngine(protocol_channel()).run(_lines(sys.stdin.buffer))
