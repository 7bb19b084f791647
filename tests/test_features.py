"""Tests of messiah/features.py: against the plain reference (tests/reference_features.py) on teacher
positions, and against hand-derived expectations on hand-made positions."""

from __future__ import annotations

import cshogi
import numpy as np
import pytest
from conftest import make_board, mirror_board, rotate_sfen
from reference_features import CHANNEL_NAMES, reference_planes

from messiah import features as F

# Channel numbers, spelled out here independently of the module's constants (checked against them below).
KIND_P, KIND_L, KIND_N, KIND_S, KIND_G, KIND_B, KIND_R, KIND_K = range(8)
PROMOTED = 8
OWN_ATTACK, OPP_ATTACK = 9, 10
DIRS = ["N", "NE", "E", "SE", "S", "SW", "W", "NW", "knight-E", "knight-W"]
OWN_DIR = {d: 11 + i for i, d in enumerate(DIRS)}
OPP_DIR = {d: 21 + i for i, d in enumerate(DIRS)}
OWN_HIMO, OPP_HIMO, OWN_ATARI, OPP_ATARI = 31, 32, 33, 34
BOARD = 35


# --- helpers ----------------------------------------------------------------------------------------


def cell(square: str, turn: int) -> tuple[int, int]:
    """(row, column) of an absolute square name such as '5e' in the planes of the side ``turn``."""
    file, rank = int(square[0]) - 1, ord(square[1]) - ord("a")
    if turn == cshogi.WHITE:
        file, rank = 8 - file, 8 - rank
    return 1 + rank, file


def square_of(row: int, col: int, turn: int) -> str:
    file, rank = col, row - 1
    if turn == cshogi.WHITE:
        file, rank = 8 - file, 8 - rank
    return f"{file + 1}{chr(ord('a') + rank)}"


def board_cells(plane: np.ndarray, turn: int) -> dict[str, float]:
    """The non-zero board cells of one plane, as {absolute square name: value}."""
    return {
        square_of(row, col, turn): float(plane[row, col])
        for row in range(1, 10)
        for col in range(9)
        if plane[row, col] != 0
    }


def describe_mismatch(expected: np.ndarray, actual: np.ndarray, sfen: str) -> str:
    channels = sorted(set(np.nonzero(expected != actual)[0].tolist()))
    lines = [f"planes differ for sfen {sfen!r} in {len(channels)} channel(s):"]
    for ch in channels:
        rows, cols = np.nonzero(expected[ch] != actual[ch])
        cells = ", ".join(
            f"(row {r}, col {c}): expected {expected[ch, r, c]:g} got {actual[ch, r, c]:g}"
            for r, c in zip(rows.tolist(), cols.tolist(), strict=True)
        )
        lines.append(f"  channel {ch} ({CHANNEL_NAMES[ch]}): {cells}")
    return "\n".join(lines)


def assert_planes_equal(expected: np.ndarray, actual: np.ndarray, sfen: str) -> None:
    assert actual.shape == F.SHAPE and actual.dtype == np.float32
    if not np.array_equal(expected, actual):
        pytest.fail(describe_mismatch(expected, actual, sfen))


# --- constants --------------------------------------------------------------------------------------


def test_constants():
    assert F.NUM_CHANNELS == 36
    assert F.SHAPE == (36, 11, 9)
    assert F.CH_PIECE == KIND_P
    assert F.CH_PROMOTED == PROMOTED
    assert F.CH_ATTACK == OWN_ATTACK
    assert F.CH_DIRECTION == OWN_DIR["N"]
    assert F.CH_HIMO == OWN_HIMO
    assert F.CH_ATARI == OWN_ATARI
    assert F.CH_BOARD == BOARD


# --- against the reference on teacher positions ------------------------------------------------------


@pytest.fixture(scope="module")
def reference_sample(teacher_records):
    """Every position of the fixture's teacher games (3,775, from every teacher file)."""
    records = teacher_records
    board = cshogi.Board()
    boards, expected = [], []
    for rec in records:
        board.set_hcp(rec["hcp"])
        boards.append(board.copy())
        expected.append(reference_planes(board))
    return records, boards, np.stack(expected)


