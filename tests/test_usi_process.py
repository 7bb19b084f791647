"""messiah-usi as a GUI meets it: a separate process driven through cshogi.usi.Engine and its pipes. Waits for
the engine's lines have timeouts only as guards against hanging: how fast it answers through the pipes is
`messiah bench latency`'s figure, and the time a move may take is checked in-process (test_usi)."""

import os
import queue
import random
import re
import shutil
import threading
import time

import cshogi
import pytest
from cshogi.usi import Engine

pytestmark = pytest.mark.usefixtures("messiah_usi")


class Gui:
    """cshogi's Engine for the handshake and timed go; raw lines through its pipes for the rest."""

    def __init__(self):
        self.engine = Engine(shutil.which("messiah-usi"), connect=False)
        self.lines: list[str] = []
        self.engine.connect(listener=self.lines.append)
        self.queue: queue.Queue[str] = queue.Queue()
        self.reader: threading.Thread | None = None

    def raw(self) -> None:
        """From here on, read the engine's output on a thread (for commands Engine has no method for)."""
        def read() -> None:
            for line in iter(self.engine.proc.stdout.readline, b""):
                self.queue.put(line.decode().strip())

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()

    def send(self, line: str) -> None:
        self.engine.proc.stdin.write(line.encode() + b"\n")
        self.engine.proc.stdin.flush()

    def until(self, prefix: str, timeout: float = 30) -> list[str]:
        """Lines up to and including the first starting with ``prefix`` (``timeout``: a guard against hanging)."""
        got, deadline = [], time.time() + timeout
        while time.time() < deadline:
            try:
                line = self.queue.get(timeout=max(0.0, deadline - time.time()))
            except queue.Empty:
                break
            got.append(line)
            if line.startswith(prefix):
                return got
        raise AssertionError(f"no {prefix!r} within {timeout} s; got {got[-5:]}")

    def quiet(self, seconds: float) -> list[str]:
        time.sleep(seconds)
        got = []
        while not self.queue.empty():
            got.append(self.queue.get())
        return got

    def close(self) -> None:
        self.send("quit")
        self.engine.proc.wait(10)


@pytest.fixture
def gui():
    g = Gui()
    yield g
    if g.engine.proc.poll() is None:
        g.close()


def legal(moves: list[str], best: str) -> bool:
    board = cshogi.Board()
    for m in moves:
        board.push_usi(m)
    return board.move_from_usi(best) in set(board.legal_moves)


def test_handshake_declares_every_option_with_type_default_and_range(gui):
    assert gui.engine.name.startswith("messiah")  # Engine.connect's handshake read "id name"
    gui.raw()
    gui.send("usi")  # again, to see what Engine.connect does not pass on
    lines = gui.until("usiok")
    assert lines[0].startswith("id name messiah") and any(x.startswith("id author") for x in lines)
    options = {m[1]: m[2] for m in (re.match(r"option name (\S+) type (.*)", x) for x in lines) if m}
    for name in ("ModelPath", "Search", "USI_Hash", "MultiPV", "ResignValue", "MaxMovesToDraw", "NetworkDelay2",
                 "Threads", "ScoreScale", "Ucb1C", "PuctC", "PuctTemperature"):
        assert name in options, name
    for name, declaration in options.items():
        assert " default " in declaration, name
        if declaration.startswith("spin"):
            low, high = map(int, re.search(r"min (-?\d+) max (-?\d+)", declaration).groups())
            default = int(re.search(r"default (-?\d+)", declaration).group(1))
            assert low <= default <= high, name
    assert "var alphabeta" in options["Search"] and "var ucb1" in options["Search"] and "var puct" in options["Search"]
    gui.send("isready")
    gui.until("readyok")


