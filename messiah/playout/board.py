"""The search's own board: a shogi position as one int64 array that compiled code makes moves on.

cshogi's board cannot be reached from numba, so every leaf of a search used to cost several Python calls into it
(push the line, the legal moves, the pieces, pop). This board lives in a flat array that compiled loops read and
write directly; cshogi stays for everything around the search (parsing, the root, records) and is the oracle the
tests hold this board against (tests/test_playout_board.py): the legal moves, as full cshogi moves, on random,
teacher, in-check and mate-problem positions, and perft from the start position.

The layout (``STATE`` int64 slots):

- ``[0, 81)``: the piece on each square as a cshogi piece code (0 empty, 1-14 black, 17-30 white), squares
  numbered as cshogi's (``file * 9 + rank``, file 0 = the 1-file, rank 0 = rank a), so the feature planes read
  it as they read ``cshogi.Board.pieces``;
- ``[HAND, HAND + 14)``: black's then white's pieces in hand, in cshogi's hand order P L N S G B R;
- ``TURN`` (0 black, 1 white), ``KING + colour`` (the king's square, -1 where a tsume problem has none),
  ``PLY`` (cshogi's move number), ``BOARD_KEY`` and ``HAND_KEY`` (Zobrist keys: the board with the side to move,
  and both hands; kept apart because a repetition compares boards first and hands second);
- ``OCCUPIED`` and ``OCCUPIED + 1``: the occupied squares as a bit board, squares 0-63 then 64-80 (the bit
  patterns held in int64), so that the mate searches find the nearest piece along a line without a pass over the
  board; ``SLIDERS + 2 * colour`` and the slot after it: the squares of that colour's sliding pieces (lances,
  bishops, rooks and their promotions), likewise. :func:`finish` makes them and :func:`push` and :func:`put` keep
  them: every write of a square goes through one of them.

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
from messiah.rules import MAX_LEGAL_MOVES, REPETITION_PLIES

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

# --- a line's history, one row a position, for repetitions (cshogi's is_draw, Apery's isDraw)
H_BOARD_KEY, H_HAND_KEY = 0, 1
H_HAND = 2  # 7 slots: the side to move's hand, to tell a superior repetition from an inferior one
H_CHECKS = 9  # + colour: that colour's unbroken run of checking moves, 2 a move (cshogi's continuousCheck)
H_PLIES = 11  # plies since the position the game was set up from (cshogi's pliesFromNull)
H_TURN = 12
HISTORY_SLOTS = 13
MAX_LINE = 1024  # plies a search's line may add to a history: the deepest descent (search.tree.MAX_DEPTH)
# cshogi's verdicts (Board.is_draw), for the side to move
NOT_REPETITION, REPETITION_DRAW, REPETITION_WIN, REPETITION_LOSE, REPETITION_SUPERIOR, REPETITION_INFERIOR = range(6)

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
def attacked(b, sq, by):
    """Whether a piece of colour ``by`` attacks ``sq`` (pinned pieces attack; a king attacks)."""
    for d in range(KING_DIRECTIONS):
        s = NEXT[sq, d]
        toward = OPPOSITE[d]  # the direction the attacker moves in to reach sq
        near = True
        while s >= 0:
            code = b[s]
            if code:
                if colour_of(code) == by:
                    if near and STEPS[code] >> toward & 1:
                        return True
                    if SLIDES[code] >> toward & 1:
                        return True
                break
            near = False
            s = NEXT[s, d]
    knight = KNIGHT + WHITE_CODE * by
    for j in range(2):  # the squares a knight of `by` jumps to sq from: the other colour's jumps from sq
        s = NEXT[sq, KNIGHT_JUMPS[1 - by, j]]
        if s >= 0 and b[s] == knight:
            return True
    return False


@njit(**NO_REFCOUNTS)
def in_check(b):
    """Whether the side to move's king is attacked (never, for a side with no king)."""
    us = b[TURN]
    king = b[KING + us]
    return king >= 0 and attacked(b, king, 1 - us)


