"""The engine under hostile input: every line a GUI or a user can send, malformed or not, gets an answer,
the engine lives on, and nothing but USI reaches stdout. The named cases each crashed or misled the
engine once (issue 10); the fuzz runs 10,000 lines through two real engine processes."""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import cshogi
import pytest
from conftest import LOOKS, MATES, STEP, TEACHER, TickingTime, read_hcpe

import messiah.engine.mate as mate_module
import messiah.engine.usi as usi_module
from messiah.engine.usi import UsiEngine
from messiah.position import PositionError, board_from_sfen
from messiah.search import TimeBudget, timeman

MESSIAH_USI = shutil.which("messiah-usi")
needs_process = pytest.mark.usefixtures("messiah_usi")

MOVE = r"(?:[1-9][a-i][1-9][a-i]\+?|[PLNSGBR]\*[1-9][a-i])"
USI_LINE = re.compile(
    rf"id (?:name|author) .+|option name \S+ type (?:spin|check|combo|string|filename|button)( .*)?|usiok|readyok"
    rf"|info( .*)?|bestmove (?:resign|win|{MOVE}(?: ponder {MOVE})?)|checkmate (?:nomate|timeout|{MOVE}(?: {MOVE})*)")


def engine() -> tuple[UsiEngine, list[str]]:
    out: list[str] = []
    return UsiEngine(out.append), out


def finish(e: UsiEngine) -> None:
    """Wait for the running go's answer (60 s: a guard against hanging, not a speed claim)."""
    if e._thread is not None:
        e._thread.join(60)
        assert not e._thread.is_alive(), "the search did not end"


def assert_still_plays(e: UsiEngine, out: list[str]) -> None:
    """readyok, then a legal bestmove from the start position."""
    e.handle("isready")
    assert out[-1] == "readyok"
    e.handle("position startpos moves 7g7f")
    e.handle("go nodes 50")
    finish(e)
    board = cshogi.Board()
    board.push_usi("7g7f")
    assert board.move_from_usi(out[-1].split()[1]) in set(board.legal_moves), out[-3:]


# --- the cases that killed or misled the engine ---------------------------------------------------------

GO_CASES = {
    "double sign": "go wtime --5 btime 1000 byoyomi 100",
    "double sign black": "go btime --5 wtime 1000 byoyomi 100",
    "superscript": "go depth \u00b2",  # str.isdigit() says yes, int() says no
    "5000 digits": "go nodes " + "9" * 5000,  # past Python's integer-string limit: as good as no limit
    "movestogo": "go nodes 30 movestogo 40",  # a word USI does not have
    "byoyomi without value": "go nodes 30 byoyomi",
}


@pytest.mark.parametrize("line", GO_CASES.values(), ids=GO_CASES.keys())
def test_go_that_once_crashed_or_hung_gets_one_bestmove(line):
    e, out = engine()
    e.handle("position startpos")
    e.handle(line)
    time.sleep(0.3)
    e.handle("stop")  # ends the search that had no limit left; a no-op for the others
    finish(e)
    assert [x for x in out if x.startswith("bestmove")] == [out[-1]]
    assert cshogi.Board().move_from_usi(out[-1].split()[1]) in set(cshogi.Board().legal_moves)
    assert_still_plays(e, out)


OPTION_CASES = {
    "double sign": "setoption name NetworkDelay2 value --5",
    "superscript": "setoption name Threads value \u00b2",
    "full-width digit": "setoption name USI_Hash value \uff15",
    "5000 digits": "setoption name MultiPV value " + "9" * 5000,
}


@pytest.mark.parametrize("line", OPTION_CASES.values(), ids=OPTION_CASES.keys())
def test_bad_option_numbers_are_refused_and_change_nothing(line):
    e, out = engine()
    before = dict(e.options)
    e.handle(line)
    assert out[-1].startswith("info string error") and "unchanged" in out[-1]
    assert e.options == before
    assert_still_plays(e, out)