@pytest.mark.parametrize("clock", [
    {"byoyomi": 500},
    {"btime": 20000, "wtime": 20000},  # sudden death
    {"btime": 5000, "wtime": 5000, "binc": 500, "winc": 500},  # Fischer
    {"btime": 1000, "wtime": 1000, "byoyomi": 500},
    {"nodes": 50},
])
def test_timed_go_answers_a_legal_move_after_reporting_its_search(gui, clock):
    """Each clock gets a legal bestmove, the first move of the last info line's PV; go nodes searches its
    nodes. (That a move keeps within its clock is the time manager's budget and the search stopping at it:
    test_usi's think_time and timed-go tests.)"""
    gui.engine.isready()
    moves = ["7g7f", "3c3d", "2g2f"]
    gui.engine.position(moves)
    said: list[str] = []
    best, ponder = gui.engine.go(**clock, listener=said.append)
    assert legal(moves, best)
    info = [line.split() for line in said if line.startswith("info depth")][-1]
    assert info[info.index("pv") + 1] == best, said[-2:]
    if "nodes" in clock:
        assert int(info[info.index("nodes") + 1]) == clock["nodes"], said[-2:]


def test_raw_go_modes_stop_ponderhit_and_mate(gui):
    gui.engine.isready()
    gui.raw()
    for line in ("go depth 2", "go movetime 300"):
        gui.send("position startpos moves 7g7f")
        gui.send(line)
        out = gui.until("bestmove")
        assert sum(x.startswith("bestmove") for x in out) == 1 and legal(["7g7f"], out[-1].split()[1])
    # infinite: nothing until stop, then exactly one bestmove
    gui.send("go infinite")
    assert not [x for x in gui.quiet(0.5) if x.startswith("bestmove")]
    gui.send("stop")
    gui.until("bestmove")
    assert not [x for x in gui.quiet(0.3) if x.startswith("bestmove")]
    # ponder: nothing until ponderhit, then a timed search
    gui.send("go ponder byoyomi 400")
    assert not [x for x in gui.quiet(0.3) if x.startswith("bestmove")]
    gui.send("ponderhit")
    gui.until("bestmove")
    # ponder answered by stop (the opponent played something else)
    gui.send("go ponder byoyomi 400")
    gui.quiet(0.2)
    gui.send("stop")
    gui.until("bestmove")
    # go mate: a mate in one from the shared problems' style, and a position without one
    gui.send("position sfen 4k4/9/4P4/9/9/9/9/9/4K4 b G 1")
    gui.send("go mate 1000")
    assert gui.until("checkmate")[-1] == "checkmate G*5b"
    gui.send("position startpos")
    gui.send("go mate 1000")
    assert gui.until("checkmate")[-1] == "checkmate nomate"


def test_threads_helpers_write_nothing_on_stdout_and_end_with_quit(gui):
    """Threads 3: helper processes (two, or one a core less) share the engine's stdout; every line the GUI
    reads is still USI, and quit leaves no process behind. On one core there is no helper, and the engine says so."""
    one_core = len(os.sched_getaffinity(0)) == 1  # the engine inherits this process's cores (taskset)
    gui.raw()
    gui.send("setoption name Threads value 3")
    gui.send("isready")
    lines = gui.until("readyok")
    for go in ("go byoyomi 300", "go infinite"):
        gui.send("position startpos moves 7g7f")
        gui.send(go)
        if go == "go infinite":
            gui.quiet(0.3)
            gui.send("stop")
        lines += gui.until("bestmove")
    lines += gui.quiet(0.3)
    assert all(re.match(r"(info|bestmove|readyok) ", line + " ") for line in lines), lines
    assert not any("helper" in line or "error" in line for line in lines), lines
    children = [int(pid) for pid in open(f"/proc/{gui.engine.proc.pid}/task/{gui.engine.proc.pid}/children")
                .read().split()]
    if one_core:
        assert not children, [_cmdline(pid) for pid in children]
        assert any(line.startswith("info string Threads 3: ") for line in lines), lines
    else:
        assert len(children) >= 2  # the helpers, and multiprocessing's resource tracker beside a single one
    gui.close()
    # multiprocessing's resource tracker (a child too) ends when the engine's exit closes its pipe: a moment
    # after the engine, on a loaded machine; a helper left behind would run on, so a wait (generous: a guard,
    # not a speed claim) tells them apart
    deadline = time.time() + 30
    for pid in children:
        while not _ended(pid):
            assert time.time() < deadline, f"child {pid} ({_cmdline(pid)}) outlived the engine by 30 s"
            time.sleep(0.05)


