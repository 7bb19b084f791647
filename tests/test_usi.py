"""The USI engine: in-process for protocol details and robustness, and once as a real subprocess driven
by cshogi.usi.Engine, the way cshogi.cli and GUIs drive it. Timed searches run on a clock that ticks at each
reading (conftest.TickingTime): what is checked is the budget and where the search stopped, never how fast
this machine is (how late moves come through the pipes is `messiah bench latency`'s figure)."""

import math
import random
import shutil
import threading
import time

import cshogi
import pytest
from conftest import GUARD, LOOKS, MATES, STEP
from cshogi.usi import Engine

from messiah.engine.options import OPTIONS
from messiah.engine.thinktime import Delays, TimeBudget, think_time
from messiah.engine.usi import UsiEngine, parse_position
from messiah.position import PositionError
from messiah.rules import ENTERING_KING_RULES


def engine() -> tuple[UsiEngine, list[str]]:
    out: list[str] = []
    return UsiEngine(out.append), out


def go(e: UsiEngine, line: str, timeout: float = GUARD) -> None:
    """Send a go command and wait for its search to finish (``timeout``: a guard against hanging)."""
    e.handle(line)
    if e._thread is not None:
        e._thread.join(timeout)
        assert not e._thread.is_alive(), "the search did not end"


def bestmoves(out: list[str]) -> list[str]:
    return [line for line in out if line.startswith("bestmove")]


def reported(out: list[str], field: str) -> int:
    """``field`` (nodes, time) of the last info line with a depth."""
    words = [line.split() for line in out if line.startswith("info depth")][-1]
    return int(words[words.index(field) + 1])


def test_handshake_lists_options():
    e, out = engine()
    e.handle("usi")
    assert out[0].startswith("id name messiah") and out[-1] == "usiok"
    assert "option name ModelPath type filename default <default>" in out  # GUIs offer a file picker
    e.handle("isready")
    assert out[-1] == "readyok"


def test_go_plays_a_legal_move_and_prints_bestmove_once():
    e, out = engine()
    for line in ("isready", "position startpos moves 7g7f 3c3d"):
        e.handle(line)
    go(e, "go byoyomi 1000")
    best = bestmoves(out)
    assert len(best) == 1
    board = parse_position(["startpos", "moves", "7g7f", "3c3d"])
    assert board.move_from_usi(best[0].split()[1]) in set(board.legal_moves)
    info = [line.split() for line in out if line.startswith("info depth")]
    assert info and all(w in info[-1] for w in ("seldepth", "nodes", "nps", "time", "hashfull", "score", "pv"))


# A move that is not legal, and the position its moves before it lead to (written out, not computed by the engine).
ILLEGAL_MOVES = {
    "position startpos moves 7g7x": "startpos",  # not a move
    "position startpos moves 7g7f 7g7f": "startpos moves 7g7f",  # a move of the wrong side / empty square
    "position startpos moves 7g7f+": "startpos",  # a promotion outside the zone (cshogi's is_legal accepts it)
    "position startpos moves 7g7f 3c3d 2g2f 9a9x 1c1d": "startpos moves 7g7f 3c3d 2g2f",  # the rest ignored too
    "position sfen 4k4/9/9/9/9/9/9/9/4K4 b P 1 moves P*5a": "sfen 4k4/9/9/9/9/9/9/9/4K4 b P 1",  # a dead-rank drop
}


@pytest.mark.parametrize("line,before", ILLEGAL_MOVES.items(), ids=ILLEGAL_MOVES.keys())
def test_an_illegal_move_sets_the_moves_before_it_and_says_which(line, before):
    """YaneuraOu's and Stockfish's convention: the moves up to the first illegal one are played, the rest
    ignored; the engine once kept the previous position, one the GUI never sent, and searched it."""
    e, out = engine()
    e.handle("position startpos moves 2g2f 8c8d")
    e.handle(line)
    expected = parse_position(before.split()).sfen()
    assert out[-1].startswith("info string error: position: illegal move") and out[-1].endswith(f"sfen {expected}")
    assert e.board.sfen() == expected
    go(e, "go nodes 30")
    board = parse_position(before.split())
    assert board.move_from_usi(bestmoves(out)[-1].split()[1]) in set(board.legal_moves)


@pytest.mark.parametrize("line", [
    "position sfen lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/9/LNSGKGSNL x - 1",  # bad side to move
    "position sfen lnsgkgsnl/9/ppppppppp/9/9 b - 1",  # too few ranks
    "position sfen lnsgkgsnl/10/ppppppppp/9/9/9/PPPPPPPPP/9/LNSGKGSNL b - 1",  # rank too wide
    "position sfen 9/9/9/9/9/9/9/9/9 b - 1",  # no kings
    "position sfen garbage",
    "position",
    "position moves 7g7f",
])
def test_an_unreadable_position_sets_none_and_every_go_says_so(line):
    """The engine once kept the previous position and played a move for it; now no position is set, and each
    go (and go mate) says why before its one answer, until a position is read again."""
    e, out = engine()
    e.handle("position startpos moves 2g2f")
    e.handle(line)
    assert out[-1].startswith("info string error: position:") and "no position is set" in out[-1]
    for command, answer in (("go nodes 30", "bestmove resign"), ("go byoyomi 1000", "bestmove resign"),
                            ("go mate 100", "checkmate timeout")):
        before = len(out)
        go(e, command)
        assert out[before:] == [out[before], answer]
        assert out[before].startswith("info string error: no position: the last position command could not be read")
    e.handle("position startpos moves 7g7f")
    go(e, "go nodes 30")
    board = parse_position(["startpos", "moves", "7g7f"])
    assert board.move_from_usi(bestmoves(out)[-1].split()[1]) in set(board.legal_moves)