def test_sample_covers_both_colours(reference_sample):
    _, boards, _ = reference_sample
    turns = {b.turn for b in boards}
    assert turns == {cshogi.BLACK, cshogi.WHITE}
    assert any(sum(sum(h) for h in b.pieces_in_hand) > 0 for b in boards)
    assert any(any(p in range(9, 15) or p in range(25, 31) for p in b.pieces) for b in boards)


def test_board_planes_match_reference(reference_sample):
    _, boards, expected = reference_sample
    for board, exp in zip(boards, expected, strict=True):
        assert_planes_equal(exp, F.board_planes(board), board.sfen())


def test_board_planes_reused_out_buffer_matches_reference(reference_sample):
    """The search's fast path reuses one output buffer: stale values must not leak between calls."""
    _, boards, expected = reference_sample
    out = np.full(F.SHAPE, 7.0, np.float32)
    for board, exp in zip(boards[:500], expected[:500], strict=True):
        result = F.board_planes(board, out=out)
        assert result is out
        assert_planes_equal(exp, out, board.sfen())


def test_batch_planes_from_hcp_match_reference(reference_sample):
    records, boards, expected = reference_sample
    actual = F.planes(F.hcp_arrays(records["hcp"]))
    assert actual.shape == (len(records), *F.SHAPE) and actual.dtype == np.float32
    for i, board in enumerate(boards):
        if not np.array_equal(expected[i], actual[i]):
            pytest.fail(f"position {i}: " + describe_mismatch(expected[i], actual[i], board.sfen()))


def test_batch_planes_into_dirty_out_buffer(reference_sample):
    records, boards, expected = reference_sample
    n = 300
    out = np.full((n, *F.SHAPE), np.nan, np.float32)
    result = F.planes(F.hcp_arrays(records["hcp"][:n]), out=out)
    assert result is out
    for i in range(n):
        assert_planes_equal(expected[i], out[i], boards[i].sfen())


def test_board_arrays_and_boards_planes_match_reference(reference_sample):
    records, boards, expected = reference_sample
    subset = boards[::10]
    arrays = F.board_arrays(subset)
    from_hcp = F.hcp_arrays(records["hcp"][::10])
    for a, b in zip(arrays, from_hcp, strict=True):
        np.testing.assert_array_equal(a, b)
    actual = F.boards_planes(subset)
    for i, board in enumerate(subset):
        assert_planes_equal(expected[10 * i], actual[i], board.sfen())


def test_colour_mirror_gives_identical_planes(reference_sample):
    """rotate_sfen rotates the board 180 degrees, swaps the colours of the pieces and of the hands
    and switches the side to move: seen from the side to move, nothing changes."""
    _, boards, _ = reference_sample
    for board in boards[::4]:
        mirror = cshogi.Board(rotate_sfen(board.sfen()))
        assert mirror.turn != board.turn
        assert mirror.pieces_in_hand == board.pieces_in_hand[::-1]
        a, b = F.board_planes(board), F.board_planes(mirror)
        if not np.array_equal(a, b):
            pytest.fail("mirror " + mirror.sfen() + ": " + describe_mismatch(a, b, board.sfen()))


def test_left_right_mirror_planes_are_the_mirrored_positions_planes(reference_sample):
    """mirror_planes (training's augmentation) against the planes of the mirrored sfen computed anew."""
    _, boards, _ = reference_sample
    assert F.MIRROR_CHANNELS[F.CH_DIRECTION + F.NE] == F.CH_DIRECTION + F.NW
    for board in boards[::2]:
        mirror = mirror_board(board)
        a, b = F.mirror_planes(F.board_planes(board)), F.board_planes(mirror)
        if not np.array_equal(a, b):
            pytest.fail("mirror " + mirror.sfen() + ": " + describe_mismatch(b, a, board.sfen()))
    both = F.boards_planes(boards[:8])
    assert np.array_equal(F.mirror_planes(F.mirror_planes(both)), both)


def test_hcp_arrays_rejects_corrupted_record(teacher_records):
    hcps = teacher_records["hcp"][:5].copy()
    hcps[3] = np.full(32, 255, np.uint8)
    with pytest.raises(ValueError, match=r"record 3\b"):
        F.hcp_arrays(hcps)


def test_hcp_arrays_corrupted_single_record():
    with pytest.raises(ValueError, match=r"record 0\b"):
        F.hcp_arrays(np.full((1, 32), 255, np.uint8))


