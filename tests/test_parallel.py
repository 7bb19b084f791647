"""Root-parallel search (search.parallel): the shared root statistics, the helper processes' life, and the USI
engine with Threads > 1 under stop, ponderhit, go infinite and load. Waits have timeouts only as guards
against hanging (GUARD), never as speed claims."""

import os
import subprocess
import sys
import threading
import time
from functools import partial

import cshogi
import numpy as np
import pytest
from conftest import GUARD

import messiah.engine.engine as engine_module
from messiah.engine.engine import Engine, engine_settings
from messiah.engine.usi import UsiEngine
from messiah.search import Clock, Limits, TimeBudget
from messiah.search.mcts import Puct
from messiah.search.parallel import RootShare, RootTable
from messiah.search.tree import NodeView, Tree

# An opening 24 plies in (a floodgate game's, as match openings are): many reasonable moves, no mate near.
POSITION = ("startpos moves 7g7f 3c3d 2g2f 4a3b 6i7h 4c4d 2f2e 2b3c 3i4h 6a5b 5g5f 5b4c 8h7g 3a2b 7g6h 5a4a "
            "7i8h 5c5d 5i6i 7a6b 8h7g 6b5c 4i5h 4a3a")


def board_of(position: str) -> cshogi.Board:
    board = cshogi.Board()
    for word in position.split()[2:]:
        move = board.move_from_usi(word)
        assert move in set(board.legal_moves), word
        board.push(move)
    return board


def test_root_share_takes_in_the_others_visits_once():
    """Two processes' roots of one position: after exchanges each root holds the sum of both processes' own
    visits and values, however often they exchange, and a third row on another position is left out."""
    moves, q = np.array([11, 22, 33], np.uint32), np.array([0.5, 0.25, 0.75])
    table = RootTable(3)

    def root(key: int) -> NodeView:  # each process's root, in a tree of its own
        tree = Tree(2**20, 1.0)
        return tree.view(tree.add(key, moves, q, []))

    a, b, elsewhere = root(7), root(7), root(8)
    mine, theirs, third = RootShare(table, 0), RootShare(table, 1), RootShare(table, 2)
    a.add_visits(np.array([5.0, 0, 0]), np.array([3.0, 0, 0]))
    b.add_visits(np.array([0, 4.0, 0]), np.array([0, 1.0, 0]))
    elsewhere.add_visits(np.array([100.0, 100, 100]), np.zeros(3))
    third.exchange(elsewhere, 1.0)
    for _ in range(3):
        mine.exchange(a, 1.0)
        theirs.exchange(b, 1.0)
    for node in (a, b):
        assert list(node.n) == [6, 5, 1]  # one prior visit each, plus 5 and 4 real ones
        assert list(node.w) == [0.5 + 3.0, 0.25 + 1.0, 0.75]
        assert node.visits == 9
    a.add_visits(np.array([0, 0, 2.0]), np.array([0, 0, 1.5]))  # a's own work goes on; b takes in only the new part
    mine.exchange(a, 1.0)
    theirs.exchange(b, 1.0)
    assert list(b.n) == [6, 5, 3] and b.w[2] == 0.75 + 1.5 and b.visits == 11