def test_bad_option_values_are_reported():
    e, out = engine()
    e.handle("setoption name Threads value lots")
    assert "Threads" in out[-1] and out[-1].startswith("info string error")
    assert e.options["Threads"] == 1
    e.handle("setoption name NoSuchOption value 3")
    assert out[-1].startswith("info string error")


NO_MODEL = "no model to search with: every go answers bestmove resign until ModelPath names a model that loads"


@pytest.mark.parametrize("loaded_first", [False, True], ids=["fresh", "after the shipped model"])
def test_a_model_that_cannot_load_is_said_at_isready_and_before_every_bestmove(loaded_first):
    """As YaneuraOu and dlshogi, which exit rather than play another network than the one named, no other model is
    played, whether none or the shipped one was loaded before: isready says so, and so does every go before its
    bestmove resign, a go ponder holding it until stop (it once answered at once) or ponderhit, as USI wants."""
    e, out = engine()
    if loaded_first:
        e.handle("isready")
        assert e.evaluator is not None
    e.handle("setoption name ModelPath value /no/such/model.onnx")
    e.handle("isready")
    assert out[-2] == f"info string error: cannot load the model: model file not found: /no/such/model.onnx; " \
        f"{NO_MODEL} (<default>: the shipped one)"
    assert out[-1] == "readyok"
    e.handle("position startpos")
    for line in ("go btime 0 wtime 0 byoyomi 1000", "go nodes 30"):
        before = len(out)
        go(e, line)
        assert len(out) == before + 2 and NO_MODEL in out[before] and out[-1] == "bestmove resign"
    e.handle("go ponder btime 0 wtime 0 byoyomi 1000")
    assert not bestmoves(out[-1:])  # held: the GUI has not yet said whether its ponder move was played
    e.handle("stop")
    assert out[-1] == "bestmove resign" and NO_MODEL in out[-2]
    e.handle("go ponder btime 0 wtime 0 byoyomi 1000")
    go(e, "ponderhit")  # and waits for the reply
    assert out[-1] == "bestmove resign" and NO_MODEL in out[-2]
    e.handle("setoption name ModelPath value <default>")
    go(e, "go nodes 30")
    assert cshogi.Board().move_from_usi(out[-1].split()[1]) in set(cshogi.Board().legal_moves)


def test_a_go_whose_engine_fails_to_build_still_gets_its_bestmove(monkeypatch):
    """A bug building the engine at go (no isready since the option changed) once left the go without a bestmove,
    and a GUI waiting for it for ever."""
    from messiah.engine import usi

    def broken(options, evaluator):
        raise AttributeError("'Puct' object has no attribute 'threads'")

    monkeypatch.setattr(usi, "Engine", broken)
    e, out = engine()
    e.handle("position startpos")
    go(e, "go nodes 30")
    assert out[-2:] == ["info string error: building the engine failed: AttributeError: 'Puct' object has no "
                        "attribute 'threads'", "bestmove resign"]


def test_device_option_chooses_where_the_network_runs():
    """Device cpu runs the shipped model's int8 copy on the CPU whatever the machine has; an unknown device is
    refused and the option stays as it was."""
    e, out = engine()
    e.handle("usi")
    assert "option name Device type combo default auto var auto var cuda var tensorrt var cpu" in out
    e.handle("setoption name Device value gpu")
    assert out[-1].startswith("info string error") and "Device" in out[-1]
    e.handle("setoption name Device value cpu")
    e.handle("isready")
    assert out[-1] == "readyok"
    assert e.evaluator.providers == ["CPUExecutionProvider"]
    assert e.evaluator.path.name == "default-int8.onnx"
    go(e, "go nodes 50")
    assert out[-1].startswith("bestmove ") and out[-1] != "bestmove resign"


def test_mate_in_one_is_played():
    problems = [line.split("\t") for line in (MATES / "mate1.tsv").read_text().splitlines()[:20]]
    e, out = engine()
    for sfen, _, _ in problems:
        e.handle(f"position sfen {sfen}")
        go(e, "go byoyomi 100")
        board = cshogi.Board(sfen)
        board.push_usi(out[-1].split()[1])
        assert board.is_game_over(), sfen


def test_fuzz_then_still_ready():
    rng = random.Random(7)
    words = ["usi", "isready", "go", "position", "startpos", "sfen", "moves", "setoption", "name", "value",
             "7g7f", "P*5e", "8h2b+", "stop", "ponderhit", "Threads", "ModelPath", "1", "-3", "\x00", "???"]
    e, out = engine()
    e.handle("isready")
    for _ in range(1000):
        line = " ".join(rng.choice(words) for _ in range(rng.randint(0, 8)))
        if line.split()[:1] == ["go"]:
            line += " nodes 20"  # a random go must not run forever (go infinite waits for stop)
        assert e.handle(line)
        e.handle("stop")
    e.handle("setoption name ModelPath value <default>")
    e.handle("isready")
    assert out[-1] == "readyok"


