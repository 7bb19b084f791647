"""The USI engine: in-process for protocol details and robustness, and once as a real subprocess driven
by cshogi.usi.Engine, the way cshogi.cli and GUIs drive it."""

import random
import shutil
from pathlib import Path

import cshogi
import pytest
from cshogi.usi import Engine

from messiah.usi import UsiEngine, UsiError, parse_position

MATES = Path(__file__).resolve().parents[2] / "shared" / "data" / "mates" / "mate1.tsv"


def engine() -> tuple[UsiEngine, list[str]]:
    out: list[str] = []
    return UsiEngine(out.append), out


def test_handshake_lists_options():
    e, out = engine()
    e.handle("usi")
    assert out[0].startswith("id name messiah") and out[-1] == "usiok"
    assert any(line.startswith("option name ModelPath type string") for line in out)
    e.handle("isready")
    assert out[-1] == "readyok"


def test_go_plays_a_legal_move_and_prints_bestmove_once():
    e, out = engine()
    for line in ("isready", "position startpos moves 7g7f 3c3d", "go byoyomi 1000"):
        e.handle(line)
    best = [line for line in out if line.startswith("bestmove")]
    assert len(best) == 1
    board = parse_position(["startpos", "moves", "7g7f", "3c3d"])
    assert board.move_from_usi(best[0].split()[1]) in set(board.legal_moves)
    assert any(line.startswith("info depth 1") and " score cp " in line for line in out)


@pytest.mark.parametrize("line", [
    "position startpos moves 7g7x",  # not a move
    "position startpos moves 7g7f 7g7f",  # a move of the wrong side / empty square
    "position startpos moves 7g7f+",  # a promotion outside the zone (cshogi's is_legal accepts it)
    "position sfen 4k4/9/9/9/9/9/9/9/4K4 b P 1 moves P*5a",  # a pawn drop on the last rank
    "position sfen lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/9/LNSGKGSNL x - 1",  # bad side to move
    "position sfen lnsgkgsnl/9/ppppppppp/9/9 b - 1",  # too few ranks
    "position sfen lnsgkgsnl/10/ppppppppp/9/9/9/PPPPPPPPP/9/LNSGKGSNL b - 1",  # rank too wide
    "position sfen 9/9/9/9/9/9/9/9/9 b - 1",  # no kings
    "position",
    "position moves 7g7f",
])
def test_bad_position_is_reported_and_keeps_the_previous_one(line):
    e, out = engine()
    e.handle("position startpos moves 2g2f")
    before = e.board.sfen()
    e.handle(line)
    assert out[-1].startswith("info string error")
    assert e.board.sfen() == before


def test_bad_option_values_are_reported():
    e, out = engine()
    e.handle("setoption name Threads value lots")
    assert "Threads" in out[-1] and out[-1].startswith("info string error")
    assert e.options["Threads"] == 1
    e.handle("setoption name NoSuchOption value 3")
    assert out[-1].startswith("info string error")
    e.handle("setoption name ModelPath value /no/such/model.onnx")
    e.handle("isready")
    assert "not found" in out[-2] and out[-1] == "readyok"
    e.handle("go")
    assert out[-1] == "bestmove resign"


def test_mate_in_one_is_played():
    problems = [line.split("\t") for line in MATES.read_text().splitlines()[:20]]
    e, out = engine()
    for sfen, _, _ in problems:
        e.handle(f"position sfen {sfen}")
        e.handle("go byoyomi 100")
        board = cshogi.Board(sfen)
        board.push_usi(out[-1].split()[1])
        assert board.is_game_over(), sfen


def test_fuzz_then_still_ready():
    rng = random.Random(7)
    words = ["usi", "isready", "go", "position", "startpos", "sfen", "moves", "setoption", "name", "value",
             "7g7f", "P*5e", "8h2b+", "stop", "ponderhit", "Threads", "ModelPath", "1", "-3", "\x00", "???"]
    e, out = engine()
    for _ in range(1000):
        line = " ".join(rng.choice(words) for _ in range(rng.randint(0, 8)))
        if line.split()[:1] == ["quit"]:
            continue
        assert e.handle(line)
    e.handle("setoption name ModelPath value <default>")
    e.handle("isready")
    assert out[-1] == "readyok"


def test_quit_stops_the_loop():
    e, out = engine()
    e.run(["usi", "quit", "isready"])
    assert "readyok" not in out


@pytest.mark.skipif(shutil.which("messiah-usi") is None, reason="messiah-usi is not installed")
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
    with pytest.raises(UsiError, match="move 2"):
        parse_position(["startpos", "moves", "7g7f", "7g7f"])
