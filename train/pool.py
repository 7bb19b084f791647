"""Worker processes that report through one queue: teacher generation's engines and self-play's actors.

Workers are spawned, never forked: the parent may hold numba's OpenMP pool or tqdm's thread, and a child forked
from either can hang. Each worker gets its share of the work and the pool's queue and stop event as its last two
arguments; it puts messages on the queue and returns when the stop event is set or its share is done.

A SIGTERM to the parent (``pkill``, a job scheduler) ends the workers too: while the pool is open it raises
SystemExit in the parent, so the pool's exit stops and joins them, as Ctrl-C does. Python's default would end the
parent alone and leave spawned workers playing on with no one to read their games.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import signal
import threading
import time
from collections.abc import Callable, Sequence

SHUTDOWN_SECONDS = 30.0  # a worker finishing its current search and quitting its engine, before it is terminated


def _exit_on_sigterm(signum, frame) -> None:
    raise SystemExit(128 + signum)


class WorkerPool:
    """``with WorkerPool(target, shares, ...) as pool:`` starts ``target(*share, queue, stop)`` for each share;
    :meth:`next` is the next message. Leaving the block sets the stop event and waits for the workers (draining
    the queue: a worker blocks at exit until its queued messages are read), terminating the ones that take too
    long. ``error``, ``what`` and ``call`` say what to raise when every worker has exited without a word."""

    def __init__(self, target: Callable, shares: Sequence[tuple], error: type[Exception], what: str, call: str):
        ctx = mp.get_context("spawn")
        self.results, self.stop = ctx.Queue(), ctx.Event()
        self.procs = [ctx.Process(target=target, args=(*share, self.results, self.stop), daemon=True)
                      for share in shares]
        self.error, self.what, self.call = error, what, call
        self._sigterm = None  # the handler this pool replaced, restored on exit

    def __enter__(self) -> WorkerPool:
        if threading.current_thread() is threading.main_thread():  # only the main thread may set handlers
            self._sigterm = signal.signal(signal.SIGTERM, _exit_on_sigterm)
        for p in self.procs:
            p.start()
        return self

    def next(self):
        """The next message from the workers, or None after a second without one; raises ``error`` when every
        worker has exited without a word (spawned workers die at once when the caller's script lacks a main
        guard)."""
        try:
            return self.results.get(timeout=1.0)
        except queue.Empty:
            if not any(p.is_alive() for p in self.procs):
                codes = [p.exitcode for p in self.procs]
                raise self.error(f"{self.what} (exit codes {codes}; from a script, call {self.call} under "
                                 "`if __name__ == '__main__':`)") from None
            return None

    def __exit__(self, *exc) -> None:
        self.stop.set()
        deadline = time.monotonic() + SHUTDOWN_SECONDS
        while any(p.is_alive() for p in self.procs) and time.monotonic() < deadline:
            try:
                self.results.get(timeout=0.1)
            except queue.Empty:
                pass
        for p in self.procs:
            if p.is_alive():
                p.terminate()
            p.join()
        if self._sigterm is not None:
            signal.signal(signal.SIGTERM, self._sigterm)