def test_go_infinite_answers_stop_at_once_and_once():
    """go infinite: no bestmove before stop; stop ends the search at its next look at the stop flag, with the
    nodes it had, and a second stop adds nothing. (The search's first progress report is held until the stop
    comes, so that the nodes it had at the stop are known.)"""
    e, out = engine()
    e.handle("isready")
    e.handle("position startpos")
    held, report = threading.Event(), e._info

    def held_until_stop(engine, result) -> None:
        report(engine, result)
        if not held.is_set():
            held.set()
            e._stop.wait(GUARD)

    e._info = held_until_stop
    e.handle("go infinite")
    assert held.wait(GUARD), "no progress report"
    assert bestmoves(out) == []  # infinite: no bestmove before stop
    nodes = reported(out, "nodes")
    e.handle("stop")
    assert len(bestmoves(out)) == 1
    assert reported(out, "nodes") == nodes  # not one playout after the stop
    e.handle("stop")
    assert len(bestmoves(out)) == 1


def test_ponderhit_gives_the_move_the_time_of_the_same_go_counted_from_the_ponderhit(ticking):
    """A ponder search has no clock; ponderhit gives it what the go would have had without ponder, from then.
    Byoyomi 500: all of it but the 50 ms margin (unused byoyomi is lost), so the search ends 0.45 s after the
    ponderhit by its clock (which ticks at each reading: to a few readings)."""
    e, out = engine()
    e.handle("isready")
    e.handle("position startpos moves 7g7f 3c3d")
    e.handle("go ponder byoyomi 500")
    time.sleep(0.3)
    assert bestmoves(out) == [] and e._clock.budget == TimeBudget()
    clock = e._clock
    before = clock.elapsed()
    e.handle("ponderhit")
    after = clock.elapsed()
    e._thread.join(GUARD)
    assert len(bestmoves(out)) == 1
    budget = clock.budget
    assert budget.minimum == budget.optimum == budget.maximum and before <= budget.maximum - 0.45 <= after
    assert int(budget.maximum * 1000) <= reported(out, "time") <= (budget.maximum + LOOKS * STEP) * 1000
    # With a main time: black at ply 3 shares 60 s over the 64.5 of its moves expected before ply 132, and a
    # move whose best move keeps changing may take four shares; both counted from the ponderhit.
    e.handle("go ponder btime 60000 wtime 60000")
    time.sleep(0.2)
    clock = e._clock
    before = clock.elapsed()
    e.handle("ponderhit")
    after = clock.elapsed()
    budget = clock.budget
    assert before <= budget.minimum <= after
    assert budget.optimum - budget.minimum == pytest.approx(60 / 64.5)
    assert budget.maximum - budget.minimum == pytest.approx(4 * 60 / 64.5)
    e.handle("stop")
    assert len(bestmoves(out)) == 2


def test_a_ponder_search_sizes_its_root_mate_search_by_the_move_it_becomes(monkeypatch):
    """df-pn cannot be interrupted, so a ponder search's root df-pn gets what the same go gets as a move (what it
    becomes at ponderhit), not the whole MateNodes: a stop or a ponderhit is answered at once. (`messiah bench
    soak` found a ponder search answering them up to half a second late: a time loss at byoyomi 200.)"""
    from messiah.search import base

    sizes: dict[str, int] = {}
    real = base.root_mate
    e, out = engine()
    e.handle("setoption name USI_Ponder value true")
    e.handle("isready")
    e.handle("position startpos moves 7g7f 3c3d")
    for line in ("go byoyomi 200", "go ponder byoyomi 200", "go infinite"):
        monkeypatch.setattr(base, "root_mate", lambda board, nodes, line=line: sizes.setdefault(line, nodes) and
                            real(board, nodes))
        if line == "go byoyomi 200":
            go(e, line)
        else:
            e.handle(line)
            e.handle("stop")  # waits for the search's bestmove
    mate_nodes = OPTIONS["MateNodes"].default
    assert sizes["go ponder byoyomi 200"] == sizes["go byoyomi 200"] < mate_nodes, sizes
    assert sizes["go infinite"] == mate_nodes  # analysis has no move to become: the whole MateNodes
    assert len(bestmoves(out)) == 3


@pytest.mark.parametrize("order", ["stop first", "position first"])
def test_a_ponder_miss_never_plays_the_ponder_searchs_move(order):
    """The engine ponders on a position where G*5b mates; the opponent plays something else, so the GUI sends
    stop (whose bestmove it ignores; a careless GUI may send the new position at once), then the position that
    arose, where black has no gold. The move played there comes from a new search of that position."""
    e, out = engine()
    e.handle("setoption name USI_Ponder value true")
    e.handle("isready")
    e.handle("position sfen 4k4/9/4P4/9/9/9/9/9/4K4 b G 1")
    e.handle("go ponder byoyomi 1000")
    time.sleep(0.3)
    if order == "stop first":
        e.handle("stop")
    e.handle("position sfen 4k4/9/4P4/9/9/9/9/9/4K4 b S 1")
    assert bestmoves(out) == ["bestmove G*5b"]  # the ponder search's answer, which the GUI drops
    out.clear()
    go(e, "go byoyomi 300")
    board = cshogi.Board("4k4/9/4P4/9/9/9/9/9/4K4 b S 1")
    assert len(bestmoves(out)) == 1
    played = bestmoves(out)[0].split()[1]
    assert board.move_from_usi(played) in set(board.legal_moves) and played != "G*5b"
    for line in out:  # every line of the new search speaks of the new position
        if " pv " in line:
            assert board.move_from_usi(line.split(" pv ")[1].split()[0]) in set(board.legal_moves), line