# --- hand-made positions ------------------------------------------------------------------------------
#
# Each case is an sfen and, for some channels, the complete set of non-zero board cells, written by hand
# as absolute square names (value 1 unless given). Channels not listed are not checked by the case (but
# are checked against the reference, which is itself checked here).

CASES = {
    # Black rook on 5e, blocked by a white pawn on 5c (north) and its own silver on 2e (east); the west
    # and south rays reach the edge. White's pawn attacks 5d (toward rank i) in its own "N".
    "blocked rook": (
        "8k/9/4p4/9/4R2S1/9/9/9/K8 b - 1",
        {
            KIND_R: {"5e": 1},
            KIND_S: {"2e": 1},
            KIND_P: {"5c": -1},
            KIND_K: {"9i": 1, "1a": -1},
            PROMOTED: set(),
            OWN_ATTACK: {"5d", "5c", "4e", "3e", "2e", "5f", "5g", "5h", "5i", "6e", "7e", "8e", "9e"}
            | {"2d", "1d", "3d", "1f", "3f"}  # silver
            | {"9h", "8h", "8i"},  # king
            OWN_DIR["N"]: {"5d", "5c", "2d", "9h"},
            OWN_DIR["NE"]: {"1d", "8h"},
            OWN_DIR["E"]: {"4e", "3e", "2e", "8i"},
            OWN_DIR["SE"]: {"1f"},
            OWN_DIR["S"]: {"5f", "5g", "5h", "5i"},
            OWN_DIR["SW"]: {"3f"},
            OWN_DIR["W"]: {"6e", "7e", "8e", "9e"},
            OWN_DIR["NW"]: {"3d"},
            OWN_DIR["knight-E"]: set(),
            OWN_DIR["knight-W"]: set(),
            OPP_ATTACK: {"5d", "2a", "1b", "2b"},
            OPP_DIR["N"]: {"5d", "1b"},
            OPP_DIR["NE"]: {"2b"},
            OPP_DIR["E"]: {"2a"},
            OPP_DIR["S"]: set(),
            OPP_DIR["W"]: set(),
            OWN_HIMO: {"2e"},
            OPP_HIMO: set(),
            OWN_ATARI: set(),
            OPP_ATARI: {"5c"},
        },
    ),
    # Unblocked rays reaching the edge: black lance 1i (to 1a), bishop 9i (to 1a), rook 9b (to 1b and 9a;
    # south it stops on its own bishop), white lance 8a (to 8i, in white's "N").
    "rays to the edge": (
        "1l2k4/R8/9/9/9/9/9/9/B3K3L b - 1",
        {
            OWN_DIR["N"]: {"1h", "1g", "1f", "1e", "1d", "1c", "1b", "1a", "9a", "5h"},
            OWN_DIR["NE"]: {"8h", "7g", "6f", "5e", "4d", "3c", "2b", "1a", "4h"},
            OWN_DIR["E"]: {"8b", "7b", "6b", "5b", "4b", "3b", "2b", "1b", "4i"},
            OWN_DIR["S"]: {"9c", "9d", "9e", "9f", "9g", "9h", "9i"},
            OWN_DIR["W"]: {"6i"},
            OWN_DIR["NW"]: {"6h"},
            OWN_DIR["SE"]: set(),
            OWN_DIR["SW"]: set(),
            OPP_DIR["N"]: {"8b", "8c", "8d", "8e", "8f", "8g", "8h", "8i", "5b"},
            OPP_ATTACK: {"8b", "8c", "8d", "8e", "8f", "8g", "8h", "8i", "4a", "6a", "4b", "5b", "6b"},
            KIND_L: {"1i": 1, "8a": -1},
            OWN_HIMO: {"9i"},
            OPP_HIMO: set(),
            OWN_ATARI: set(),
            OPP_ATARI: set(),
        },
    ),
    # Black gold 5h pinned to its king 5i by the white rook 5a: it still attacks; the rook's ray stops
    # on the gold (it does not reach the king). White's rook also defends its king on 9a.
    "pinned gold": (
        "k3r4/9/9/9/9/9/9/4G4/4K4 b - 1",
        {
            OWN_ATTACK: {"5g", "4g", "6g", "4h", "6h", "5i", "4i", "6i", "5h"},
            OWN_DIR["N"]: {"5g", "5h"},
            OWN_DIR["S"]: {"5i"},
            OPP_ATTACK: {"5b", "5c", "5d", "5e", "5f", "5g", "5h"}
            | {"6a", "7a", "8a", "9a", "4a", "3a", "2a", "1a"}
            | {"8b", "9b"},
            OPP_DIR["N"]: {"5b", "5c", "5d", "5e", "5f", "5g", "5h", "9b"},
            OPP_DIR["E"]: {"6a", "7a", "8a", "9a"},
            OPP_DIR["W"]: {"4a", "3a", "2a", "1a", "8a"},
            OPP_DIR["S"]: set(),
            OPP_DIR["NE"]: set(),
            OPP_DIR["NW"]: {"8b"},
            OWN_HIMO: {"5h", "5i"},
            OWN_ATARI: {"5h"},
            OPP_HIMO: {"9a"},
            OPP_ATARI: set(),
        },
    ),
    # Promoted pieces: black tokin 5e (gold moves), black horse 2h (diagonal slides + orthogonal steps),
    # white dragon 8c (orthogonal slides + diagonal steps), white promoted silver 5g (gold moves, flipped).
    "promoted pieces": (
        "8k/9/1+r7/9/4+P4/9/4+s4/7+B1/K8 b - 1",
        {
            PROMOTED: {"5e", "2h", "8c", "5g"},
            KIND_P: {"5e": 1},
            KIND_B: {"2h": 1},
            KIND_R: {"8c": -1},
            KIND_S: {"5g": -1},
            KIND_G: {},
            KIND_K: {"9i": 1, "1a": -1},
            OWN_DIR["N"]: {"2g", "5d", "9h"},
            OWN_DIR["NE"]: {"1g", "4d", "8h"},
            OWN_DIR["E"]: {"1h", "4e", "8i"},
            OWN_DIR["SE"]: {"1i"},
            OWN_DIR["S"]: {"2i", "5f"},
            OWN_DIR["SW"]: {"3i"},
            OWN_DIR["W"]: {"3h", "6e"},
            OWN_DIR["NW"]: {"3g", "4f", "5e", "6d"},
            OPP_DIR["N"]: {"8d", "8e", "8f", "8g", "8h", "8i", "5h", "1b"},
            OPP_DIR["NE"]: {"9d", "6h", "2b"},
            OPP_DIR["E"]: {"9c", "6g", "2a"},
            OPP_DIR["SE"]: {"9b"},
            OPP_DIR["S"]: {"8b", "8a", "5f"},
            OPP_DIR["SW"]: {"7b"},
            OPP_DIR["W"]: {"7c", "6c", "5c", "4c", "3c", "2c", "1c", "4g"},
            OPP_DIR["NW"]: {"7d", "4h"},
            OWN_HIMO: {"5e"},
            OPP_HIMO: set(),
            OWN_ATARI: set(),
            OPP_ATARI: set(),
        },
    ),
    # Knights: black 5e (both jumps), black 1e (its knight-E jump would leave the board); white 5c and 1g
    # jump toward rank i; white's knight-E is toward the 9-file in absolute terms.
    "knights": (
        "4k4/9/4n4/9/4N3N/9/8n/9/4K4 b - 1",
        {
            KIND_N: {"5e": 1, "1e": 1, "5c": -1, "1g": -1},
            OWN_DIR["knight-E"]: {"4c"},
            OWN_DIR["knight-W"]: {"6c", "2c"},
            OPP_DIR["knight-E"]: {"6e", "2i"},
            OPP_DIR["knight-W"]: {"4e"},
            OWN_ATTACK: {"4c", "6c", "2c", "4h", "5h", "6h", "4i", "6i"},
            OPP_ATTACK: {"6e", "4e", "2i", "4a", "6a", "4b", "5b", "6b"},
            OWN_ATARI: set(),
            OPP_ATARI: set(),
        },
    ),
    # White to move after 1. 7g7f: the board is seen rotated. Black's bishop diagonal is open up to the
    # pawn on 3c (in black's own "NE"), which is in atari and defended by white's knight and bishop.
    "white to move": (
        "lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2",
        {
            KIND_K: {"5a": 1, "5i": -1},
            KIND_R: {"8b": 1, "2h": -1},
            KIND_B: {"2b": 1, "8h": -1},
            OPP_DIR["NE"]: {"7g", "6f", "5e", "4d", "3c"} | {"6h", "5h", "4h", "3h", "2h"},
            OWN_ATARI: {"3c"},
            OPP_ATARI: set(),
        },
    ),
}


