"""The compiled mate searches (messiah.playout.mate_one, .mate and the moves of .checks) against their oracle, cshogi:
the same verdicts as ``Board.mate_move_in_1ply()`` and ``Board.mate_move(ply)`` on the mate problems, on more than
ten thousand positions of random, capture-heavy, repeating and teacher play and on the positions along the problems'
solutions, on the full shared problem sets, and (mate in one) on the positions after a check and an evasion where
the searches ask it; every mate found is a real one (a legal line of checks that ends in checkmate); and the move
generators the search runs on give the checks and evasions cshogi's search tries.

Run as a script (``python tests/test_playout_mate.py``) it prints the mean time per position of each search against
cshogi's on about two thousand middlegame positions."""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Iterator
from itertools import chain
from pathlib import Path

import cshogi
import numpy as np
import test_playout_board as board_tests  # (the module, not its tests: shuffling_games makes repeating games)
from conftest import GAMES, MATES, TEACHER, read_hcpe, shared
from numba import njit

from messiah.playout import board as core
from messiah.playout import checks, mate, mate_one
from messiah.playout import history as core_history

PLIES = (3, 5)  # the odd-ply searches every compared position gets
DEEP_EVERY = 8  # one compared position in this many gets the seven-ply search too (it costs ten times more)
LINE_ROOM = 16


def problems(paths: list[Path]) -> list[tuple[str, int, list[str]]]:
    """Mate problems: sfen, the mate's length in plies, the solution's USI moves."""
    found = []
    for path in paths:
        for line in path.read_text().splitlines():
            sfen, length, solution = line.split("\t")
            found.append((sfen, int(length), solution.split()))
    return found


def has_opponent_king(board: cshogi.Board) -> bool:
    """Whether the opponent of the side to move has a king to mate (a tsume problem's attacker has none)."""
    return board.king_square(cshogi.opponent(board.turn)) < 81


def comparable(board: cshogi.Board) -> bool:
    """Whether the mate in one is asked: the side to move not in check (cshogi's detector assumes it) and the
    opponent with a king."""
    return not board.is_check() and has_opponent_king(board)


def mated(board: cshogi.Board) -> bool:
    return board.is_check() and not any(True for _ in board.legal_moves)


def line_problem(board: cshogi.Board, line: list[int]) -> str | None:
    """Why ``line`` is not a mate of the side to move (None when it is): every move legal, the attacker's each a
    check, the last position checkmate, or (cshogi's search counts it so) the attacker's last move bringing about a
    repetition the defender loses by."""
    replay = board.copy()
    for i, move in enumerate(line):
        if move not in set(replay.legal_moves):
            return f"move {i} ({cshogi.move_to_usi(move)}) is illegal"
        replay.push(move)
        if i % 2 == 0 and not replay.is_check():
            return f"the attacker's move {i} ({cshogi.move_to_usi(move)}) does not check"
    if mated(replay):
        return None
    if len(line) % 2 == 1 and replay.is_draw(core_history.REPETITION_PLIES) == cshogi.REPETITION_LOSE:
        return None
    return "it does not end in mate"


