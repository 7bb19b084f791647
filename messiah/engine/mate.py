"""`go mate`: cshogi's df-pn under a time limit and ``stop``, with USI's three answers.

cshogi's df-pn holds the GIL while it searches and cannot be interrupted from another thread, so a long
search would leave ``stop`` and ``quit`` unanswered. A short search runs in the engine's process (most
problems fall within it); what it leaves open goes on in a child process that is killed at the time limit
or on ``stop``.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from dataclasses import dataclass, field

import cshogi

QUICK_NODES = 50_000  # in-process first try: a fraction of a second, solves most tsume problems
# Cap of a whole go mate. cshogi's df-pn table grows by about 150 bytes a node: 8M nodes is about 1.2 GB.
MAX_NODES = 8_000_000
POLL = 0.01  # seconds between looks at the child, the clock and stop


@dataclass
class MateAnswer:
    """``status`` is "mate" (``pv`` is the mating line), "nomate" (proven: there is none) or "timeout"
    (neither proven in the time or nodes allowed). ``note`` says why when it is not a search's answer."""

    status: str
    pv: list[int] = field(default_factory=list)
    note: str = ""

    def usi(self) -> str:
        if self.status == "mate":
            return "checkmate " + " ".join(cshogi.move_to_usi(m) for m in self.pv)
        return f"checkmate {self.status}"


def solve_mate(board: cshogi.Board, deadline: float | None, stop: threading.Event,
               max_nodes: int = MAX_NODES) -> MateAnswer:
    """Search a forced mate for the side to move until ``deadline`` (time.perf_counter(); None: no limit),
    ``stop`` or ``max_nodes``."""
    if board.king_square(cshogi.opponent(board.turn)) >= 81:
        return MateAnswer("nomate", note="the opponent has no king")
    if board.is_check():
        return MateAnswer("nomate", note="the side to move is in check: df-pn searches checks only")
    quick = min(QUICK_NODES, max_nodes)
    dfpn = cshogi.DfPn()
    dfpn.set_max_search_node(quick)
    if dfpn.search(board):
        return MateAnswer("mate", list(dfpn.get_pv(board)))
    if dfpn.searched_node < quick:
        return MateAnswer("nomate")
    if quick >= max_nodes:
        return MateAnswer("timeout", note=f"{max_nodes} nodes")
    return _solve_in_child(board.sfen(), deadline, stop, max_nodes)


def _solve_in_child(sfen: str, deadline: float | None, stop: threading.Event, max_nodes: int) -> MateAnswer:
    ctx = multiprocessing.get_context("spawn")  # no fork of a process with onnxruntime's threads
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(sfen, max_nodes, send), daemon=True)
    child.start()
    send.close()
    try:
        while True:
            if receive.poll(POLL):
                found, searched, pv = receive.recv()
                if found:
                    return MateAnswer("mate", pv)
                return MateAnswer("nomate" if searched < max_nodes else "timeout")
            if stop.is_set() or (deadline is not None and time.perf_counter() >= deadline):
                return MateAnswer("timeout")
            if not child.is_alive() and not receive.poll():
                return MateAnswer("timeout", note=f"the mate search process ended with code {child.exitcode}")
    except (EOFError, OSError) as e:
        return MateAnswer("timeout", note=f"the mate search process failed: {e}")
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()


def _child(sfen: str, max_nodes: int, send) -> None:
    board = cshogi.Board(sfen)
    dfpn = cshogi.DfPn()
    dfpn.set_max_search_node(max_nodes)
    found = dfpn.search(board)
    send.send((found, dfpn.searched_node, list(dfpn.get_pv(board)) if found else []))
