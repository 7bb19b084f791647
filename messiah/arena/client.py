"""A client of other USI engines: cshogi's ``cshogi.usi.Engine`` made safe to drive from a program (a dead
or silent engine is an error, not a hang) and able to search to a fixed depth or node count, keeping what the
engine reported of that search (:class:`SearchReport`) so a caller can tell a search from a junk answer.
Used by the matches (to check an engine before cshogi.cli plays it) and by teacher-data generation."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass

from cshogi.usi import Engine, InfoListener

from messiah.errors import MessiahError, UserError
from messiah.protocol import INTEGER
from messiah.winrate import MAX_CP

HANDSHAKE_SECONDS = 60.0  # for usiok: an executable that is not a USI engine must not hang us
# For readyok: an engine that has answered usiok may take long to get ready (a large evaluation to load; messiah's
# first start after an install compiles its search, a minute and a half of one core, more on a busy machine, which
# the handshake's minute cut short: a fresh install could not play a match).
READY_SECONDS = 900.0
# For one fixed-depth or fixed-nodes search's bestmove: teacher searches take milliseconds to seconds (YaneuraOu at
# 10,000 nodes about 20 ms, fairy-stockfish at depth 8 about 30 ms), so ten minutes is only reached by an engine
# that has stopped answering, and a run stops within minutes of that rather than never.
SEARCH_SECONDS = 600.0
# The clocks of every fixed-depth or fixed-nodes go. Some engines want btime and wtime on every go (the notes of
# the project's YaneuraOu build say a bare `go nodes N` is answered at once, at depth 1 with 0 nodes). The clocks
# are a day each rather than 0: messiah-usi reads `btime 0 wtime 0` as a fallen flag and answers at once (depth 1,
# 0 nodes), while no node or depth limit comes near a day; fairy-stockfish and YaneuraOu stop at the node or depth
# limit with either (YaneuraOu keeps no clock when given nodes or depth, Stockfish's time limit is hours away).
GO_CLOCKS = "btime 86400000 wtime 86400000"


class EngineError(MessiahError, RuntimeError):
    """The engine could not be started, died, did not speak USI, or played an illegal move."""


@dataclass(frozen=True)
class SearchReport:
    """What an engine said of one search: the go line it was sent, and the deepest ``depth`` and the largest
    ``nodes`` its info lines reported (None when none reported it). The deepest, not the last: an engine that
    stops inside an iteration may report that unfinished iteration's lower depth last (YaneuraOu does)."""

    go: str
    depth: int | None = None
    nodes: int | None = None

    def __str__(self) -> str:
        said = ", ".join(f"{name} {value}" for name, value in (("depth", self.depth), ("nodes", self.nodes))
                         if value is not None)
        return f"{self.go!r} was answered with {said or 'no depth or nodes'}"


def line_report(line: str) -> tuple[int, str, int] | None:
    """An ``info`` line's MultiPV line: (its number, from 1; its first move, USI; its score, cp for the side to
    move, mates as +-MAX_CP); None for a line that reports none (no ``multipv`` and ``pv``, no exact score: a
    ``lowerbound`` or ``upperbound`` is an aspiration window's, not the line's score)."""
    words = line.split()
    number = move = score = None
    for i, word in enumerate(words[:-1]):
        value = words[i + 1]
        if word in ("lowerbound", "upperbound", "string"):
            return None
        if word == "multipv" and INTEGER.fullmatch(value):
            number = int(value)
        elif word == "score" and i + 2 < len(words) and words[i + 1] in ("cp", "mate"):
            amount = words[i + 2]
            if words[i + 1] == "cp" and INTEGER.fullmatch(amount):
                score = max(-MAX_CP, min(MAX_CP, int(amount)))
            elif words[i + 1] == "mate":  # 'mate 5', 'mate -4', or YaneuraOu's 'mate +' / 'mate -'
                score = -MAX_CP if amount.startswith("-") else MAX_CP
        elif word == "pv":
            move = value
            break
    if None in (number, move, score) or number < 1:
        return None
    return number, move, score


def go_line(depth: int | None, nodes: int | None) -> str:
    """The go command of a search to ``depth`` (when given) or to ``nodes``, with GO_CLOCKS."""
    return f"go {GO_CLOCKS} depth {depth}" if depth is not None else f"go {GO_CLOCKS} nodes {nodes}"


def reported(line: str) -> dict[str, int]:
    """The depth and nodes an ``info`` line reports (those it has): the words up to ``pv`` or ``string``, whose
    own text is not the engine's counts."""
    words, counts = line.split(), {}
    for word, value in zip(words[1:], words[2:], strict=False):
        if word in ("pv", "string"):
            break
        if word in ("depth", "nodes") and INTEGER.fullmatch(value):
            counts[word] = int(value)
    return counts


