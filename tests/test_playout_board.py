"""The playout core's board against its oracle, cshogi: the same legal moves (as full 32-bit cshogi moves, compared
as sets) on random play, teacher positions, positions in check, endgames with full hands and mate problems; the
same position after every move; and perft from the start position to the published counts."""

from __future__ import annotations

import random
from collections.abc import Iterator

import cshogi
import numpy as np
import pytest
from conftest import GAMES, MATES, TEACHER, read_hcpe

from messiah.playout import attacks as core_attacks
from messiah.playout import board as core
from messiah.playout import history as core_history
from messiah.playout import movegen as core_moves

# Perft from the start position: the published counts (they are facts of the game, not of either program).
START_PERFT = {1: 30, 2: 900, 3: 25_470, 4: 719_731}


class Compared:
    """Counts what the oracle comparison has seen, so a test can say it saw what it claims to."""

    def __init__(self) -> None:
        self.positions = self.in_check = self.moves = self.drops = self.no_moves = 0

    def check(self, board: cshogi.Board, state: np.ndarray) -> list[int]:
        """The board's legal moves, after checking that the core gives the same set and check flag."""
        theirs = sorted(board.legal_moves)
        mine = sorted(int(m) for m in core_moves.moves_of(state))
        if mine != theirs:
            extra = [cshogi.move_to_usi(m) for m in set(mine) - set(theirs)]
            missing = [cshogi.move_to_usi(m) for m in set(theirs) - set(mine)]
            pytest.fail(f"{board.sfen()}: the core adds {extra} and misses {missing}")
        assert bool(core_attacks.in_check(state)) == board.is_check(), board.sfen()
        self.positions += 1
        self.in_check += board.is_check()
        self.moves += len(theirs)
        self.drops += sum(cshogi.move_is_drop(m) for m in theirs)
        self.no_moves += not theirs
        return theirs


def same_position(board: cshogi.Board, state: np.ndarray) -> None:
    """The core's state after its own moves equals a fresh state of cshogi's board: pieces, hands, turn, move
    number, kings and both keys (so the keys kept move by move are the keys of the position)."""
    fresh = core.from_board(board)
    if not np.array_equal(fresh, state):
        slots = np.flatnonzero(fresh != state).tolist()
        pytest.fail(f"{board.sfen()}: the core's state differs at slots {slots}")


def play(seed: int, games: int, plies: int, captures: float = 0.0, checks: float = 0.0,
         compared: Compared | None = None) -> Compared:
    """Random games from the start position, both boards playing every move: at each ply a capture with
    probability ``captures`` (when there is one: hands fill and endgames come), else a checking move with
    probability ``checks`` (when there is one: positions in check), else any legal move."""
    rng = random.Random(seed)
    compared = compared or Compared()
    for _ in range(games):
        board = cshogi.Board()
        state = core.from_board(board)
        for _ in range(plies):
            legal = compared.check(board, state)
            if not legal:
                break
            move = rng.choice(legal)
            capturing = [m for m in legal if cshogi.move_cap(m)]
            if capturing and rng.random() < captures:
                move = rng.choice(capturing)
            elif rng.random() < checks:
                rng.shuffle(legal)
                for candidate in legal:
                    board.push(candidate)
                    giving = board.is_check()
                    board.pop()
                    if giving:
                        move = candidate
                        break
            board.push(move)
            core.push(state, move)
            same_position(board, state)
    return compared


def test_perft_from_the_start_position_matches_the_published_counts():
    state = core.from_board(cshogi.Board())
    for depth, count in START_PERFT.items():
        assert core_moves.perft(state, depth) == count
    assert np.array_equal(state, core.from_board(cshogi.Board()))  # perft leaves its position as it was


SLIDING_PIECES = {piece + 16 * colour: colour  # a piece code -> its colour, for the pieces that slide
                  for piece in (cshogi.BLANCE, cshogi.BBISHOP, cshogi.BROOK, cshogi.BPROM_BISHOP, cshogi.BPROM_ROOK)
                  for colour in (0, 1)}