def check_case(planes: np.ndarray, sfen: str, expected: dict) -> None:
    turn = cshogi.Board(sfen).turn
    for channel, cells in expected.items():
        want = cells if isinstance(cells, dict) else dict.fromkeys(cells, 1.0)
        got = board_cells(planes[channel], turn)
        assert got == pytest.approx(want), f"channel {channel} ({CHANNEL_NAMES[channel]}) of {sfen}"


@pytest.mark.parametrize("name", CASES)
def test_hand_made_case(name):
    sfen, expected = CASES[name]
    board = make_board(sfen)
    planes = F.board_planes(board)
    check_case(planes, sfen, expected)
    # The same position through the batch path, and the reference agrees with the hand expectations.
    check_case(F.boards_planes([board])[0], sfen, expected)
    check_case(reference_planes(board), sfen, expected)
    assert_planes_equal(reference_planes(board), planes, sfen)


def test_white_to_move_raw_cells():
    """White to move: rows/columns of the raw tensor, without the cell() helper."""
    board = make_board(CASES["white to move"][0])
    p = F.board_planes(board)
    assert p[KIND_K, 9, 4] == 1  # white's own king, 5a -> own frame file 5, rank i
    assert p[KIND_K, 1, 4] == -1  # black's king 5i -> own frame rank a
    assert p[KIND_P, 4, 2] == -1  # black's pawn 7f = (file 6, rank 5) -> (2, 3): row 4, column 2
    assert p[KIND_R, 8, 1] == 1  # white's rook 8b = (7, 1) -> (1, 7)
    assert p[KIND_B, 8, 7] == 1  # white's bishop 2b = (1, 1) -> (7, 7)
    assert p[KIND_L, 9, 0] == 1 and p[KIND_L, 9, 8] == 1  # white's lances 9a, 1a
    assert p[OWN_DIR["N"], 6, 6] == 1  # white's pawn 3c attacks 3d: own frame (6, 5)
    assert p[OWN_DIR["N"], 5, 6] == 0  # ... not 3e (own frame (6, 4)): a pawn steps once
    assert p[OPP_DIR["N"], 5, 2] == 1  # black's pawn 7f attacks 7e = (6, 4) -> (2, 4)
    assert p[OPP_DIR["NE"], 7, 6] == 1  # black's bishop reaches 3c ...
    assert p[OPP_DIR["NE"], 8, 7] == 0  # ... and stops there (2b is not attacked)
    assert p[OWN_ATARI, 7, 6] == 1 and p[OWN_HIMO, 7, 6] == 1
    # Row 10 is the own hand, row 0 the opponent's; both empty here. Board mask.
    assert not p[:, 0].any() and not p[:, 10].any()
    assert (p[BOARD, 1:10] == 1).all() and not p[BOARD, [0, 10]].any()