def test_bestmove_names_a_ponder_move_only_with_usi_ponder():
    e, out = engine()
    e.handle("isready")
    e.handle("position startpos moves 7g7f 3c3d")
    go(e, "go nodes 200")
    assert len(bestmoves(out)[-1].split()) == 2
    e.handle("setoption name USI_Ponder value true")
    go(e, "go nodes 200")
    words = bestmoves(out)[-1].split()
    assert words[2] == "ponder" and len(words) == 4
    board = parse_position(["startpos", "moves", "7g7f", "3c3d", words[1]])
    assert board.move_from_usi(words[3]) in set(board.legal_moves)


def test_write_debug_log_records_every_line_in_and_out(tmp_path):
    log = tmp_path / "usi.log"
    e, out = engine()
    e.handle(f"setoption name WriteDebugLog value {log}")
    e.handle("position startpos")
    go(e, "go nodes 30")
    e.handle("setoption name WriteDebugLog value <empty>")
    e.handle("isready")  # after the log was closed: not in it
    lines = [line.split(maxsplit=2)[1:] for line in log.read_text().splitlines()]
    assert lines[0] == [">", "position startpos"] and lines[1] == [">", "go nodes 30"]
    assert [">", "setoption name WriteDebugLog value <empty>"] == lines[-1]
    assert out[-1] == "readyok" and ["<", "readyok"] not in lines
    assert [["<", x] for x in out if x.startswith("bestmove")] == [x for x in lines if x[1].startswith("bestmove")]
    e.handle(f"setoption name WriteDebugLog value {tmp_path / 'no' / 'such' / 'dir.log'}")
    assert "WriteDebugLog: cannot write" in out[-1] and e.options["WriteDebugLog"] == "<empty>"


@pytest.mark.parametrize("search", ["alphabeta", "ucb1", "puct"])
@pytest.mark.parametrize("limit", ["nodes 30", "depth 2", "movetime 200"])
def test_every_search_and_limit(search, limit):
    e, out = engine()
    e.handle(f"setoption name Search value {search}")
    e.handle("isready")
    e.handle("position startpos moves 2g2f 8c8d")
    go(e, f"go {limit}")
    assert len(bestmoves(out)) == 1
    board = parse_position(["startpos", "moves", "2g2f", "8c8d"])
    move, *ponder = bestmoves(out)[0].split()[1:]
    assert board.move_from_usi(move) in set(board.legal_moves)
    if ponder:
        assert ponder[0] == "ponder"


def test_go_mate_prints_the_mate():
    e, out = engine()
    e.handle("position sfen 9/9/8k/7R1/7G1/9/9/9/9 b r2b3g4s4n4l18p 1")
    go(e, "go mate 1000")
    assert out[-1] == "checkmate 2e1d 1c1b 1d2c 1b1a 2c2b"
    e.handle("position startpos")
    go(e, "go mate 1000")
    assert out[-1] == "checkmate nomate"


@pytest.mark.parametrize("line,needle", [
    ("setoption name Search value minimax", "Search must be one of"),
    ("setoption name USI_Ponder value maybe", "true or false"),
    ("setoption name USI_Hash value 0", "USI_Hash must be an integer"),
])
def test_malformed_commands_are_explained(line, needle):
    e, out = engine()
    e.handle(line)
    assert out[-1].startswith("info string error") and needle in out[-1]
    assert e.options["Search"] == OPTIONS["Search"].default and e.options["USI_Hash"] == 256


@pytest.mark.parametrize("line,ignored", [
    ("go nodes", "nodes"),
    ("go depth 0", "depth 0"),
    ("go sideways nodes 20", "sideways"),
    ("go btime 1000 wtime 1000 movestogo 40 byoyomi", "movestogo 40 byoyomi"),
    ("go nodes -5 depth 1", "nodes -5"),
])
def test_unusable_go_words_are_ignored_and_still_answered(line, ignored):
    """USI: unknown words of go are ignored; a GUI waits for the bestmove, so every go gets one."""
    e, out = engine()
    e.handle("position startpos")
    go(e, line)
    assert f"info string go: ignored {ignored}" in out
    assert len(bestmoves(out)) == 1
    assert cshogi.Board().move_from_usi(bestmoves(out)[0].split()[1]) in set(cshogi.Board().legal_moves)


