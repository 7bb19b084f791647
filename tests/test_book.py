"""The opening book: YaneuraOu's text format read and written, its probing rules, the engine's book moves, and
books built from game records."""

import random
import subprocess
import sys
from collections import Counter

import cshogi
import pytest
from conftest import FORMATS, GAMES, read_hcpe

from messiah.engine.openingbook import Book, BookMove, BookRules, flip_move, flip_sfen, read_book
from messiah.engine.usi import UsiEngine
from messiah.errors import DataError
from messiah.tools.book import BookBuildConfig, build_book

START = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"
AFTER_7G7F = "lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2"
# A book as YaneuraOu writes one: the header, positions sorted by sfen, five fields a move; a comment line.
YANEURAOU_BOOK = f"""#YANEURAOU-DB2016 1.00
// written by hand the way YaneuraOu's makebook writes it (sorted by sfen: '2P6' before '9')
sfen {AFTER_7G7F}
3c3d 2g2f -30 18 50
8c8d 2g2f -45 18 10
sfen {START}
7g7f 3c3d 40 20 60
2g2f 8c8d 25 20 30
5g5f none -200 20 1
"""


@pytest.fixture
def book_file(tmp_path):
    path = tmp_path / "standard_book.db"
    path.write_text(YANEURAOU_BOOK)
    return path


def test_a_yaneuraou_book_reads_and_writes_back_the_same(book_file, tmp_path):
    book = read_book(book_file)
    assert len(book) == 2
    assert book.lookup(START)[0] == BookMove("7g7f", "3c3d", 40, 20, 60)
    assert [m.move for m in book.lookup(AFTER_7G7F)] == ["3c3d", "8c8d"]
    written = book.write(tmp_path / "again.db").read_text()
    expected = [line for line in YANEURAOU_BOOK.splitlines() if not line.startswith("//")]
    assert written.splitlines() == expected


def test_a_file_that_is_no_book_is_a_clear_error(tmp_path):
    for text, needle in (("7g7f 3c3d 0 0 1\n", "before any 'sfen'"), ("sfen x\n", "expected"),
                         (f"sfen {START}\n7g7f 3c3d a b c\n", "integers"), ("# nothing\n", "no positions")):
        path = tmp_path / "bad.db"
        path.write_text(text)
        with pytest.raises(DataError, match=needle):
            read_book(path)


def test_flipping_a_position_flips_its_legal_moves():
    """The colour-swapped position has exactly the colour-swapped legal moves (cshogi generates both)."""
    rng = random.Random(3)
    board = cshogi.Board()
    for _ in range(60):
        legal = list(board.legal_moves)
        if not legal:
            break
        board.push(rng.choice(legal))
        flipped = cshogi.Board(flip_sfen(board.sfen()))
        assert flip_sfen(flip_sfen(board.sfen())) == board.sfen()
        assert {flip_move(cshogi.move_to_usi(m)) for m in board.legal_moves} == \
            {cshogi.move_to_usi(m) for m in flipped.legal_moves}


def choices(book: Book, sfen: str, rules: BookRules, n: int = 400) -> Counter:
    rng = random.Random(0)
    counts: Counter = Counter()
    for _ in range(n):
        move, _notes = book.choose(cshogi.Board(sfen), rules, rng)
        counts[None if move is None else move.move] += 1
    return counts


def test_the_rules_choose_as_yaneuraou_does(book_file):
    book = read_book(book_file)
    # BookEvalDiff 30 keeps 7g7f (40) and 2g2f (25), not 5g5f (-200); by count 60:30
    counts = choices(book, START, BookRules())
    assert set(counts) == {"7g7f", "2g2f"} and counts["7g7f"] > counts["2g2f"] > 80
    assert set(choices(book, START, BookRules(eval_diff=0))) == {"7g7f"}
    assert set(choices(book, START, BookRules(eval_diff=1000))) == {"7g7f", "2g2f"}  # -200: below the black limit
    assert set(choices(book, START, BookRules(eval_diff=1000, black_limit=-1000))) == {"7g7f", "2g2f", "5g5f"}
    assert set(choices(book, START, BookRules(black_limit=30))) == {"7g7f"}
    # white: -30 and -45 are both above BookEvalWhiteLimit -140, within 30 of each other
    assert set(choices(book, AFTER_7G7F, BookRules())) == {"3c3d", "8c8d"}
    assert set(choices(book, AFTER_7G7F, BookRules(white_limit=-40))) == {"3c3d"}
    assert set(choices(book, START, BookRules(depth_limit=21))) == {None}  # the book's depth 20 is too shallow
    assert set(choices(book, START, BookRules(moves=0))) == {None}  # past BookMoves
    wide = {"eval_diff": 1000, "black_limit": -1000}
    assert set(choices(book, START, BookRules(**wide, narrow=True))) == {"7g7f", "2g2f"}  # 5g5f: 1 of 91
    assert set(choices(book, START, BookRules(eval_diff=1000, black_limit=-1000, by_count=False), 600)) == \
        {"7g7f", "2g2f", "5g5f"}