class Tally:
    """What the comparison has seen, so a test can say it saw what it claims to."""

    def __init__(self) -> None:
        self.positions = 0
        self.compared = {1: 0, 3: 0, 5: 0, 7: 0}
        self.mates = {1: 0, 3: 0, 5: 0, 7: 0}
        self.checked = 0  # positions in check (the odd-ply searches only), counted apart
        self.checked_mates = {3: 0, 5: 0, 7: 0}

    def compare(self, board: cshogi.Board, deep: bool = False) -> None:
        """Compare the verdicts on ``board`` (its history is the repetition context) for mate in one, three and
        five plies (and seven when ``deep``), and check every mate found. In check, the odd-ply searches only (a
        check that answers the check and mates, as the leaf check asks there)."""
        if not has_opponent_king(board):
            return
        if board.is_check():
            self._compare_checked(board, deep)
            return
        state, history, row = core_history.history_of(board)
        before = state.copy()
        sfen = board.sfen()
        move = int(mate_one.mate_in_one(state))
        theirs = board.mate_move_in_1ply()
        assert bool(move) == bool(theirs), (sfen, "mate in one", cshogi.move_to_usi(theirs) if theirs else None)
        if move:
            assert line_problem(board, [move]) is None, (sfen, cshogi.move_to_usi(move))
        self._count(1, move)
        for ply, n in self._odd_plies(board, state, history, row, deep, move):
            self._count(ply, n)
        assert np.array_equal(state, before), sfen  # the searches leave their position as it was
        self.positions += 1

    def _compare_checked(self, board: cshogi.Board, deep: bool) -> None:
        state, history, row = core_history.history_of(board)
        before = state.copy()
        for ply, found in self._odd_plies(board, state, history, row, deep, 0):
            self.checked_mates[ply] += bool(found)
        assert np.array_equal(state, before), board.sfen()
        self.checked += 1

    def _odd_plies(self, board, state, history, row, deep, one) -> list[tuple[int, int]]:
        """mate_in_odd at each ply against cshogi's ``mate_move``, every line found checked; ``one`` the mate in
        one found (a quickest line is then that move). Returns (ply, line length) for each ply."""
        sfen = board.sfen()
        found = []
        line = np.zeros(LINE_ROOM, np.int64)
        for ply in (*PLIES, 7) if deep else PLIES:
            n = mate.mate_in_odd(mate.MateWork.empty(ply), state, history, row, ply, line)
            theirs = board.mate_move(ply)
            assert bool(n) == bool(theirs), (sfen, ply, cshogi.move_to_usi(theirs) if theirs else None)
            if n:
                moves = [int(m) for m in line[:n]]
                assert n <= ply and n % 2 and line_problem(board, moves) is None, (
                    sfen, ply, line_problem(board, moves), [cshogi.move_to_usi(m) for m in moves])
                assert n == 1 or not one, (sfen, ply)  # the quickest mate: a mate in one comes first
            found.append((ply, n))
        return found

    def _count(self, ply: int, found: int) -> None:
        self.compared[ply] += 1
        self.mates[ply] += bool(found)


def random_games(seed: int, games: int, plies: int, captures: float, checks: float = 0.0) -> Iterator[cshogi.Board]:
    """Random games from the start position, a capture at each ply with probability ``captures`` when there is one
    (hands fill, kings come out), else a check with probability ``checks`` when there is one; yields the board (the
    same object, moved on) after each move."""
    rng = random.Random(seed)
    for _ in range(games):
        board = cshogi.Board()
        for _ in range(plies):
            legal = list(board.legal_moves)
            if not legal:
                break
            capturing = [m for m in legal if cshogi.move_cap(m)]
            if capturing and rng.random() < captures:
                move = rng.choice(capturing)
            elif checks and rng.random() < checks and (giving := sorted(checking_moves(board))):
                move = rng.choice(giving)
            else:
                move = rng.choice(legal)
            board.push(move)
            yield board


def records(path: Path) -> Iterator[cshogi.Board]:
    board = cshogi.Board()
    for hcp in read_hcpe(path)["hcp"]:
        board.set_hcp(hcp)
        yield board


def along_solutions(found: list[tuple[str, int, list[str]]]) -> Iterator[cshogi.Board]:
    """Each problem's position and every one along its solution (the defender's are skipped by the comparison: the
    attacker of a tsume problem has no king)."""
    for sfen, _, solution in found:
        board = cshogi.Board(sfen)
        yield board
        for usi in solution:
            board.push(board.move_from_usi(usi))
            yield board


