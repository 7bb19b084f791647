"""Move indices: the row of the Magic Vec (the move embedding table) that scores a move.

A move is one-hot encoded as ``index = 88*81*promote + 88*to + from`` (docs/method.md section 1):

- ``from`` is 0..80 for a board square and 81..87 for a drop of pawn, lance, knight, silver, gold,
  bishop, rook (cshogi's hand-piece order, ``cshogi.HPAWN`` .. ``cshogi.HROOK``);
- ``to`` is 0..80; ``promote`` is 0 or 1.

Squares are cshogi's (``file * 9 + rank``, file 0 = the 1-file, rank 0 = rank a) seen from the side to
move: when white is to move the board is rotated 180 degrees (``sq -> 80 - sq``), so a row of the table
means the same move shape for both colours.
"""

from __future__ import annotations

import cshogi
import numpy as np

from messiah.jit import njit

NUM_SQUARES = 81
NUM_FROM = 88  # 81 squares + 7 drop kinds
NUM_MOVE_INDICES = NUM_FROM * NUM_SQUARES * 2  # 14,256 rows of the Magic Vec

# cshogi's move bits: to = bits 0-6, from = bits 7-13, promote = bit 14. A drop's from is 80 + piece
# type, and cshogi's piece types order gold last (P L N S B R G), so drops are remapped to hand order.
_TO_MASK = 0x7F
_FROM_SHIFT = 7
_PROMOTE_SHIFT = 14
_DROP_FROM = {80 + cshogi.hand_piece_to_piece_type(h): NUM_SQUARES + h for h in cshogi.HAND_PIECES}


def _from_table(rotate: bool) -> np.ndarray:
    table = np.zeros(128, np.int64)
    table[:NUM_SQUARES] = (80 - np.arange(NUM_SQUARES)) if rotate else np.arange(NUM_SQUARES)
    for raw, from_index in _DROP_FROM.items():
        table[raw] = from_index
    return table


# Indexed by cshogi's raw from/to fields; [colour] picks the frame.
_FROM = (_from_table(False), _from_table(True))
_TO = (np.arange(128, dtype=np.int64), (80 - np.arange(128, dtype=np.int64)))
_PROMOTE_STRIDE = NUM_FROM * NUM_SQUARES


_FROM_TABLES = np.stack(_FROM)
_TO_TABLES = np.stack(_TO)


@njit(cache=True, nogil=True)
def _indices(moves, turn, from_tables, to_tables):
    out = np.empty(moves.shape[0], np.int64)
    for i in range(moves.shape[0]):
        m = np.int64(moves[i])
        out[i] = (
            _PROMOTE_STRIDE * ((m >> _PROMOTE_SHIFT) & 1)
            + NUM_FROM * to_tables[turn, m & _TO_MASK]
            + from_tables[turn, (m >> _FROM_SHIFT) & 0x7F]
        )
    return out


def move_indices(moves: np.ndarray, turn: int) -> np.ndarray:
    """Indices (int64) of cshogi moves (or move16s) played by ``turn`` (``cshogi.BLACK``/``WHITE``)."""
    return _indices(np.asarray(moves, np.uint32).reshape(-1), int(turn), _FROM_TABLES, _TO_TABLES)


def move_index(board: cshogi.Board, move: int) -> int:
    """Index of one move (cshogi move or move16) of the side to move in ``board``."""
    return int(move_indices(np.array([move]), board.turn)[0])


def legal_move_indices(board: cshogi.Board) -> tuple[np.ndarray, np.ndarray]:
    """The legal moves of ``board`` (uint32 cshogi moves) and their indices (int64), aligned.

    This is the per-node call of the searches: one C-level move generation and one compiled loop.
    """
    moves = np.fromiter(board.legal_moves, np.uint32)
    return moves, _indices(moves, board.turn, _FROM_TABLES, _TO_TABLES)  # move_indices' reshape cost 7 us here