def test_think_time():
    black, opening, margin = cshogi.BLACK, 30, Delays(deadline=50)
    # byoyomi alone: all of it but the margin, however obvious the move (unused byoyomi is lost)
    assert think_time({"byoyomi": 1000}, black, opening, margin) == pytest.approx(TimeBudget(0.95, 0.95, 0.95))
    wide = Delays(deadline=100)
    assert think_time({"movetime": 500}, black, opening, wide) == pytest.approx(TimeBudget(0.4, None, 0.4))
    assert think_time({}, black, opening, margin) == TimeBudget()
    # a byoyomi shorter than the margin still gets half of it
    assert think_time({"byoyomi": 60}, black, opening, wide) == pytest.approx(TimeBudget(0.03, 0.03, 0.03))
    # sudden death: the clock shared over the moves still expected (51 of ours at ply 30, with the horizon at
    # ply 132), the margin taken off the hard deadline only, a hard move stretched to four shares
    budget = think_time({"btime": 60000, "wtime": 1}, black, opening, margin)
    assert budget.minimum == 0 and budget.optimum == pytest.approx(60 / 51)
    assert budget.maximum == pytest.approx(4 * 60 / 51)
    # late in a long game a move takes about 1/20 of what is left, so the clock never runs out
    assert think_time({"btime": 20000}, black, 400, margin).optimum == pytest.approx(1.0)
    budget = think_time({"btime": 100, "wtime": 100}, black, opening, margin)
    assert 0 < budget.optimum < budget.maximum <= 0.05
    # Fischer: the increment is spendable; main time plus byoyomi: the byoyomi comes on top of the share
    assert think_time({"btime": 0, "wtime": 0, "binc": 2000, "winc": 2000}, black, opening, margin).maximum == \
        pytest.approx(1.95)
    assert think_time({"btime": 51000, "byoyomi": 1000}, black, opening, margin).optimum == pytest.approx(2.0)
    # main time below one byoyomi: spend it all with the byoyomi
    assert think_time({"btime": 500, "byoyomi": 1000}, black, opening, margin).minimum == pytest.approx(1.45)
    # a shorter horizon (100 plies: 35 of ours still expected at ply 30) and a larger floor of moves to go
    assert think_time({"btime": 70000}, black, opening, margin, horizon=100).optimum == pytest.approx(2.0)
    assert think_time({"btime": 70000}, black, opening, margin, horizon=100, min_moves_to_go=70).optimum == \
        pytest.approx(1.0)


def test_network_delays_and_the_minimum_thinking_time():
    """YaneuraOu's NetworkDelay comes off the aimed and the stretched time, NetworkDelay2 off the hard deadline
    only, and MinimumThinkingTime is a floor that the deadline still caps."""
    black, opening = cshogi.BLACK, 30
    plain = think_time({"btime": 60000, "wtime": 1}, black, opening, Delays(0, 0, 0))
    late = think_time({"btime": 60000, "wtime": 1}, black, opening, Delays(300, 0, 0))
    assert late.optimum == pytest.approx(plain.optimum - 0.3) and late.maximum == pytest.approx(plain.maximum - 0.3)
    assert think_time({"byoyomi": 3000}, black, opening, Delays(0, 1120, 0)).maximum == pytest.approx(1.88)
    assert think_time({"byoyomi": 3000}, black, opening, Delays(500, 100, 0)).maximum == pytest.approx(2.9)  # all of it
    floor = think_time({"btime": 60000, "wtime": 1}, black, opening, Delays(0, 50, 2000))
    assert floor.minimum == pytest.approx(2.0) and floor.optimum == pytest.approx(2.0)
    assert think_time({"btime": 1000}, black, opening, Delays(0, 50, 2000)).minimum == pytest.approx(0.95)  # capped
    assert think_time({"btime": 100000, "byoyomi": 0}, black, 400, Delays(0, 50, 0)).minimum == 0


def test_time_management_options_reach_the_clock_and_the_search():
    """TimeHorizon, TimeMinMovesToGo, TimeObvious and TimeUnstable exist so that `messiah tune` can measure
    them: each must change what a timed go does."""
    e, out = engine()
    for line in ("setoption name NodesLimit value 8", "setoption name TimeHorizon value 100",
                 "setoption name TimeObvious value 25", "setoption name TimeUnstable value 300", "isready",
                 "position startpos"):
        e.handle(line)
    go(e, "go btime 70000 wtime 70000")  # ply 1: 49.5 of ours expected before ply 100
    assert e._clock.budget.optimum == pytest.approx(70 / 49.5)
    assert (e._clock.obvious, e._clock.unstable) == (0.25, 3.0)
    e.handle("setoption name TimeMinMovesToGo value 70")
    go(e, "go btime 70000 wtime 70000")
    assert e._clock.budget.optimum == pytest.approx(1.0) and len(bestmoves(out)) == 2


def test_a_byoyomi_move_comes_within_its_time(ticking):
    """Byoyomi 1000 without main time: the move's hard limit is the byoyomi less the 50 ms margin, which keeps it
    inside the byoyomi, and the search ends there by its clock (which ticks at each reading: to a few
    readings)."""
    e, out = engine()
    e.handle("isready")
    e.handle("position startpos")
    go(e, "go btime 0 wtime 0 byoyomi 1000")
    assert e._clock.budget == pytest.approx(TimeBudget(0.95, 0.95, 0.95))
    assert 950 <= reported(out, "time") <= (0.95 + LOOKS * STEP) * 1000
    assert len(bestmoves(out)) == 1


def test_a_go_that_builds_the_engine_answers_within_its_byoyomi(ticking, monkeypatch):
    """A setoption drops the engine and a go without isready builds it again: the move's time counts from the go,
    as the GUI's clock does, so the build is spent from the byoyomi and the bestmove still comes within it (a
    500 ms byoyomi was answered after 634 ms while reporting time 463). The build is a stand-in that takes 0.3 s
    of the ticking clock."""
    import messiah.engine.usi as usi

    build = usi.Engine

    def slow_build(*args, **kwargs):
        ticking.readings += round(0.3 / STEP)
        return build(*args, **kwargs)

    monkeypatch.setattr(usi, "Engine", slow_build)
    out: list[str] = []
    answered: list[int] = []
    e = UsiEngine(lambda line: (out.append(line), line.startswith("bestmove") and answered.append(ticking.readings)))
    for line in ("isready", "setoption name PuctC value 60", "position startpos"):
        e.handle(line)
    sent = ticking.readings
    go(e, "go btime 0 wtime 0 byoyomi 1000")
    assert len(answered) == 1 and (answered[0] - sent) * STEP <= 0.95 + LOOKS * STEP
    assert reported(out, "time") >= 300  # the time a GUI sees counts from its go, the build included