@pytest.fixture(scope="module")
def four_cores():
    """As if this machine had four cores: Threads 3 is then three processes (one a core at most)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine_module, "cores", lambda: 4)
        yield


@pytest.fixture(scope="module")
def engines(four_cores):
    """The default engine at Threads 3 (two helper processes) and at Threads 1."""
    with Engine.from_options({"Threads": "3", "MateNodes": "0"}) as three, \
            Engine.from_options({"Threads": "1", "MateNodes": "0"}) as one:
        assert three.searcher.notes == [] and len(three.searcher.helpers) == 2
        yield three, one


def test_threads_beyond_the_cores_are_one_process_a_core_and_said(monkeypatch):
    monkeypatch.setattr(engine_module, "cores", lambda: 2)
    with Engine.from_options({"Threads": "6", "MateNodes": "0", "USI_Hash": "100"}) as engine:
        assert len(engine.searcher.helpers) == 1
        assert engine.take_notes() == ["Threads 6: this machine gives 2 cores, so 2 search processes"]
        assert engine.searcher.cache.max_bytes == 50 * 2**20 // 2  # USI_Hash over 2
    assert engine_module.search_processes(engine_settings({"Threads": "6", "Search": "alphabeta"})) == 1


def test_usi_hash_is_shared_out_among_the_processes(engines):
    three, one = engines  # both at the default USI_Hash of 256 MB: 85 MB a process at Threads 3
    assert one.searcher.cache.max_bytes / three.searcher.cache.max_bytes == pytest.approx(256 / 85, rel=1e-3)


def test_the_root_holds_every_processs_visits(engines):
    """No visit is lost or counted twice: the main root's visits are the sum of the three processes' rows of
    the shared table, each process did its part, and evaluations count the helpers' too. The search is stopped
    (by its stop flag, at a progress report) once each process has more than 50 visits at the root, not after a
    time, so that a loaded machine only makes it longer; its hard limit is a guard against hanging."""
    three, _ = engines
    searcher = three.searcher
    board = board_of(POSITION)
    searcher.new_game()
    keys, n, _ = searcher.share.keys, searcher.share.n, searcher.share.w

    def visits_per_process():
        root = searcher.root
        rows = np.flatnonzero(keys == np.uint64(root.key))
        return rows, n[rows, : len(root.moves)].sum(axis=1)

    stop = threading.Event()

    def stop_once_each_has_searched(_) -> None:
        rows, visits = visits_per_process()
        if len(rows) == 3 and (visits > 50).all():
            stop.set()

    result = searcher.search(board, Limits(), stop_once_each_has_searched, Clock(TimeBudget(maximum=GUARD), stop=stop))
    root = searcher.root
    real = root.n - searcher.prior_visits
    rows, per_process = visits_per_process()
    assert list(rows) == [0, 1, 2]
    assert stop.is_set() and (per_process > 50).all(), per_process
    assert real.sum() == pytest.approx(per_process.sum())
    assert result.nodes == root.visits == round(per_process.sum())
    assert result.evaluations > searcher.cache.evaluations  # the helpers' forward passes are counted
    assert result.bestmove in set(board.legal_moves)


def test_a_search_to_nodes_or_depth_is_the_one_process_search(engines):
    """Helpers join timed and endless searches only: a node-limited search is the same at any Threads."""
    three, one = engines
    board = board_of(POSITION)
    results = []
    for engine in (three, one):
        engine.searcher.new_game()
        results.append(engine.searcher.search(board, Limits(nodes=300)))
    assert results[0].nodes == results[1].nodes == 300
    assert results[0].pv == results[1].pv


def test_a_helper_that_cannot_start_or_dies_is_said_and_the_search_goes_on():
    searcher = Puct(Engine.from_options({"MateNodes": "0"}).evaluator, mate_nodes=0)
    searcher.start_helpers(1, partial(int, "not a searcher"))  # raises ValueError in the helper
    try:
        assert len(searcher.helpers) == 0
        assert "did not start" in searcher.notes[0] and "ValueError" in searcher.notes[0]
        board = board_of(POSITION)
        assert searcher.search(board, Limits(movetime=0.2)).bestmove in set(board.legal_moves)
    finally:
        searcher.close()
    with Engine.from_options({"Threads": "2", "MateNodes": "0"}) as engine:
        process, _ = engine.searcher.helpers._helpers[0]
        process.kill()
        process.join()
        board = board_of(POSITION)
        result = engine.searcher.search(board, Limits(movetime=0.3))
        assert result.bestmove in set(board.legal_moves)
        assert len(engine.searcher.helpers) == 0 and "messiah-helper-1" in engine.searcher.notes[0]


def usi_engine(threads: int) -> tuple[UsiEngine, list[str]]:
    out: list[str] = []
    e = UsiEngine(out.append)
    e.handle(f"setoption name Threads value {threads}")
    e.handle("isready")
    assert out[-1] == "readyok" and not any("error" in line or "helper" in line for line in out), out
    return e, out


def assert_consistent_answer(out: list[str], board: cshogi.Board) -> None:
    """One bestmove, legal, and the last info line's PV starts with it and is a legal line."""
    best = [line for line in out if line.startswith("bestmove")]
    assert len(best) == 1, best
    move = best[0].split()[1]
    assert board.move_from_usi(move) in set(board.legal_moves)
    pv = [line for line in out if " pv " in line][-1].split(" pv ")[1].split()
    assert pv[0] == move
    line = board.copy()
    for step in pv:
        assert line.move_from_usi(step) in set(line.legal_moves), (pv, step)
        line.push_usi(step)


def test_usi_with_threads_answers_infinite_ponderhit_and_timed_go():
    e, out = usi_engine(2)
    try:
        board = board_of(POSITION)
        e.handle(f"position {POSITION}")
        out.clear()
        e.handle("go infinite")
        time.sleep(0.5)
        assert not any(line.startswith("bestmove") for line in out)
        e.handle("stop")
        assert_consistent_answer(out, board)
        out.clear()
        e.handle("go ponder byoyomi 300")
        time.sleep(0.3)
        e.handle("ponderhit")
        e._thread.join(GUARD)
        assert_consistent_answer(out, board)
        out.clear()
        e.handle("go byoyomi 300")
        e._thread.join(GUARD)
        assert_consistent_answer(out, board)
    finally:
        e.handle("quit")
        e.run([])


def test_stop_never_deadlocks_with_helpers_under_load(four_cores):
    """Threads 3 on a machine kept busy by two spinning processes; go infinite and go ponder stopped at once
    or after a moment, fifty times: every stop returns (a deadlock would not: it is sent from a thread, and
    waited for up to GUARD) with the go's one bestmove."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    e, out = usi_engine(3)
    stopping = None
    try:
        e.handle(f"position {POSITION}")
        for i in range(50):
            out.clear()
            e.handle("go infinite" if i % 2 else "go ponder byoyomi 1000")
            time.sleep((i % 5) * 0.01)
            stopping = threading.Thread(target=e.handle, args=("stop",), daemon=True)
            stopping.start()
            stopping.join(GUARD)
            assert not stopping.is_alive(), f"stop {i} did not return: a deadlock"
            assert sum(line.startswith("bestmove") for line in out) == 1, (i, out)
        assert len(e.engine.searcher.helpers) == 2, e.engine.searcher.notes
    finally:
        for spinner in spinners:
            spinner.kill()
        if stopping is None or not stopping.is_alive():  # quit would wait for a deadlocked search too
            e.handle("quit")
            e.run([])


def test_helpers_end_with_the_engine():
    e, _ = usi_engine(2)
    pid = e.engine.searcher.helpers._helpers[0][0].pid
    e.handle("setoption name Threads value 1")  # drops the engine and its helper
    deadline = time.time() + GUARD
    while time.time() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead too: it only waits for its parent to read its exit code
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split()[2] != "Z"