@njit(**NO_REFCOUNTS)
def rank_from(colour, sq):
    """The rank of ``sq`` counted from ``colour``'s far side: 0 is the last rank, the one its pieces move toward."""
    return sq % 9 if colour == BLACK else 8 - sq % 9


@njit(**NO_REFCOUNTS)
def in_zone(colour, sq):
    """Whether ``sq`` is on the far three ranks for ``colour``: its promotion zone, and the camp an entering king
    counts pieces in."""
    return rank_from(colour, sq) <= 2


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
def _add_board_move(out, n, b, us, frm, to, code):
    """Append the moves of the piece ``code`` from ``frm`` to ``to``: with and without promotion as the rules
    allow. Returns the new count."""
    t = code & 15
    base = to | frm << 7 | t << 16 | (b[to] & 15) << 20
    if t <= ROOK:  # promotable
        far_to = rank_from(us, to)
        if in_zone(us, frm) or far_to <= 2:
            out[n] = base | 1 << 14
            n += 1
            # a piece that would have no move left must promote
            if (t == PAWN or t == LANCE) and far_to == 0:
                return n
            if t == KNIGHT and far_to <= 1:
                return n
    out[n] = base
    return n + 1


@njit(**NO_REFCOUNTS)
def _checks_and_pins(b, us, king, mask, pin):
    """The checkers of ``us``'s king: returns their count and fills ``mask`` with the squares a non-king move
    must end on to answer the check (the checker and, for a distant slider, the squares between), and ``pin``
    with the direction from the king of each pinned piece of ``us`` (-1 elsewhere)."""
    them = 1 - us
    checkers = 0
    for d in range(KING_DIRECTIONS):
        toward = OPPOSITE[d]
        s = NEXT[king, d]
        near = True
        shield = -1  # the first piece of ours on the ray
        while s >= 0:
            code = b[s]
            if code:
                if colour_of(code) == us:
                    if shield >= 0:
                        break
                    shield = s
                else:
                    if shield < 0 and ((near and STEPS[code] >> toward & 1) or SLIDES[code] >> toward & 1):
                        checkers += 1
                        r = NEXT[king, d]
                        while True:
                            mask[r] = True
                            if r == s:
                                break
                            r = NEXT[r, d]
                    elif shield >= 0 and SLIDES[code] >> toward & 1:
                        pin[shield] = d
                    break
            near = False
            s = NEXT[s, d]
    knight = KNIGHT + WHITE_CODE * them
    for j in range(2):
        s = NEXT[king, KNIGHT_JUMPS[us, j]]
        if s >= 0 and b[s] == knight:
            checkers += 1
            mask[s] = True
    return checkers


@njit(**REFCOUNTED)
def _board_moves(b, out):
    """The legal king and board-piece moves of the side to move, written to ``out``. Returns their count, the
    number of checkers of the side to move's king, and the check mask (see :func:`_checks_and_pins`)."""
    us = b[TURN]
    them = 1 - us
    king = b[KING + us]
    mask = np.zeros(81, np.bool_)
    pin = np.full(81, -1, np.int64)
    checkers = _checks_and_pins(b, us, king, mask, pin) if king >= 0 else 0
    n = 0
    if king >= 0:  # the king: to a square not attacked once it has left its own
        code = b[king]
        put(b, king, 0)
        steps = STEPS[code]
        for d in range(KING_DIRECTIONS):
            if steps >> d & 1:
                to = NEXT[king, d]
                if to >= 0 and (b[to] == 0 or colour_of(b[to]) != us) and not attacked(b, to, them):
                    out[n] = to | king << 7 | KING_TYPE << 16 | (b[to] & 15) << 20
                    n += 1
        put(b, king, code)
    if checkers >= 2:
        return n, checkers, mask
    for frm in range(81):
        code = b[frm]
        if code == 0 or colour_of(code) != us or frm == king:
            continue
        pinned = pin[frm]
        steps, slides = STEPS[code], SLIDES[code]
        for d in range(NUM_DIRECTIONS):
            step, slide = steps >> d & 1, slides >> d & 1
            if step == 0 and slide == 0:
                continue
            if pinned >= 0 and d != pinned and d != OPPOSITE[pinned]:
                continue  # a pinned piece moves only along its pin (knight jumps never)
            to = NEXT[frm, d]
            while to >= 0:
                target = b[to]
                if target and colour_of(target) == us:
                    break
                if checkers == 0 or mask[to]:
                    n = _add_board_move(out, n, b, us, frm, to, code)
                if target or slide == 0:
                    break
                to = NEXT[to, d]
    return n, checkers, mask