def test_usi_hash_bounds_the_tables():
    e, out = engine()
    e.handle("setoption name Search value alphabeta")  # the search with a transposition table
    e.handle("setoption name USI_Hash value 1")
    e.handle("isready")
    assert e.searcher.cache.max_bytes == 2**20 // 2
    assert e.searcher.hash_entries == 2**20 // 2 // 256
    go(e, "go nodes 2000")
    assert 0 < e.searcher.cache.bytes <= e.searcher.cache.max_bytes
    assert len(e.searcher.tt) <= e.searcher.hash_entries


def test_entering_king_is_declared():
    e, out = engine()
    e.handle("isready")
    e.handle("position sfen K+R+B+P+P+P+P+P+P/+P+P+P+P+P+P+P+P+P/9/9/9/9/9/9/8k b RB4G4S4N4L 1")
    go(e, "go byoyomi 1000")
    assert bestmoves(out) == ["bestmove win"]


NEW_SPINS = {"NetworkDelay": (0, 10000), "NetworkDelay2": (0, 10000), "MinimumThinkingTime": (0, 100000),
             "PvInterval": (0, 100000), "DepthLimit": (0, 10000), "DrawValueBlack": (0, 1000),
             "DrawValueWhite": (0, 1000), "Strength": (0, 20)}


@pytest.mark.parametrize("name", sorted(NEW_SPINS))
def test_the_gui_players_options_take_their_edges_and_refuse_beyond(name):
    """Each option is declared with its range, takes both ends, and keeps its value when sent one past them."""
    e, out = engine()
    low, high = NEW_SPINS[name]
    e.handle("usi")
    assert any(line.startswith(f"option name {name} type spin") and line.endswith(f"min {low} max {high}")
               for line in out)
    for value in (low, high):
        e.handle(f"setoption name {name} value {value}")
        assert e.options[name] == value and not out[-1].startswith("info string error")
    for value in (low - 1, high + 1):
        e.handle(f"setoption name {name} value {value}")
        assert out[-1].startswith(f"info string error: {name} must be an integer {low}..{high}")
        assert e.options[name] == high


@pytest.mark.parametrize("name, kind", [("EnteringKingRule", "combo"), ("USI_OwnBook", "check"),
                                        ("ConsiderationMode", "check")])
def test_the_gui_players_choices_take_only_their_values(name, kind):
    e, out = engine()
    values = ENTERING_KING_RULES if kind == "combo" else ("true", "false")
    for value in values:
        e.handle(f"setoption name {name} value {value}")
        assert str(e.options[name]).lower() == value.lower()
    e.handle(f"setoption name {name} value maybe")
    assert out[-1].startswith(f"info string error: {name} must be")


# black's king on 5b, twelve pieces on ranks a-c, 28 points: a win under the 27-point rule (tests/test_rules.py)
CAMP_28 = "position sfen 9/1R1GK2B1/PPPPPPPPP/9/9/9/ppppppppp/l2l1l2l/4k4 b 3G4SNrb3n 1"


def test_the_entering_king_rule_decides_the_declaration():
    """The same position declares under CSARule27 (the default), and is played on under CSARule24 (28 < 31)
    and NoEnteringKing."""
    e, out = engine()
    e.handle("isready")
    e.handle(CAMP_28)
    go(e, "go nodes 50")
    assert bestmoves(out)[-1] == "bestmove win"
    for rule in ("NoEnteringKing", "CSARule24"):
        e.handle(f"setoption name EnteringKingRule value {rule}")
        go(e, "go nodes 50")
        assert bestmoves(out)[-1] not in ("bestmove win", "bestmove resign"), rule
    e.handle("setoption name EnteringKingRule value CSARule28")
    assert "info string error: EnteringKingRule must be one of NoEnteringKing" in out[-1]


def test_the_try_rule_plays_the_king_to_the_try_square():
    e, out = engine()
    e.handle("setoption name EnteringKingRule value TryRule")
    e.handle("position sfen 9/4K4/9/9/9/9/9/9/4k4 b - 1")  # black's king on 5b, 5a free
    go(e, "go byoyomi 1000")
    assert out[-2:] == ["info depth 1 score mate 1 pv 5b5a", "bestmove 5b5a"]


@pytest.mark.parametrize("turn, option, value", [("b", "DrawValueBlack", 300), ("w", "DrawValueWhite", 700)])
def test_a_draw_is_worth_the_engine_s_draw_value_for_its_colour(turn, option, value):
    e, out = engine()
    e.handle("setoption name Search value alphabeta")  # exact values (a bandit's means keep the priors' share)
    e.handle("setoption name MaxMovesToDraw value 100")
    e.handle(f"setoption name {option} value {value}")
    e.handle(f"position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/9/9/4K4 {turn} - 100")  # the game ends now
    go(e, "go depth 3")
    assert f"score cp {e.engine.scale.to_cp(value / 1000)} " in out[-2]


def test_depth_limit_caps_a_timed_search():
    e, out = engine()
    e.handle("setoption name Search value alphabeta")
    e.handle("setoption name DepthLimit value 2")
    e.handle("position startpos")
    go(e, "go byoyomi 60000")  # a minute, but depth 2
    depths = [int(line.split(" depth ")[1].split()[0]) for line in out if line.startswith("info depth")]
    assert depths and max(depths) == 2 and len(bestmoves(out)) == 1


