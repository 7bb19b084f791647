"""A client of other USI engines: cshogi's ``cshogi.usi.Engine`` made safe to drive from a program (a dead
or silent engine is an error, not a hang) and able to search to a fixed depth or node count.
Used by the matches (to check an engine before cshogi.cli plays it) and by teacher-data generation."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Callable

from cshogi.usi import Engine, InfoListener

from messiah.errors import MessiahError, UserError
from messiah.winrate import MAX_CP

HANDSHAKE_SECONDS = 60.0  # for usiok/readyok: an executable that is not a USI engine must not hang us


class EngineError(MessiahError, RuntimeError):
    """The engine could not be started, died, did not speak USI, or played an illegal move."""


class UsiClient(Engine):
    """cshogi's USI client with a fixed-depth or fixed-nodes search added (``Engine.go`` has neither) and
    end-of-file checks: cshogi's read loops compare bytes with '' and would spin forever on a dead engine.
    The engine runs in its own session so that Ctrl-C reaches only the Python processes."""

    def __init__(self, cmd: str, options: dict[str, str] | None = None):
        super().__init__(cmd, connect=False)
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
        for line in self._send_and_wait("usi", "usiok"):
            if line.startswith("id name "):
                self.name = line[8:]

    def isready(self, listener: Callable | None = None) -> None:
        """isready; what the engine said before readyok is kept in ``self.said`` (an error an engine reports
        there, a model it cannot load, still ends in readyok)."""
        self.said = self._send_and_wait("isready", "readyok")

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

    def _send_and_wait(self, command: str, answer: str) -> list[str]:
        """Send ``command`` and read lines up to ``answer``, killing the engine after HANDSHAKE_SECONDS."""
        timer = threading.Timer(HANDSHAKE_SECONDS, self.proc.kill)
        timer.start()
        lines = []
        try:
            self._send(command)
            while (line := self._readline()) != answer:
                lines.append(line)
        except EngineError:
            raise EngineError(f"{self.cmd} did not answer {command!r} with {answer!r} (not a USI engine?)") from None
        finally:
            timer.cancel()
        return lines

    def search(self, position: str, moves: list[str], depth: int | None, nodes: int | None) -> tuple[str, int | None]:
        """Search ``position`` ('startpos' or 'sfen ...') after ``moves`` to a depth or a node count: the
        best move (a USI move, 'resign' or 'win') and the eval of its line for the side to move (cp, mate
        as +-MAX_CP; None when the engine gave no score for that move)."""
        self.position(moves, position)
        self._send(f"go depth {depth}" if depth is not None else f"go nodes {nodes}")
        listener = InfoListener(mate_score=MAX_CP)
        while True:
            line = self._readline()
            listener(line)
            if line.startswith("bestmove"):
                try:
                    score = listener.score
                except (IndexError, ValueError):  # an info line cshogi's splitter does not follow
                    score = None
                return listener.bestmove, score

    def close(self) -> None:
        """Quit the engine; kill it if it does not exit within 5 s."""
        if self.proc is None:
            return
        try:
            self._send("quit")
            self.proc.wait(timeout=5)
        except (EngineError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self.proc = None


def resolve_engine(command: str) -> str:
    """The engine's executable as an absolute path (cshogi runs it without a shell, so no arguments);
    ValueError when there is none."""
    found = shutil.which(command)
    if found is None:
        raise UserError(f"engine {command!r} is not an executable file (give its path; no arguments)")
    return os.path.abspath(found)

