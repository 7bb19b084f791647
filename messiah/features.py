"""Input feature planes: the reduced attack/threat planes of docs/method.md section 2.

Everything is seen from the side to move ("own"); when white is to move the board is rotated 180
degrees (``sq -> 80 - sq``), exactly as for move indices, so own pieces always advance toward rank a.

The tensor is ``(NUM_CHANNELS, 11, 9)``: 11 rows by 9 columns. Row 0 is the opponent's hand, rows 1..9
are ranks a..i (row = 1 + rank), row 10 is the side to move's hand; column = cshogi file index (0 = the
1-file). Hands on their own rows pass through the same convolutions as the board.

====  ==========================  ==============================================================
ch    name                        value
====  ==========================  ==============================================================
0-7   piece kind P L N S G B R K  board: +1 own piece, -1 opponent piece of that kind (promoted
                                  pieces count as their unpromoted kind). Hand rows, channels
                                  0-6 only: count / max count (18 P, 4 L N S G, 2 B R) on every
                                  cell of the row, + on the own-hand row, - on the opponent's.
8     promoted                    1 where a piece (either side) is promoted
9     own attack                  1 where the side to move attacks the square
10    opponent attack             1 where the opponent attacks the square
11-20 own attack by direction     1 where an own piece attacks the square moving in direction
                                  d: N NE E SE S SW W NW, knight-E, knight-W (own frame)
21-30 opponent attack by dir.     the same for the opponent, directions in the opponent's own
                                  frame (its "N" points toward rank i)
31    own himo                    own piece defended by another own piece
32    opponent himo               opponent piece defended by the opponent
33    own atari                   own piece attacked by the opponent
34    opponent atari              opponent piece attacked by the side to move
35    board                       1 on the 81 board cells, 0 on the hand rows
====  ==========================  ==============================================================

Directions are (file delta, rank delta) in the own frame: N = (0, -1), E = (-1, 0) (toward the 1-file),
knight-E = (-1, -2), knight-W = (+1, -2). Attacks are in the shogi sense: a pinned piece still attacks,
and a slider stops at the first occupied square, which it attacks. Kings attack. Attack planes are 0 on
the hand rows.

Two paths: :func:`board_planes` for one board (the search's fast path) and :func:`planes` for arrays of
positions (training), fed by :func:`board_arrays` or :func:`hcp_arrays`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import cshogi
import numpy as np
from numba import prange

from messiah.errors import DataError
from messiah.jit import njit

NUM_CHANNELS = 36
ROWS, COLS = 11, 9
SHAPE = (NUM_CHANNELS, ROWS, COLS)
FEATURE_VERSION = 1  # bump when the planes change; models record the version they were trained on

CH_PIECE = 0
CH_PROMOTED = 8
CH_ATTACK = 9  # + side (0 own, 1 opponent)
CH_DIRECTION = 11  # + 10 * side + direction
CH_HIMO = 31  # + side
CH_ATARI = 33  # + side
CH_BOARD = 35
NUM_DIRECTIONS = 10
HAND_MAX = np.array([18, 4, 4, 4, 4, 2, 2], np.float32)  # in cshogi hand order P L N S G B R

# (file delta, rank delta) in the own frame, in channel order.
DIRECTIONS = np.array(
    [(0, -1), (-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (-1, -2), (1, -2)], np.int64
)
N, NE, E, SE, S, SW, W, NW, KNIGHT_E, KNIGHT_W = range(NUM_DIRECTIONS)


def _bits(*directions: int) -> int:
    return sum(1 << d for d in directions)


_ORTHOGONAL = _bits(N, E, S, W)
_DIAGONAL = _bits(NE, SE, SW, NW)
_GOLD = _bits(N, NE, NW, E, W, S)
# Indexed by cshogi piece type (1..14): directions of one-square steps and of slides.
STEPS = np.zeros(15, np.int64)
SLIDES = np.zeros(15, np.int64)
STEPS[cshogi.PAWN] = _bits(N)
SLIDES[cshogi.LANCE] = _bits(N)
STEPS[cshogi.KNIGHT] = _bits(KNIGHT_E, KNIGHT_W)
STEPS[cshogi.SILVER] = _bits(N, NE, NW, SE, SW)
STEPS[cshogi.GOLD] = _GOLD
SLIDES[cshogi.BISHOP] = _DIAGONAL
SLIDES[cshogi.ROOK] = _ORTHOGONAL
STEPS[cshogi.KING] = _ORTHOGONAL | _DIAGONAL
for _t in (cshogi.PROM_PAWN, cshogi.PROM_LANCE, cshogi.PROM_KNIGHT, cshogi.PROM_SILVER):
    STEPS[_t] = _GOLD
STEPS[cshogi.PROM_BISHOP], SLIDES[cshogi.PROM_BISHOP] = _ORTHOGONAL, _DIAGONAL
STEPS[cshogi.PROM_ROOK], SLIDES[cshogi.PROM_ROOK] = _DIAGONAL, _ORTHOGONAL

# cshogi piece type -> piece-kind channel (P L N S G B R K); promoted types map to their base kind.
KIND_CHANNEL = np.full(15, -1, np.int64)
for _t, _c in zip(
    (cshogi.PAWN, cshogi.LANCE, cshogi.KNIGHT, cshogi.SILVER, cshogi.GOLD, cshogi.BISHOP, cshogi.ROOK,
     cshogi.KING), range(8), strict=True
):
    KIND_CHANNEL[_t] = _c
for _t in range(cshogi.PROM_PAWN, cshogi.PROM_ROOK + 1):
    KIND_CHANNEL[_t] = KIND_CHANNEL[_t - 8]
_WHITE_OFFSET = 16  # cshogi piece code = piece type (+16 for white)


@njit(cache=True, nogil=True)
def _write(pieces, hands, turn, out):
    """Fill ``out`` (zeroed, SHAPE) for one position: pieces = cshogi codes by square, hands (2, 7)."""
    own_kind = np.zeros(81, np.int64)  # piece type in the side-to-move frame, 0 = empty
    owner = np.zeros(81, np.int64)  # +1 own, -1 opponent
    for sq in range(81):
        code = pieces[sq]
        if code == 0:
            continue
        rel = sq if turn == 0 else 80 - sq
        white = code >= _WHITE_OFFSET
        own_kind[rel] = code - _WHITE_OFFSET if white else code
        owner[rel] = -1 if white == (turn == 0) else 1
    attacked = np.zeros((2, 81), np.bool_)
    for sq in range(81):
        t = own_kind[sq]
        if t == 0:
            continue
        f, r = sq // 9, sq % 9
        sign = owner[sq]
        side = 0 if sign > 0 else 1
        row = 1 + r
        out[KIND_CHANNEL[t], row, f] = sign
        if t >= 9:
            out[CH_PROMOTED, row, f] = 1.0
        for d in range(NUM_DIRECTIONS):
            bit = 1 << d
            step, slide = STEPS[t] & bit, SLIDES[t] & bit
            if step == 0 and slide == 0:
                continue
            df, dr = DIRECTIONS[d, 0] * sign, DIRECTIONS[d, 1] * sign
            tf, tr = f + df, r + dr
            while 0 <= tf < 9 and 0 <= tr < 9:
                target = tf * 9 + tr
                attacked[side, target] = True
                out[CH_DIRECTION + NUM_DIRECTIONS * side + d, 1 + tr, tf] = 1.0
                if slide == 0 or own_kind[target] != 0:
                    break
                tf += df
                tr += dr
    for sq in range(81):
        f, row = sq // 9, 1 + sq % 9
        out[CH_BOARD, row, f] = 1.0
        for side in range(2):
            if attacked[side, sq]:
                out[CH_ATTACK + side, row, f] = 1.0
        if owner[sq] != 0:
            side = 0 if owner[sq] > 0 else 1
            if attacked[side, sq]:
                out[CH_HIMO + side, row, f] = 1.0
            if attacked[1 - side, sq]:
                out[CH_ATARI + side, row, f] = 1.0
    own, opp = (0, 1) if turn == 0 else (1, 0)
    for h in range(7):
        out[CH_PIECE + h, ROWS - 1, :] = hands[own, h] / HAND_MAX[h]
        out[CH_PIECE + h, 0, :] = -hands[opp, h] / HAND_MAX[h]


@njit(cache=True, nogil=True)
def _write_one(pieces, hands, turn, out):
    out[:] = 0.0
    _write(pieces, hands, turn, out)


@njit(cache=True, parallel=True, nogil=True)
def _write_batch(pieces, hands, turns, out):
    for i in prange(pieces.shape[0]):
        out[i] = 0.0
        _write(pieces[i], hands[i], turns[i], out[i])


# Waking the thread pool costs more than a few positions, and its threads then spin and take the core the
# evaluator needs: small batches (the searches' leaves) run on the calling thread. (A separate function:
# two dispatchers of one function would share one cache entry.)
@njit(cache=True, nogil=True)
def _write_batch_serial(pieces, hands, turns, out):
    for i in range(pieces.shape[0]):
        out[i] = 0.0
        _write(pieces[i], hands[i], turns[i], out[i])


PARALLEL_MIN = 64


class PositionArrays(NamedTuple):
    """Positions as arrays: the batch input of :func:`planes`.

    pieces: (N, 81) int8, cshogi piece codes by square; hands: (N, 2, 7) int8, [black, white] counts in
    cshogi hand order; turns: (N,) int8, cshogi.BLACK or cshogi.WHITE.
    """

    pieces: np.ndarray
    hands: np.ndarray
    turns: np.ndarray

    @staticmethod
    def empty(n: int) -> PositionArrays:
        return PositionArrays(np.zeros((n, 81), np.int8), np.zeros((n, 2, 7), np.int8), np.zeros(n, np.int8))

    def set(self, i: int, board: cshogi.Board) -> None:
        """Copy ``board`` into row ``i``."""
        # through bytes: numpy converts 81 Python ints one by one (3 us a leaf); bytes() and frombuffer take 1
        self.pieces[i] = np.frombuffer(bytes(board.pieces), np.int8)
        self.hands[i] = board.pieces_in_hand
        self.turns[i] = board.turn


def board_arrays(boards: Iterable[cshogi.Board]) -> PositionArrays:
    """Copy boards into :class:`PositionArrays`."""
    boards = list(boards)
    arrays = PositionArrays.empty(len(boards))
    for i, board in enumerate(boards):
        arrays.set(i, board)
    return arrays


def hcp_arrays(hcps: np.ndarray) -> PositionArrays:
    """Decode HuffmanCodedPos records (cshogi ``hcp`` field, shape (N, 32)) into arrays.

    Raises ValueError naming the record if one does not decode to a valid position.
    """
    arrays = PositionArrays.empty(len(hcps))
    board = cshogi.Board()
    for i in range(len(hcps)):
        try:
            board.set_hcp(hcps[i])
        except RuntimeError as e:
            raise DataError(f"record {i} is not a valid HuffmanCodedPos: {e}") from None
        arrays.set(i, board)
    return arrays


def planes(arrays: PositionArrays, out: np.ndarray | None = None) -> np.ndarray:
    """Feature planes for a batch: float32 (N, *SHAPE). Batches of ``PARALLEL_MIN`` or more use all cores."""
    n = len(arrays.turns)
    if out is None:
        out = np.empty((n, *SHAPE), np.float32)
    kernel = _write_batch if n >= PARALLEL_MIN else _write_batch_serial
    kernel(arrays.pieces, arrays.hands, arrays.turns, out)
    return out


# The left-right mirror (file -> 8 - file) of a position's planes: the columns reversed, and each
# direction-specific attack plane swapped with its mirror image (NE <-> NW, E <-> W, knight-E <->
# knight-W; both sides' frames mirror the same way). Shogi's rules are symmetric under it, so training
# uses mirrored positions, with mirrored moves (messiah.moves.mirror_indices), as extra samples.
_MIRROR_DIRECTION = np.array([next(j for j, m in enumerate(DIRECTIONS) if (m[0], m[1]) == (-d[0], d[1]))
                              for d in DIRECTIONS])
_MIRROR_SIDES = np.concatenate([_MIRROR_DIRECTION, NUM_DIRECTIONS + _MIRROR_DIRECTION])  # own, then opponent
MIRROR_CHANNELS = np.concatenate([np.arange(CH_DIRECTION), CH_DIRECTION + _MIRROR_SIDES,
                                  np.arange(CH_HIMO, NUM_CHANNELS)])


def mirror_planes(x: np.ndarray) -> np.ndarray:
    """The planes of the left-right mirrored positions of planes ``x`` (..., 36, 11, 9): a new array."""
    return np.ascontiguousarray(x[..., MIRROR_CHANNELS, :, ::-1])


def board_planes(board: cshogi.Board, out: np.ndarray | None = None) -> np.ndarray:
    """Feature planes of one board: float32 SHAPE, written into ``out`` when given (no allocation)."""
    if out is None:
        out = np.empty(SHAPE, np.float32)
    _write_one(
        np.fromiter(board.pieces, np.int8, 81), np.array(board.pieces_in_hand, np.int8), board.turn, out
    )
    return out


def boards_planes(boards: Iterable[cshogi.Board]) -> np.ndarray:
    """Feature planes for a list of boards: float32 (N, *SHAPE)."""
    return planes(board_arrays(boards))