def test_pv_interval_spaces_the_progress_lines():
    """PvInterval 0: a line after every batch; a long interval: only the search's final line."""
    e, out = engine()
    e.handle("position startpos")
    lines = {}
    for interval in (0, 100000):
        e.handle(f"setoption name PvInterval value {interval}")
        out.clear()
        go(e, "go nodes 400")
        lines[interval] = sum(line.startswith("info depth") for line in out)
    assert lines[100000] == 1 and lines[0] > 10


def test_network_delays_reach_the_clock():
    e, out = engine()
    e.handle("setoption name NetworkDelay2 value 200")
    e.handle("setoption name NodesLimit value 8")
    e.handle("position startpos")
    go(e, "go btime 0 wtime 0 byoyomi 1000")
    assert e._clock.budget == pytest.approx(TimeBudget(0.8, 0.8, 0.8))
    e.handle("setoption name MinimumThinkingTime value 3000")
    e.handle("setoption name NetworkDelay value 500")
    go(e, "go btime 60000 wtime 60000")
    assert e._clock.budget.minimum == pytest.approx(3.0)


def test_consideration_mode_never_resigns():
    lost = "position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/9/9/4K4 b - 1"
    e, out = engine()
    e.handle("setoption name ResignValue value 1000")
    e.handle("setoption name ConsiderationMode value true")
    e.handle(lost)
    go(e, "go depth 2")
    assert bestmoves(out)[-1] != "bestmove resign" and "score cp -" in out[-2]


def test_batched_bandit_search_through_usi():
    e, out = engine()
    for line in ("setoption name Search value puct", "setoption name BatchSize value 8", "isready",
                 "position startpos"):
        e.handle(line)
    go(e, "go nodes 64")
    assert e.searcher.batch_size == 8 and len(bestmoves(out)) == 1


def test_quit_stops_the_loop():
    e, out = engine()
    e.run(["usi", "quit", "isready"])
    assert "readyok" not in out


@pytest.mark.usefixtures("messiah_usi")
def test_subprocess_through_cshogi_engine():
    usi = Engine(shutil.which("messiah-usi"))
    try:
        usi.isready()
        usi.position(moves=["7g7f"])
        best, _ = usi.go(byoyomi=1000)
        board = cshogi.Board()
        board.push_usi("7g7f")
        assert board.move_from_usi(best) in set(board.legal_moves)
    finally:
        usi.quit()


def test_parse_position_errors_name_the_move():
    with pytest.raises(PositionError, match="move 2"):
        parse_position(["startpos", "moves", "7g7f", "7g7f"])


def test_a_position_sent_right_after_bestmove_is_taken():
    """The worker thread lives on briefly after writing bestmove; a GUI's next position in that moment must
    not be refused as 'during a search' (that made the engine answer for the old position: an illegal move)."""
    out: list[str] = []

    def lingering_write(text: str) -> None:
        out.append(text)
        if text.startswith("bestmove"):
            time.sleep(0.3)

    e = UsiEngine(lingering_write)
    e.handle("isready")
    e.handle("position startpos")
    e.handle("go depth 1")
    deadline = time.time() + GUARD  # a guard against hanging
    while not bestmoves(out) and time.time() < deadline:
        time.sleep(0.001)
    e.handle("position startpos moves 7g7f")
    e.handle("go depth 1")
    e._finish_search()
    assert not [line for line in out if "error" in line]
    board = cshogi.Board()
    board.push_usi("7g7f")
    second = bestmoves(out)[1].split()[1]
    assert board.move_from_usi(second) in set(board.legal_moves)


def test_resign_value_resigns_a_lost_position_only_when_asked():
    lost = "position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/9/9/4K4 b - 1"  # a bare king against everything
    e, out = engine()
    e.handle(lost)
    go(e, "go depth 2")
    assert bestmoves(out)[-1] != "bestmove resign"  # the default never resigns
    e.handle("setoption name ResignValue value 1000")
    go(e, "go depth 2")
    assert bestmoves(out)[-1] == "bestmove resign"
    e.handle("position startpos")
    go(e, "go depth 2")
    assert bestmoves(out)[-1] != "bestmove resign"


def test_the_only_legal_move_is_played_at_once_in_a_timed_game():
    """Without searching: one report, of the one node, though the byoyomi would allow five seconds."""
    e, out = engine()
    e.handle("isready")
    e.handle("position sfen 8k/9/9/9/9/9/r8/2g6/K8 b G 1")  # in check; only G*9h
    out.clear()
    go(e, "go byoyomi 5000")
    assert bestmoves(out) == ["bestmove G*9h"]
    assert len([line for line in out if line.startswith("info depth")]) == 1 and reported(out, "nodes") == 1


def score_cp(line: str) -> int:
    return int(line.split("score cp ")[1].split()[0])


def test_score_scale_sets_the_reported_cp():
    e, out = engine()
    e.handle("isready")
    e.handle("position startpos moves 7g7f")
    go(e, "go depth 1")
    cp = score_cp(out[-2])
    e.handle(f"setoption name ScoreScale value {2 * OPTIONS['ScoreScale'].default}")  # twice the centipawns
    go(e, "go depth 1")
    assert score_cp(out[-2]) == pytest.approx(2 * cp, abs=1)


