"""The search's own board: a shogi position as one int64 array that compiled code makes moves on.

cshogi's board cannot be reached from numba, so every leaf of a search used to cost several Python calls into it
(push the line, the legal moves, the pieces, pop). This board lives in a flat array that compiled loops read and
write directly; cshogi stays for everything around the search (parsing, the root, records) and is the oracle the
tests hold this board against (tests/test_playout_board.py): the legal moves, as full cshogi moves, on random,
teacher, in-check and mate-problem positions, and perft from the start position.

This module is the board itself: its layout, tables and keys, the writes of a square (:func:`put`), a move
(:func:`push`), a state made from cshogi's (:func:`from_board`), and the rule facts of a square (the rank from a
side's far end, its zone, a pawn on a file). What reads the board lives above it: attacks, checks and pins in
:mod:`~messiah.playout.attacks`, the legal moves (and the pawn-drop mate rule) in :mod:`~messiah.playout.movegen`,
a line's history and its repetition verdicts in :mod:`~messiah.playout.history`.

The layout (``STATE`` int64 slots):

- ``[0, 81)``: the piece on each square as a cshogi piece code (0 empty, 1-14 black, 17-30 white), squares
  numbered as cshogi's (``file * 9 + rank``, file 0 = the 1-file, rank 0 = rank a), so the feature planes read
  it as they read ``cshogi.Board.pieces``;
- ``[HAND, HAND + 14)``: black's then white's pieces in hand, in cshogi's hand order P L N S G B R;
- ``TURN`` (0 black, 1 white), ``KING + colour`` (the king's square, -1 where a tsume problem has none),
  ``PLY`` (cshogi's move number), ``BOARD_KEY`` and ``HAND_KEY`` (Zobrist keys: the board with the side to move,
  and both hands; kept apart because a repetition compares boards first and hands second);
- ``OCCUPIED`` and ``OCCUPIED + 1``: the occupied squares as a bit board, squares 0-63 then 64-80 (the bit
  patterns held in int64), so that the attack queries (:mod:`~messiah.playout.attacks`) find the nearest piece
  along a line without a pass over the board; ``SLIDERS + 2 * colour`` and the slot after it: the squares of that
  colour's sliding pieces (lances, bishops, rooks and their promotions), likewise. :func:`finish` makes them and
  :func:`push` and :func:`put` keep them: every write of a square goes through one of them.

Moves are cshogi's 32-bit moves: ``to | from << 7 | promote << 14 | moved type << 16 | captured type << 20``
for a board move, ``to | (80 + piece type) << 7`` for a drop (cshogi's piece types, gold after rook), so a move
of this board is a move of cshogi's and the search's tree, USI output and records need no translation.

Directions are absolute: 0-7 are the king's steps N NE E SE S SW W NW as black sees them (N toward rank a,
E toward the 1-file), 8-9 black's knight jumps and 10-11 white's. A white piece moves as the black one rotated
180 degrees.
"""

from __future__ import annotations

import cshogi
import numpy as np

from messiah import features
from messiah.jit import njit
from messiah.rules import MAX_LEGAL_MOVES

# --- the state's layout
HAND = 81
TURN = 95
KING = 96  # + colour
PLY = 98
BOARD_KEY = 99
HAND_KEY = 100
OCCUPIED = 101  # + 0, 1
SLIDERS = 103  # + 2 * colour + 0, 1
STATE = 112  # slots (a little spare, a multiple of eight)
# Room for a position's legal moves: the most any position has, rounded up to a multiple of eight (600), since
# compiled code writes these buffers without bounds checks.
MAX_MOVES = (MAX_LEGAL_MOVES + 7) // 8 * 8

BLACK, WHITE = 0, 1
WHITE_CODE = 16  # a white piece's cshogi code is the black one's plus this
PROMOTED = 8  # a promoted piece type is the unpromoted one's plus this
PAWN, LANCE, KNIGHT, SILVER, BISHOP, ROOK, GOLD, KING_TYPE = range(1, 9)
HAND_TYPES = np.array([PAWN, LANCE, KNIGHT, SILVER, GOLD, BISHOP, ROOK], np.int64)  # cshogi's hand order
TYPE_HAND = np.full(16, -1, np.int64)  # piece type (promoted or not) -> the hand slot it goes to when captured
for _h, _t in enumerate(HAND_TYPES):
    TYPE_HAND[_t] = _h
    if _t not in (GOLD,):
        TYPE_HAND[_t + PROMOTED] = _h
DROP_FROM = 80  # a drop's from field is this plus the piece type

