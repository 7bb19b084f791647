"""The entering-king rules on the playout core's board against cshogi's ``is_nyugyoku`` (the two point rules of a
full set) and messiah.rules (the handicap variants and the try rule, whose own tests hold them to the rule book),
on positions made to sit at the edge of a declaration: kings in or near the camp, pieces and points around what
each rule asks."""

from __future__ import annotations

import random

import cshogi
import pytest

from messiah.playout import board as core
from messiah.playout import rules as core_rules
from messiah.position import PositionError, board_from_sfen
from messiah.rules import ENTERING_KING_RULES, GameRules

PIECES = list("P" * 18 + "L" * 4 + "N" * 4 + "S" * 4 + "G" * 4 + "B" * 2 + "R" * 2)  # every piece but the kings
LOWEST_RANK = {"P": 1, "L": 1, "N": 2}  # for black: the first rank (0 = a) such a piece may stand on


def edge_position(rng: random.Random, turn: str, given: tuple[str, ...] = ()) -> str:
    """An sfen where the side to move (``turn``) has its king on or near the opponent's three ranks and most of
    its pieces there or in hand: every piece but the kings goes to a side (the mover's more often) and to its hand,
    its camp or anywhere, promoted now and then; the other side's king stands far from them. ``given``: pieces
    left out of the game, as a handicap giver's."""
    cells: list[list[str | None]] = [[None] * 9 for _ in range(9)]  # [rank][file index from the 9-file]
    hands = {"b": [], "w": []}
    pawn_files = {True: set(), False: set()}  # by colour (black?): files with an unpromoted pawn
    mover_black = turn == "b"

    def camp_rank(black: bool, deep: bool) -> int:
        if deep:
            return rng.randrange(0, 3) if black else rng.randrange(6, 9)
        return rng.randrange(0, 9)

    def place(piece: str, black: bool, rank: int) -> bool:
        low = LOWEST_RANK.get(piece.upper().lstrip("+"), 0) if not piece.startswith("+") else 0
        own_rank = rank if black else 8 - rank
        if own_rank < low:
            return False
        empty = [f for f in range(9) if cells[rank][f] is None and not (piece == "P" and f in pawn_files[black])]
        if not empty:
            return False
        file = rng.choice(empty)
        cells[rank][file] = piece if black else piece.lower()
        if piece == "P":
            pawn_files[black].add(file)
        return True

    place("K", mover_black, camp_rank(mover_black, rng.random() < 0.85))
    # far from the mover's camp, where the mover's pieces would mostly check it
    place("K", not mover_black, rng.randrange(6, 9) if mover_black else rng.randrange(0, 3))
    pieces = list(PIECES)
    for piece in given:
        pieces.remove(piece)
    for piece in pieces:
        black = (rng.random() < 0.8) == mover_black
        where = rng.random()
        if where < 0.35:
            hands["b" if black else "w"].append(piece)
            continue
        promoted = piece in "PLNSBR" and rng.random() < 0.3
        name = "+" + piece if promoted else piece
        mine = black == mover_black
        for _ in range(5):
            if place(name, black, camp_rank(black, mine and where < 0.8)):
                break
        else:
            hands["b" if black else "w"].append(piece)
    rows = []
    for rank in range(9):
        row, run = "", 0
        for cell in cells[rank]:
            if cell is None:
                run += 1
                continue
            row += (str(run) if run else "") + cell
            run = 0
        rows.append(row + (str(run) if run else ""))
    hand = "".join(f"{n if n > 1 else ''}{p if side == 'b' else p.lower()}" for side in "bw" for p in "RBGSNLP"
                   if (n := hands[side].count(p)))
    return f"{'/'.join(rows)} {turn} {hand or '-'} 1"


HANDICAPS = ((), ("L",), ("B",), ("R",), ("R", "L"), ("R", "B"), ("R", "B", "L", "L"))