def test_an_overlong_model_path_is_reported_at_isready():
    e, out = engine()
    e.handle("setoption name ModelPath value " + "m" * 300)
    e.handle("isready")
    assert out[-2].startswith("info string error: cannot load the model") and out[-1] == "readyok"
    e.handle("setoption name ModelPath value <default>")
    assert_still_plays(e, out)


def test_isready_answers_readyok_whatever_building_the_engine_raises(monkeypatch):
    """A match once hung for ever: an engine whose searcher failed to build (a bug) said the error and no
    readyok, and cshogi.cli waits for readyok without a timeout."""
    from messiah.engine import usi

    def broken(options, evaluator):
        raise AttributeError("'Puct' object has no attribute 'threads'")

    monkeypatch.setattr(usi, "Engine", broken)
    e, out = engine()
    e.handle("isready")
    assert out[-2] == "info string error: isready failed: AttributeError: 'Puct' object has no attribute 'threads'"
    assert out[-1] == "readyok"


ILLEGAL_POSITIONS = [
    "4N4/+R5s1B/K4Lg2/3G4s/9/5P3/9/6p2/B7p w Rb 207",  # a white pawn on its last rank
    "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b 100P 1",  # a hand of 100 pawns
    "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b P 1",  # 19 pawns in all
    "lnsgkgsnl/1r5b1/ppppppppp/9/4K4/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",  # two black kings
    "4k4/4R4/9/9/9/9/9/9/4K4 b - 1",  # white, who has just moved, is in check
    "4k4/9/9/9/9/9/9/9/4K3n w - 1",  # a white knight on its last rank
    "N3k4/9/9/9/9/9/9/9/4K4 b - 1",  # a black knight on its last rank
    "4k4/9/9/4P4/4P4/9/9/9/4K4 b - 1",  # two black pawns on one file
    "4K4/9/9/9/9/9/9/9/9 b - 1",  # white, who has just moved, has no king
]
LEGAL_EDGES = [
    "k8/9/9/9/9/9/9/9/N3K4 w - 1",  # a black knight on its own first rank can move
    "4k4/9/9/9/9/9/9/9/9 b 2G 1",  # a tsume-shogi problem: the attacker needs no king
    "4k4/9/9/4P4/4+P4/9/9/9/4K4 b - 1",  # a pawn and a promoted pawn share a file
]


@pytest.mark.parametrize("sfen", ILLEGAL_POSITIONS)
def test_positions_cshogi_cannot_play_are_refused(sfen):
    e, out = engine()
    e.handle("position startpos moves 2g2f")
    e.handle(f"position sfen {sfen}")
    assert out[-1].startswith("info string error: position:"), out[-1:]
    assert e.board is None  # not the position before it, which the GUI did not send this time
    assert_still_plays(e, out)


@pytest.mark.parametrize("sfen", LEGAL_EDGES)
def test_legal_edge_positions_are_taken(sfen):
    e, out = engine()
    e.handle(f"position sfen {sfen}")
    assert not out and e.board.sfen().split()[:3] == sfen.split()[:3]


@pytest.mark.parametrize("hands", ["+P", "x", "-+", "P+", "2", "0P", "PP", "K", "19P"])
def test_malformed_hands_are_refused_before_cshogi_sees_them(hands):
    """cshogi's C++ parser aborts the process on some of these (SIGABRT, 'incorrect SFEN string')."""
    with pytest.raises(PositionError):
        board_from_sfen(f"lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b {hands} 1")


# --- random positions against a plain reference -------------------------------------------------------

LIMITS = {"p": 18, "l": 4, "n": 4, "s": 4, "g": 4, "b": 2, "r": 2}


