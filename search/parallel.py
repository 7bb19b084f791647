"""Root parallelism for the bandit searches: helper processes search the same root as the main search, each
with its own tree, evaluator and interpreter, and every process adds the others' root statistics into its own
root after each batch of leaves.

Processes, not threads: half of a search's time is Python that holds the GIL, so two search threads in one
interpreter gained at most 1.28x in evaluations a second on two cores (docs/benchmarks.md), while two
processes each run at full speed. The root is shared because the searches are deterministic: two processes
that did not see each other would grow the same tree. With the others' visits at its root, each process's
selection sends it where the others have not looked yet, and the main root's visit counts are the sum of all
the processes' (its best move is chosen from the whole work). Below the root each tree is its own.

A process's row of the :class:`RootTable` holds the position it searches (the tree's key of it) and its own visits
and total values per root move, in the order of the position's legal moves, which every process generates
alike. Rows are read and written without a lock: a read that races a write mixes two moments of the same
counts, which a bandit's statistics absorb.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable

import cshogi
import numpy as np

from messiah.rules import MAX_LEGAL_MOVES

READY_TIMEOUT = 120.0  # seconds a helper may take to load its model and warm up (numba compiles on a fresh install)
DONE_TIMEOUT = 5.0  # seconds a stopped helper may take to finish its batch and answer


class RootTable:
    """The shared rows of ``processes`` processes: keys (uint64), visits and values (float64, MAX_LEGAL_MOVES each).
    Made by the main process and handed to each helper as it is started."""

    def __init__(self, processes: int):
        ctx = multiprocessing.get_context("spawn")
        self.processes = processes
        self._keys = ctx.RawArray("Q", processes)
        self._n = ctx.RawArray("d", processes * MAX_LEGAL_MOVES)
        self._w = ctx.RawArray("d", processes * MAX_LEGAL_MOVES)

    def views(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """numpy views of the keys, visits and values (no copies: writes are shared)."""
        n = np.frombuffer(self._n, np.float64).reshape(self.processes, MAX_LEGAL_MOVES)
        w = np.frombuffer(self._w, np.float64).reshape(self.processes, MAX_LEGAL_MOVES)
        return np.frombuffer(self._keys, np.uint64), n, w


class RootShare:
    """One process's view of the table: ``slot`` is its row. :meth:`exchange` publishes this process's own root
    statistics and adds what the others have gained since the last exchange into its root node (which keeps
    what it has taken in its tree's ``shared``, so that its own part can always be told apart)."""

    def __init__(self, table: RootTable, slot: int):
        self.slot = slot
        self.keys, self.n, self.w = table.views()

    def exchange(self, node, prior_visits: float) -> None:
        """Publish ``node``'s own statistics (the root of this process's search, a :class:`search.tree.NodeView`)
        and take in the others'."""
        m = len(node.n)
        if m == 0 or m > MAX_LEGAL_MOVES:
            return
        taken_n, taken_w = node.shared if node.shared is not None else (np.zeros(m), np.zeros(m))
        key = np.uint64(node.key)
        if self.keys[self.slot] != key:
            self.keys[self.slot] = 0  # a new position: no reader takes the row until it is whole
        self.n[self.slot, :m] = node.n - prior_visits - taken_n
        self.w[self.slot, :m] = node.w - node.q * prior_visits - taken_w
        self.keys[self.slot] = key
        others = np.flatnonzero(self.keys == key)
        others = others[others != self.slot]
        if not len(others):
            node.tree.shared[node.index] = (taken_n, taken_w)
            return
        now_n, now_w = self.n[others, :m].sum(axis=0), self.w[others, :m].sum(axis=0)
        node.add_visits(now_n - taken_n, now_w - taken_w)
        node.tree.shared[node.index] = (now_n, now_w)


class Helpers:
    """``count`` helper processes, each running the searcher ``factory()`` builds (a picklable callable: it is
    called in the helper) with its :class:`RootShare` in ``table`` (rows 1..count; the main search has row 0).
    :meth:`go` starts them on a position; :meth:`finish` stops them and waits for their answers. A helper that
    fails is dropped with a line in ``notes`` that says why; the main search goes on without it."""

    def __init__(self, factory: Callable[[], object], count: int, table: RootTable, notes: list[str]):
        ctx = multiprocessing.get_context("spawn")  # no fork of a process with onnxruntime's threads
        self.stop = ctx.Event()
        self.notes = notes
        self._running = False
        self._helpers: list[tuple[multiprocessing.Process, object]] = []
        for slot in range(1, count + 1):
            mine, theirs = ctx.Pipe()
            process = ctx.Process(target=_helper_main, args=(factory, table, slot, theirs, self.stop), daemon=True,
                                  name=f"messiah-helper-{slot}")
            process.start()
            theirs.close()
            self._helpers.append((process, mine))
        self._answers("ready", READY_TIMEOUT, "did not start", "no answer in time")

    def __len__(self) -> int:
        return len(self._helpers)

    def go(self, board: cshogi.Board) -> None:
        """Start every helper searching ``board`` (its game history included, for repetitions)."""
        self.stop.clear()
        start, moves = board.copy(), []
        while start.history:
            moves.append(start.peek())
            start.pop()
        self.send(("go", start.sfen(), moves[::-1]))
        self._running = True

    def finish(self) -> int:
        """Stop the helpers and wait until each has answered (its last statistics are then in the table).
        Returns the positions they evaluated in that search."""
        if not self._running:
            return 0
        self.stop.set()
        self._running = False
        return sum(answer[1] for answer in self._answers("done", DONE_TIMEOUT, "failed", "no answer after stop"))

    def send(self, message: tuple) -> None:
        """A message for every helper between searches, e.g. ("new_game",)."""
        for process, conn in list(self._helpers):
            try:
                conn.send(message)
            except OSError as e:
                self._drop(process, conn, f"search helper {process.name} is gone: {e}")

    def close(self) -> None:
        """End the helpers (they also end by themselves when this process's end closes their pipes)."""
        self.stop.set()
        for _process, conn in self._helpers:
            try:
                conn.send(("quit",))
            except OSError:
                pass
        for process, conn in self._helpers:
            process.join(1.0)
            if process.is_alive():
                process.kill()
                process.join()
            conn.close()
        self._helpers = []

    def _answers(self, kind: str, timeout: float, failed: str, silent: str) -> list[tuple]:
        """Each helper's answer of ``kind`` within ``timeout`` seconds in all; a helper that answers anything
        else (an error) or nothing is dropped with a note: "search helper NAME {failed}: {why, or silent}"."""
        deadline, answers = time.monotonic() + timeout, []
        for process, conn in list(self._helpers):
            answer = self._answer(process, conn, deadline)
            if answer is not None and answer[0] == kind:
                answers.append(answer)
                continue
            why = answer[1] if answer is not None else silent
            self._drop(process, conn, f"search helper {process.name} {failed}: {why}")
        return answers

    @staticmethod
    def _answer(process, conn, deadline: float) -> tuple | None:
        while time.monotonic() < deadline:
            try:
                if conn.poll(0.01):
                    return conn.recv()
            except (EOFError, OSError) as e:
                return ("error", f"its pipe closed ({type(e).__name__}), exit code {process.exitcode}")
            if not process.is_alive() and not conn.poll():
                return ("error", f"it ended with exit code {process.exitcode}")
        return None

    def _drop(self, process, conn, note: str) -> None:
        self.notes.append(note)
        self._helpers.remove((process, conn))
        if process.is_alive():
            process.kill()
        process.join()
        conn.close()


class _StopOrOrphaned:
    """A helper's stop flag: the main's stop event, or the main process gone (then nothing would stop it)."""

    def __init__(self, event, parent: int):
        self.event, self.parent = event, parent

    def is_set(self) -> bool:
        return self.event.is_set() or os.getppid() != self.parent


def _helper_main(factory: Callable[[], object], table: RootTable, slot: int, conn, stop) -> None:
    """A helper process: build the searcher, then search each position it is sent until stopped."""
    from messiah.search.base import Limits
    from messiah.search.timeman import Clock

    # stdout is the GUI's: nothing a helper or a library in it prints may reach it
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    try:
        searcher = factory()
        searcher.share = RootShare(table, slot)
    except Exception as e:  # noqa: BLE001 - whatever it is, the main process says it and goes on without us
        conn.send(("error", f"{type(e).__name__}: {e}"))
        return
    conn.send(("ready",))
    stopped = _StopOrOrphaned(stop, os.getppid())
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message[0] == "quit":
            return
        if message[0] == "new_game":
            searcher.new_game()
        elif message[0] == "go":
            board = cshogi.Board(message[1])
            for move in message[2]:
                board.push(move)
            evaluations = searcher.cache.evaluations
            try:
                searcher._search(board, Limits(), Clock(stop=stopped), None)
            except Exception as e:  # noqa: BLE001 - said by the main process, which drops this helper
                conn.send(("error", f"{type(e).__name__}: {e}"))
                return
            conn.send(("done", searcher.cache.evaluations - evaluations))