# --- directions: (file delta, rank delta). Black's are the feature planes' own-frame directions (0-7 the king's
# steps, 8-9 the knight's jumps), and white's knight jumps are 10-11.
DELTAS = np.concatenate([features.DIRECTIONS, [(1, 2), (-1, 2)]]).astype(np.int64)
NUM_DIRECTIONS = 12
KING_DIRECTIONS = 8
OPPOSITE = np.array([(d + 4) % 8 for d in range(KING_DIRECTIONS)], np.int64)
KNIGHT_JUMPS = np.array([(8, 9), (10, 11)], np.int64)  # [colour]: the jumps of that colour's knight
NEXT = np.full((81, NUM_DIRECTIONS), -1, np.int64)  # the square one step away, -1 off the board
for _sq in range(81):
    for _d, (_df, _dr) in enumerate(DELTAS):
        _f, _r = _sq // 9 + _df, _sq % 9 + _dr
        if 0 <= _f < 9 and 0 <= _r < 9:
            NEXT[_sq, _d] = _f * 9 + _r

N, NE, E, SE, S, SW, W, NW = range(8)
_ROTATED = [OPPOSITE[d] for d in range(8)] + [10, 11, 8, 9]  # a black direction as white's piece moves it


def _rotate(mask: int) -> int:
    return sum(1 << _ROTATED[d] for d in range(NUM_DIRECTIONS) if mask >> d & 1)


# By cshogi piece code (0-31): the directions a piece steps one square in, and those it slides along: black's are
# the feature planes' tables (by piece type, in the same directions), white's those rotated.
STEPS = np.zeros(32, np.int64)
SLIDES = np.zeros(32, np.int64)
for _t in range(1, 15):
    STEPS[_t], STEPS[_t + WHITE_CODE] = features.STEPS[_t], _rotate(int(features.STEPS[_t]))
    SLIDES[_t], SLIDES[_t + WHITE_CODE] = features.SLIDES[_t], _rotate(int(features.SLIDES[_t]))
SLIDING = sum(1 << _c for _c in range(32) if SLIDES[_c])  # the codes of the sliding pieces, as bits

# --- Zobrist keys (a fixed seed: keys are the same in every process, as the tree's reuse and the cache need)
_rng = np.random.default_rng(20261202)
ZOBRIST = _rng.integers(-(2**63), 2**63 - 1, (32, 81), dtype=np.int64)
ZOBRIST_HAND = _rng.integers(-(2**63), 2**63 - 1, (2, 7, 19), dtype=np.int64)  # [colour, hand slot, count]
ZOBRIST_TURN = np.int64(_rng.integers(-(2**63), 2**63 - 1, dtype=np.int64))
for _c in range(2):
    ZOBRIST_HAND[_c, :, 0] = 0  # an empty hand slot adds nothing

# How the mate searches' functions compile. Most of them make no array and only read and write views of the
# caller's (a state row states[k], a move list, a slice of scratch), and each such view costs numba's reference
# counts an atomic increment and decrement: 18% of mate in five's compiled time. Those run without the reference
# counts (numba's ``_nrt`` option), ``NO_REFCOUNTS``; they may take and pass views, never make an array or copy one
# by a slice assignment (copy element by element). A function that allocates says ``REFCOUNTED``. Every compiled
# function of the core says which: one that allocated made its callers slower too (_droppable's move list cost every
# mate search about 10%, a954991).
NO_REFCOUNTS = {"cache": True, "nogil": True, "_nrt": False}
REFCOUNTED = {"cache": True, "nogil": True, "_nrt": True}


@njit(**NO_REFCOUNTS)
def colour_of(code):
    """0 for a black piece, 1 for a white one (the code must not be 0)."""
    return 1 if code >= WHITE_CODE else 0


@njit(**REFCOUNTED)
def finish(b):
    """Fill in the kings and the keys of a state whose pieces, hands, turn and ply are set."""
    b[KING] = b[KING + 1] = -1
    key = np.int64(0)
    for sq in range(81):
        code = b[sq]
        if code:
            key ^= ZOBRIST[code, sq]
            if code & 15 == KING_TYPE:
                b[KING + colour_of(code)] = sq
    if b[TURN] == WHITE:
        key ^= ZOBRIST_TURN
    b[BOARD_KEY] = key
    hand = np.int64(0)
    for c in range(2):
        for h in range(7):
            hand ^= ZOBRIST_HAND[c, h, b[HAND + 7 * c + h]]
    b[HAND_KEY] = hand
    b[OCCUPIED : SLIDERS + 4] = 0
    for sq in range(81):
        code = b[sq]
        b[sq] = 0
        put(b, sq, code)


@njit(**NO_REFCOUNTS)
def put(b, sq, code):
    """Put the piece ``code`` (0: none) on ``sq``, the bit boards kept: how the rules and the mate searches change a
    square for a moment, to judge a position as if a piece stood there or had left."""
    word = sq >> 6
    bit = np.int64(1) << (sq & 63)
    old = b[sq]
    if SLIDING >> old & 1:
        b[SLIDERS + 2 * colour_of(old) + word] &= ~bit
    b[sq] = code
    if code:
        b[OCCUPIED + word] |= bit
        if SLIDING >> code & 1:
            b[SLIDERS + 2 * colour_of(code) + word] |= bit
    else:
        b[OCCUPIED + word] &= ~bit