def reference_problem(cells: list[list[str]], side: str, hands: dict[str, int]) -> str | None:
    """What makes a position unplayable, computed plainly from its cells (rank a first, file 9 first)."""
    pieces = [c for rank in cells for c in rank if c]
    for kind, limit in LIMITS.items():
        total = sum(c[-1].lower() == kind for c in pieces) + hands.get(kind, 0) + hands.get(kind.upper(), 0)
        if total > limit:
            return "count"
    if pieces.count("K") > 1 or pieces.count("k") > 1:
        return "kings"
    if pieces.count("k" if side == "b" else "K") == 0:
        return "king missing"
    for r, rank in enumerate(cells):  # rank a is black's far side, rank i white's
        for c in rank:
            if (c in ("P", "L") and r == 0) or (c == "N" and r < 2) or (c in ("p", "l") and r == 8) \
                    or (c == "n" and r > 6):
                return "dead"
    for f in range(9):
        column = [cells[r][f] for r in range(9)]
        if column.count("P") > 1 or column.count("p") > 1:
            return "two pawns"
    return None


def random_sfen(rng: random.Random) -> tuple[str, str | None]:
    kinds = "PLNSGBRK"
    cells = [["" for _ in range(9)] for _ in range(9)]
    for _ in range(rng.randint(2, 30)):
        kind = rng.choice(kinds)
        piece = kind if rng.random() < 0.5 else kind.lower()
        if kind in "PLNSBR" and rng.random() < 0.2:
            piece = "+" + piece
        cells[rng.randrange(9)][rng.randrange(9)] = piece
    for king in "Kk":
        if rng.random() < 0.9 and not any(king in rank for rank in cells):
            cells[rng.randrange(9)][rng.randrange(9)] = king
    side = rng.choice("bw")
    hands = {p: rng.randint(1, 3) for p in rng.sample("PLNSGBRplnsgbr", rng.randint(0, 4))}
    ranks = []
    for rank in cells:
        text, empty = "", 0
        for c in rank:
            if c:
                text += (str(empty) if empty else "") + c
                empty = 0
            else:
                empty += 1
        ranks.append(text + (str(empty) if empty else ""))
    hand_text = "".join(f"{n if n > 1 else ''}{p}" for p, n in hands.items()) or "-"
    return f"{'/'.join(ranks)} {side} {hand_text} 1", reference_problem(cells, side, hands)


def test_three_thousand_random_positions_are_refused_or_played_legally():
    rng = random.Random(2026)
    e, out = engine()
    e.handle("isready")
    accepted = refused = 0
    for i in range(3000):
        sfen, problem = random_sfen(rng)
        try:
            board = board_from_sfen(sfen)
        except PositionError:
            refused += 1
            continue
        assert problem is None, (sfen, problem)  # nothing the reference finds wrong slips through
        mover = cshogi.Board(sfen.replace(" b ", " x ").replace(" w ", " b ").replace(" x ", " w "))
        assert not mover.is_check(), sfen  # the side that has just moved is not in check
        accepted += 1
        if i % 10 == 0:  # and the engine plays a legal move (or resigns when it has none) on a sample
            before = len(out)
            e.handle(f"position sfen {sfen}")
            e.handle("go nodes 10")
            finish(e)
            best = out[-1].split()
            assert len([x for x in out[before:] if x.startswith("bestmove")]) == 1
            assert best[1] in ("resign", "win") or board.move_from_usi(best[1]) in set(board.legal_moves), sfen
    assert accepted > 100 and refused > 1000, (accepted, refused)


# --- a search running while commands arrive -------------------------------------------------------------

@needs_process
def test_piped_commands_during_a_search_are_queued_not_dropped():
    script = "isready\nposition startpos\ngo nodes 1000\nposition startpos moves 7g7f\ngo nodes 1000\nquit\n"
    done = subprocess.run([MESSIAH_USI], input=script, capture_output=True, text=True, timeout=120)
    best = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("bestmove")]
    assert len(best) == 2, done.stdout[-500:]
    board = cshogi.Board()
    assert board.move_from_usi(best[0]) in set(board.legal_moves)
    board.push_usi("7g7f")
    assert board.move_from_usi(best[1]) in set(board.legal_moves)  # white's move: the second position was used