def test_white_to_move_equals_black_to_move_mirror():
    sfen = CASES["white to move"][0]
    mirror = rotate_sfen(sfen)
    assert mirror.startswith("lnsgkgsnl/1r5b1/pppppp1pp/6p2/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b")
    np.testing.assert_array_equal(F.board_planes(make_board(sfen)), F.board_planes(make_board(mirror)))


# --- hands --------------------------------------------------------------------------------------------

MIXED_HANDS = "4k4/9/9/9/9/9/9/9/4K4 {} 2RB4G2S3N10Pb2sn4l8p 1"
BLACK_HAND = [10 / 18, 0, 3 / 4, 2 / 4, 4 / 4, 1 / 2, 2 / 2]  # P L N S G B R
WHITE_HAND = [8 / 18, 4 / 4, 1 / 4, 2 / 4, 0, 1 / 2, 0]


@pytest.mark.parametrize("turn", ["b", "w"])
def test_hand_rows(turn):
    board = make_board(MIXED_HANDS.format(turn))
    p = F.board_planes(board)
    own, opp = (BLACK_HAND, WHITE_HAND) if turn == "b" else (WHITE_HAND, BLACK_HAND)
    for kind in range(7):
        np.testing.assert_allclose(p[kind, 10], np.full(9, own[kind]), rtol=1e-6, err_msg=f"own {kind}")
        np.testing.assert_allclose(p[kind, 0], np.full(9, -opp[kind]), rtol=1e-6, err_msg=f"opp {kind}")
    # Kings are never in hand; nothing but the kinds is written on the hand rows.
    assert not p[KIND_K, [0, 10]].any()
    assert not p[PROMOTED:, [0, 10]].any()
    assert_planes_equal(reference_planes(board), p, board.sfen())