def test_the_mate_problems_are_solved_and_the_verdicts_are_cshogis():
    """Every problem of tests/data/mates: the search of its length finds a mate of at most that length (a real
    one: legal, all checks, ending in checkmate), as cshogi's does; mate in one agrees with cshogi's on all."""
    found = problems(sorted(MATES.glob("mate*.tsv")))
    assert len(found) == 50
    line = np.zeros(LINE_ROOM, np.int64)
    for sfen, length, _ in found:
        board = cshogi.Board(sfen)
        state, history, row = core_history.history_of(board)
        move = int(mate_one.mate_in_one(state))
        assert bool(move) == bool(board.mate_move_in_1ply()), sfen
        if length == 1:
            assert move and line_problem(board, [move]) is None, sfen
        n = mate.mate_in_odd(mate.MateWork.empty(max(3, length)), state, history, row, max(3, length), line)
        moves = [int(m) for m in line[:n]]
        assert 0 < n <= length and line_problem(board, moves) is None, (sfen, [cshogi.move_to_usi(m) for m in moves])
        assert board.mate_move(max(3, length))


def test_verdicts_equal_cshogis_on_ten_thousand_positions():
    """Random play (plain, and capture-heavy so that hands fill and kings come out), repeating play (the search's
    repetition verdicts), the teacher and game fixtures and the positions along the mate problems' solutions: mate
    in one, three and five plies (seven on one in DEEP_EVERY) with cshogi's verdicts on each (in check, the
    odd-ply searches only)."""
    tally = Tally()
    sources = [
        random_games(seed=11, games=24, plies=220, captures=0.0),
        random_games(seed=12, games=40, plies=220, captures=0.7),
        random_games(seed=13, games=16, plies=220, captures=0.3),
        (board for board, _, _ in board_tests.shuffling_games(seed=17, games=30, plies=100)),
        records(TEACHER),
        records(GAMES),
        along_solutions(problems(sorted(MATES.glob("mate*.tsv")))),
    ]
    i = 0
    for source in sources:
        for board in source:
            tally.compare(board, deep=i % DEEP_EVERY == 0)
            i += 1
    assert tally.positions >= 10_000
    assert tally.compared[7] >= 1_000
    # enough mates that a search which never found one, or always did, would fail
    assert tally.mates[1] >= 200 and tally.mates[3] >= 300 and tally.mates[5] >= 400 and tally.mates[7] >= 100
    assert tally.mates[5] <= tally.positions // 4


def test_in_check_a_check_that_answers_the_check_and_mates_is_found_as_cshogi_finds_it():
    """A leaf in check asks the odd-ply search for a move that parries the check with a check and mates (search.mcts'
    ``_mate_line``, dlshogi asks there too): on the positions in check of capture-heavy, check-heavy random play,
    mate in three and five (seven on one in DEEP_EVERY) with cshogi's verdicts, every mate found a real line."""
    tally = Tally()
    sources = chain(random_games(seed=21, games=60, plies=200, captures=0.5, checks=0.5),
                    random_games(seed=22, games=60, plies=200, captures=0.8, checks=0.6),
                    random_games(seed=23, games=60, plies=200, captures=0.3, checks=0.8))
    i = 0
    for board in sources:
        if board.is_check():
            tally.compare(board, deep=i % DEEP_EVERY == 0)
            i += 1
    assert tally.checked >= 5_000 and tally.positions == 0
    # rare (a check back that mates), but a search that never found one, or always did, would fail
    assert tally.checked_mates[3] >= 5 and tally.checked_mates[5] >= 15
    assert tally.checked_mates[5] <= tally.checked // 4