def _ended(pid: int) -> bool:
    """Gone, or a zombie (ended; this container's init may not reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline") as f:
            return f.read().replace("\0", " ")[:120]
    except FileNotFoundError:
        return "gone"


def test_multipv_reports_distinct_lines_best_first(gui):
    gui.engine.setoption("MultiPV", 3)
    gui.engine.setoption("Search", "alphabeta")  # depth 3 is a full-width depth there
    gui.engine.isready()
    gui.raw()
    gui.send("position startpos moves 7g7f 3c3d")
    gui.send("go depth 3")
    out = gui.until("bestmove")
    last_depth = [x for x in out if x.startswith("info depth 3 ")]
    assert [int(re.search(r"multipv (\d+)", x).group(1)) for x in last_depth] == [1, 2, 3]
    firsts = [x.split(" pv ")[1].split()[0] for x in last_depth]
    assert len(set(firsts)) == 3
    scores = [int(re.search(r"score cp (-?\d+)", x).group(1)) for x in last_depth]
    assert scores == sorted(scores, reverse=True)
    assert out[-1].split()[1] == firsts[0]


def test_option_errors_are_explained_and_change_nothing(gui):
    gui.raw()
    for line, needle in [("setoption name MultiPV value 0", "MultiPV"),
                         ("setoption name Search value minimax", "Search"),
                         ("setoption name USI_Hash value lots", "USI_Hash"),
                         ("setoption name NoSuchOption value 1", "NoSuchOption"),
                         ("setoption name ModelPath value /nonexistent/model.onnx", None)]:
        gui.send(line)
        if needle:
            assert needle in gui.until("info string")[-1]
    gui.send("isready")  # the bad model path is reported at load time, and the engine keeps answering
    out = gui.until("readyok")
    assert any("error" in x and "nonexistent" in x for x in out)
    gui.send("setoption name ModelPath value <default>")
    gui.send("isready")
    gui.until("readyok")


def test_go_before_isready_and_illegal_position_are_handled(gui):
    gui.raw()
    gui.send("position startpos moves 7g7f 7g7f")  # the second 7g7f is not white's move: the first is played
    assert "illegal move" in gui.until("info string")[-1]
    gui.send("go nodes 20")  # no isready yet: the model is loaded on demand
    best = gui.until("bestmove")[-1].split()[1]
    assert legal(["7g7f"], best)


def test_fuzz_of_a_thousand_lines_then_readyok(gui):
    rng = random.Random(11)
    words = ["usi", "isready", "go", "position", "startpos", "sfen", "moves", "setoption", "name", "value",
             "7g7f", "P*5e", "8h2b+", "stop", "ponderhit", "MultiPV", "Threads", "infinite", "ponder", "mate",
             "btime", "byoyomi", "1", "-3", "99999999999", "lnsgkgsnl/9", "b", "-", "\u00e9", "usinewgame", "gameover"]
    gui.raw()
    readies = 1  # the isready below, and each of the fuzz's: the last readyok is the one after the fuzz
    for _ in range(1000):
        line = " ".join(rng.choice(words) for _word in range(rng.randint(0, 8)))
        if line.startswith("go"):
            line = "go nodes 5"  # a random go could be infinite; its parsing is fuzzed in test_usi
        if "quit" in line:
            continue
        readies += line.split()[:1] == ["isready"]
        gui.send(line)
        gui.send("stop")
    gui.send("setoption name MultiPV value 1")
    gui.send("isready")
    for _ in range(readies):  # every go of the fuzz has answered before its stop returned, so before these
        gui.until("readyok", timeout=120)
    gui.send("position startpos")
    gui.send("go nodes 20")
    assert legal([], gui.until("bestmove")[-1].split()[1])
    assert gui.engine.proc.poll() is None
