"""The USI engine (``messiah-usi``, or ``messiah usi``).

The search is chosen by the ``Search`` option (alpha-beta, UCB1, PUCT); what the options make is built by
:class:`messiah.engine.engine.Engine`, as every tool that plays builds it. The search runs on a worker thread,
so ``stop``, ``ponderhit`` and ``isready`` are answered while it thinks. Whatever a GUI or a user sends, the
engine answers and lives on: a line it cannot use gets an ``info string`` saying why and the previous state
stays, but for ``position``, which never leaves a position the GUI did not send (:meth:`UsiEngine.cmd_position`);
every ``go`` gets exactly one ``bestmove`` (every ``go mate`` one ``checkmate``), after an ``info string``
saying why when it cannot search (no model loads, no position is set); ``position``,
``go``, ``setoption`` and ``usinewgame`` sent during a search wait for its bestmove instead of being
dropped, as in YaneuraOu; and nothing but USI reaches stdout (see :func:`main`).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TextIO

import cshogi

from messiah import __version__
from messiah.engine.engine import (
    COMPILING_NOTE,
    EVALUATOR_OPTIONS,
    Engine,
    compile_search,
    load_evaluator,
    search_compiled,
)
from messiah.engine.mate import solve_mate
from messiah.engine.options import DEFAULT_MODEL, NO_LOG, OPTIONS
from messiah.engine.thinktime import TimeBudget, think_time
from messiah.evaluator import Evaluator
from messiah.position import IllegalMove, PositionError, parse_position
from messiah.protocol import UsiError, one_line, parse_go, parse_int
from messiah.search import Clock, Limits, Searcher

ENGINE_NAME = f"messiah {__version__}"

__all__ = ["OPTIONS", "PositionError", "TimeBudget", "UsiEngine", "UsiError", "main", "parse_go", "parse_int",
           "parse_position", "think_time"]


# Commands that change what a search works on: sent during a search, they wait for its bestmove.
WAITING_COMMANDS = frozenset({"position", "go", "setoption", "usinewgame"})
# What follows a model that cannot load. YaneuraOu and dlshogi exit there rather than play another network than the
# one named; this engine lives on, plays none either, and says so at isready and at every go.
NO_MODEL = (f"no model to search with: every go answers bestmove resign until ModelPath names a model that loads "
            f"({DEFAULT_MODEL}: the shipped one)")


class UsiEngine:
    """State and command handlers; ``run`` drives it from lines of input. ``go`` searches on a worker
    thread so that ``stop``, ``ponderhit`` and ``isready`` are answered while it thinks."""

    def __init__(self, write: Callable[[str], None]):
        self._lock = threading.Lock()
        self._write = write
        self.options = {name: option.default for name, option in OPTIONS.items()}
        self.evaluator: Evaluator | None = None  # kept while only options the model does not depend on change
        self.engine: Engine | None = None  # built from the options by isready or go; any setoption drops it
        self.board: cshogi.Board | None = cshogi.Board()  # None: the last position could not be read
        self._no_position = ""  # and why
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._replied = threading.Event()  # set once the running go's bestmove is written
        self._pondering = False
        self._infinite = False  # go infinite: bestmove waits for stop, whatever other limit ended the search
        self._limits = Limits()  # the running go's request
        self._clock: Clock | None = None  # and its clock, which ponderhit sets
        self._log: TextIO | None = None  # WriteDebugLog's file
        self._log_start = time.perf_counter()
        self._compiling: threading.Thread | None = None  # compile_search at a fresh install's first start
        self._compile_error = ""
        self.compile_at_usi = False  # messiah-usi's main: start compiling once usi is answered (start_compiling)

    @property
    def searcher(self) -> Searcher | None:
        return None if self.engine is None else self.engine.searcher

    def write(self, text: str) -> None:
        with self._lock:
            self._write(text)
            self._note("<", text)

    def _note(self, direction: str, line: str) -> None:
        """One line of the WriteDebugLog file: seconds since the engine started, > for in, < for out."""
        if self._log is not None:
            try:
                self._log.write(f"{time.perf_counter() - self._log_start:10.3f} {direction} {line}\n")
                self._log.flush()
            except OSError:  # a full disk must not stop the game
                pass

    def handle(self, line: str) -> bool:
        """Handle one line; returns False on quit. No exception escapes: an error becomes an info string."""
        words = line.split()
        if not words:
            return True
        with self._lock:
            self._note(">", line)
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
        self._drop_engine()
        self._open_log(NO_LOG)

    def start_compiling(self) -> None:
        """Compile the search on a thread now (:func:`compile_search`) if numba's cache does not hold it yet:
        a fresh install's first start, which otherwise spends its first isready compiling without a word."""
        if search_compiled():
            return
        self._compiling = threading.Thread(target=self._compile, name="messiah-compile", daemon=True)
        self._compiling.start()

    def _compile(self) -> None:
        try:
            compile_search()
        except Exception as e:  # noqa: BLE001 - isready builds (and compiles) the engine anyway, and says why
            self._compile_error = f"{type(e).__name__}: {one_line(e)}"

    def _await_compiling(self) -> None:
        """Wait for the compiling thread, if one runs: building the engine needs its code."""
        if self._compiling is not None:
            self._compiling.join()
            self._compiling = None
        if self._compile_error:
            self.write(f"info string compiling the search at start failed ({self._compile_error}); "
                       "building the engine compiles it")
            self._compile_error = ""

    def cmd_usi(self, args: list[str]) -> None:
        self.write(f"id name {ENGINE_NAME}")
        self.write("id author the messiah developers")
        for name, option in OPTIONS.items():
            self.write(option.declaration(name))
        self.write("usiok")
        if self.compile_at_usi and self._compiling is None:
            self.start_compiling()  # after usiok, which the compiling thread would otherwise hold up
            if self._compiling is not None:
                self.write(f"info string {COMPILING_NOTE}")

    def cmd_setoption(self, args: list[str]) -> None:
        if len(args) < 2 or args[0] != "name":
            raise UsiError("setoption: expected 'setoption name <name> value <value>'")
        cut = args.index("value") if "value" in args else len(args)
        name, value = " ".join(args[1:cut]), " ".join(args[cut + 1 :])
        if name not in OPTIONS:
            raise UsiError(f"unknown option {one_line(name, 40)!r}")
        parsed = OPTIONS[name].parse(name, value)
        if name == "WriteDebugLog":
            self._open_log(parsed)
        self.options[name] = parsed
        if name in EVALUATOR_OPTIONS:  # what the model was loaded by
            self.evaluator = None
        self._drop_engine()

    def _drop_engine(self) -> None:
        """Forget the built engine (an option changed, or the engine quits), ending its helper processes."""
        if self.engine is not None:
            self.engine.close()
            self.engine = None

    def _open_log(self, path: str) -> None:
        """Start appending every line in and out to ``path`` (NO_LOG: stop logging)."""
        log = None
        if path != NO_LOG:
            try:
                log = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open while the engine runs
            except OSError as e:
                raise UsiError(f"WriteDebugLog: cannot write {one_line(path, 100)}: {e.strerror or e}") from None
        with self._lock:
            if self._log is not None:
                self._log.close()
            self._log = log

    def _ponder_move(self, move: str | None) -> str:
        """bestmove's " ponder <move>", named only with USI_Ponder: an engine that does not ponder has no use
        for it, and cshogi.cli, which ponders whenever one is named, then leaves this engine's turns alone."""
        return f" ponder {move}" if move and self.options["USI_Ponder"] else ""

    def _load(self) -> Engine:
        """The engine of the current options (messiah.engine.engine), built when an option changed."""
        self._await_compiling()
        if self.evaluator is None:
            try:
                self.evaluator = load_evaluator(self.options)
            except UsiError as e:
                raise UsiError(f"{e}; {NO_MODEL}") from None
            self._drop_engine()
            # which model runs where, once per load: a GUI's log then tells which model made which moves
            self.write(f"info string model {self.evaluator.describe()}")
            if self.evaluator.device_note:
                self.write(f"info string {self.evaluator.device_note}")
        if self.engine is None:
            self.engine = Engine(self.options, self.evaluator)
            self._say_notes(self.engine)
        return self.engine

    def _say_notes(self, engine: Engine) -> None:
        """What the search wants said (a helper process that could not start or was lost), once."""
        for note in engine.take_notes():
            self.write(f"info string {one_line(note)}")

    def cmd_isready(self, args: list[str]) -> None:
        """Load what the options name, then readyok whatever happened: a GUI or match runner waits for it
        (cshogi.cli for ever), so a failure is said in an info string first, never instead."""
        for step in () if self._searching() else (self._load,):
            try:
                step()
            except UsiError as e:
                self.write(f"info string error: {e}")
            except Exception as e:  # noqa: BLE001 - see above
                self.write(f"info string error: isready failed: {type(e).__name__}: {one_line(e)}")
        self.write("readyok")

    def cmd_usinewgame(self, args: list[str]) -> None:
        if self.engine is not None:
            self.engine.searcher.new_game()

    def cmd_position(self, args: list[str]) -> None:
        """Set the position the GUI sent. A move that is not legal ends its moves there, as in YaneuraOu and
        Stockfish: the position the moves before it lead to is set, and the info string gives its sfen. A position
        that cannot be read sets none, and every go says so until the next position: searching the previous one
        would answer a position the GUI never sent."""
        try:
            self.board = parse_position(args)
        except IllegalMove as e:
            self.board = e.board
            played = "no move played" if e.played == 0 else f"its first {e.played} moves played"
            raise UsiError(f"position: {e}; the position set is the one before it ({played}): "
                           f"sfen {e.board.sfen()}") from None
        except PositionError as e:
            self.board = None
            self._no_position = f"no position: the last position command could not be read ({one_line(e, 150)})"
            raise UsiError(f"position: {e}; no position is set until the next position command") from None

    def cmd_go(self, args: list[str]) -> None:
        """Start a search (or a mate search) on the worker thread. Whatever the arguments, exactly one
        bestmove (checkmate for go mate) follows. The move's time counts from the go, as a GUI's clock does: an
        engine built here (a setoption without isready since) spends the move's time on it, and the search
        shortens itself by as much."""
        received = Clock().start  # when the go came, on the time the search's clock reads
        self._finish_search()  # the previous worker has written its bestmove: join it
        go, flags, ignored = parse_go(args)
        if ignored:
            self.write(f"info string go: ignored {one_line(' '.join(ignored), 100)}")
        self._stop.clear()
        self._replied.clear()
        self._pondering = "ponder" in flags
        self._infinite = "infinite" in flags
        self._clock, self._limits = None, Limits()  # until a search sets them: ponderhit reads them
        if self.board is None:
            self._cannot_search(self._no_position, "checkmate timeout" if "mate" in flags else "bestmove resign")
            return
        board = self.board.copy()
        if "mate" in flags:
            mate_ms = go.get("mate")
            self._infinite = mate_ms is None  # go mate infinite: until found, proven or stopped
            deadline = None if mate_ms is None else time.perf_counter() + max(0, mate_ms) / 1000
            self._start(self._mate, board, deadline)
            return
        try:
            engine = self._load()
        except UsiError as e:
            self._cannot_search(str(e), "bestmove resign")
            return
        except Exception as e:  # noqa: BLE001 - a bug building the engine: the go still gets its bestmove
            self._cannot_search(f"building the engine failed: {type(e).__name__}: {e}", "bestmove resign")
            return
        if not (self._pondering or self._infinite) and self._book_move(engine, board):
            return
        budget = engine.budget(go, board)
        endless = self._infinite or self._pondering  # the clock starts at ponderhit, or never
        limits = engine.limits(go)
        if not endless and limits.nodes is None and limits.depth is None and budget.maximum is None:
            limits = Limits(depth=1)  # no usable limit and not infinite: the network's own best move
        self._limits = limits
        self._clock = engine.clock(TimeBudget() if endless else budget, self._stop,
                                   budget if self._pondering else None)
        self._clock.start = received  # the build, if any, was this move's time
        self._start(self._search, engine, board, limits, self._clock)

    def _book_move(self, engine: Engine, board: cshogi.Board) -> bool:
        """Play a book move at once if the book has one for ``board`` under the Book options: its info line
        (pv last, as USI wants) and bestmove with its ponder move. False: search instead."""
        move, notes = engine.book_move(board)
        for note in notes:
            self.write(f"info string {note}")
        if move is None:
            return False
        ponder = None if move.ponder == "none" else move.ponder
        self.write(f"info depth {move.depth} score cp {move.value} pv {move.move}" + (f" {ponder}" if ponder else ""))
        self._reply(f"bestmove {move.move}{self._ponder_move(ponder)}")
        return True

    def _cannot_search(self, why: str, reply: str) -> None:
        """Answer a go that has nothing to search with or nothing to search: why, in an info string, then its
        one reply, held as a search's is after go ponder or go infinite (:meth:`_hold`)."""
        self.write(f"info string error: {one_line(why)}")
        self._start(self._hold_then_reply, reply)

    def _hold_then_reply(self, reply: str) -> None:
        self._hold()
        self._reply(reply)

    def _hold(self) -> None:
        """USI: after go ponder or go infinite, the reply waits for stop or ponderhit, whatever it is."""
        while (self._pondering or self._infinite) and not self._stop.is_set():
            self._stop.wait(0.01)

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

    def _search(self, engine: Engine, board: cshogi.Board, limits: Limits, clock: Clock) -> None:
        """Worker thread: search, report, wait out a ponder or infinite search, print bestmove once."""
        reply = "bestmove resign"
        try:
            declaration = engine.rules.declaration(board)
            if declaration == 0:
                reply = "bestmove win"
            elif declaration is not None:  # the try rule: the king's move to its try square wins
                self.write(f"info depth 1 score mate 1 pv {cshogi.move_to_usi(declaration)}")
                reply = f"bestmove {cshogi.move_to_usi(declaration)}"
            elif not board.is_game_over():
                result = engine.searcher.search(board, limits, lambda r: self._info(engine, r), clock)
                move = engine.choose(board, result)
                if engine.resigns(result):
                    reply = "bestmove resign"
                elif move:
                    line = engine.line(board, result, move)
                    if move != result.bestmove:  # a Strength level's choice: the position's value, its own line
                        score = f"mate {result.mate}" if result.mate is not None else \
                            f"cp {engine.scale.to_cp(result.winrate)}"
                        self.write(f"info depth 1 score {score} pv {' '.join(map(cshogi.move_to_usi, line))}")
                    ponder = cshogi.move_to_usi(line[1]) if len(line) > 1 else None
                    reply = f"bestmove {cshogi.move_to_usi(move)}{self._ponder_move(ponder)}"
        except Exception as e:  # noqa: BLE001 - the engine must answer go whatever happens
            self.write(f"info string error: search failed: {type(e).__name__}: {one_line(e)}")
            reply = self._fallback_move(engine.searcher, board)
        self._say_notes(engine)
        self._hold()
        self._reply(reply)

    @staticmethod
    def _fallback_move(searcher: Searcher, board: cshogi.Board) -> str:
        """The best move by one forward pass when the search failed, else any legal move."""
        try:
            return f"bestmove {cshogi.move_to_usi(searcher.cache.get(board).best()[0])}"
        except Exception:  # noqa: BLE001
            legal = list(board.legal_moves)
            return f"bestmove {cshogi.move_to_usi(legal[0])}" if legal else "bestmove resign"

    def _info(self, engine: Engine, r) -> None:
        nps = int(r.nodes / r.elapsed) if r.elapsed > 0 else 0
        hashfull = f" hashfull {engine.searcher.hashfull()}"
        head = f"info depth {r.depth} seldepth {r.seldepth} nodes {r.nodes} nps {nps} time {int(r.elapsed * 1000)}"
        lines = r.lines or [(r.winrate, r.mate, r.pv)]
        for k, (winrate, mate, pv) in enumerate(lines, 1):
            score = f"mate {mate}" if mate is not None else f"cp {engine.scale.to_cp(winrate)}"
            multipv = f" multipv {k}" if r.lines else ""
            self.write(f"{head}{hashfull}{multipv} score {score} pv {' '.join(cshogi.move_to_usi(m) for m in pv)}")

    def cmd_stop(self, args: list[str]) -> None:
        self._finish_search()

    def cmd_ponderhit(self, args: list[str]) -> None:
        """The expected move was played: the ponder search goes on as a timed search from now."""
        if self._searching() and self._pondering:
            budget = None if self._clock is None else self._clock.ponder  # None: a go that could not search
            if budget is not None and budget.maximum is not None:
                self._clock.ponderhit(budget)  # one swap: the search never sees half of the new budget
            elif self._limits.nodes is None and self._limits.depth is None:
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
    engine = UsiEngine(protocol_channel())
    engine.compile_at_usi = True  # a fresh install compiles the search from the GUI's first command on
    engine.run(_lines(sys.stdin.buffer))
