"""Tests of messiah/moves.py: move indices on teacher positions and hand-computed examples."""

from __future__ import annotations

import cshogi
import numpy as np
import pytest
from conftest import make_board, mirror_board, mirror_usi, rotate_sfen

from messiah import moves as M

MIN_POSITIONS = 3_000  # the fixture's teacher games hold 3,775: every one of them is checked

DROP_ORDER = "PLNSGBR"  # hand order: from = 81 + position in this string


def usi_square(name: str, turn: int) -> int:
    """Square index of a USI square name ('7g') in the frame of ``turn``."""
    square = (int(name[0]) - 1) * 9 + (ord(name[1]) - ord("a"))
    return 80 - square if turn == cshogi.WHITE else square


def reference_index(usi: str, turn: int) -> int:
    """The index of a move, from its USI string alone (independent of cshogi's move bits)."""
    if usi[1] == "*":
        frm = 81 + DROP_ORDER.index(usi[0])
        to = usi_square(usi[2:4], turn)
        promote = 0
    else:
        frm = usi_square(usi[0:2], turn)
        to = usi_square(usi[2:4], turn)
        promote = int(usi.endswith("+"))
    return 88 * 81 * promote + 88 * to + frm


# --- teacher positions ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def teacher_moves(teacher_records):
    """For every position of the fixture's teacher games (all teacher files): concatenated legal moves and
    indices, with per-position offsets, turns and records."""
    records = teacher_records
    board = cshogi.Board()
    all_moves, all_indices, turns = [], [], np.empty(len(records), np.int8)
    for i, rec in enumerate(records):
        board.set_hcp(rec["hcp"])
        moves, indices = M.legal_move_indices(board)
        all_moves.append(moves)
        all_indices.append(indices)
        turns[i] = board.turn
    counts = np.array([len(m) for m in all_moves])
    offsets = np.concatenate([[0], np.cumsum(counts)])
    return records, np.concatenate(all_moves), np.concatenate(all_indices), offsets, turns


def test_sample_is_varied(teacher_moves):
    records, moves, _, offsets, turns = teacher_moves
    assert len(records) >= MIN_POSITIONS
    assert set(turns.tolist()) == {cshogi.BLACK, cshogi.WHITE}
    assert len(moves) > 10 * len(records)
    assert moves.dtype == np.uint32


def test_indices_in_range(teacher_moves):
    _, _, indices, _, _ = teacher_moves
    assert indices.dtype == np.int64
    assert indices.min() >= 0 and indices.max() < M.NUM_MOVE_INDICES == 14256