def test_mate_in_one_equals_cshogis_where_the_searches_ask_it():
    """The odd-ply searches call mate in one after each check and evasion, where its rarer rules (distant checks,
    discovered checks, a defender left with nothing but pawns) come into play far more often than at the root: its
    verdict equals cshogi's on every position two plies on from capture-heavy and check-heavy play (the
    defender's reply not a check, as the searches ask it)."""
    compared = mates = 0
    sources = chain(random_games(seed=31, games=10, plies=200, captures=0.6),
                    random_games(seed=32, games=10, plies=200, captures=0.2, checks=0.3))
    for board in sources:
        if board.is_check():
            continue
        for check in checking_moves(board):
            board.push(check)
            for evasion in list(board.legal_moves):
                board.push(evasion)
                if comparable(board):
                    theirs = board.mate_move_in_1ply()
                    move = int(mate_one.mate_in_one(core.from_board(board)))
                    assert bool(move) == bool(theirs), (board.sfen(), cshogi.move_to_usi(theirs) if theirs else None)
                    if move:
                        assert line_problem(board, [move]) is None, (board.sfen(), cshogi.move_to_usi(move))
                    compared += 1
                    mates += bool(move)
                board.pop()
            board.pop()
    assert compared >= 100_000 and 5_000 <= mates <= compared // 4


def test_verdicts_equal_cshogis_on_the_full_shared_mate_problems():
    """The shared data's problems (1,067 of mates in one, three and five): every search's verdict, at one to seven
    plies, equals cshogi's on each problem's position, and every mate found is a real one."""
    paths = [shared(f"mates/mate{n}.tsv") for n in (1, 3, 5)]
    tally = Tally()
    found = problems(paths)
    for sfen, _, _ in found:
        tally.compare(cshogi.Board(sfen), deep=True)
    assert tally.positions == len(found) >= 1_000
    assert tally.mates[5] == tally.mates[7] == len(found)  # each is a mate within five plies


def checking_moves(board: cshogi.Board) -> set[int]:
    """cshogi's legal moves that give check."""
    checks = set()
    for move in board.legal_moves:
        board.push(move)
        if board.is_check():
            checks.add(move)
        board.pop()
    return checks


def searched_evasions(board: cshogi.Board) -> set[int]:
    """The legal evasions cshogi's mate search tries: all but a pawn's, bishop's or rook's non-promotion where it
    could promote and a lance's non-promotion to its second-last rank (its evasion generator leaves them out)."""
    kept = set()
    us = board.turn
    for move in board.legal_moves:
        if not cshogi.move_is_drop(move) and not cshogi.move_is_promotion(move):
            piece = cshogi.move_from_piece_type(move)
            frm, to = cshogi.move_from(move), cshogi.move_to(move)
            far = (to % 9) if us == cshogi.BLACK else 8 - to % 9  # 0 on the last rank
            zone = far <= 2 or ((frm % 9) if us == cshogi.BLACK else 8 - frm % 9) <= 2
            if zone and piece in (cshogi.PAWN, cshogi.BISHOP, cshogi.ROOK):
                continue
            if piece == cshogi.LANCE and far == 1:
                continue
        kept.add(move)
    return kept


def test_the_searchs_checks_and_evasions_are_cshogis():
    """At the attacker's nodes the search tries every legal check (answering a check when in check), at the
    defender's the evasions cshogi's search generates: compared as sets on random, capture-heavy and check-heavy
    play, in check and out of it."""
    out = np.empty(core.MAX_MOVES, np.uint32)
    spare = np.empty(core.STATE, np.int64)
    seen = found = evaded = checked = 0
    for board in chain(random_games(seed=21, games=8, plies=200, captures=0.0),
                       random_games(seed=22, games=12, plies=200, captures=0.7),
                       random_games(seed=23, games=24, plies=200, captures=0.3, checks=0.6)):
        state = core.from_board(board)
        if board.king_square(cshogi.opponent(board.turn)) < 81:
            n = checks.gen_checks(state, out, board.is_check(), spare)
            mine = sorted(int(m) for m in out[:n])
            theirs = sorted(checking_moves(board))
            assert mine == theirs, (board.sfen(), sorted(set(mine) ^ set(theirs)))
            found += n
            checked += board.is_check()
        if board.is_check():
            n = checks.gen_evasions(state, out)
            assert sorted(int(m) for m in out[:n]) == sorted(searched_evasions(board)), board.sfen()
            evaded += n
        seen += 1
    assert seen >= 8_000 and found >= 30_000 and evaded >= 5_000 and checked >= 1_000