def pad_indices(rows: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Ragged per-position index arrays as one (N, max M) int64 array padded with index 0, and the mask
    of real entries: the batch input of the network."""
    width = max((len(r) for r in rows), default=0)
    padded = np.zeros((len(rows), width), np.int64)
    mask = np.zeros((len(rows), width), bool)
    for i, r in enumerate(rows):
        padded[i, : len(r)] = r
        mask[i, : len(r)] = True
    return padded, mask


@njit(cache=True, nogil=True)
def _batch_indices(moves, offsets, turns, from_tables, to_tables):
    n = len(offsets) - 1
    width = 0
    for k in range(n):
        width = max(width, offsets[k + 1] - offsets[k])
    flat = np.empty(len(moves), np.int64)
    padded = np.zeros((n, width), np.int64)
    mask = np.zeros((n, width), np.bool_)
    for k in range(n):
        lo = offsets[k]
        flat[lo : offsets[k + 1]] = _indices(moves[lo : offsets[k + 1]], turns[k], from_tables, to_tables)
        for i in range(offsets[k + 1] - lo):
            padded[k, i] = flat[lo + i]
            mask[k, i] = True
    return flat, padded, mask


def batch_move_indices(moves: np.ndarray, offsets: np.ndarray,
                       turns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The legal moves of many positions end to end (uint32; position k's at [offsets[k], offsets[k + 1]), played
    by ``turns[k]``): their indices end to end, the same as one (N, max M) int64 array padded with index 0, and
    the mask of its real entries. One compiled call for a batch instead of :func:`move_indices` and
    :func:`pad_indices` per position."""
    return _batch_indices(moves, offsets, turns, _FROM_TABLES, _TO_TABLES)


def _mirror_table() -> np.ndarray:
    index = np.arange(NUM_MOVE_INDICES)
    promote, rest = np.divmod(index, _PROMOTE_STRIDE)
    to, frm = np.divmod(rest, NUM_FROM)
    square = np.arange(NUM_SQUARES)
    mirror_square = (8 - square // 9) * 9 + square % 9
    mirror_from = np.concatenate([mirror_square, np.arange(NUM_SQUARES, NUM_FROM)])  # drops stay drops
    return _PROMOTE_STRIDE * promote + NUM_FROM * mirror_square[to] + mirror_from[frm]


_MIRROR = _mirror_table()


def mirror_indices(indices: np.ndarray) -> np.ndarray:
    """The indices of the left-right mirrored moves (file -> 8 - file; drops keep their piece). The
    mirror commutes with the 180-degree rotation of white's frame, so it needs no side to move."""
    return _MIRROR[indices]


def decode_index(index: int, turn: int) -> str:
    """The USI string of the move shape ``index`` for the side ``turn`` (it may be illegal in a given
    position). Raises ValueError for an index out of range or one no move can have (a promoted drop)."""
    if not 0 <= index < NUM_MOVE_INDICES:
        raise ValueError(f"move index {index} is outside 0..{NUM_MOVE_INDICES - 1}")
    promote, rest = divmod(index, _PROMOTE_STRIDE)
    to, frm = divmod(rest, NUM_FROM)
    if turn == cshogi.WHITE:
        to = 80 - to
        if frm < NUM_SQUARES:
            frm = 80 - frm
    to_usi = cshogi.SQUARE_NAMES[to]
    if frm >= NUM_SQUARES:
        if promote:
            raise ValueError(f"move index {index} is a promoted drop")
        return f"{cshogi.HAND_PIECE_SYMBOLS[frm - NUM_SQUARES].upper()}*{to_usi}"
    return f"{cshogi.SQUARE_NAMES[frm]}{to_usi}{'+' if promote else ''}"


def index_to_move(board: cshogi.Board, index: int) -> int:
    """The legal move of ``board`` whose index is ``index``. Raises ValueError if there is none."""
    usi = decode_index(index, board.turn)
    move = board.move_from_usi(usi)
    # board.is_legal() accepts impossible promotions and dead-rank drops: ask the move generator instead
    if move == 0 or move not in set(board.legal_moves):
        raise ValueError(f"move index {index} ({usi}) is not a legal move in {board.sfen()}")
    return move


def possible_indices() -> np.ndarray:
    """Sorted indices of every move shape some piece could make on an empty board: a superset of the
    legal moves of any position. Rows of the Magic Vec outside it are never used, so the exported model
    stores only these.

    Board moves follow queen lines or the forward knight jump; a promotion needs the from or to square in
    ranks a..c (own frame); drops avoid the ranks where the piece could never move again.
    """
    out = []
    for frm in range(NUM_SQUARES):
        ff, fr = divmod(frm, 9)
        for to in range(NUM_SQUARES):
            tf, tr = divmod(to, 9)
            df, dr = tf - ff, tr - fr
            if (df, dr) == (0, 0):
                continue
            if df == 0 or dr == 0 or abs(df) == abs(dr) or (abs(df) == 1 and dr == -2):
                out.append(NUM_FROM * to + frm)
                if fr <= 2 or tr <= 2:
                    out.append(_PROMOTE_STRIDE + NUM_FROM * to + frm)
    lowest_rank = {cshogi.HPAWN: 1, cshogi.HLANCE: 1, cshogi.HKNIGHT: 2}
    for hand in cshogi.HAND_PIECES:
        for to in range(NUM_SQUARES):
            if to % 9 >= lowest_rank.get(hand, 0):
                out.append(NUM_FROM * to + NUM_SQUARES + hand)
    return np.array(sorted(out), np.int64)