def test_indices_unique_within_each_position(teacher_moves):
    records, _, indices, offsets, _ = teacher_moves
    position = np.repeat(np.arange(len(records)), np.diff(offsets))
    keys = position * M.NUM_MOVE_INDICES + indices
    unique, counts = np.unique(keys, return_counts=True)
    if len(unique) != len(keys):
        pos = int(unique[counts > 1][0] // M.NUM_MOVE_INDICES)
        board = cshogi.Board()
        board.set_hcp(records[pos]["hcp"])
        pytest.fail(f"duplicate move index in {board.sfen()}")


def test_indices_within_possible_indices(teacher_moves):
    _, _, indices, _, _ = teacher_moves
    possible = M.possible_indices()
    assert np.all(np.diff(possible) > 0)
    assert np.isin(indices, possible).all()


def test_move_indices_matches_legal_move_indices(teacher_moves):
    _, moves, indices, offsets, turns = teacher_moves
    for i in range(0, len(turns), 97):
        a, b = offsets[i], offsets[i + 1]
        np.testing.assert_array_equal(M.move_indices(moves[a:b], turns[i]), indices[a:b])


def test_best_move16_index(teacher_moves):
    """The teacher's move16 indexes like the full move, and is one of the position's legal indices."""
    records, moves, indices, offsets, turns = teacher_moves
    board = cshogi.Board()
    for i in range(0, len(records), 5):
        board.set_hcp(records[i]["hcp"])
        move16 = int(records[i]["bestMove16"])
        move = board.move_from_move16(move16)
        if move not in moves[offsets[i] : offsets[i + 1]]:
            continue
        index = M.move_index(board, move16)
        assert index == M.move_index(board, move), board.sfen()
        assert index in indices[offsets[i] : offsets[i + 1]], board.sfen()


def test_round_trip_and_usi(teacher_moves):
    """On every position: index_to_move inverts the index, decode_index gives the USI string, and the index
    equals the one computed from the USI string by hand."""
    records, moves, indices, offsets, turns = teacher_moves
    board = cshogi.Board()
    for i in range(len(records)):
        board.set_hcp(records[i]["hcp"])
        turn = board.turn
        a, b = offsets[i], offsets[i + 1]
        for move, index in zip(moves[a:b].tolist(), indices[a:b].tolist(), strict=True):
            usi = cshogi.move_to_usi(move)
            assert M.index_to_move(board, index) == move, (board.sfen(), usi)
            assert M.decode_index(index, turn) == usi, (board.sfen(), usi)
            assert reference_index(usi, turn) == index, (board.sfen(), usi)


def spread_positions(teacher_moves):
    """(board, its legal move indices) for every position of the teacher data."""
    records, _, indices, offsets, _ = teacher_moves
    board = cshogi.Board()
    for i in range(len(records)):
        board.set_hcp(records[i]["hcp"])
        yield board, indices[offsets[i] : offsets[i + 1]]


def test_colour_mirror_has_same_index_set(teacher_moves):
    for board, own in spread_positions(teacher_moves):
        mirror = cshogi.Board(rotate_sfen(board.sfen()))
        assert mirror.turn != board.turn
        _, mirror_indices = M.legal_move_indices(mirror)
        np.testing.assert_array_equal(
            np.sort(mirror_indices), np.sort(own), err_msg=board.sfen()
        )


def test_left_right_mirror_maps_legal_moves_to_the_mirrored_positions(teacher_moves):
    for board, own in spread_positions(teacher_moves):
        mirror = mirror_board(board)
        _, expected = M.legal_move_indices(mirror)
        np.testing.assert_array_equal(np.sort(M.mirror_indices(own)), np.sort(expected), err_msg=board.sfen())
        np.testing.assert_array_equal(M.mirror_indices(M.mirror_indices(own)), own)
        for move in list(board.legal_moves)[:5]:
            usi = mirror_usi(cshogi.move_to_usi(move))
            assert M.mirror_indices(M.move_index(board, move)) == M.move_index(mirror, mirror.move_from_usi(usi))


# --- hand-computed examples -----------------------------------------------------------------------------


def index_of(board: cshogi.Board, usi: str) -> int:
    move = board.move_from_usi(usi)
    assert move in list(board.legal_moves), (usi, board.sfen())
    return M.move_index(board, move)


def test_constants():
    assert M.NUM_MOVE_INDICES == 14256 == 88 * 81 * 2


def test_first_moves_black_and_white():
    board = cshogi.Board()
    # 7g7f: from 7g = file 6 * 9 + rank 6 = 60, to 7f = 59.
    assert index_of(board, "7g7f") == 88 * 59 + 60 == 5252
    _, indices = M.legal_move_indices(board)
    assert len(indices) == 30 and 5252 in indices.tolist()
    assert M.decode_index(5252, cshogi.BLACK) == "7g7f"
    assert M.index_to_move(board, 5252) == board.move_from_usi("7g7f")
    board.push_usi("7g7f")
    # White's 3c3d is the same move shape in white's frame: 80 - 20 = 60 -> 80 - 21 = 59.
    assert index_of(board, "3c3d") == 5252
    assert M.decode_index(5252, cshogi.WHITE) == "3c3d"
    # A knight jump (after 7g7f, 8c8d is white's 2g2f in its own frame): 2g = 1*9+6 = 15 -> 2f = 14.
    assert index_of(board, "8c8d") == 88 * 14 + 15


@pytest.mark.parametrize(
    "sfen, drops, turn",
    [
        ("4k4/9/9/9/9/9/9/9/4K4 b RBGSNLP 1", {"5e": 40, "9i": 80, "1b": 1}, cshogi.BLACK),
        ("4k4/9/9/9/9/9/9/9/4K4 w rbgsnlp 1", {"5e": 40, "1a": 80, "9h": 1}, cshogi.WHITE),
    ],
)
def test_drops(sfen, drops, turn):
    board = make_board(sfen)
    for square, to in drops.items():
        for i, piece in enumerate(DROP_ORDER):
            usi = f"{piece}*{square}"
            if to % 9 == 0 and piece in "PLN" or to % 9 == 1 and piece == "N":
                continue  # no drop where the piece could never move again
            expected = 88 * to + 81 + i
            assert index_of(board, usi) == expected, usi
            assert M.decode_index(expected, turn) == usi
            assert cshogi.move_to_usi(M.index_to_move(board, expected)) == usi


def test_gold_bishop_rook_drop_indices():
    """cshogi's raw encoding puts gold after rook; the index uses hand order P L N S G B R."""
    board = make_board("4k4/9/9/9/9/9/9/9/4K4 b RBG 1")
    assert index_of(board, "G*5e") == 88 * 40 + 85
    assert index_of(board, "B*5e") == 88 * 40 + 86
    assert index_of(board, "R*5e") == 88 * 40 + 87


@pytest.mark.parametrize(
    "sfen, frm, to",
    [
        ("4k4/9/9/7P1/9/9/9/9/4K4 b - 1", "2d", "2c"),  # black pawn entering the promotion zone
        ("4k4/9/9/9/9/1p7/9/9/4K4 w - 1", "8f", "8g"),  # the same for white
    ],
)
def test_promotion(sfen, frm, to):
    board = make_board(sfen)
    # Both: from = 1*9+3 = 12, to = 11 in the mover's frame (white: 80 - 68, 80 - 69).
    plain = 88 * 11 + 12
    assert index_of(board, frm + to) == plain
    assert index_of(board, frm + to + "+") == plain + 88 * 81
    _, indices = M.legal_move_indices(board)
    assert plain in indices.tolist() and plain + 88 * 81 in indices.tolist()
    assert M.decode_index(plain + 88 * 81, board.turn) == frm + to + "+"


def test_promoted_piece_moves_are_not_promotions():
    board = make_board("4k4/9/9/9/5+R3/9/9/9/4K4 b - 1")
    # Dragon 4e (31) -> 4a (27): a plain move, no promotion flag.
    assert index_of(board, "4e4a") == 88 * 27 + 31


# --- errors ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("index", [-1, 14256, 10**6])
def test_decode_index_out_of_range(index):
    with pytest.raises(ValueError):
        M.decode_index(index, cshogi.BLACK)
    with pytest.raises(ValueError):
        M.decode_index(index, cshogi.WHITE)


def test_decode_index_promoted_drop():
    with pytest.raises(ValueError):
        M.decode_index(88 * 81 + 88 * 40 + 85, cshogi.BLACK)


FULL_HAND = "4k4/9/9/9/9/9/9/9/4K4 b 2R2B4G4S4N4L18P 1"


@pytest.mark.parametrize(
    "sfen, usi, why",
    [
        (cshogi.STARTING_SFEN, "7f7e", "no piece on 7f"),
        (cshogi.STARTING_SFEN, "P*5e", "nothing in hand"),
        (cshogi.STARTING_SFEN, "7g7e", "a pawn steps once"),
        (cshogi.STARTING_SFEN, "5i5i", "from = to"),
        # cshogi's Board.is_legal accepts the following (it only checks pseudo-legality here):
        (cshogi.STARTING_SFEN, "7g7f+", "a promotion outside the promotion zone"),
        (cshogi.STARTING_SFEN, "4i3h+", "a gold cannot promote"),
        (cshogi.STARTING_SFEN, "5i5h+", "a king cannot promote"),
        (FULL_HAND, "P*1a", "a pawn dropped where it could never move"),
        (FULL_HAND, "N*1b", "a knight dropped where it could never move"),
    ],
)
def test_index_to_move_without_legal_move(sfen, usi, why):
    board = make_board(sfen)
    index = reference_index(usi, board.turn)
    assert index not in M.legal_move_indices(board)[1].tolist()
    with pytest.raises(ValueError):
        move = M.index_to_move(board, index)
        pytest.fail(f"index_to_move returned {cshogi.move_to_usi(move)} ({why}), not a legal move")


def test_index_to_move_pinned_piece():
    board = make_board("k3r4/9/9/9/9/9/9/4G4/4K4 b - 1")
    # 5h (43) -> 4h (34) would expose the king to the rook on 5a; 5h -> 5g (42) is legal.
    with pytest.raises(ValueError):
        M.index_to_move(board, 88 * 34 + 43)
    assert cshogi.move_to_usi(M.index_to_move(board, 88 * 42 + 43)) == "5h5g"


@pytest.mark.parametrize(
    "sfen",
    [
        cshogi.STARTING_SFEN,
        "lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2",
        "4k4/9/9/9/9/9/9/9/4K4 b 2R2B4G4S4N4L18P 1",
        "4k4/9/9/9/9/9/9/9/4K4 w 2r2b4g4s4n4l18p 1",
        "8k/9/1+r7/9/4+P4/9/4+s4/7+B1/K8 b - 1",
        "4k4/9/9/7P1/9/9/9/9/4K4 b - 1",
    ],
)
def test_index_to_move_over_every_index(sfen):
    """Every index either gives back the legal move it indexes or raises ValueError (nothing else)."""
    board = make_board(sfen)
    moves, indices = M.legal_move_indices(board)
    legal = dict(zip(indices.tolist(), moves.tolist(), strict=True))
    wrongly_accepted = []
    for index in range(M.NUM_MOVE_INDICES):
        if index in legal:
            assert M.index_to_move(board, index) == legal[index]
        else:
            try:
                move = M.index_to_move(board, index)
            except ValueError:
                continue
            wrongly_accepted.append(f"{index} -> {cshogi.move_to_usi(move)}")
    assert not wrongly_accepted, (
        f"index_to_move returned a move that is not legal for {len(wrongly_accepted)} indices "
        f"(instead of raising ValueError): {', '.join(wrongly_accepted[:8])} ..."
    )


def test_batch_move_indices_are_each_positions_own():
    """The batch path (moves end to end, one compiled call) gives each position's indices for its side to move, and
    the padded array and mask that pad_indices makes from them: black and white positions mixed."""
    from messiah.moves import batch_move_indices, legal_move_indices, pad_indices

    boards = [cshogi.Board()]
    for usi in ("7g7f", "3c3d", "8h2b+"):
        boards.append(boards[-1].copy())
        boards[-1].push_usi(usi)
    legal = [legal_move_indices(b) for b in boards]
    moves = np.concatenate([m for m, _ in legal])
    offsets = np.concatenate([[0], np.cumsum([len(m) for m, _ in legal])]).astype(np.int64)
    turns = np.array([b.turn for b in boards], np.int8)
    flat, padded, mask = batch_move_indices(moves, offsets, turns)
    assert np.array_equal(flat, np.concatenate([i for _, i in legal]))
    want_padded, want_mask = pad_indices([i for _, i in legal])
    assert np.array_equal(padded, want_padded) and np.array_equal(mask, want_mask)