def test_the_ply_and_the_colours(book_file):
    book = read_book(book_file)
    later = START.replace(" 1", " 9")
    assert book.lookup(later) == [] and len(book.lookup(later, ignore_ply=True)) == 3
    # the position after 3g3f with white to move is the start position flipped, at ply 2: FlippedBook finds it
    flipped_start = flip_sfen(START).replace(" 1", " 1")
    moves = book.lookup(flipped_start)
    assert [m.move for m in moves] == ["3c3d", "8c8d", "5c5d"] and moves[0].ponder == "7g7f"
    assert book.lookup(flipped_start, flipped=False) == []


def engine_with(book_file) -> tuple[UsiEngine, list[str]]:
    out: list[str] = []
    e = UsiEngine(out.append)
    e.handle(f"setoption name BookFile value {book_file}")
    e.handle("setoption name BookEvalDiff value 0")
    e.handle("isready")
    return e, out


def test_a_book_hit_answers_at_once_with_its_line_and_ponder(book_file):
    e, out = engine_with(book_file)
    assert any("book" in line and "2 positions" in line for line in out)
    e.handle("setoption name USI_Ponder value true")
    out.clear()
    e.handle("position startpos")
    e.handle("go btime 0 wtime 0 byoyomi 1000")
    assert e._thread is None  # no search was started
    assert out == ["info string BookEvalDiff 0, limit 0: 3 moves to 1",  # why the other moves were not played
                   "info depth 20 score cp 40 pv 7g7f 3c3d", "bestmove 7g7f ponder 3c3d"]
    # without USI_Ponder the line still shows the expected reply, but bestmove names no move to ponder on
    e.handle("setoption name USI_Ponder value false")
    out.clear()
    e.handle("go btime 0 wtime 0 byoyomi 1000")
    assert out[-2:] == ["info depth 20 score cp 40 pv 7g7f 3c3d", "bestmove 7g7f"]


def test_no_book_move_outside_the_book_nor_while_pondering(book_file):
    e, out = engine_with(book_file)
    e.handle("position startpos moves 1g1f")
    e.handle("go nodes 50")
    e._await_search()
    assert out[-1].startswith("bestmove") and "nodes" in out[-2]
    out.clear()
    e.handle("position startpos")
    e.handle("go ponder btime 0 wtime 0 byoyomi 1000")
    assert e._thread is not None  # a ponder search, not the book
    e.handle("stop")
    assert sum(line.startswith("bestmove") for line in out) == 1


@pytest.mark.parametrize("option", ["USI_OwnBook value false", "ConsiderationMode value true"])
def test_no_book_move_without_usi_own_book_nor_in_consideration_mode(book_file, option):
    e, out = engine_with(book_file)
    e.handle(f"setoption name {option}")
    e.handle("position startpos")
    e.handle("go nodes 50")
    assert e._thread is not None  # a search, not the book
    e._await_search()
    assert out[-1].startswith("bestmove") and "nodes" in out[-2]