class UsiClient(Engine):
    """cshogi's USI client with a fixed-depth or fixed-nodes search added (``Engine.go`` has neither) and
    end-of-file checks: cshogi's read loops compare bytes with '' and would spin forever on a dead engine.
    The engine runs in its own session so that Ctrl-C reaches only the Python processes, and so that it can be
    killed with whatever it started. ``search_seconds``: how long one search may take (SEARCH_SECONDS)."""

    def __init__(self, cmd: str, options: dict[str, str] | None = None, search_seconds: float = SEARCH_SECONDS):
        super().__init__(cmd, connect=False)
        self.search_seconds = search_seconds
        self.report: SearchReport | None = None  # what the engine said of the last search
        self.connect()
        for name, value in (options or {}).items():
            self.setoption(name, value)
        self.isready()

    def connect(self, listener: Callable | None = None) -> None:
        cwd = os.path.dirname(self.cmd) or None
        try:
            self.proc = subprocess.Popen([self.cmd], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, cwd=cwd, start_new_session=True)
        except OSError as e:
            raise EngineError(f"cannot start {self.cmd}: {e}") from None
        for line in self._send_and_wait("usi", "usiok", HANDSHAKE_SECONDS, " (not a USI engine?)"):
            if line.startswith("id name "):
                self.name = line[8:]

    def isready(self, listener: Callable | None = None) -> None:
        """isready; what the engine said before readyok is kept in ``self.said`` (an error an engine reports
        there, a model it cannot load, still ends in readyok)."""
        self.said = self._send_and_wait("isready", "readyok", READY_SECONDS, "")

    def _send(self, command: str) -> None:
        try:
            self.proc.stdin.write(command.encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise EngineError(f"{self.cmd} exited (code {self.proc.poll()})") from None

    def _readline(self) -> str:
        line = self.proc.stdout.readline()
        if not line:
            raise EngineError(f"{self.cmd} exited (code {self.proc.wait()})")
        return line.decode("utf-8", "replace").strip()

    def _kill(self) -> None:
        """Kill the engine and what it started: a wrapper script's engine holds the pipe too, so killing the script
        alone would leave a read waiting. The engine leads its own process group (start_new_session); on a system
        without process groups, the engine alone. Not once it has been reaped, when its id may be another's."""
        if self.proc.poll() is not None:
            return
        if hasattr(os, "killpg"):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        else:
            self.proc.kill()

    def _send_and_wait(self, command: str, answer: str, seconds: float, hint: str) -> list[str]:
        """Send ``command`` and read lines up to ``answer``, killing the engine after ``seconds`` (the error then
        says ``hint``)."""
        timer = threading.Timer(seconds, self._kill)
        timer.start()
        lines = []
        try:
            self._send(command)
            while (line := self._readline()) != answer:
                lines.append(line)
        except EngineError:
            raise EngineError(f"{self.cmd} did not answer {command!r} with {answer!r} within {seconds:g} s, or "
                              f"exited{hint}") from None
        finally:
            timer.cancel()
        return lines

    def search(self, position: str, moves: list[str], depth: int | None, nodes: int | None) -> tuple[str, int | None]:
        """Search ``position`` ('startpos' or 'sfen ...') after ``moves`` to a depth or a node count (the go line
        of :func:`go_line`): the best move (a USI move, 'resign' or 'win') and the eval of its line for the side
        to move (cp, mate as +-MAX_CP; None when the engine gave no score for that move). What the engine reported
        of the search is left in ``self.report``, and its MultiPV lines (the last report of each, in order: first
        move, USI, and score) in ``self.lines``. No bestmove within ``search_seconds`` is an EngineError, and the
        engine is killed."""
        self.position(moves, position)
        go = go_line(depth, nodes)
        listener = InfoListener(mate_score=MAX_CP)
        counts: dict[str, int] = {}
        lines: dict[int, tuple[str, int]] = {}
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            self._kill()

        timer = threading.Timer(self.search_seconds, expire)
        timer.start()
        try:
            self._send(go)
            while not (line := self._readline()).startswith("bestmove"):
                listener(line)
                if line.startswith("info"):
                    for name, value in reported(line).items():
                        counts[name] = max(value, counts.get(name, value))
                    if (multipv := line_report(line)) is not None:
                        lines[multipv[0]] = multipv[1:]
            listener(line)
        except EngineError:
            if expired.is_set():
                raise self._silent(go) from None
            raise
        finally:
            timer.cancel()
        if expired.is_set():  # the timer went off as the bestmove came: the engine is killed all the same
            raise self._silent(go)
        self.report = SearchReport(go, counts.get("depth"), counts.get("nodes"))
        self.lines = [lines[number] for number in sorted(lines)]
        try:
            score = listener.score
        except (IndexError, ValueError):  # an info line cshogi's splitter does not follow
            score = None
        return listener.bestmove, score

    def _silent(self, go: str) -> EngineError:
        """The error of a search that had no bestmove in time, naming the engine and the go it was sent."""
        name = f" ({self.name})" if getattr(self, "name", None) else ""
        return EngineError(f"{self.cmd}{name} sent no bestmove within {self.search_seconds:g} s of {go!r}; "
                           "it was killed")

    def close(self) -> None:
        """Quit the engine; kill it if it does not exit within 5 s."""
        if self.proc is None:
            return
        try:
            self._send("quit")
            self.proc.wait(timeout=5)
        except (EngineError, subprocess.TimeoutExpired):
            self._kill()
            self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):  # a dead engine's stdin cannot be flushed: nothing is waiting on it
                pipe.close()
        self.proc = None


def resolve_engine(command: str) -> str:
    """The engine's executable as an absolute path (cshogi runs it without a shell, so no arguments);
    ValueError when there is none."""
    found = shutil.which(command)
    if found is None:
        raise UserError(f"engine {command!r} is not an executable file (give its path; no arguments)")
    return os.path.abspath(found)