def middlegame_positions(count: int = 2_000) -> list[cshogi.Board]:
    """About ``count`` positions for the speed comparison: random play with captures (one in five positions after
    the opening) and teacher positions, none in check."""
    rng = random.Random(3)
    chosen = []
    while len(chosen) < count // 2:
        board = cshogi.Board()
        for ply in range(200):
            legal = list(board.legal_moves)
            if not legal:
                break
            capturing = [m for m in legal if cshogi.move_cap(m)]
            board.push(rng.choice(capturing) if capturing and rng.random() < 0.5 else rng.choice(legal))
            if ply > 30 and ply % 5 == 0 and comparable(board):
                chosen.append(board.copy())
    for i, board in enumerate(records(TEACHER)):
        if i % 3 == 0 and comparable(board) and len(chosen) < count:
            chosen.append(board.copy())
    return chosen


def bench_arrays(boards: list[cshogi.Board]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The states, histories (with room for the searches' rows) and history rows of ``boards``, as
    :func:`search_all` takes them."""
    made = [core_history.history_of(board) for board in boards]
    rows = max(history.shape[0] for _, history, _ in made) + LINE_ROOM
    states = np.stack([state for state, _, _ in made])
    histories = np.zeros((len(made), rows, core_history.HISTORY_SLOTS), np.int64)
    for i, (_, history, _) in enumerate(made):
        histories[i, : history.shape[0]] = history
    return states, histories, np.array([row for _, _, row in made], np.int64)


def bench() -> None:
    """Print the mean time per position of mate_in_one and mate_in_odd against cshogi's, compile time left out
    (each search runs once before it is timed); the best of three runs."""
    boards = middlegame_positions()
    states, histories, at = bench_arrays(boards)
    print(f"{len(boards)} positions (python {sys.version.split()[0]}, cshogi called from Python, ours in a loop)")
    for ply in (1, 3, 5, 7):
        runs = 3 if ply < 7 else 1
        ours = _loop(states, histories, at, ply, runs)
        theirs = min(_cshogi_loop(boards, ply) for _ in range(runs))
        name = "mate_in_one" if ply == 1 else f"mate_in_odd({ply})"
        print(f"{name:16s} {ours * 1e6 / len(boards):8.2f} us   cshogi {theirs * 1e6 / len(boards):8.2f} us")


def _cshogi_loop(boards: list[cshogi.Board], ply: int) -> float:
    start = time.perf_counter()
    for board in boards:
        board.mate_move_in_1ply() if ply == 1 else board.mate_move(ply)
    return time.perf_counter() - start


@njit
def search_all(states: np.ndarray, histories: np.ndarray, at: np.ndarray, ply: int, work: mate.MateWork) -> int:
    """mate_in_one (``ply`` 1) or mate_in_odd on every state in one compiled loop; the number of mates found."""
    line = np.zeros(LINE_ROOM, np.int64)
    found = 0
    for i in range(states.shape[0]):
        if ply == 1:
            found += mate_one.mate_in_one(states[i]) != 0
        else:
            found += mate.mate_in_odd(work, states[i], histories[i], at[i], ply, line) != 0
    return found


def _loop(states: np.ndarray, histories: np.ndarray, at: np.ndarray, ply: int, runs: int) -> float:
    work = mate.MateWork.empty(max(ply, 3))
    search_all(states[:2], histories[:2], at[:2], ply, work)  # compiled before it is timed
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        search_all(states, histories, at, ply, work)
        best = min(best, time.perf_counter() - start)
    return best


if __name__ == "__main__":
    bench()