def test_an_analysis_names_the_engines_book_move_and_still_searches(book_file):
    """One engine everywhere: analyze opens the BookFile as the USI engine does and names the move it would
    play from it (BookEvalDiff 0: the best-valued one), beside the search, which still runs; out of the book,
    or with the book off, it names none."""
    from messiah.tools.analyze import analyze_position

    book = {"BookFile": str(book_file), "BookEvalDiff": "0"}
    analysis = analyze_position("startpos", nodes=50, options=book)
    assert analysis.to_dict()["book"] == "7g7f" and analysis.result.nodes >= 50
    assert analyze_position("startpos moves 1g1f", nodes=50, options=book).to_dict()["book"] is None
    assert analyze_position("startpos", nodes=50, options={**book, "USI_OwnBook": "false"}).book is None
    assert analyze_position("startpos", nodes=50).to_dict()["book"] is None
    # the command line says it first, then the search as always
    done = subprocess.run([sys.executable, "-m", "messiah.cli", "analyze", "--nodes", "50", "--option",
                           f"BookFile={book_file}", "--option", "BookEvalDiff=0", "startpos"], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("book 7g7f ") and lines[1].startswith("bestmove "), done.stdout


def test_an_unreadable_book_is_said_once_and_the_engine_plays_on(tmp_path):
    out: list[str] = []
    e = UsiEngine(out.append)
    e.handle(f"setoption name BookFile value {tmp_path / 'missing.db'}")
    e.handle("isready")
    e.handle("position startpos")
    e.handle("go nodes 30")
    e._await_search()
    assert sum("playing without a book" in line for line in out) == 1
    assert out[-1].startswith("bestmove")


def test_a_book_from_game_records_counts_their_opening_moves(tmp_path):
    """The first moves of the games (the fixture's, from the start position), counted here from the records
    directly, are the book's."""
    summary = build_book(BookBuildConfig(records=[str(GAMES)], out=str(tmp_path / "games.db"), plies=4, min_count=1))
    book = read_book(summary["book"])
    rows = read_hcpe(GAMES)
    board, first = cshogi.Board(), Counter()
    for row in rows:
        board.set_hcp(row["hcp"])
        if board.sfen() == START:
            first[cshogi.move_to_usi(board.move_from_move16(int(row["bestMove16"]) & 0xFFFF))] += 1
    assert {m.move: m.count for m in book.lookup(START)} == dict(first)
    assert summary["games"] == sum(first.values()) and max(int(s.split()[3]) for s in book.positions) <= 4
    # The first game once more, as the CSA record of it: only its first four moves are played twice, and only
    # they are left with --min-count 2.
    twice = build_book(BookBuildConfig(records=[str(GAMES), str(FORMATS / "game.csa")], out=str(tmp_path / "g2.db"),
                                       plies=4, min_count=2))
    assert twice["games"] == summary["games"] + 1
    kept = read_book(twice["book"]).positions
    lines = []
    for row in rows[:4]:
        board.set_hcp(row["hcp"])
        lines.append((" ".join(board.sfen().split()[:3]), cshogi.move_to_usi(board.move_from_move16(
            int(row["bestMove16"]) & 0xFFFF))))
    assert sorted((" ".join(s.split()[:3]), m.move, m.count) for s, moves in kept.items() for m in moves) == \
        sorted((sfen, move, 2) for sfen, move in lines)


def test_a_book_that_would_be_empty_is_refused_and_an_empty_book_says_so(tmp_path, capsys):
    """A --min-count no move reaches would keep nothing (one game, each of its moves played once): the build says
    why instead of writing an empty book without a word (which book show and BookFile then took for no DB2016 book
    at all), and a book with its header and no position is called empty."""
    from messiah.cli import main

    out = tmp_path / "none.db"
    with pytest.raises(DataError, match=r"would be empty.* 100 times or more .* 6 games read.*lower --min-count"):
        build_book(BookBuildConfig(records=[str(GAMES)], out=str(out), plies=4, min_count=100))
    assert not out.exists()
    with pytest.raises(SystemExit) as done:
        main(["book", "build", str(FORMATS / "game.csa"), "--out", str(out), "--min-count", "2"])
    assert done.value.code == 2 and "the book would be empty" in capsys.readouterr().err and not out.exists()
    out.write_text("#YANEURAOU-DB2016 1.00\n")
    with pytest.raises(SystemExit) as done:
        main(["book", "show", str(out)])
    assert done.value.code == 2 and "the book is empty" in capsys.readouterr().err


def test_a_book_made_or_rebuilt_while_the_engine_runs_is_read_at_the_next_isready(tmp_path):
    """Before, the engine kept what it first read of a BookFile (or that it was missing) for its whole life: a user
    who built or rebuilt the book had to restart it. Now each version of the file is read once."""
    path = tmp_path / "later.db"
    out: list[str] = []
    e = UsiEngine(out.append)
    e.handle(f"setoption name BookFile value {path}")
    e.handle("isready")
    assert sum("playing without a book" in line for line in out) == 1
    build_book(BookBuildConfig(records=[str(GAMES)], out=str(path), plies=4, min_count=1))
    e.handle("setoption name BookEvalDiff value 0")  # any option: the engine is built again at isready
    e.handle("isready")
    first = [line for line in out if line.startswith("info string book ")]
    assert len(first) == 1 and f"book {path}: " in first[0]
    e.handle("setoption name BookEvalDiff value 1")
    e.handle("isready")
    assert len([line for line in out if line.startswith("info string book ")]) == 1  # the same file: not again
    build_book(BookBuildConfig(records=[str(GAMES), str(FORMATS / "game.csa")], out=str(path), plies=4,
                               min_count=2))
    e.handle("setoption name BookEvalDiff value 0")
    e.handle("isready")
    again = [line for line in out if line.startswith("info string book ")]
    assert len(again) == 2 and again[1] != again[0]  # rebuilt: read again, with its new count of positions