def from_board(board: cshogi.Board, out: np.ndarray | None = None) -> np.ndarray:
    """The state of a cshogi board (its position, not its history), written into ``out`` when given."""
    b = np.zeros(STATE, np.int64) if out is None else out
    b[:81] = np.frombuffer(bytes(board.pieces), np.int8)
    b[HAND : HAND + 14] = np.asarray(board.pieces_in_hand, np.int64).reshape(14)
    b[TURN] = board.turn
    b[PLY] = board.move_number
    finish(b)
    return b


@njit(**NO_REFCOUNTS)
def encode_move(frm, to, promote, moved, captured):
    """A board move in cshogi's encoding (the layout above): ``moved`` and ``captured`` are piece types (0: none)."""
    return to | frm << 7 | promote << 14 | moved << 16 | captured << 20


@njit(**NO_REFCOUNTS)
def board_move(b, frm, to, promote):
    """The cshogi move of the piece on ``frm`` to ``to`` on ``b``."""
    return encode_move(frm, to, promote, b[frm] & 15, b[to] & 15)


@njit(**NO_REFCOUNTS)
def drop_move(t, to):
    """The cshogi move that drops a piece of type ``t`` on ``to``."""
    return to | (DROP_FROM + t) << 7


@njit(**NO_REFCOUNTS)
def rank_from(colour, sq):
    """The rank of ``sq`` counted from ``colour``'s far side: 0 is the last rank, the one its pieces move toward."""
    return sq % 9 if colour == BLACK else 8 - sq % 9


@njit(**NO_REFCOUNTS)
def in_zone(colour, sq):
    """Whether ``sq`` is on the far three ranks for ``colour``: its promotion zone, and the camp an entering king
    counts pieces in."""
    return rank_from(colour, sq) <= 2


# The nearest rank to its far side (rank_from) an unpromoted piece may stand on, by piece type: a pawn or a lance
# needs a rank ahead of it, a knight two, so that it keeps a move. Drops and moves without promotion keep to it.
FIRST_RANK = np.zeros(16, np.int64)
FIRST_RANK[PAWN] = FIRST_RANK[LANCE] = 1
FIRST_RANK[KNIGHT] = 2


@njit(**NO_REFCOUNTS)
def keeps_a_move(t, colour, sq):
    """Whether an unpromoted piece of type ``t`` of ``colour`` may stand on ``sq`` (dropped, or moved there without
    promoting): it has a move left there."""
    return rank_from(colour, sq) >= FIRST_RANK[t]


@njit(**NO_REFCOUNTS)
def pawn_on_file(b, colour, sq, skip):
    """Whether ``colour`` has a pawn on the file of ``sq`` (the one on ``skip`` not counted; -1 counts all): a second
    pawn may not be dropped there."""
    pawn = PAWN + WHITE_CODE * colour
    f = sq // 9 * 9
    for s in range(f, f + 9):
        if b[s] == pawn and s != skip:
            return True
    return False


@njit(**NO_REFCOUNTS)
def push(b, move):
    """Make ``move`` (a legal move of the side to move) on ``b``: the pieces, hands, turn, ply, kings and keys."""
    us = b[TURN]
    to, frm = move & 0x7F, move >> 7 & 0x7F
    key, hand_key = b[BOARD_KEY], b[HAND_KEY]
    if frm >= DROP_FROM + 1 and frm < DROP_FROM + 8:
        code = frm - DROP_FROM + WHITE_CODE * us
        slot = HAND + 7 * us + TYPE_HAND[frm - DROP_FROM]
        h = slot - HAND - 7 * us
        hand_key ^= ZOBRIST_HAND[us, h, b[slot]] ^ ZOBRIST_HAND[us, h, b[slot] - 1]
        b[slot] -= 1
    else:
        code = b[frm]
        key ^= ZOBRIST[code, frm]
        put(b, frm, 0)
        captured = b[to]
        if captured:
            key ^= ZOBRIST[captured, to]
            h = TYPE_HAND[captured & 15]
            slot = HAND + 7 * us + h
            hand_key ^= ZOBRIST_HAND[us, h, b[slot]] ^ ZOBRIST_HAND[us, h, b[slot] + 1]
            b[slot] += 1
        if move >> 14 & 1:
            code += PROMOTED
        if code & 15 == KING_TYPE:
            b[KING + us] = to
    put(b, to, code)
    key ^= ZOBRIST[code, to] ^ ZOBRIST_TURN
    b[TURN] = 1 - us
    b[PLY] += 1
    b[BOARD_KEY] = key
    b[HAND_KEY] = hand_key
