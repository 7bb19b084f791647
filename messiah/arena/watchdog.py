"""A USI relay that answers for an engine which stops answering, so that a match never waits for ever.

cshogi.cli reads an engine's output until ``bestmove`` with no time limit: an engine that hangs in a search
(or dies mid-game: cshogi then reads empty lines for ever) stalls the whole match. ``messiah match`` starts
every engine through this relay (``python -m messiah.arena.watchdog GRACE COMMAND [ARGS...]``), which passes
every line through unchanged and times each search: when a ``go`` has had its whole clock (the larger main
time, byoyomi and increment, or its movetime) plus ``GRACE`` seconds with no ``bestmove``, or a ``stop``
has had ``GRACE`` seconds, the relay stops the engine, says so on stderr and in an ``info string``, and
answers ``bestmove resign`` for it. The silent engine then resigns every game left in its process's
session (the next pair of games starts it afresh), which the match's records show as resignations.
``go ponder`` and ``go infinite`` are timed from ``ponderhit`` and ``stop``.

With ``--go ARGS`` (``python -m messiah.arena.watchdog --go "depth 8" GRACE COMMAND``) every ``go`` reaches the engine
as ``go ARGS``, a fixed search (``messiah match --opponent-go``), still timed by the clock the GUI gave.

With ``--errors PATH`` every ``info string error`` line the engine writes (a model that would not load, a failed
search) is also appended to PATH, so that the match's report can say which games an engine played broken: a
model that fails to load makes the engine resign every game, which the records alone show as plain losses.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

from messiah.protocol import parse_go

GRACE_SECONDS = 30.0  # beyond a move's whole clock: a loaded machine or a slow first isready, far short of a hang
POLL_SECONDS = 0.05
ERROR_PREFIX = "info string error"  # how messiah-usi reports what went wrong (messiah.engine.usi)


def move_seconds(go: str) -> float | None:
    """The longest a ``go`` line may think before its clock is spent, in seconds (both sides' main times are
    counted, as the relay does not track whose move it is); None for a search with no clock (ponder,
    infinite, mate, nodes or depth alone), which is timed only once a ponderhit or stop comes. The line is read
    as the engine reads it (:func:`messiah.protocol.parse_go`)."""
    numbers, flags, _ = parse_go(go.split()[1:])
    if flags & {"ponder", "infinite", "mate"}:
        return None
    if "movetime" in numbers:
        return numbers["movetime"] / 1000
    if not numbers.keys() & {"btime", "wtime", "byoyomi", "binc", "winc"}:
        return None
    main = max(numbers.get("btime", 0), numbers.get("wtime", 0))
    return (main + numbers.get("byoyomi", 0) + max(numbers.get("binc", 0), numbers.get("winc", 0))) / 1000


class Relay:
    """The engine's process and the search being timed. ``write`` sends a line to the GUI (cshogi)."""

    def __init__(self, argv: list[str], grace: float, write=None, go: str = "", errors: str = ""):
        self.argv, self.grace, self.go, self.errors = argv, grace, go, errors
        self.write = write or self._stdout
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     start_new_session=True)
        self.lock = threading.Lock()
        self.deadline: float | None = None  # when the search being timed has to have answered
        self.searching = False  # a go sent and its bestmove not yet come
        self.ponder_seconds: float | None = None  # the clock of the go ponder line, for its ponderhit
        self.silent = False  # stopped for not answering (or gone): the relay answers for it from now on
        self.quitting = False  # quit was sent: the engine's exit is expected
        threading.Thread(target=self._engine_lines, daemon=True).start()
        threading.Thread(target=self._watch, daemon=True).start()

    @staticmethod
    def _stdout(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    def _engine_lines(self) -> None:
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            with self.lock:
                if self.silent:
                    return
                if line.startswith("bestmove"):
                    self.searching, self.deadline = False, None
                elif line.startswith(ERROR_PREFIX) and self.errors:
                    with contextlib.suppress(OSError), open(self.errors, "a", encoding="utf-8") as f:
                        f.write(line[len(ERROR_PREFIX):].lstrip(": ").rstrip() + "\n")
                self.write(line)
        with self.lock:  # the engine has gone: a search it left unanswered is answered now
            if not self.silent and not self.quitting:
                self._give_up("exited")

    def _watch(self) -> None:
        while True:
            time.sleep(POLL_SECONDS)
            with self.lock:
                if self.silent:
                    return
                if self.deadline is not None and time.monotonic() > self.deadline:
                    self._give_up("gave no bestmove in time")

    def _give_up(self, why: str) -> None:
        """Called holding the lock: stop the engine and answer the search it owes."""
        self.silent = True
        message = f"watchdog: {os.path.basename(self.argv[0])} {why}; stopped, it resigns from here on"
        print(message, file=sys.stderr, flush=True)
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.searching:
            self.write(f"info string {message}")
            self.write("bestmove resign")
        self.searching, self.deadline = False, None

    def send(self, line: str) -> bool:
        """Pass one GUI line on (or answer it for a silent engine); False after quit."""
        words = line.split()
        command = words[0] if words else ""
        with self.lock:
            if command == "go":
                seconds = move_seconds(line)
                self.searching = True
                self.ponder_seconds = _clock_of_ponder(line)  # what a ponderhit will give it
                self.deadline = None if seconds is None else time.monotonic() + seconds + self.grace
                if self.go:
                    line = f"go {self.go}"
            elif command == "ponderhit" and self.searching:
                seconds = self.ponder_seconds
                self.deadline = None if seconds is None else time.monotonic() + seconds + self.grace
            elif command == "stop" and self.searching:
                self.deadline = time.monotonic() + self.grace
            elif command == "quit":
                self.quitting = True
            if self.silent:
                answer = {"usi": "usiok", "isready": "readyok"}.get(command)
                if answer:
                    self.write(answer)
                elif command == "go":
                    self.write("bestmove resign")
                    self.searching, self.deadline = False, None
                return command != "quit"
        try:
            self.proc.stdin.write((line + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # the engine has gone: _engine_lines answers for it
        return command != "quit"

    def close(self) -> None:
        """After quit or the end of the GUI's input: the engine has 5 s to exit."""
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGKILL)


def _clock_of_ponder(go: str) -> float | None:
    """The clock a ``go ponder`` line gives the move once its ponderhit comes."""
    return move_seconds(" ".join(w for w in go.split() if w != "ponder"))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    flags = {"--go": "", "--errors": ""}
    while argv[:1] and argv[0] in flags and len(argv) > 1:
        flags[argv[0]], argv = argv[1], argv[2:]
    if len(argv) < 2:
        print("usage: python -m messiah.arena.watchdog [--go ARGS] [--errors PATH] GRACE_SECONDS COMMAND [ARGS...]",
              file=sys.stderr)
        return 2
    relay = Relay(argv[1:], float(argv[0]), go=flags["--go"], errors=flags["--errors"])
    for raw in sys.stdin.buffer:
        if not relay.send(raw.decode("utf-8", "replace").rstrip("\r\n")):
            break
    relay.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