def test_the_score_is_zero_sum():
    """cp(w) = -cp(1 - w): a 50% win rate is 0 cp for either side, and the two sides' scores mirror."""
    e, _ = engine()
    e.handle("isready")
    scale = e.engine.scale
    assert scale.to_cp(0.5) == 0
    for w in (0.01, 0.2, 0.37, 0.5001, 0.73, 0.999):
        assert scale.to_cp(w) == -scale.to_cp(1 - w)
        assert scale.to_cp(w) == pytest.approx(OPTIONS["ScoreScale"].default * math.log(w / (1 - w)), abs=0.5)


def test_black_s_view_of_a_quiet_opening_does_not_zigzag():
    """A GUI draws black's view of every score. Over the first plies of a quiet opening the scores printed with
    black to move and those printed with white to move (negated) stay level: the mean jump between the two is
    well under the 0.27 logit (two biases of -0.135) that the biased score put between them."""
    e, out = engine()
    e.handle("isready")
    moves = "7g7f 3c3d 2g2f 8c8d 2f2e 8d8e 6i7h 4a3b".split()
    view = []
    for k in range(len(moves) + 1):
        e.handle("position startpos moves " + " ".join(moves[:k]))
        go(e, "go nodes 1600")
        cp = score_cp([line for line in out if "score cp" in line][-1])
        view.append(cp if k % 2 == 0 else -cp)
    logits = [cp / OPTIONS["ScoreScale"].default for cp in view]
    jump = sum(logits[0::2]) / len(logits[0::2]) - sum(logits[1::2]) / len(logits[1::2])
    assert abs(jump) < 0.15, view


def test_draw_ply_makes_every_line_past_it_a_draw():
    e, out = engine()
    e.handle("setoption name Search value alphabeta")  # exact values (a bandit's means keep the priors' share)
    e.handle("setoption name MaxMovesToDraw value 100")
    e.handle("position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/9/9/4K4 b - 100")  # lost, but the game ends now
    go(e, "go depth 3")
    assert "score cp 0 " in out[-2]


def test_nodes_limit_caps_a_timed_search():
    e, out = engine()
    e.handle("setoption name NodesLimit value 40")
    e.handle("setoption name Search value puct")
    e.handle("position startpos")
    go(e, "go byoyomi 60000")  # a minute of byoyomi, but 40 playouts
    nodes = [int(line.split(" nodes ")[1].split()[0]) for line in out if line.startswith("info depth")]
    assert nodes and max(nodes) <= 40 and len(bestmoves(out)) == 1


def test_isready_says_which_model_runs_where_once_per_load():
    """A GUI's log must tell which model made the moves: isready names the model, the first bytes of the
    file's SHA-256 (computed here from the file) and the provider, and says it again only after a reload."""
    import hashlib
    import re

    from messiah.evaluator import default_model_path

    e, out = engine()
    e.handle("isready")
    said = [line for line in out if line.startswith("info string model")]
    assert len(said) == 1
    on_cpu = said[0].endswith(" on CPU")  # the CPU runs the shipped model's int8 copy, a GPU the float model
    digest = hashlib.sha256(default_model_path(int8=on_cpu).read_bytes()).hexdigest()[:8]
    name = "m9-int8" if on_cpu else "m9"
    assert re.fullmatch(rf"info string model {name} \(sha256 {digest}\) on (CPU|CUDA|TensorRT)", said[0]), said[0]
    assert out[-1] == "readyok"
    e.handle("isready")
    assert sum(line.startswith("info string model") for line in out) == 1
    e.handle("setoption name Threads value 2")
    e.handle("isready")
    assert sum(line.startswith("info string model") for line in out) == 2


def test_a_fresh_installs_first_start_says_it_compiles_and_isready_waits_for_it(monkeypatch):
    """With numba's cache empty, compiling starts with the GUI's first command: usiok comes at once, then an info
    string says what is happening, and isready answers once the compiling is done (before, the first isready was
    silent for half a minute). With the cache full, nothing starts and nothing is said."""
    import messiah.engine.usi as usi

    release, done = threading.Event(), []
    monkeypatch.setattr(usi, "search_compiled", lambda: False)
    monkeypatch.setattr(usi, "compile_search", lambda: (release.wait(GUARD), done.append(True)))
    out: list[str] = []
    e = UsiEngine(out.append)
    e.compile_at_usi = True  # as messiah-usi's main sets it
    e.handle("usi")
    assert out[-2] == "usiok" and out[-1].startswith("info string compiling the search once") and not done
    answered = threading.Thread(target=e.handle, args=("isready",))
    answered.start()
    time.sleep(0.2)
    assert "readyok" not in out  # it waits for the compiling
    release.set()
    answered.join(GUARD)
    assert done and out[-1] == "readyok"

    monkeypatch.setattr(usi, "search_compiled", lambda: True)
    out.clear()
    quiet = UsiEngine(out.append)
    quiet.compile_at_usi = True
    quiet.handle("usi")
    assert out[-1] == "usiok" and quiet._compiling is None


def test_the_compiled_search_is_found_in_numbas_cache(tmp_path):
    """search_compiled reads numba's cache: true once compile_search has run, false in an empty cache."""
    import subprocess
    import sys

    from messiah.engine.engine import compile_search, search_compiled

    compile_search()
    assert search_compiled()
    code = "from messiah.engine.engine import search_compiled; print(search_compiled())"
    env = {**__import__("os").environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    answer = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=GUARD)
    assert answer.stdout.strip() == "False", answer.stderr