@pytest.mark.parametrize("endless", ["go infinite", "go ponder byoyomi 1000"])
def test_a_position_during_an_endless_search_stops_it_and_is_taken(endless):
    """A GUI sends stop first; one that does not still gets the old search's bestmove, then the new one's."""
    e, out = engine()
    e.handle("position startpos")
    e.handle(endless)
    time.sleep(0.2)
    e.handle("position startpos moves 7g7f")
    e.handle("go nodes 30")
    finish(e)
    assert not [x for x in out if "error" in x], [x for x in out if "error" in x]
    best = [x.split()[1] for x in out if x.startswith("bestmove")]
    board = cshogi.Board()
    assert len(best) == 2 and board.move_from_usi(best[0]) in set(board.legal_moves)
    board.push_usi("7g7f")
    assert board.move_from_usi(best[1]) in set(board.legal_moves)


def test_go_infinite_with_a_depth_waits_for_stop():
    e, out = engine()
    e.handle("position startpos")
    e.handle("go infinite depth 1")
    time.sleep(0.5)
    assert not [x for x in out if x.startswith("bestmove")]
    e.handle("stop")
    assert len([x for x in out if x.startswith("bestmove")]) == 1


def test_ponderhit_without_a_clock_answers_at_once():
    """A ponder with neither a clock nor a limit: ponderhit sets the stop flag, so the search so far is the
    answer."""
    e, out = engine()
    e.handle("position startpos")
    e.handle("go ponder")
    time.sleep(0.3)
    e.handle("ponderhit")
    assert e._stop.is_set()
    finish(e)
    assert out[-1].startswith("bestmove")


HARD_NO_MATE = "l1+R4nl/7k1/1p2Pp1p1/p1p3p1p/4+bS3/2P2P2P/1P3GPP1/2S4RL/4K1gN1 w BG2Pg2s2nl2p 1"


class WatchedStop(threading.Event):
    """A stop flag that remembers whether a reader found it set."""

    seen = False

    def is_set(self) -> bool:
        self.seen = self.seen or super().is_set()
        return super().is_set()


@pytest.mark.parametrize("go", ["go mate 1000", "go mate infinite"])
def test_go_mate_keeps_its_time_limit_and_answers_stop(monkeypatch, go):
    """A position df-pn neither proves nor refutes quickly (its 8M nodes would take many seconds): the answer
    is timeout, given at the mate search's first look at the clock past the limit (a clock that ticks at each
    reading), or, without a limit, because it found the stop flag set."""
    e, out = engine()
    e.handle("setoption name MateNodes value 10000000")
    e.handle(f"position sfen {HARD_NO_MATE}")
    clock, e._stop = TickingTime(), WatchedStop()
    monkeypatch.setattr(usi_module, "time", clock)  # go reads the deadline from it, and the mate search its clock
    monkeypatch.setattr(mate_module, "time", clock)
    e.handle(go)
    if go == "go mate infinite":
        time.sleep(0.5)
        e.handle("stop")
    finish(e)
    assert out[-1] == "checkmate timeout"
    if go == "go mate infinite":
        assert e._stop.seen and clock.readings == 0
    else:  # the go's reading, then the mate search's, up to its first at or past 1 s later
        assert not e._stop.seen and 1.0 <= (clock.readings - 1) * STEP <= 1.0 + 2 * STEP, clock.readings


def test_go_mate_answers_isready_while_it_searches():
    """isready during go mate is answered while the mate search goes on (in its child process): readyok
    comes before the search's answer, which quit then brings."""
    e, out = engine()
    e.handle(f"position sfen {HARD_NO_MATE}")
    e.handle("go mate infinite")
    time.sleep(0.5)
    e.handle("isready")
    assert out[-1] == "readyok" and e._searching()
    assert not [x for x in out if x.startswith("checkmate")]
    e.handle("quit")
    assert [x for x in out if x.startswith("checkmate")] == ["checkmate timeout"]


@pytest.mark.parametrize("line", [x.split("\t") for x in (MATES / "mate5.tsv").read_text().splitlines()[:5]])
def test_go_mate_solves_mate_problems(line):
    sfen, plies, _ = line
    e, out = engine()
    e.handle(f"position sfen {sfen}")
    e.handle("go mate 5000")
    finish(e)
    moves = out[-1].split()[1:]
    assert out[-1].startswith("checkmate ") and len(moves) % 2 == 1 and len(moves) <= int(plies), out[-1]
    board = cshogi.Board(sfen)
    for usi in moves:
        assert board.move_from_usi(usi) in set(board.legal_moves)
        board.push_usi(usi)
    assert board.is_game_over()