@njit(**NO_REFCOUNTS)
def _pawn_drop_mates(b, us, to, scratch):
    """Whether dropping a pawn of ``us`` on ``to`` (just in front of the opponent's king) would mate: the drop is
    then illegal (uchifuzume)."""
    them = 1 - us
    put(b, to, PAWN + WHITE_CODE * us)
    b[TURN] = them
    n, _, _ = _board_moves(b, scratch)
    b[TURN] = us
    put(b, to, 0)
    return n == 0


@njit(**REFCOUNTED)
def legal_moves(b, out):
    """The legal moves of the side to move as cshogi moves, written to ``out`` (MAX_MOVES long): returns their
    count. Board moves first (from the king, then by square), then drops."""
    n, checkers, mask = _board_moves(b, out)
    if checkers >= 2:
        return n
    us = b[TURN]
    them = 1 - us
    forward = -1 if us == BLACK else 1  # a pawn's step, in squares
    enemy_king = b[KING + them]
    pawn_files = np.zeros(9, np.bool_)
    for f in range(9):
        pawn_files[f] = pawn_on_file(b, us, f * 9, -1)
    scratch = np.empty(MAX_MOVES, np.uint32)
    for h in range(7):
        if b[HAND + 7 * us + h] == 0:
            continue
        t = HAND_TYPES[h]
        for to in range(81):
            if b[to] or (checkers and not mask[to]):
                continue
            far = rank_from(us, to)
            if (t == PAWN or t == LANCE) and far == 0:
                continue
            if t == KNIGHT and far <= 1:
                continue
            if t == PAWN:
                if pawn_files[to // 9]:
                    continue  # two pawns on a file
                if enemy_king == to + forward and to // 9 == enemy_king // 9 and _pawn_drop_mates(b, us, to, scratch):
                    continue
            out[n] = to | (DROP_FROM + t) << 7
            n += 1
    return n


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


@njit(**REFCOUNTED)
def perft(b, depth):
    """The number of move sequences of ``depth`` plies from ``b`` (a depth of 0 counts the position itself). The
    last ply is counted, not made (bulk counting), as perft programs do; ``b`` is left as it was."""
    if depth <= 0:
        return 1
    moves = np.empty((depth, MAX_MOVES), np.uint32)
    count = np.zeros(depth, np.int64)
    at = np.zeros(depth, np.int64)
    states = np.empty((depth, STATE), np.int64)
    states[0] = b
    count[0] = legal_moves(states[0], moves[0])
    if depth == 1:
        return count[0]
    total = 0
    ply = 0
    while ply >= 0:
        if at[ply] == count[ply]:
            ply -= 1
            continue
        move = moves[ply, at[ply]]
        at[ply] += 1
        child = ply + 1
        states[child] = states[ply]
        push(states[child], move)
        if child == depth - 1:
            total += legal_moves(states[child], moves[child])
        else:
            count[child] = legal_moves(states[child], moves[child])
            at[child] = 0
            ply = child
    return total


@njit(**NO_REFCOUNTS)
def _write_row(b, h):
    """The parts of a history row the position itself gives: its keys, side to move and that side's hand."""
    h[H_BOARD_KEY] = b[BOARD_KEY]
    h[H_HAND_KEY] = b[HAND_KEY]
    us = h[H_TURN] = b[TURN]
    for i in range(7):
        h[H_HAND + i] = b[HAND + 7 * us + i]


@njit(**NO_REFCOUNTS)
def remember_move(b, history, row, checking):
    """Write ``b`` into ``history[row]`` as the position after a move of ``history[row - 1]``'s, ``checking``
    telling whether that move gave check (a search that knows it saves asking the board)."""
    h = history[row]
    _write_row(b, h)
    us = b[TURN]
    before = history[row - 1]
    mover = 1 - us
    h[H_CHECKS + us] = before[H_CHECKS + us]
    h[H_CHECKS + mover] = before[H_CHECKS + mover] + 2 if checking else 0
    h[H_PLIES] = before[H_PLIES] + 1


@njit(**NO_REFCOUNTS)
def remember(b, history, row, first_plies):
    """Write ``b`` into ``history[row]``: as the position after the move of ``history[row - 1]``'s position, or,
    with ``row`` 0, as the first position known, ``first_plies`` plies after the game was set up, no checks
    before it counted."""
    if row > 0:
        remember_move(b, history, row, in_check(b))
        return
    h = history[0]
    _write_row(b, h)
    h[H_CHECKS] = h[H_CHECKS + 1] = 0
    h[H_PLIES] = first_plies


@njit(**NO_REFCOUNTS)
def repetition(history, row, lookback):
    """cshogi's verdict (``Board.is_draw(lookback)``) on the position of ``history[row]``: the same position an
    even number of plies (4 or more, at most ``lookback``) back is a draw, or a loss for the side to move when its
    every move since was a check (perpetual check), a win when the opponent's were; the same board with a hand at
    least as good for the side to move is superior, one at most as good inferior. The nearest one decides."""
    h = history[row]
    reach = min(h[H_PLIES], lookback, row)
    us = h[H_TURN]
    back = 4
    while back <= reach:
        past = history[row - back]
        if past[H_BOARD_KEY] == h[H_BOARD_KEY]:
            if past[H_HAND_KEY] == h[H_HAND_KEY]:
                if back <= h[H_CHECKS + us]:
                    return REPETITION_LOSE
                if back <= h[H_CHECKS + 1 - us]:
                    return REPETITION_WIN
                return REPETITION_DRAW
            superior = inferior = True
            for i in range(7):
                mine, theirs = h[H_HAND + i], past[H_HAND + i]
                superior &= mine >= theirs
                inferior &= mine <= theirs
            if superior:
                return REPETITION_SUPERIOR
            if inferior:
                return REPETITION_INFERIOR
        back += 2
    return NOT_REPETITION


def history_of(board: cshogi.Board, lookback: int = REPETITION_PLIES) -> tuple[np.ndarray, np.ndarray, int]:
    """The state of ``board`` and the history a repetition verdict needs: its last ``lookback`` plies (fewer when
    the game is shorter), replayed on the core's board from a copy taken back that far. Returns the state, the
    history array (room for ``lookback`` rows more, the line a search adds) and the row of ``board``'s
    position."""
    moves = board.history
    back = min(lookback, len(moves))
    earlier = board.copy()
    for _ in range(back):
        earlier.pop()
    state = from_board(earlier)
    history = np.zeros((back + 1 + lookback + MAX_LINE, HISTORY_SLOTS), np.int64)
    remember(state, history, 0, len(moves) - back)
    for row, move in enumerate(moves[len(moves) - back :], 1):
        push(state, move)
        remember(state, history, row, 0)
    return state, history, back


def moves_of(b: np.ndarray) -> np.ndarray:
    """The legal moves of a state as a uint32 array (a convenience for tests and tools; the search writes into
    its own buffers)."""
    out = np.empty(MAX_MOVES, np.uint32)
    return out[: legal_moves(b, out)].copy()