def test_full_hand():
    board = make_board("4k4/9/9/9/9/9/9/9/4K4 b 2R2B4G4S4N4L18P 1")
    p = F.board_planes(board)
    assert (p[0:7, 10] == 1).all()
    assert not p[:, 0].any()
    white = F.board_planes(make_board("4k4/9/9/9/9/9/9/9/4K4 w 2R2B4G4S4N4L18P 1"))
    assert (white[0:7, 0] == -1).all()
    assert not white[:, 10].any()


def test_board_mask_and_empty_hand_rows_in_startpos():
    p = F.board_planes(cshogi.Board())
    expected = np.zeros((11, 9), np.float32)
    expected[1:10] = 1
    np.testing.assert_array_equal(p[BOARD], expected)
    assert not p[:BOARD, 0].any() and not p[:BOARD, 10].any()
    # Start position: own pawns on rank g, opponent pawns on rank c.
    np.testing.assert_array_equal(p[KIND_P, 7], np.ones(9))
    np.testing.assert_array_equal(p[KIND_P, 3], -np.ones(9))
    assert not p[PROMOTED].any()
    # Himo: the 9g pawn is defended by the 9i lance, the 9i lance by the bishop, the 2i knight by the
    # rook; the 1i lance by nothing. The same, rotated, for the opponent.
    himo = {sq: p[OWN_HIMO][cell(sq, cshogi.BLACK)] for sq in ("9g", "9i", "2i", "1i")}
    assert himo == {"9g": 1, "9i": 1, "2i": 1, "1i": 0}
    opp_himo = {sq: p[OPP_HIMO][cell(sq, cshogi.BLACK)] for sq in ("1c", "1a", "8a", "9a")}
    assert opp_himo == {"1c": 1, "1a": 1, "8a": 1, "9a": 0}
    assert not p[OWN_ATARI].any() and not p[OPP_ATARI].any()


# --- the hand-made expectations are strong enough to catch wrong attack planes -----------------------


def mislabel_opponent_directions(planes: np.ndarray) -> np.ndarray:
    """Correct opponent attacks, but labelled with the direction as seen in the own frame (a bug)."""
    out = planes.copy()
    opposite = {"N": "S", "NE": "SW", "E": "W", "SE": "NW", "S": "N", "SW": "NE", "W": "E", "NW": "SE"}
    for d, o in opposite.items():
        out[OPP_DIR[d]] = planes[OPP_DIR[o]]
    return out


MUTANTS = {
    "sliders do not stop": lambda b: reference_planes(b, slider_stops=False),
    "opponent not flipped": lambda b: reference_planes(b, flip_opponent=False),
    "opponent directions mislabelled": lambda b: mislabel_opponent_directions(reference_planes(b)),
}


@pytest.mark.parametrize(
    "name, mutant",
    [
        ("blocked rook", "sliders do not stop"),
        ("blocked rook", "opponent not flipped"),
        ("blocked rook", "opponent directions mislabelled"),
        ("pinned gold", "sliders do not stop"),
        ("pinned gold", "opponent not flipped"),
        ("promoted pieces", "opponent not flipped"),
        ("promoted pieces", "opponent directions mislabelled"),
        ("knights", "opponent not flipped"),
        ("white to move", "sliders do not stop"),
        ("white to move", "opponent directions mislabelled"),
    ],
)
def test_hand_made_expectations_reject_wrong_attack_planes(name, mutant):
    sfen, expected = CASES[name]
    wrong = MUTANTS[mutant](make_board(sfen))
    with pytest.raises(AssertionError):
        check_case(wrong, sfen, expected)


def test_reference_comparison_rejects_wrong_attack_planes(reference_sample):
    """The reference comparison itself would notice each kind of bug on the teacher sample."""
    _, boards, expected = reference_sample
    for mutant in MUTANTS.values():
        assert any(not np.array_equal(mutant(b), e) for b, e in zip(boards[:50], expected[:50], strict=True))


def test_empty_batch():
    out = F.planes(F.hcp_arrays(np.empty((0, 32), np.uint8)))
    assert out.shape == (0, *F.SHAPE) and out.dtype == np.float32