def positions(count: int, seed: int, handicaps: bool = False) -> list[cshogi.Board]:
    """Positions at the edge of a declaration; with ``handicaps``, many of them with pieces left out (a handicap
    game's, where a handicap rule asks the giver for fewer points)."""
    rng = random.Random(seed)
    boards = []
    while len(boards) < count:
        sfen = edge_position(rng, rng.choice("bw"), rng.choice(HANDICAPS) if handicaps else ())
        try:
            boards.append(board_from_sfen(sfen))
        except PositionError:  # two pawns on a file, the side that moved in check: draw again
            continue
    return boards


def test_point_rules_equal_cshogis_is_nyugyoku():
    seen = {"CSARule24": 0, "CSARule27": 0}
    boards = positions(4_000, seed=11)
    for board in boards:
        state = core.from_board(board)
        for rule, law in (("CSARule24", cshogi.LAW_24), ("CSARule27", cshogi.LAW_27)):
            mine = core_rules.declaration(state, core_rules.rule_code(rule)) == 0
            assert mine == board.is_nyugyoku(law), (rule, board.sfen())
            seen[rule] += mine
    # the set sits at the edge: some positions win by each rule, most do not
    assert 200 <= seen["CSARule24"] < seen["CSARule27"] <= len(boards) - 200


@pytest.mark.parametrize("rule", ENTERING_KING_RULES)
def test_every_rule_equals_messiah_rules(rule):
    rules = GameRules(entering_king=rule)
    code = core_rules.rule_code(rule)
    wins = 0
    for board in positions(2_000, seed=12, handicaps=True):
        state = core.from_board(board)
        theirs = rules.declaration(board)
        mine = core_rules.declaration(state, code)
        assert mine == (core_rules.NO_DECLARATION if theirs is None else theirs), (rule, board.sfen())
        wins += theirs is not None
    assert (wins == 0) == (rule == "NoEnteringKing")


def test_the_try_rule_on_every_square_around_the_try_square():
    """A king next to its try square: the move is the win when the square is free and not attacked, and after it
    the game has ended (tried); a guarded or own-occupied square is no try."""
    rules = GameRules(entering_king="TryRule")
    code = core_rules.rule_code("TryRule")
    tries = 0
    for sfen in ("9/3K5/9/9/9/9/9/9/4k4 b - 1",  # black's king on 6b: 5a is free, a try
                 "9/4K4/9/9/9/9/9/9/k8 b - 1",  # on 5b: a try
                 "3g5/4K4/9/9/9/9/9/9/k8 b - 1",  # the white gold on 6a guards 5a: none
                 "4G4/4K4/9/9/9/9/9/9/k8 b - 1",  # its own gold stands on 5a: none
                 "K8/9/9/9/9/9/9/3k5/9 w - 1"):  # white's king on 6h, its try square 5i free: a try
        board = board_from_sfen(sfen)
        state = core.from_board(board)
        theirs = rules.declaration(board)
        mine = core_rules.declaration(state, code)
        assert mine == (core_rules.NO_DECLARATION if theirs is None else theirs), sfen
        if theirs is not None:
            tries += 1
            board.push(theirs)
            core.push(state, theirs)
            assert rules.tried(board) and core_rules.tried(state, code)
    assert tries >= 2


def test_the_handicap_rules_ask_the_giver_for_fewer_points():
    """On the handicap positions the H rules let white declare where the full-set rules do not (so the comparison
    above covers the handicap arithmetic, not only the shared count)."""
    boards = positions(2_000, seed=12, handicaps=True)
    wins = {rule: sum(core_rules.declaration(core.from_board(b), core_rules.rule_code(rule)) == 0 for b in boards)
            for rule in ("CSARule24", "CSARule24H", "CSARule27", "CSARule27H")}
    assert wins["CSARule24H"] > wins["CSARule24"] and wins["CSARule27H"] > wins["CSARule27"], wins