def test_the_states_bit_boards_hold_the_occupied_squares_and_the_sliders_after_every_move_and_put():
    """OCCUPIED's bits, read square by square, are cshogi's non-empty squares, and SLIDERS' each colour's lances,
    bishops, rooks, horses and dragons, along a random game with captures and drops; put changes one square's bits
    and putting the piece back restores the state."""
    rng = random.Random(11)
    board = cshogi.Board()
    state = core.from_board(board)
    for _ in range(160):
        legal = list(board.legal_moves)
        if not legal:
            break
        move = rng.choice(legal)
        board.push(move)
        core.push(state, move)
        words = [int(state[core.OCCUPIED]) & (2**64 - 1), int(state[core.OCCUPIED + 1])]
        bits = [words[sq // 64] >> (sq % 64) & 1 for sq in range(81)]
        assert bits == [int(p != 0) for p in board.pieces], board.sfen()
        assert words[1] >> 17 == 0, board.sfen()
        for colour in (0, 1):
            words = [int(state[core.SLIDERS + 2 * colour + w]) & (2**64 - 1) for w in (0, 1)]
            bits = [words[sq // 64] >> (sq % 64) & 1 for sq in range(81)]
            assert bits == [int(SLIDING_PIECES.get(p) == colour) for p in board.pieces], board.sfen()
        sq = rng.randrange(81)
        before, code = state.copy(), int(state[sq])
        core.put(state, sq, 0 if code else 15)
        assert (int(state[core.OCCUPIED + sq // 64]) >> (sq % 64) & 1) == (0 if code else 1)
        core.put(state, sq, code)
        assert np.array_equal(state, before)


def test_legal_moves_equal_cshogis_on_100k_positions_of_random_play():
    compared = play(seed=1, games=160, plies=320)  # plain random play
    play(seed=2, games=120, plies=320, captures=0.7, compared=compared)  # hands fill: many drops
    play(seed=3, games=140, plies=200, checks=0.8, compared=compared)  # many positions in check
    assert compared.positions >= 100_000
    assert compared.in_check >= 10_000
    assert compared.drops >= 1_000_000
    assert compared.no_moves >= 50  # mated (or stalemated) positions, where both must find nothing


CHILDREN_EVERY = 4  # records whose every child is compared too: a quarter keeps the test at a few seconds


def records(path) -> Iterator[cshogi.Board]:
    board = cshogi.Board()
    for hcp in read_hcpe(path)["hcp"]:
        board.set_hcp(hcp)
        yield board


def test_legal_moves_equal_cshogis_on_teacher_and_game_positions_and_after_each_move():
    compared = Compared()
    for path in (TEACHER, GAMES):
        for i, board in enumerate(records(path)):
            state = core.from_board(board)
            legal = compared.check(board, state)
            if i % CHILDREN_EVERY:
                continue
            for move in legal:  # every child too: one ply from real play
                board.push(move)
                child = core.from_board(board)
                compared.check(board, child)
                board.pop()
                core_child = state.copy()
                core.push(core_child, move)
                board.push(move)
                same_position(board, core_child)
                board.pop()
    assert compared.positions >= 80_000


def mate_problems() -> list[tuple[str, list[str]]]:
    problems = []
    for path in sorted(MATES.glob("mate*.tsv")):
        for line in path.read_text().splitlines():
            sfen, _, solution = line.split("\t")
            problems.append((sfen, solution.split()))
    return problems


def test_legal_moves_equal_cshogis_along_every_mate_problems_solution():
    """Tsume problems: the attacker has no king and the defender holds every other piece in hand, so drops and
    evasions dominate; the last position of each solution is mate (no legal move)."""
    compared = Compared()
    problems = mate_problems()
    for sfen, solution in problems:
        board = cshogi.Board(sfen)
        state = core.from_board(board)
        assert state[core.KING + board.turn] == -1  # the attacker of a tsume problem has no king
        for usi in solution:
            compared.check(board, state)
            move = board.move_from_usi(usi)
            board.push(move)
            core.push(state, move)
            same_position(board, state)
        assert compared.check(board, state) == []
    assert compared.no_moves == len(problems) == 50


# Hand-made positions, one rule each. Each expectation is the rule's, written from the rule book; cshogi must agree.
RULES = [
    # a pawn dropped in front of the king that mates it is illegal (uchifuzume): the king on 1a, its own knight on
    # 2a, the black gold on 1c guarding 1b and 2b
    ("7nk/9/8G/9/9/9/9/9/K8 b P 1", "P*1b", False),
    # the same drop when the king can take the pawn (nothing guards 1b) is legal
    ("8k/9/9/9/9/9/9/9/K8 b P 1", "P*1b", True),
    # two unpromoted pawns of a side on one file: the drop on the pawn's file is illegal, a promoted pawn does not count
    ("4k4/9/9/9/9/9/4P4/9/4K4 b P 1", "P*5e", False),
    ("4k4/9/9/9/9/9/4+P4/9/4K4 b P 1", "P*5e", True),
    # a piece that would have no move must promote: a pawn or lance to the last rank, a knight to the last two
    ("4k4/P8/9/9/9/9/9/9/4K4 b - 1", "9b9a", False),
    ("4k4/P8/9/9/9/9/9/9/4K4 b - 1", "9b9a+", True),
    ("4k4/L8/9/9/9/9/9/9/4K4 b - 1", "9b9a", False),
    ("4k4/9/9/N8/9/9/9/9/4K4 b - 1", "9d8b", False),
    ("4k4/9/9/N8/9/9/9/9/4K4 b - 1", "9d8b+", True),
    # a drop where the piece could never move is illegal
    ("4k4/9/9/9/9/9/9/9/4K4 b N 1", "N*1b", False),
    ("4k4/9/9/9/9/9/9/9/4K4 b L 1", "L*1a", False),
    # a pinned piece may move only along its pin: the gold on 5h, pinned by the rook on 5a, to 5g yes, to 4h no
    ("k3r4/9/9/9/9/9/9/4G4/4K4 b - 1", "5h5g", True),
    ("k3r4/9/9/9/9/9/9/4G4/4K4 b - 1", "5h4h", False),
    # in double check (the rook on 5a, the bishop on 1e) only the king moves: the gold on 1f may not take the bishop
    ("k3r4/9/9/9/8b/8G/9/9/4K4 b - 1", "1f1e", False),
    ("k3r4/9/9/9/8b/8G/9/9/4K4 b - 1", "5i6i", True),
    # no king move away from a checking rook along its line: the king's own square no longer blocks it
    ("k3r4/9/9/9/4K4/9/9/9/9 b - 1", "5e5f", False),
    ("k3r4/9/9/9/4K4/9/9/9/9 b - 1", "5e4f", True),
]


@pytest.mark.parametrize(("sfen", "usi", "legal"), RULES)
def test_each_rule_as_the_rule_book_says_and_as_cshogi_agrees(sfen, usi, legal):
    board = cshogi.Board(sfen)
    mine = {cshogi.move_to_usi(int(m)) for m in core_moves.moves_of(core.from_board(board))}
    assert (usi in mine) == legal, (sfen, usi)
    assert mine == {cshogi.move_to_usi(m) for m in board.legal_moves}, sfen


def _gives_check(board: cshogi.Board, move: int) -> bool:
    board.push(move)
    check = board.is_check()
    board.pop()
    return check


def shuffling_games(seed: int, games: int, plies: int) -> Iterator[tuple[cshogi.Board, int, bool]]:
    """Random games in which both sides often take back their last move (a piece steps back where it came from),
    above all when that checks, and often check: repetitions of every kind (draws, perpetual checks, superior and
    inferior hands). Yields the board after each move, the move, and whether it is the game's first yield."""
    rng = random.Random(seed)
    for _ in range(games):
        board = cshogi.Board()
        for _ in range(rng.randrange(0, 40)):  # a random opening first, so positions differ from game to game
            legal = list(board.legal_moves)
            if not legal:
                break
            board.push(rng.choice(legal))
        for ply in range(plies):
            legal = list(board.legal_moves)
            if not legal:
                break
            history = board.history
            back = []
            if len(history) >= 2 and not cshogi.move_is_drop(history[-2]):
                last = history[-2]
                back = [m for m in legal if cshogi.move_from(m) == cshogi.move_to(last)
                        and cshogi.move_to(m) == cshogi.move_from(last)]
            checking_back = [m for m in back if _gives_check(board, m)]
            if checking_back and rng.random() < 0.9:
                move = checking_back[0]
            elif back and rng.random() < 0.6:
                move = back[0]
            elif rng.random() < 0.3:
                checking = [m for m in legal if _gives_check(board, m)]
                move = rng.choice(checking or legal)
            else:
                move = rng.choice(legal)
            board.push(move)
            yield board, move, ply == 0


def test_repetition_verdicts_equal_cshogis_is_draw_with_the_history_before_the_root():
    """Every position of games that repeat, judged from a history started at a root up to 20 plies earlier (the
    core knows only what history_of took from the board at the root, as a search does)."""
    seen: dict[int, int] = {}
    rng = random.Random(7)
    root_state = root_history = None
    row = 0
    assert root_state is None  # set at the first game's first move
    for board, move, first in shuffling_games(seed=5, games=300, plies=150):
        if first or rng.random() < 0.05:  # a new root: history_of from the board as it stands
            root_state, root_history, row = core_history.history_of(board)
        else:
            core.push(root_state, move)
            row += 1
            if row >= len(root_history):
                root_state, root_history, row = core_history.history_of(board)
            else:
                core_history.remember(root_state, root_history, row, 0)
        theirs = board.is_draw(core_history.REPETITION_PLIES)
        assert core_history.repetition(root_history, row, core_history.REPETITION_PLIES) == theirs, board.sfen()
        seen[theirs] = seen.get(theirs, 0) + 1
    assert seen[cshogi.REPETITION_DRAW] >= 3_000
    assert seen[cshogi.REPETITION_WIN] >= 100 and seen[cshogi.REPETITION_LOSE] >= 100  # perpetual checks
    assert seen[cshogi.REPETITION_SUPERIOR] >= 10 and seen[cshogi.REPETITION_INFERIOR] >= 40