def test_byoyomi_alone_is_used_not_saved(monkeypatch):
    """'go byoyomi 1000' without clocks once searched 14 ms: missing clocks are no main time, and the
    byoyomi, lost if unused, is still there. Byoyomi 600: the move's budget is all of it less the 50 ms margin,
    and the search, on a clock that ticks at each reading, uses it (and stops within a few readings)."""
    monkeypatch.setattr(timeman, "time", TickingTime())
    e, out = engine()
    e.handle("setoption name Search value ucb1")
    e.handle("isready")
    e.handle("position startpos")
    e.handle("go byoyomi 600")
    finish(e)
    assert e._clock.budget == pytest.approx(TimeBudget(0.55, 0.55, 0.55))
    ms = int([x for x in out if x.startswith("info depth")][-1].split(" time ")[1].split()[0])
    assert 550 <= ms <= (0.55 + LOOKS * STEP) * 1000, ms
    assert out[-1].startswith("bestmove")


# --- stdout is the protocol channel ---------------------------------------------------------------------

def test_only_usi_reaches_stdout_whatever_writes_to_it():
    """cshogi prints board dumps from C++ on some inputs: after protocol_channel(), fd 1 and sys.stdout
    lead to stderr and only the engine's writer reaches the real stdout."""
    code = ("import os; from messiah.engine.usi import protocol_channel; write = protocol_channel(); "
            "os.write(1, b'a board dump from C\\n'); print('a stray print'); write('readyok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout == "readyok\n"
    assert "a board dump from C" in done.stderr and "a stray print" in done.stderr


@needs_process
def test_help_and_version_do_not_start_the_engine():
    for flag in ("--version", "--help"):
        done = subprocess.run([MESSIAH_USI, flag], capture_output=True, text=True, timeout=60, stdin=subprocess.PIPE)
        assert done.returncode == 0 and "messiah" in done.stdout and "usiok" not in done.stdout


# --- the fuzz -------------------------------------------------------------------------------------------

WORDS = ["usi", "isready", "go", "position", "startpos", "sfen", "moves", "setoption", "name", "value", "stop",
         "ponderhit", "usinewgame", "gameover", "7g7f", "3c3d", "P*5e", "8h2b+", "7g7f+", "infinite", "ponder",
         "mate", "btime", "wtime", "byoyomi", "binc", "winc", "nodes", "depth", "movetime", "movestogo",
         "MultiPV", "Threads", "USI_Hash", "Search", "ucb1", "puct", "alphabeta", "NetworkDelay2", "ResignValue",
         "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL", "b", "w", "-", "+P", "x", "-+", "100P"]
NUMBERS = ["0", "1", "7", "30", "-3", "--5", "+-1", "\u00b2", "\uff15", "1e3", "0x10", "3.5", "9" * 30,
           "9" * 5000, "-" + "9" * 25, ""]
BYTES = [b"\xff\xfe", b"\x80abc", b"\xc3(", b"\x00", b"\t", b"\x1b[2J", "\u3000".encode()]


def fuzz_line(rng: random.Random, sfens: list[str]) -> bytes:
    shape = rng.random()
    if shape < 0.15:
        line = f"position sfen {rng.choice(sfens)}" + (" moves 7g7f" if rng.random() < 0.3 else "")
    elif shape < 0.3:
        line = "go " + " ".join(rng.choice(WORDS[19:31] + NUMBERS) for _ in range(rng.randint(0, 6)))
    elif shape < 0.4:
        name = rng.choice(["MultiPV", "Threads", "USI_Hash", "NetworkDelay2", "ResignValue", "Search", "ModelPath",
                           "USI_Ponder", "Nope", "EnteringKingRule", "DrawValueBlack", "Strength", "DepthLimit",
                           "ConsiderationMode", "MinimumThinkingTime", "PvInterval"])
        value = rng.choice(NUMBERS + ["ucb1", "puct", "alphabeta", "true", "<default>", "x" * 300, "TryRule",
                                      "NoEnteringKing"])
        if name == "ModelPath" and rng.random() < 0.8:
            value = "<default>"  # a broken model makes every go resign: keep most searches real
        line = f"setoption name {name} value {value}"
    elif shape < 0.45:
        line = rng.choice(WORDS) + "x" * rng.randint(1000, 20000)  # a very long token
    else:
        line = " ".join(rng.choice(WORDS + NUMBERS) for _ in range(rng.randint(0, 9)))
    data = line.encode()
    if rng.random() < 0.1:
        at = rng.randint(0, len(data))
        data = data[:at] + rng.choice(BYTES) + data[at:]
    if data.split()[:1] == [b"go"]:
        data += b" nodes 30"  # every go must end by itself or by the stop that follows
    if b"quit" in data:
        data = data.replace(b"quit", b"qu it")
    return data + (b"\r\n" if rng.random() < 0.2 else b"\n")


def fuzz_sfens() -> list[str]:
    rng = random.Random(5)
    sfens = [random_sfen(rng)[0] for _ in range(40)]
    board = cshogi.Board()
    for record in read_hcpe(TEACHER)[::100]:  # positions of the fixture's teacher games
        board.set_hcp(record["hcp"])
        sfens.append(board.sfen())
    return sfens + ["lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b +P 1",
                    "4N4/+R5s1B/K4Lg2/3G4s/9/5P3/9/6p2/B7p w Rb 207", "9/9/9 b - 1", "a b c d e f"]


def go_lines(lines: list[bytes]) -> int:
    """How many lines are go commands: their first word, as the engine splits a line, is go."""
    return sum(raw.decode("utf-8", "replace").split()[:1] == ["go"] for raw in lines)


def run_fuzz(seed: int, count: int, sfens: list[str]) -> tuple[int, list[str], str, int]:
    rng = random.Random(seed)
    lines = [b"isready\n"]
    for _ in range(count):
        lines.append(fuzz_line(rng, sfens))
        lines.append(b"stop\n")
    # The fuzz may have left any option set: a ResignValue near 0 resigns a level position (the score is zero-sum).
    lines += [b"setoption name ModelPath value <default>\n", b"setoption name MultiPV value 1\n",
              b"setoption name ResignValue value 99999\n", b"setoption name DepthLimit value 0\n", b"isready\n",
              b"position startpos moves 7g7f\n", b"go nodes 30\n", b"quit\n"]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([MESSIAH_USI], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)

    def feed() -> None:
        try:
            for line in lines:
                proc.stdin.write(line)
            proc.stdin.close()
        except BrokenPipeError:
            pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    errors = threading.Thread(target=proc.stderr.read, daemon=True)  # drain stderr so the engine never blocks
    errors.start()
    stdout = proc.stdout.read().decode("utf-8", "replace")
    code = proc.wait(timeout=600)
    return go_lines(lines), stdout.splitlines(), stdout, code


@needs_process
def test_fuzz_ten_thousand_lines_through_the_engine_process():
    """Double signs, Unicode digits, huge numbers, very long tokens, non-UTF-8 bytes, CRLF, broken sfens
    and every command, in two engine processes at once. Nothing may kill the engine or make it write
    anything but USI, and every go gets exactly one bestmove or checkmate."""
    sfens = fuzz_sfens()
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda seed: run_fuzz(seed, 5000, sfens), (1, 2)))
    for gos, out, stdout, code in results:
        assert code == 0, stdout[-2000:]
        bad = [line for line in out if not USI_LINE.fullmatch(line)]
        assert not bad, bad[:5]
        answers = [line for line in out if line.startswith(("bestmove", "checkmate"))]
        assert len(answers) == gos, (len(answers), gos)
        assert "readyok" in out and out[-1].startswith("bestmove")
        board = cshogi.Board()
        board.push_usi("7g7f")
        assert board.move_from_usi(out[-1].split()[1]) in set(board.legal_moves)
