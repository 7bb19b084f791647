"""Short mate searches on the compiled board (:mod:`messiah.playout.board`), with cshogi's verdicts.

Every new leaf of the search asks whether the side to move mates at once and, failing that, whether it mates within a
few plies (search/mcts.py ``_mate_line``): cshogi's ``Board.mate_move_in_1ply()`` and ``Board.mate_move(ply)``, a
Python call each into a board the leaf first has to build. These are the same two questions asked of the compiled
board, so a leaf can answer them without leaving numba, and answered the way cshogi (1.1.0, the installed one)
answers them, so that moving the leaves into numba changes no verdict the search acts on
(tests/test_playout_mate.py holds both against cshogi).

- :func:`mate_in_one` is cshogi's mate-in-one detector (Apery's, with YaneuraOu's additions), which is not a complete
  mate-in-one search: it looks at checks by a piece next to the king (or a knight), distant drops and moves along a
  line only when the defender holds nothing but pawns, double checks, and discovered checks near the king when the
  defender holds nothing but pawns. A mate outside those shapes (a distant rook drop while the defender has a gold
  in hand, a discovered check by a far piece...) is not found. It follows each of those rules, cautious ones
  included, since the odd-ply search calls it at its leaves and its verdicts depend on them.
- :func:`mate_in_odd` is cshogi's odd-ply search (``mateMoveInOddPly``): at the attacker's nodes every checking move,
  at the defender's every evasion but the non-promotions cshogi's evasion generator leaves out (a pawn, bishop or rook
  that could promote, a lance to its second-last rank), a repetition verdict (``is_draw(16)``) after every move, the
  last three plies searched by ``mateMoveIn3Ply`` (a defender's check there refutes), the last ply by
  :func:`mate_in_one`. On success it also writes the line: the attacker's quickest mate in that search against the
  defender's longest defence.

Both assume the opponent has a king, as the search's caller ensures; :func:`mate_in_one` also assumes the side to
move is not in check (cshogi's does), while :func:`mate_in_odd` in check looks for a check that answers the check and
mates, as cshogi's does.

The board is an array, so attacks are found along rays; to find the nearest piece along a ray quickly, the
functions below take the occupied squares as a two-word bit board and count zero bits (LLVM's cttz and ctlz).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from messiah.playout.board import (
    BISHOP,
    BLACK,
    DELTAS,
    DROP_FROM,
    GOLD,
    HAND,
    HAND_TYPES,
    KING,
    KING_DIRECTIONS,
    KING_TYPE,
    KNIGHT,
    KNIGHT_JUMPS,
    LANCE,
    MAX_MOVES,
    NE,
    NEXT,
    NO_REFCOUNTS,
    NUM_DIRECTIONS,
    NW,
    OCCUPIED,
    OPPOSITE,
    PAWN,
    PROMOTED,
    REFCOUNTED,
    REPETITION_DRAW,
    REPETITION_INFERIOR,
    REPETITION_LOSE,
    REPETITION_PLIES,
    REPETITION_SUPERIOR,
    REPETITION_WIN,
    ROOK,
    SE,
    SILVER,
    SLIDERS,
    SLIDES,
    STATE,
    STEPS,
    SW,
    TURN,
    WHITE_CODE,
    E,
    N,
    S,
    W,
    colour_of,
    in_check,
    push,
    put,
    remember_move,
    repetition,
)

HORSE, DRAGON = BISHOP + PROMOTED, ROOK + PROMOTED
# A code no piece has and nothing moves from: put on an empty square while a rule is judged "as if a piece stood
# there" (cshogi judges many on a changed occupancy); it blocks lines and attacks nothing (STEPS and SLIDES are 0).
WALL = 15
P_HAND, L_HAND, N_HAND, S_HAND, G_HAND, B_HAND, R_HAND = range(7)  # slots of a hand, cshogi's order

# --- geometry
# DIR_OF[a, b]: the direction (0-7) that leads from a to b along a line, -1 if b is not on a line from a.
DIR_OF = np.full((81, 81), -1, np.int64)
for _a in range(81):
    for _d in range(KING_DIRECTIONS):
        _s = NEXT[_a, _d]
        while _s >= 0:
            DIR_OF[_a, _s] = _d
            _s = NEXT[_s, _d]
# RELATION[a, b]: the line a and b share (cshogi's squareRelation): 0 none, 1 a file, 2 a rank, 3 and 4 the
# diagonals. cshogi's "aligned" (from, to and the king on one line) is RELATION[from, king] == RELATION[from, to].
_LINE_OF_DIRECTION = np.array([1, 3, 2, 4, 1, 3, 2, 4], np.int64)
RELATION = np.where(DIR_OF >= 0, _LINE_OF_DIRECTION[DIR_OF], 0)
# EDGE[code, a, b]: whether the piece ``code`` on a attacks b on an empty board (cshogi's "...AttackToEdge" and step
# attacks, which its mate-in-one uses as the squares a checking piece guards, seen through the king).
_STEP_TO = np.zeros((NUM_DIRECTIONS, 81, 81), np.bool_)  # [d, a, b]: b is a's neighbour (knight's jump) in d
_LINE_TO = np.zeros((KING_DIRECTIONS, 81, 81), np.bool_)  # [d, a, b]: b is on a's ray in d
for _a in range(81):
    for _d in range(NUM_DIRECTIONS):
        if NEXT[_a, _d] >= 0:
            _STEP_TO[_d, _a, NEXT[_a, _d]] = True
    for _d in range(KING_DIRECTIONS):
        _LINE_TO[_d, _a] = DIR_OF[_a] == _d
EDGE = np.zeros((32, 81, 81), np.bool_)
for _c in range(32):
    for _d in range(NUM_DIRECTIONS):
        if STEPS[_c] >> _d & 1:
            EDGE[_c] |= _STEP_TO[_d]
        if SLIDES[_c] >> _d & 1:
            EDGE[_c] |= _LINE_TO[_d]

# RAY[sq, d, i]: the i-th square from sq in direction d (RAY_LENGTH[sq, d] of them); NEAR[by, d] and FAR[by, d]: bit
# masks over piece codes of the pieces of ``by`` that attack a square from its neighbour in direction d, and from
# further along that line; KNIGHT_FROM[by, sq]: the squares a knight of ``by`` attacks sq from.
RAY = np.full((81, KING_DIRECTIONS, 8), -1, np.int64)
RAY_LENGTH = np.zeros((81, KING_DIRECTIONS), np.int64)
for _a in range(81):
    for _d in range(KING_DIRECTIONS):
        _s = NEXT[_a, _d]
        while _s >= 0:
            RAY[_a, _d, RAY_LENGTH[_a, _d]] = _s
            RAY_LENGTH[_a, _d] += 1
            _s = NEXT[_s, _d]
NEAR = np.zeros((2, KING_DIRECTIONS), np.int64)
FAR = np.zeros((2, KING_DIRECTIONS), np.int64)
for _by in range(2):
    for _d in range(KING_DIRECTIONS):
        _toward = OPPOSITE[_d]
        for _c in range(1 + WHITE_CODE * _by, WHITE_CODE * (_by + 1)):
            if STEPS[_c] >> _toward & 1 or SLIDES[_c] >> _toward & 1:
                NEAR[_by, _d] |= 1 << _c
            if SLIDES[_c] >> _toward & 1:
                FAR[_by, _d] |= 1 << _c
# RAY_LO / RAY_HI[sq, d]: the squares of RAY[sq, d] as a bit board (squares 0-63, and 64-80 from bit 0); the nearest
# piece along a ray is its lowest set bit in the directions that count squares up (S, SW, W, NW), its highest in the
# others.
RAY_LO = np.zeros((81, KING_DIRECTIONS), np.uint64)
RAY_HI = np.zeros((81, KING_DIRECTIONS), np.uint64)
for _a in range(81):
    for _d in range(KING_DIRECTIONS):
        for _i in range(RAY_LENGTH[_a, _d]):
            _s = RAY[_a, _d, _i]
            if _s < 64:
                RAY_LO[_a, _d] |= np.uint64(1) << np.uint64(_s)
            else:
                RAY_HI[_a, _d] |= np.uint64(1) << np.uint64(_s - 64)
KNIGHT_FROM = np.full((2, 81, 2), -1, np.int64)
for _by in range(2):
    for _a in range(81):
        for _j in range(2):
            KNIGHT_FROM[_by, _a, _j] = NEXT[_a, KNIGHT_JUMPS[1 - _by, _j]]
ADJACENT = np.zeros((81, 81), np.bool_)  # king-step neighbours
for _a in range(81):
    for _d in range(KING_DIRECTIONS):
        if NEXT[_a, _d] >= 0:
            ADJACENT[_a, NEXT[_a, _d]] = True
# GUARD[code, df + 8, dr + 8]: the king's neighbours (a bit a direction) the piece ``code`` guards on an empty board
# from df files and dr ranks off the king (EDGE's answer for every neighbour on the board, in one look-up); NEXT_GUARD
# the part it guards from next door (a step, a knight's jump, a slide's first square), and LINE_GUARD the part its
# slides reach from two squares or more away, which the squares between may block.
NEXT_GUARD = np.zeros((32, 17, 17), np.int64)
LINE_GUARD = np.zeros((32, 17, 17), np.int64)
for _c in range(32):
    for _m in range(NUM_DIRECTIONS):
        _mf, _mr = DELTAS[_m]
        _reaches = [1] if STEPS[_c] >> _m & 1 else []
        if SLIDES[_c] >> _m & 1:
            _reaches = range(1, 9)
        for _k in _reaches:
            for _d in range(KING_DIRECTIONS):  # the piece stands k steps back from the neighbour
                _df, _dr = DELTAS[_d][0] - _k * _mf, DELTAS[_d][1] - _k * _mr
                if abs(_df) <= 8 and abs(_dr) <= 8:
                    (NEXT_GUARD if _k == 1 else LINE_GUARD)[_c, _df + 8, _dr + 8] |= 1 << _d
GUARD = NEXT_GUARD | LINE_GUARD
# Bit boards (squares 0-63 in a LO word, 64-80 in a HI one) for judging the king's neighbours all at once:
# BETWEEN_LO / BETWEEN_HI[a, b] the squares strictly between two squares on a line (none off a line); NEAR_KING_LO /
# NEAR_KING_HI[sq] the squares from which a piece can reach a neighbour of sq in one step or jump (two files and
# three ranks either way).
BETWEEN_LO = np.zeros((81, 81), np.uint64)
BETWEEN_HI = np.zeros((81, 81), np.uint64)
for _a in range(81):
    for _d in range(KING_DIRECTIONS):
        for _i in range(RAY_LENGTH[_a, _d]):
            for _j in range(_i):
                _s = RAY[_a, _d, _j]
                if _s < 64:
                    BETWEEN_LO[_a, RAY[_a, _d, _i]] |= np.uint64(1) << np.uint64(_s)
                else:
                    BETWEEN_HI[_a, RAY[_a, _d, _i]] |= np.uint64(1) << np.uint64(_s - 64)
NEAR_KING_LO = np.zeros(81, np.uint64)
NEAR_KING_HI = np.zeros(81, np.uint64)
for _a in range(81):
    for _s in range(81):
        if abs(_s // 9 - _a // 9) <= 2 and abs(_s % 9 - _a % 9) <= 3:
            if _s < 64:
                NEAR_KING_LO[_a] |= np.uint64(1) << np.uint64(_s)
            else:
                NEAR_KING_HI[_a] |= np.uint64(1) << np.uint64(_s - 64)
# MOST_GUARD[t]: the king's neighbours (a bit a direction) a piece on its neighbour in direction t can guard at most:
# those next to it and those on a line through it.
MOST_GUARD = np.zeros(KING_DIRECTIONS, np.int64)
for _t in range(KING_DIRECTIONS):
    _to = NEXT[40, _t]
    for _d in range(KING_DIRECTIONS):
        _e = NEXT[40, _d]
        if _e != _to and (ADJACENT[_to, _e] or DIR_OF[_to, _e] >= 0):
            MOST_GUARD[_t] |= 1 << _d

# --- the searches' node kinds (an explicit stack: numba's cache cannot hold recursive functions)
OR_NODE, AND_NODE, OR3_NODE, AND3_NODE = range(4)
MEMO = 4  # int64 of a flight memo (see _judge_flights)
SCRATCH = 24 + MEMO  # int64 the mate-in-one detector works in


# ------------------------------------------------------------------------------------------------------------------
# Small primitives


@njit(**NO_REFCOUNTS)
def _rank_from(colour, sq):
    """The rank of ``sq`` counted from ``colour``'s far side: 0 is the rank its pieces move toward."""
    return sq % 9 if colour == BLACK else 8 - sq % 9


@njit(**NO_REFCOUNTS)
def _zone(colour, sq):
    """Whether ``sq`` is in ``colour``'s promotion zone."""
    return _rank_from(colour, sq) <= 2


@njit(**NO_REFCOUNTS)
def _forward(colour):
    """The direction ``colour``'s pawns move in."""
    return N if colour == BLACK else S


@njit(**NO_REFCOUNTS)
def _near(a, b, reach):
    """Whether b is within ``reach`` files and ranks of a."""
    return abs(a // 9 - b // 9) <= reach and abs(a % 9 - b % 9) <= reach


@njit(**NO_REFCOUNTS)
def _mine(b, sq, colour):
    """Whether a piece of ``colour`` stands on ``sq`` (the WALL counts as nobody's)."""
    c = b[sq]
    return c != 0 and c != WALL and colour_of(c) == colour


def _bit_scan(llvm_name: str):
    """A numba intrinsic counting a uint64's zero bits from one end with LLVM's ``llvm_name`` (one instruction)."""

    @intrinsic
    def scan(typingctx, x):
        def codegen(context, builder, signature, args):
            fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64), ir.IntType(1)])
            fn = builder.module.declare_intrinsic(llvm_name, [ir.IntType(64)], fnty)
            return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])
        return types.uint64(types.uint64), codegen

    return scan


_cttz = _bit_scan("llvm.cttz")  # trailing zero bits of a uint64
_ctlz = _bit_scan("llvm.ctlz")  # leading zero bits of a uint64


@njit(**NO_REFCOUNTS)
def _occupancy(b):
    """The occupied squares of ``b`` (the WALL included) as a bit board: squares 0-63, then 64-80, as the state
    keeps them (board.put writes every square the functions below change for a moment)."""
    return np.uint64(b[OCCUPIED]), np.uint64(b[OCCUPIED + 1])


@njit(**NO_REFCOUNTS)
def _nearest(lo, hi, sq, d):
    """The nearest occupied square from ``sq`` in direction ``d``, -1 if none."""
    mlo = RAY_LO[sq, d] & lo
    mhi = RAY_HI[sq, d] & hi
    if d >= S:  # S, SW, W, NW count squares up
        if mlo:
            return np.int64(_cttz(mlo))
        if mhi:
            return 64 + np.int64(_cttz(mhi))
        return -1
    if mhi:
        return 127 - np.int64(_ctlz(mhi))
    if mlo:
        return 63 - np.int64(_ctlz(mlo))
    return -1


@njit(**NO_REFCOUNTS)
def _attacked_occ(b, lo, hi, sq, by):
    """Whether a piece of ``by`` attacks ``sq``, ``lo``/``hi`` being ``b``'s occupancy."""
    for d in range(KING_DIRECTIONS):
        s = _nearest(lo, hi, sq, d)
        if s >= 0 and (NEAR[by, d] if s == NEXT[sq, d] else FAR[by, d]) >> b[s] & 1:
            return True
    knight = KNIGHT + WHITE_CODE * by
    for j in range(2):
        s = KNIGHT_FROM[by, sq, j]
        if s >= 0 and b[s] == knight:
            return True
    return False


@njit(**NO_REFCOUNTS)
def _attacked(b, sq, by):
    """board.attacked on bit boards: whether a piece of ``by`` attacks ``sq`` (pinned pieces and the king
    included)."""
    lo, hi = _occupancy(b)
    return _attacked_occ(b, lo, hi, sq, by)


@njit(**NO_REFCOUNTS)
def _reach(b, code, frm, sq, skip):
    """Whether the piece ``code`` standing on ``frm`` attacks ``sq`` on ``b`` (whatever stands on ``frm`` and
    ``sq``), the square ``skip`` taken as empty (-1 for none)."""
    d = DIR_OF[frm, sq]
    if d >= 0:
        s = NEXT[frm, d]
        if s == sq:
            return (STEPS[code] >> d & 1) == 1 or (SLIDES[code] >> d & 1) == 1
        if not SLIDES[code] >> d & 1:
            return False
        while s != sq:
            if b[s] != 0 and s != skip:
                return False
            s = NEXT[s, d]
        return True
    for j in range(KING_DIRECTIONS, NUM_DIRECTIONS):
        if STEPS[code] >> j & 1 and NEXT[frm, j] == sq:
            return True
    return False


@njit(**NO_REFCOUNTS)
def _pinned_to(b, s, k, by):
    """Whether the piece on ``s`` is the only piece between the king square ``k`` and a slider of colour ``by``
    aimed at it (a pin when the piece is the king's, a discovered-check candidate when it is the slider's)."""
    if k < 0:
        return False
    d = DIR_OF[k, s]
    if d < 0:
        return False
    lo, hi = _occupancy(b)
    if _nearest(lo, hi, k, d) != s:
        return False
    x = _nearest(lo, hi, s, d)
    if x < 0:
        return False
    c = b[x]
    return colour_of(c) == by and (SLIDES[c] >> OPPOSITE[d] & 1) == 1


@njit(**NO_REFCOUNTS)
def _listed(squares, count, sq):
    for i in range(count):
        if squares[i] == sq:
            return True
    return False


@njit(**NO_REFCOUNTS)
def _blockers(b, k, slider, blocker, out):
    """The pieces of colour ``blocker`` that stand alone between the king square ``k`` and a slider of colour
    ``slider`` aimed at it, written to ``out``: returns their count (at most eight, one a direction)."""
    n = 0
    if k < 0:
        return 0
    lo, hi = _occupancy(b)
    for d in range(KING_DIRECTIONS):
        s = _nearest(lo, hi, k, d)
        if s < 0 or colour_of(b[s]) != blocker:
            continue
        x = _nearest(lo, hi, s, d)
        if x >= 0 and colour_of(b[x]) == slider and SLIDES[b[x]] >> OPPOSITE[d] & 1:
            out[n] = s
            n += 1
    return n


@njit(**NO_REFCOUNTS)
def _capturable(b, sq, by, avoid, k, pins, npins):
    """Whether a piece of ``by`` other than its king (and other than the one on ``avoid``) can move to ``sq``
    without leaving its king on ``k`` open to a pinner (cshogi's canPieceCapture / can_piece_capture). The pinned
    pieces are those listed in ``pins`` (``npins`` of them), or, with ``npins`` < 0, those pinned on ``b`` as it
    stands."""
    lo, hi = _occupancy(b)
    for d in range(KING_DIRECTIONS):
        s = _nearest(lo, hi, sq, d)
        if s < 0 or s == avoid:
            continue
        c = b[s]
        if c & 15 != KING_TYPE and (NEAR[by, d] if s == NEXT[sq, d] else FAR[by, d]) >> c & 1:
            pinned = _listed(pins, npins, s) if npins >= 0 else _pinned_to(b, s, k, 1 - by)
            if not pinned or RELATION[s, k] == RELATION[s, sq]:
                return True
    knight = KNIGHT + WHITE_CODE * by
    for j in range(2):
        s = KNIGHT_FROM[by, sq, j]
        if s >= 0 and s != avoid and b[s] == knight:
            pinned = _listed(pins, npins, s) if npins >= 0 else _pinned_to(b, s, k, 1 - by)
            if not pinned or RELATION[s, k] == RELATION[s, sq]:
                return True
    return False


@njit(**NO_REFCOUNTS)
def _attackers_of(b, sq, by, most):
    """How many pieces of ``by`` other than its king attack ``sq``, counted up to ``most``; and the last one's
    square."""
    n = 0
    last = -1
    lo, hi = _occupancy(b)
    for d in range(KING_DIRECTIONS):
        s = _nearest(lo, hi, sq, d)
        if s < 0:
            continue
        c = b[s]
        if c & 15 != KING_TYPE and (NEAR[by, d] if s == NEXT[sq, d] else FAR[by, d]) >> c & 1:
            n += 1
            last = s
            if n >= most:
                return n, last
    knight = KNIGHT + WHITE_CODE * by
    for j in range(2):
        s = KNIGHT_FROM[by, sq, j]
        if s >= 0 and b[s] == knight:
            n += 1
            last = s
            if n >= most:
                return n, last
    return n, last


@njit(**NO_REFCOUNTS)
def _pawn_droppable(b, colour, sq):
    """cshogi's canPawnDrop: ``colour`` holds a pawn, has no pawn on ``sq``'s file, and ``sq`` is not its last
    rank."""
    if b[HAND + 7 * colour + P_HAND] == 0 or _rank_from(colour, sq) == 0:
        return False
    pawn = PAWN + WHITE_CODE * colour
    f = sq // 9 * 9
    for s in range(f, f + 9):
        if b[s] == pawn:
            return False
    return True


@njit(**NO_REFCOUNTS)
def _pawn_drop_after(b, colour, sq, taken):
    """Whether ``colour`` could drop a pawn on ``sq`` once the piece on ``taken`` is captured (cshogi's discovered
    check asks it of the squares a check must not be blocked on): it holds a pawn, ``sq`` is not its last rank, and
    it has no pawn on the file but the one on ``taken``."""
    if b[HAND + 7 * colour + P_HAND] == 0 or _rank_from(colour, sq) == 0:
        return False
    pawn = PAWN + WHITE_CODE * colour
    f = sq // 9 * 9
    for s in range(f, f + 9):
        if b[s] == pawn and s != taken:
            return False
    return True


@njit(**NO_REFCOUNTS)
def _gold_like(t):
    """Whether the piece type ``t`` moves as a gold: a gold or a promoted pawn, lance, knight or silver."""
    return t == GOLD or PAWN + PROMOTED <= t <= SILVER + PROMOTED


@njit(**NO_REFCOUNTS)
def _holds_more_than_pawns(b, colour):
    for h in range(1, 7):
        if b[HAND + 7 * colour + h]:
            return True
    return False


@njit(**NO_REFCOUNTS)
def _board_move(b, frm, to, promote):
    """The cshogi move of the piece on ``frm`` to ``to``."""
    return to | frm << 7 | promote << 14 | (b[frm] & 15) << 16 | (b[to] & 15) << 20


@njit(**NO_REFCOUNTS)
def _drop_move(t, to):
    return to | (DROP_FROM + t) << 7


@njit(**NO_REFCOUNTS)
def _guard(code, to, ksq):
    """The king's neighbours (a bit a direction) the piece ``code`` on ``to`` guards on an empty board."""
    return GUARD[code, to // 9 - ksq // 9 + 8, to % 9 - ksq % 9 + 8]


@njit(**NO_REFCOUNTS)
def _cover(b, code, to, ksq, actual):
    """The king's neighbours the piece ``code`` on ``to`` guards, as a bit a direction from the king: on an empty
    board, or, with ``actual``, on ``b`` as it stands."""
    mask = 0
    if code == 0:
        return mask
    for d in range(KING_DIRECTIONS):
        e = NEXT[ksq, d]
        if e >= 0 and e != to:
            if _reach(b, code, to, e, -1) if actual else EDGE[code, to, e]:
                mask |= 1 << d
    return mask


@njit(**NO_REFCOUNTS)
def _has_flight(b, us, ksq, cover, to, to_open):
    """Whether the king on ``ksq`` (the opponent of ``us``) has a neighbour to go to: not its own piece's, not in
    ``cover``, not attacked by ``us`` on ``b`` as it stands (the caller sets the occupancy cshogi judges on), and not
    ``to`` unless ``to_open`` (the checking piece's square, which the king may take)."""
    them = 1 - us
    lo, hi = _occupancy(b)
    for d in range(KING_DIRECTIONS):
        e = NEXT[ksq, d]
        if e < 0:
            continue
        if e == to:
            if not to_open:
                continue
        elif cover >> d & 1 or _mine(b, e, them):
            continue
        if not _attacked_occ(b, lo, hi, e, us):
            return True
    return False


# The detector's first test of a check: the king's neighbours it leaves open. ``memo`` (MEMO int64 a position) holds,
# a bit a direction from the king: [0] the neighbours judged, [1] the flights among them (not the king's own pieces'
# and not attacked by the attacker even with the king's square empty), [3] the exposable flights (a piece of the
# attacker's alone blocks one of its sliders from it: lifting that piece may close the flight). The detector judges
# them all before its first test (judging them one by one as its tests ask came out slower); an evasion of the king
# hands on to the detector at its leaf what it judged of the squares the leaf's king shares with it.


@njit(**NO_REFCOUNTS)
def _only_square(lo, hi):
    """The square of a bit board holding exactly one square, or -1 when it holds none or more."""
    if lo and not hi and lo & (lo - np.uint64(1)) == 0:
        return np.int64(_cttz(lo))
    if hi and not lo and hi & (hi - np.uint64(1)) == 0:
        return 64 + np.int64(_cttz(hi))
    return -1


@njit(**NO_REFCOUNTS)
def _neighbour_attacks(b, us, ksq):
    """The neighbours of the king on ``ksq`` that ``us`` attacks on ``b``, the king's square counted empty, and those
    a slider of ours reaches through exactly one piece, ours (lifting it may open the line): two masks, a bit a
    direction. Judged by the attackers rather than the squares: the pieces of ours within a step or a jump of the
    neighbours (two files and three ranks of the king), then each slider of ours along the line between (the
    state's bit boards hold the occupancy and the sliders)."""
    lo, hi = _occupancy(b)
    slo, shi = np.uint64(b[SLIDERS + 2 * us]), np.uint64(b[SLIDERS + 2 * us + 1])
    if ksq < 64:
        lo &= ~(np.uint64(1) << np.uint64(ksq))
    else:
        hi &= ~(np.uint64(1) << np.uint64(ksq - 64))
    kf, kr = ksq // 9 - 8, ksq % 9 - 8
    attacked = 0
    near_lo, near_hi = lo & NEAR_KING_LO[ksq], hi & NEAR_KING_HI[ksq]
    while near_lo:
        s = np.int64(_cttz(near_lo))
        near_lo &= near_lo - np.uint64(1)
        if _mine(b, s, us):
            attacked |= NEXT_GUARD[b[s], s // 9 - kf, s % 9 - kr]
    while near_hi:
        s = 64 + np.int64(_cttz(near_hi))
        near_hi &= near_hi - np.uint64(1)
        if _mine(b, s, us):
            attacked |= NEXT_GUARD[b[s], s // 9 - kf, s % 9 - kr]
    behind = 0
    for half in range(2):
        word = slo if half == 0 else shi
        while word:
            x = np.int64(_cttz(word)) + 64 * half
            word &= word - np.uint64(1)
            reach = LINE_GUARD[b[x], x // 9 - kf, x % 9 - kr] & ~attacked
            while reach:
                d = np.int64(_cttz(np.uint64(reach)))
                reach &= reach - 1
                e = NEXT[ksq, d]
                if e < 0:
                    continue
                blo, bhi = BETWEEN_LO[x, e] & lo, BETWEEN_HI[x, e] & hi
                if not blo and not bhi:
                    attacked |= 1 << d
                else:
                    s = _only_square(blo, bhi)
                    if s >= 0 and _mine(b, s, us):
                        behind |= 1 << d
    return attacked, behind


@njit(**NO_REFCOUNTS)
def _judge_flights(b, us, ksq, memo):
    """Judge every neighbour of the king on ``ksq`` (the opponent of ``us``) into ``memo`` at once, but those
    ``memo[0]`` marks as judged already. Returns the flights: the neighbours on the board that hold none of the king's
    side's pieces and that ``us`` does not attack with the king's square empty (the exposable among them: those a
    slider of ours reaches through one piece of ours)."""
    them = 1 - us
    attacked, behind = _neighbour_attacks(b, us, ksq)
    flights = 0
    for d in range(KING_DIRECTIONS):
        e = NEXT[ksq, d]
        if e >= 0 and not attacked >> d & 1 and not _mine(b, e, them):
            flights |= 1 << d
    known = memo[0]
    flights = (memo[1] & known) | (flights & ~known)
    memo[0] = 0xFF
    memo[1] = flights
    memo[3] = (memo[3] & known) | (behind & flights & ~known)
    return flights


@njit(**NO_REFCOUNTS)
def _exposed(b, us, ksq, e, frm):
    """Whether lifting the piece on ``frm`` lets a slider of ``us`` attack ``e`` (the king's square counted empty)."""
    d = DIR_OF[e, frm]
    if d < 0:
        return False
    s = NEXT[e, d]
    while s != frm:
        if b[s] != 0 and s != ksq:
            return False
        s = NEXT[s, d]
    s = NEXT[frm, d]
    while s >= 0 and (b[s] == 0 or s == ksq):
        s = NEXT[s, d]
    return s >= 0 and _mine(b, s, us) and (SLIDES[b[s]] >> OPPOSITE[d] & 1) == 1


@njit(**NO_REFCOUNTS)
def _flight_left(b, us, ksq, memo, cover, to, frm):
    """Whether a flight (``memo``, every neighbour judged) stays open to the king after a check from ``to`` that
    guards ``cover`` (a bit a direction: a superset of what cshogi counts the piece to guard), the piece lifted from
    ``frm`` (-1 for a drop; ``b`` must still hold it). When one does, no rule of the detector finds the check
    mating, so it is not judged further. With ``frm`` < -1 no piece in particular is lifted: a flight some lift
    could close does not count."""
    left = memo[1] & ~cover
    if left == 0:
        return False
    if to >= 0 and ADJACENT[ksq, to]:
        left &= ~(1 << DIR_OF[ksq, to])
    if left == 0 or frm == -1:
        return left != 0
    if left & ~memo[3]:
        return True  # a flight no lift can close
    if frm < 0:
        return False
    for d in range(KING_DIRECTIONS):
        if left >> d & 1 and not _exposed(b, us, ksq, NEXT[ksq, d], frm):
            return True
    return False


# ------------------------------------------------------------------------------------------------------------------
# Mate in one: cshogi's detector, rule by rule


@njit(**NO_REFCOUNTS)
def _escapes_contact(b, us, ksq, to, code, actual):
    """cshogi's canKingEscape for a piece ``code`` put on ``to`` (dropped, or moved there and already lifted from
    its square on ``b``): the king flees unless every neighbour is its own piece's, guarded by the piece, or attacked by
    ``us`` with ``to`` occupied and the king's square empty. ``actual`` takes the piece's guard on that board (a
    dragon's), else on an empty board."""
    saved_to, saved_k = b[to], b[ksq]
    if saved_to == 0:
        put(b, to, WALL)
    put(b, ksq, 0)
    cover = _cover(b, code, to, ksq, actual)
    flight = _has_flight(b, us, ksq, cover, to, False)
    put(b, to, saved_to)
    put(b, ksq, saved_k)
    return flight


@njit(**NO_REFCOUNTS)
def _drop_mates_contact(b, us, ksq, to, t, supported, memo):
    """Whether dropping ``t`` on ``to`` mates by cshogi's rule: defended (unless a knight: ``supported`` False),
    no flight, and no capture by a piece not pinned (pins as the position stands)."""
    if b[to] != 0:
        return False
    code = t + WHITE_CODE * us if t != KNIGHT else 0
    if _flight_left(b, us, ksq, memo, _guard(code, to, ksq), to, -1):
        return False
    if supported and not _attacked(b, to, us):
        return False
    if _escapes_contact(b, us, ksq, to, code, False):
        return False
    return not _capturable(b, to, 1 - us, -1, ksq, b[:0], -1)


@njit(**NO_REFCOUNTS)
def _mate1_drops(b, us, ksq, memo):
    """The contact drops (and knight drops) of cshogi's detector; a drop that mates, or 0. A drop whose piece a
    stronger one held would replace (a lance by a rook on the same square...) is skipped as cshogi skips it."""
    them = 1 - us
    hand = HAND + 7 * us
    has_r, has_b, has_g = b[hand + R_HAND] > 0, b[hand + B_HAND] > 0, b[hand + G_HAND] > 0
    has_s, has_n, has_l = b[hand + S_HAND] > 0, b[hand + N_HAND] > 0, b[hand + L_HAND] > 0
    if not (has_r or has_b or has_g or has_s or has_n or has_l):
        return 0
    behind = OPPOSITE[_forward(us)]  # the king's neighbour on our side of it, from which a lance checks
    viable = 0  # the empty neighbours a piece dropped on could guard every flight from
    for d in range(KING_DIRECTIONS):
        to = NEXT[ksq, d]
        if to >= 0 and b[to] == 0 and not _flight_left(b, us, ksq, memo, MOST_GUARD[d], to, -1):
            viable |= 1 << d
    if has_r:
        for d in (N, E, S, W):
            to = NEXT[ksq, d]
            if viable >> d & 1 and _drop_mates_contact(b, us, ksq, to, ROOK, True, memo):
                return _drop_move(ROOK, to)
    elif has_l and _rank_from(us, ksq) < 8:
        to = NEXT[ksq, behind]
        if viable >> behind & 1 and _drop_mates_contact(b, us, ksq, to, LANCE, True, memo):
            return _drop_move(LANCE, to)
    if has_b:
        for d in (NE, SE, SW, NW):
            to = NEXT[ksq, d]
            if viable >> d & 1 and _drop_mates_contact(b, us, ksq, to, BISHOP, True, memo):
                return _drop_move(BISHOP, to)
    gold, silver = GOLD + WHITE_CODE * us, SILVER + WHITE_CODE * us
    if has_g:
        beyond = NEXT[ksq, _forward(us)]  # with a rook in hand, a gold there is a rook's weaker copy
        for d in range(KING_DIRECTIONS):
            to = NEXT[ksq, d]
            if not viable >> d & 1 or not EDGE[gold, to, ksq] or (has_r and to == beyond):
                continue
            if _drop_mates_contact(b, us, ksq, to, GOLD, True, memo):
                return _drop_move(GOLD, to)
    if has_s and not (has_g and has_b):
        for d in range(KING_DIRECTIONS):
            to = NEXT[ksq, d]
            if not viable >> d & 1 or not EDGE[silver, to, ksq]:
                continue
            if has_g:  # only the squares a gold cannot check from: diagonally beyond the king
                if _rank_from(us, to) >= _rank_from(us, ksq):
                    continue
            elif has_b and not EDGE[gold, to, ksq]:  # the diagonals beyond were the bishop's
                continue
            if _drop_mates_contact(b, us, ksq, to, SILVER, True, memo):
                return _drop_move(SILVER, to)
    if has_n and not _flight_left(b, us, ksq, memo, 0, -1, -1):  # a knight guards none of the king's neighbours
        for j in range(2):
            to = NEXT[ksq, KNIGHT_JUMPS[them, j]]
            if to >= 0 and _drop_mates_contact(b, us, ksq, to, KNIGHT, False, memo):
                return _drop_move(KNIGHT, to)
    return 0


@njit(**NO_REFCOUNTS)
def _try_contact(b, us, ksq, uksq, frm, code, to, promote, cover, actual, supported, knight, memo):
    """One contact check of cshogi's detector (the piece ``code`` from ``frm`` to ``to``, promoting or not, guarding
    what the piece ``cover`` guards there; ``actual``: on the board, else on an empty one): the move if it mates by
    cshogi's rule, else 0. The rule: ``to`` defended (unless not ``supported``: a knight's jump), no flight, no
    capture of the piece unless the move also uncovers a check, and the move legal (cheapest tests first: each is
    judged on the position alone, so their order changes nothing)."""
    if _flight_left(b, us, ksq, memo, _guard(cover, to, ksq), to, frm):
        return 0  # (a piece's guard on an empty board holds its guard on any)
    put(b, frm, 0)  # the piece lifted, as cshogi judges the rest
    mates = (not supported or _attacked(b, to, us)) and not _escapes_contact(b, us, ksq, to, cover, actual)
    put(b, frm, code)
    if mates and _pinned_to(b, frm, uksq, 1 - us) and (knight or RELATION[frm, uksq] != RELATION[frm, to]):
        mates = False
    if mates and not (_pinned_to(b, frm, ksq, us) and (knight or RELATION[frm, ksq] != RELATION[frm, to])):
        put(b, frm, 0)  # not a double check: no piece may take it (pins as they stand with frm empty)
        mates = not _capturable(b, to, 1 - us, -1, ksq, b[:0], -1)
        put(b, frm, code)
    return _board_move(b, frm, to, promote) if mates else 0


@njit(**NO_REFCOUNTS)
def _contact_mates(b, us, ksq, uksq, frm, code, to, memo):
    """cshogi's contact checks of the piece ``code`` on ``frm`` moving to the king's neighbour ``to`` (which it
    reaches): the move that mates, or 0. Where a promotion would check at least as well, only it is tried, as
    there."""
    them = 1 - us
    t = code & 15
    gold, silver = GOLD + WHITE_CODE * us, SILVER + WHITE_CODE * us
    zone_from = _zone(us, frm)
    behind = OPPOSITE[_forward(us)]
    if t == KNIGHT:  # a knight's jump next to the king checks only promoted
        if EDGE[gold, to, ksq] and _zone(us, to):
            return _try_contact(b, us, ksq, uksq, frm, code, to, 1, gold, False, True, True, memo)
        return 0
    if t == PAWN:
        krank = _rank_from(us, ksq)
        if krank >= 7:
            return 0
        if krank < 3 and EDGE[gold, to, ksq] and _zone(us, to):
            m = _try_contact(b, us, ksq, uksq, frm, code, to, 1, gold, False, True, False, memo)
            if m:
                return m
        if krank >= 2 and to == NEXT[ksq, behind]:
            return _try_contact(b, us, ksq, uksq, frm, code, to, 0, 0, False, True, False, memo)
        return 0
    if t == DRAGON:
        return _try_contact(b, us, ksq, uksq, frm, code, to, 0, code, True, True, False, memo)
    if t == HORSE:
        return _try_contact(b, us, ksq, uksq, frm, code, to, 0, code, False, True, False, memo)
    if t == ROOK or t == BISHOP:
        promote = zone_from or _zone(us, to)
        if not promote and (DIR_OF[ksq, to] % 2 == 0) != (t == ROOK):
            return 0  # unpromoted, it checks only along its own lines
        if promote:  # cshogi judges a promoting rook's guard on the board, a bishop's on an empty one
            return _try_contact(b, us, ksq, uksq, frm, code, to, 1, code + PROMOTED, t == ROOK, True, False, memo)
        return _try_contact(b, us, ksq, uksq, frm, code, to, 0, code, False, True, False, memo)
    if t == SILVER:
        if (zone_from or (_rank_from(us, frm) == 3 and _zone(us, to))) and EDGE[gold, to, ksq]:
            m = _try_contact(b, us, ksq, uksq, frm, code, to, 1, gold, False, True, False, memo)
            if m:
                return m
        # from the zone, short of the king's rank, a promoted silver checks wherever a silver does
        if EDGE[silver, to, ksq] and not (zone_from and _rank_from(them, to) < _rank_from(them, ksq)):
            return _try_contact(b, us, ksq, uksq, frm, code, to, 0, silver, False, True, False, memo)
        return 0
    if t == LANCE:
        if EDGE[gold, to, ksq] and _zone(us, to):
            m = _try_contact(b, us, ksq, uksq, frm, code, to, 1, gold, False, True, False, memo)
            if m:
                return m
        if to == NEXT[ksq, behind] and _rank_from(us, to) >= 2:
            return _try_contact(b, us, ksq, uksq, frm, code, to, 0, code, False, True, False, memo)
        return 0
    if EDGE[gold, to, ksq]:  # a gold or a promoted minor piece
        return _try_contact(b, us, ksq, uksq, frm, code, to, 0, gold, False, True, False, memo)
    return 0


@njit(**NO_REFCOUNTS)
def _mate1_moves(b, us, ksq, uksq, memo):
    """cshogi's board-move checks: to each of the king's neighbours that some piece placed there could make a
    mate of (MOST_GUARD), the pieces that reach it; then the knights' checks from afar. A move that mates, or 0."""
    them = 1 - us
    knight = KNIGHT + WHITE_CODE * us
    lo, hi = _occupancy(b)  # (the board is as it was after each try)
    for t in range(KING_DIRECTIONS):
        to = NEXT[ksq, t]
        if to < 0 or _mine(b, to, us) or _flight_left(b, us, ksq, memo, MOST_GUARD[t], to, -2):
            continue
        for d in range(KING_DIRECTIONS):
            s = _nearest(lo, hi, to, d)
            if s < 0:
                continue
            c = b[s]
            if c & 15 != KING_TYPE and (NEAR[us, d] if s == NEXT[to, d] else FAR[us, d]) >> c & 1:
                m = _contact_mates(b, us, ksq, uksq, s, c, to, memo)
                if m:
                    return m
        for j in range(2):
            s = KNIGHT_FROM[us, to, j]
            if s >= 0 and b[s] == knight:
                m = _contact_mates(b, us, ksq, uksq, s, knight, to, memo)
                if m:
                    return m
    for j in range(2):  # a knight's check, from two ranks off: nothing guarded, so no flight may be left
        x = NEXT[ksq, KNIGHT_JUMPS[them, j]]
        if x < 0 or _mine(b, x, us) or _flight_left(b, us, ksq, memo, 0, x, -2):
            continue
        for j2 in range(2):
            s = KNIGHT_FROM[us, x, j2]
            if s >= 0 and b[s] == knight:
                m = _try_contact(b, us, ksq, uksq, s, knight, x, 0, 0, False, False, True, memo)
                if m:
                    return m
    return 0


@njit(**NO_REFCOUNTS)
def _line_drop_mates(b, us, ksq, to, guard, memo):
    """YaneuraOu's test of a distant drop on ``to`` along a line to the king: every neighbour the king could go to
    (not its own piece's, not attacked by ``us`` once ``to`` is occupied) is guarded by ``guard`` from ``to`` on an
    empty board."""
    them = 1 - us
    if _flight_left(b, us, ksq, memo, _guard(guard, to, ksq), to, -1):
        return False
    put(b, to, WALL)
    mate = True
    for d in range(KING_DIRECTIONS):
        e = NEXT[ksq, d]
        if e < 0 or _mine(b, e, them) or EDGE[guard, to, e]:
            continue
        if not _attacked(b, e, us):
            mate = False
            break
    put(b, to, 0)
    return mate


@njit(**NO_REFCOUNTS)
def _line_move_mates(b, us, ksq, uksq, one, to, diagonal, lance_line, dct, memo):
    """YaneuraOu's distant check by a move: a rook, dragon or (on the line from our side) lance moved to ``to``, two
    squares from the king along an orthogonal, or a bishop or horse along a diagonal, with ``one`` between; a move
    that mates, or 0. The pins are those before the move (``dct``), as cshogi reads them."""
    them = 1 - us
    rook, bishop, dragon, horse = ROOK + WHITE_CODE * us, BISHOP + WHITE_CODE * us, DRAGON + WHITE_CODE * us, \
        HORSE + WHITE_CODE * us
    lance = LANCE + WHITE_CODE * us
    behind = OPPOSITE[_forward(us)]
    for d in range(KING_DIRECTIONS):
        frm = -1
        if d % 2 == (1 if diagonal else 0):  # the first piece along each of to's lines
            s = NEXT[to, d]
            while s >= 0 and b[s] == 0:
                s = NEXT[s, d]
            if s >= 0:
                c = b[s]
                if diagonal:
                    if c == bishop or c == horse:
                        frm = s
                elif c == rook or c == dragon or (c == lance and lance_line and d == behind):
                    frm = s
        else:  # a dragon (or horse) stepping in from the side
            s = NEXT[to, d]
            if s >= 0 and b[s] == (horse if diagonal else dragon):
                frm = s
        if frm < 0:
            continue
        if _pinned_to(b, frm, uksq, them) and RELATION[frm, uksq] != RELATION[frm, to]:
            continue
        code = b[frm]
        t = code & 15
        wide = diagonal or (t != LANCE and (_zone(us, frm) or _zone(us, to) or t == DRAGON))
        cover = _guard(rook, to, ksq) | (_guard(bishop, to, ksq) if wide else 0)
        if _flight_left(b, us, ksq, memo, cover, to, frm):
            continue
        ndct = _blockers(b, ksq, us, them, dct)  # the pins as they stand before the move, which cshogi keeps
        put(b, frm, 0)
        # neither the moved piece taken nor ``one`` blocked (by a piece other than the one taken on ``to``)
        free = not _capturable(b, to, them, -1, ksq, dct, ndct) and not _capturable(b, one, them, to, ksq, dct, ndct)
        mate = False
        if free:
            saved = b[to]
            if saved == 0:
                put(b, to, WALL)
            mate = True
            for e_d in range(KING_DIRECTIONS):
                e = NEXT[ksq, e_d]
                if e < 0 or _mine(b, e, them) or EDGE[rook, to, e] or (wide and EDGE[bishop, to, e]):
                    continue
                if not _attacked(b, e, us):
                    mate = False
                    break
            put(b, to, saved)
        put(b, frm, code)
        if mate:
            promote = 1 if t != LANCE and t < PROMOTED and (_zone(us, frm) or _zone(us, to)) else 0
            return _board_move(b, frm, to, promote)
    return 0


@njit(**NO_REFCOUNTS)
def _mate1_lines(b, us, ksq, uksq, dct, memo):
    """YaneuraOu's distant checks, tried when the defender holds nothing but pawns (so nothing can be dropped in
    between but a pawn): a rook, lance or bishop dropped two or three squares from the king along a line, or a piece
    moved to two squares away; a move that mates, or 0. Its conditions are cshogi's, cautious ones included (no more
    than three flight squares, no pawn the defender could drop between)."""
    them = 1 - us
    hand = HAND + 7 * us
    rook, bishop = ROOK + WHITE_CODE * us, BISHOP + WHITE_CODE * us
    hope = False  # a line whose guard (at most a rook's and a bishop's, two or three squares off) leaves no flight
    for d in range(KING_DIRECTIONS):
        one = NEXT[ksq, d]
        if one < 0 or b[one] != 0 or NEXT[one, d] < 0:
            continue
        to = NEXT[one, d]
        guard = _guard(rook, to, ksq) | _guard(bishop, to, ksq)
        if NEXT[to, d] >= 0:
            guard |= _guard(rook, NEXT[to, d], ksq) | _guard(bishop, NEXT[to, d], ksq)
        if not _flight_left(b, us, ksq, memo, guard, -1, -2):
            hope = True
            break
    if not hope:
        return 0
    open_now = 0  # cshogi counts these with the king on its square
    for d in range(KING_DIRECTIONS):
        e = NEXT[ksq, d]
        if e >= 0 and not _mine(b, e, them) and (memo[1] >> d & 1 or not _attacked(b, e, us)):
            open_now += 1
    if open_now >= 4:
        return 0
    behind = OPPOSITE[_forward(us)]
    for d in range(KING_DIRECTIONS):
        one = NEXT[ksq, d]
        if one < 0 or b[one] != 0:
            continue
        to = NEXT[one, d]
        if to < 0 or _mine(b, to, us):
            continue
        if _pawn_droppable(b, them, one):
            continue
        if b[to] & 15 == PAWN and to // 9 == one // 9 and b[HAND + 7 * them + P_HAND] > 0:
            continue  # taking that pawn would let the defender drop one between
        diagonal = d % 2 == 1
        lance_line = d == behind
        t = 0
        if diagonal:
            if b[hand + B_HAND]:
                t = BISHOP
        elif lance_line and b[hand + L_HAND]:
            t = LANCE
        elif b[hand + R_HAND]:
            t = ROOK
        if t and b[to] == 0 and not _capturable(b, one, them, -1, ksq, b[:0], -1) \
                and not _capturable(b, to, them, -1, ksq, b[:0], -1):
            guard = (BISHOP if diagonal else ROOK) + WHITE_CODE * us  # a lance's too: its sides miss the king
            if _line_drop_mates(b, us, ksq, to, guard, memo):
                return _drop_move(t, to)
            if open_now <= 2:  # one square further: the drop on `to` may have blocked one of our lines
                far = NEXT[to, d]
                if far >= 0 and b[far] == 0 and not _pawn_droppable(b, them, to) \
                        and not _capturable(b, far, them, -1, ksq, b[:0], -1) \
                        and _line_drop_mates(b, us, ksq, far, guard, memo):
                    return _drop_move(t, far)
        m = _line_move_mates(b, us, ksq, uksq, one, to, diagonal, lance_line, dct, memo)
        if m:
            return m
    return 0


@njit(**NO_REFCOUNTS)
def _cangoto(b, us, ksq, frm, to, guard1, guard2, memo):
    """cshogi's can_king_escape_cangoto: after the piece on ``frm`` moves to ``to`` guarding what ``guard1`` and
    ``guard2`` (piece codes, 0 for none) guard from ``to`` on an empty board, the king has a neighbour to go to, ``to``
    included (taking the piece), judged with the king's square empty."""
    cover = _guard(guard1, to, ksq) | _guard(guard2, to, ksq)
    if _flight_left(b, us, ksq, memo, cover, to, frm):
        return True
    code, saved_to, saved_k = b[frm], b[to], b[ksq]
    put(b, frm, 0)
    if saved_to == 0:
        put(b, to, WALL)
    put(b, ksq, 0)
    flight = _has_flight(b, us, ksq, cover, to, True)
    put(b, ksq, saved_k)
    put(b, to, saved_to)
    put(b, frm, code)
    return flight


@njit(**NO_REFCOUNTS)
def _mate1_double(b, us, ksq, uksq, dcu, ndcu, memo):
    """YaneuraOu's double checks from afar: a bishop, horse, rook or dragon standing between our slider and the
    king moves off the line to a square on the king's lines (not next to it: those the contact rules judged), so
    that it checks too; only king moves answer, so it mates when the king has nowhere to go. A move that mates, or
    0."""
    king = KING_TYPE + WHITE_CODE * us
    for i in range(ndcu):
        frm = dcu[i]
        code = b[frm]
        t = code & 15
        if t != BISHOP and t != ROOK and t != HORSE and t != DRAGON:
            continue
        line = (BISHOP if t == BISHOP or t == HORSE else ROOK) + WHITE_CODE * us  # the lines it must check along
        pinned = _pinned_to(b, frm, uksq, 1 - us)
        for d in range(NUM_DIRECTIONS):
            step, slide = STEPS[code] >> d & 1, SLIDES[code] >> d & 1
            if step == 0 and slide == 0:
                continue
            to = NEXT[frm, d]
            while to >= 0:
                if _mine(b, to, us):
                    break
                if not ADJACENT[ksq, to] and _reach(b, line, ksq, to, -1) \
                        and RELATION[frm, ksq] != RELATION[frm, to] \
                        and not (pinned and RELATION[frm, uksq] != RELATION[frm, to]):
                    promote = t < PROMOTED and (_zone(us, frm) or _zone(us, to))
                    if not _cangoto(b, us, ksq, frm, to, code - PROMOTED if t > PROMOTED else code,
                                    king if promote or t > PROMOTED else 0, memo):
                        return _board_move(b, frm, to, 1 if promote else 0)
                if b[to] != 0 or slide == 0:
                    break
                to = NEXT[to, d]
    return 0


@njit(**NO_REFCOUNTS)
def _line_open(b, us, ksq, frm, to):
    """YaneuraOu's check of the line a discovered check opens (the piece from ``frm`` now on ``to``): no defender
    piece (but the one taken on ``to``) can step onto it, nor a pawn be dropped on it, up to and including our
    slider."""
    them = 1 - us
    d = DIR_OF[ksq, frm]
    s = NEXT[ksq, d]
    while s >= 0:
        if _capturable(b, s, them, to, ksq, b[:0], -1):
            return False
        if s != frm and b[s] != 0:
            return True
        if _pawn_drop_after(b, them, s, to):
            return False
        s = NEXT[s, d]
    return True


@njit(**NO_REFCOUNTS)
def _mate1_discovered(b, us, ksq, uksq, dcu, ndcu, memo):
    """YaneuraOu's discovered checks near the king (within two squares), tried when the defender holds nothing but
    pawns: the piece between our slider and the king moves off the line (taking the one defender attacking its
    square, if one does) and the line cannot be blocked; a move that mates, or 0."""
    them = 1 - us
    gold = GOLD + WHITE_CODE * us
    for i in range(ndcu):
        frm = dcu[i]
        if not _near(frm, ksq, 2):
            continue
        code = b[frm]
        t = code & 15
        if t == PAWN or t == LANCE or t == KING_TYPE:
            continue
        if t == KNIGHT and not 2 <= _rank_from(us, frm) <= 4:
            continue  # only jumps that may promote
        n_att, att = _attackers_of(b, frm, them, 2)  # the defender's attackers of frm, its king left out
        if n_att >= 2:
            continue
        pinned = _pinned_to(b, frm, uksq, 1 - us)
        for d in range(NUM_DIRECTIONS):
            step, slide = STEPS[code] >> d & 1, SLIDES[code] >> d & 1
            if step == 0 and slide == 0:
                continue
            to = NEXT[frm, d]
            while to >= 0:
                blocked = b[to] != 0
                # to the one attacker, or anywhere near the king; never to a square from which the piece checks
                target = att == to if n_att == 1 else _near(to, ksq, 2) and not _mine(b, to, us)
                if t == KNIGHT or _gold_like(t):
                    target = target and not EDGE[gold, to, ksq]
                elif t == HORSE or t == DRAGON:
                    target = target and not ADJACENT[ksq, to]
                if target:
                    m = _discovery_mates(b, us, ksq, uksq, frm, to, code, pinned, memo)
                    if m:
                        return m
                if blocked or slide == 0:
                    break
                to = NEXT[to, d]
    return 0


@njit(**NO_REFCOUNTS)
def _discovery_mates(b, us, ksq, uksq, frm, to, code, pinned, memo):
    """The rest of YaneuraOu's discovered check for one move (see :func:`_mate1_discovered`); the move, or 0."""
    them = 1 - us
    t = code & 15
    gold, silver = GOLD + WHITE_CODE * us, SILVER + WHITE_CODE * us
    if RELATION[frm, ksq] == RELATION[frm, to]:
        return 0
    if pinned and (t == KNIGHT or RELATION[frm, uksq] != RELATION[frm, to]):
        return 0
    if _pawn_drop_after(b, them, frm, to):
        return 0  # the defender drops a pawn where the piece stood
    saved_to = b[to]
    put(b, frm, 0)
    if saved_to == 0:
        put(b, to, WALL)
    blockable = _capturable(b, frm, them, to, ksq, b[:0], -1)  # a defender steps onto the square left
    put(b, to, saved_to)
    put(b, frm, code)
    if blockable:
        return 0
    if ADJACENT[ksq, to]:  # next to the king, the piece needs a defender other than itself (seen through frm)
        put(b, frm, 0)
        defended = _attacked(b, to, us)
        put(b, frm, code)
        if not defended:
            return 0
    promotable = _zone(us, frm) or _zone(us, to)
    for variant in range(2):
        if variant == 0:
            if t == SILVER and not promotable:
                continue
            promote = 1 if promotable and (t == KNIGHT or t == SILVER or t == BISHOP or t == ROOK) else 0
            if t == BISHOP or t == ROOK:
                guard, actual = code + PROMOTED if promotable else code, True
            elif t == HORSE or t == DRAGON:
                guard, actual = code, True
            else:
                guard, actual = gold, False  # a gold, a promoted minor, a knight (it promotes) or a silver that does
        else:
            if t != SILVER:
                break
            promote, guard, actual = 0, silver, False
        if _flight_left(b, us, ksq, memo, _guard(guard, to, ksq), to, frm):
            continue
        put(b, frm, 0)
        if saved_to == 0:
            put(b, to, WALL)
        mate = False
        if not _reach(b, guard, to, ksq, -1):  # a check by the piece too is a double check, judged above
            cover = _cover(b, guard, to, ksq, actual)
            put(b, ksq, 0)
            flight = _has_flight(b, us, ksq, cover, -1, False)
            put(b, ksq, KING_TYPE + WHITE_CODE * them)
            mate = not flight and _line_open(b, us, ksq, frm, to)
        put(b, to, saved_to)
        put(b, frm, code)
        if mate:
            return _board_move(b, frm, to, promote)
    return 0


@njit(**NO_REFCOUNTS)
def _mate1(b, scratch):
    """cshogi's mate-in-one detector on ``b`` (side to move not in check): a mating move, or 0. ``scratch`` holds at
    least SCRATCH int64, the flight memo at [24:] set (its judged mask at least: 0 for none)."""
    us = b[TURN]
    them = 1 - us
    ksq = b[KING + them]
    if ksq < 0:
        return 0
    uksq = b[KING + us]
    memo = scratch[24:24 + MEMO]
    _judge_flights(b, us, ksq, memo)  # (memo[0] says what the caller already knows)
    m = _mate1_drops(b, us, ksq, memo)
    if m:
        return m
    m = _mate1_moves(b, us, ksq, uksq, memo)
    if m:
        return m
    dcu, dct = scratch[0:8], scratch[16:24]
    ndcu = _blockers(b, ksq, us, us, dcu)
    poor = not _holds_more_than_pawns(b, them)
    if not poor and not ndcu:
        return 0
    if poor:
        m = _mate1_lines(b, us, ksq, uksq, dct, memo)
        if m:
            return m
    if ndcu:
        m = _mate1_double(b, us, ksq, uksq, dcu, ndcu, memo)
        if m:
            return m
        if poor:
            return _mate1_discovered(b, us, ksq, uksq, dcu, ndcu, memo)
    return 0


@njit(**REFCOUNTED)
def mate_in_one(b):
    """A move that mates at once, by cshogi's detector (``Board.mate_move_in_1ply()``: the same verdict, whether
    one exists), or 0. The side to move must not be in check; 0 when the opponent has no king."""
    scratch = np.zeros(SCRATCH, np.int64)
    return _mate1(b, scratch)


@njit(**NO_REFCOUNTS)
def _mate1_after(b, scratch, move, king_from, flights, exposed):
    """:func:`_mate1` on the position a defender's evasion ``move`` led to, told the flights and exposable squares
    of the defender's king before it (``flights`` and ``exposed``, on ``king_from``): when the move took the king to
    an empty square, the board with either king square empty is the same, so what was judged of the squares next to
    both stands."""
    memo = scratch[24:24 + MEMO]
    memo[0] = memo[1] = memo[3] = 0
    frm, to = move >> 7 & 0x7F, move & 0x7F
    if frm == king_from and move >> 20 & 15 == 0:
        known = seen = exposable = 0
        for d in range(KING_DIRECTIONS):
            g = NEXT[to, d]
            if g < 0:
                known |= 1 << d
            elif g != king_from and ADJACENT[king_from, g]:
                known |= 1 << d
                d1 = DIR_OF[king_from, g]
                if flights >> d1 & 1:
                    seen |= 1 << d
                    if exposed >> d1 & 1:
                        exposable |= 1 << d
        memo[0], memo[1], memo[3] = known, seen, exposable
    return _mate1(b, scratch)


# ------------------------------------------------------------------------------------------------------------------
# Move generation for the search: the attacker's checks, the defender's evasions


@njit(**NO_REFCOUNTS)
def _droppable(b, us, t, to):
    """Whether ``us`` may drop the piece type ``t`` (held) on the empty square ``to``: a rank it can move from, no
    second pawn on a file, no mate by a pawn drop."""
    rank = _rank_from(us, to)
    if t == KNIGHT:
        return rank >= 2
    if t == LANCE:
        return rank >= 1
    if t != PAWN:
        return True
    if rank == 0:
        return False
    pawn = PAWN + WHITE_CODE * us
    f = to // 9 * 9
    for s in range(f, f + 9):
        if b[s] == pawn:
            return False
    king = b[KING + 1 - us]
    if king >= 0 and NEXT[to, _forward(us)] == king:  # rare: a pawn dropped between checks the other king
        return not _pawn_drop_check_mates(b, us, to)
    return True


@njit(**NO_REFCOUNTS)
def _pawn_drop_check_mates(b, us, to):
    """Whether a pawn dropped on ``to``, checking the king in front of it, leaves it no move (the drop is then
    illegal). Only the king's moves and captures of the pawn can answer it: nothing comes between, and the drop
    uncovers nothing."""
    them = 1 - us
    ksq = b[KING + them]
    if not _attacked(b, to, us):
        return False  # the king takes it
    put(b, to, PAWN + WHITE_CODE * us)
    mates = not _capturable(b, to, them, -1, ksq, b[:0], -1)
    if mates:
        king = b[ksq]
        put(b, ksq, 0)
        for d in range(KING_DIRECTIONS):
            e = NEXT[ksq, d]
            if e >= 0 and e != to and not _mine(b, e, them) and not _attacked(b, e, us):
                mates = False
                break
        put(b, ksq, king)
    put(b, to, 0)
    return mates


@njit(**NO_REFCOUNTS)
def _add_checks(b, out, n, us, frm, to, code, ksq, discovered):
    """Append the ways the piece ``code`` on ``frm`` may move to ``to`` (with and without promotion, as the rules
    allow) that give check: all of them when the move uncovers one. Returns the new count."""
    t = code & 15
    if t <= ROOK and (_zone(us, frm) or _zone(us, to)):
        if discovered or _reach(b, code + PROMOTED, to, ksq, frm):
            out[n] = _board_move(b, frm, to, 1)
            n += 1
        rank = _rank_from(us, to)
        if (t == PAWN or t == LANCE) and rank == 0 or t == KNIGHT and rank <= 1:
            return n  # it must promote
    if discovered or _reach(b, code, to, ksq, frm):
        out[n] = _board_move(b, frm, to, 0)
        n += 1
    return n


@njit(**NO_REFCOUNTS)
def _piece_checks(b, out, n, us, frm, code, ksq, dc):
    """Append the checking moves of the piece ``code`` on ``frm`` (all of its moves off the line to the king when
    ``dc``: they uncover a check); a king's only when they uncover one, and only to squares not attacked. Returns
    the new count."""
    them = 1 - us
    t = code & 15
    steps, slides = STEPS[code], SLIDES[code]
    for d in range(NUM_DIRECTIONS):
        step, slide = steps >> d & 1, slides >> d & 1
        if step == 0 and slide == 0:
            continue
        to = NEXT[frm, d]
        while to >= 0:
            target = b[to]
            if target != 0 and colour_of(target) == us:
                break
            if t == KING_TYPE:
                if dc and RELATION[frm, ksq] != RELATION[frm, to]:
                    put(b, frm, 0)
                    safe = not _attacked(b, to, them)
                    put(b, frm, code)
                    if safe:
                        out[n] = _board_move(b, frm, to, 0)
                        n += 1
            else:
                n = _add_checks(b, out, n, us, frm, to, code, ksq, dc and RELATION[frm, ksq] != RELATION[frm, to])
            if target != 0 or slide == 0:
                break
            to = NEXT[to, d]
    return n


@njit(**NO_REFCOUNTS)
def _gen_checks(b, out, checked, spare):
    """The legal moves of the side to move that give check (cshogi's CheckAll: non-promotions included), written to
    ``out``; when the side to move is itself in check (``checked``), only those that also answer it. ``spare`` is a
    state-sized scratch array. Returns the count."""
    us = b[TURN]
    them = 1 - us
    ksq = b[KING + them]
    uksq = b[KING + us]
    if ksq < 0:
        return 0
    n = 0
    dcs = spare[:8]  # our pieces whose move off the line uncovers a check
    ndc = _blockers(b, ksq, us, us, dcs)
    # The squares along the king's lines up to the first piece (included unless ours): a slider checks from there,
    # and they include the king's every neighbour a piece may move to.
    lines = spare[8:40]
    nlines = 0
    for d in range(KING_DIRECTIONS):
        x = NEXT[ksq, d]
        while x >= 0:
            if b[x] != 0:
                if colour_of(b[x]) != us:
                    lines[nlines] = x
                    nlines += 1
                break
            lines[nlines] = x
            nlines += 1
            x = NEXT[x, d]
    for frm in range(81):
        code = b[frm]
        if code == 0 or colour_of(code) != us:
            continue
        t = code & 15
        start = n
        if ndc and _listed(dcs, ndc, frm):
            n = _piece_checks(b, out, n, us, frm, code, ksq, True)
        elif t == BISHOP or t == ROOK or t == HORSE or t == DRAGON or t == LANCE:
            # a slider checks from the king's lines, or, promoted, from next to the king (on them too): try the
            # squares there it reaches
            f, r = frm // 9, frm % 9
            for i in range(nlines):
                to = lines[i]
                tf, tr = to // 9, to % 9
                if t == ROOK or t == DRAGON:
                    near = tf == f or tr == r or t == DRAGON and abs(tf - f) <= 1 and abs(tr - r) <= 1
                elif t == LANCE:
                    near = tf == f
                else:
                    near = abs(tf - f) == abs(tr - r) or t == HORSE and abs(tf - f) <= 1 and abs(tr - r) <= 1
                if near and _reach(b, code, frm, to, -1):  # (a cheap test of the geometry first)
                    n = _add_checks(b, out, n, us, frm, to, code, ksq, False)
        elif t != KING_TYPE:
            df, dr = abs(frm // 9 - ksq // 9), abs(frm % 9 - ksq % 9)
            if (df <= 2 and dr <= 4) if t == KNIGHT else (df <= 2 and dr <= 2):
                n = _piece_checks(b, out, n, us, frm, code, ksq, False)
        if n > start and t != KING_TYPE and _pinned_to(b, frm, uksq, them):  # a pinned piece keeps to its line
            kept = start
            for i in range(start, n):
                if RELATION[frm, uksq] == RELATION[frm, out[i] & 0x7F]:
                    out[kept] = out[i]
                    kept += 1
            n = kept
    hand = HAND + 7 * us
    for h in range(7):
        if b[hand + h] == 0:
            continue
        t = HAND_TYPES[h]
        code = t + WHITE_CODE * us
        if t == KNIGHT:
            for j in range(2):
                x = NEXT[ksq, KNIGHT_JUMPS[them, j]]
                if x >= 0 and b[x] == 0 and _rank_from(us, x) >= 2:
                    out[n] = _drop_move(t, x)
                    n += 1
            continue
        for d in range(KING_DIRECTIONS):
            toward = OPPOSITE[d]
            slide = SLIDES[code] >> toward & 1
            if not (STEPS[code] >> toward & 1 or slide):
                continue
            x = NEXT[ksq, d]
            while x >= 0 and b[x] == 0:
                if t == PAWN:
                    if _droppable_pawn_check(b, us, x):
                        out[n] = _drop_move(t, x)
                        n += 1
                elif t != LANCE or _rank_from(us, x) >= 1:
                    out[n] = _drop_move(t, x)
                    n += 1
                if slide == 0:
                    break
                x = NEXT[x, d]
    if checked:  # keep the checks that also leave our king safe
        kept = 0
        for i in range(n):
            for j in range(STATE):  # (element by element: no refcounts here)
                spare[j] = b[j]
            push(spare, out[i])
            if not _attacked(spare, spare[KING + us], them):
                out[kept] = out[i]
                kept += 1
        n = kept
    return n


@njit(**NO_REFCOUNTS)
def _droppable_pawn_check(b, us, to):
    """Whether a pawn of ``us`` may be dropped on ``to``, in front of the opponent's king: no second pawn on the
    file, and no mate by it."""
    pawn = PAWN + WHITE_CODE * us
    f = to // 9 * 9
    for s in range(f, f + 9):
        if b[s] == pawn:
            return False
    return not _pawn_drop_check_mates(b, us, to)


@njit(**NO_REFCOUNTS)
def _add_evasion(b, out, n, us, frm, to, code):
    """Append the moves of the piece ``code`` from ``frm`` to ``to`` that cshogi's evasion generator makes: it
    leaves out a pawn's, bishop's or rook's non-promotion where it could promote and a lance's on its second-last
    rank. Returns the new count."""
    t = code & 15
    if t > ROOK or not (_zone(us, frm) or _zone(us, to)):
        out[n] = _board_move(b, frm, to, 0)
        return n + 1
    out[n] = _board_move(b, frm, to, 1)
    n += 1
    rank = _rank_from(us, to)
    if t == SILVER or (t == KNIGHT and rank >= 2) or (t == LANCE and rank >= 2):
        out[n] = _board_move(b, frm, to, 0)
        n += 1
    return n


@njit(**NO_REFCOUNTS)
def _evasions_to(b, out, n, us, k, sq):
    """Append the moves of our pieces other than the king to ``sq`` (capturing the checker or blocking its line)
    that keep the king covered. Returns the new count."""
    lo, hi = _occupancy(b)
    for d in range(KING_DIRECTIONS):
        s = _nearest(lo, hi, sq, d)
        if s < 0:
            continue
        c = b[s]
        if c & 15 != KING_TYPE and (NEAR[us, d] if s == NEXT[sq, d] else FAR[us, d]) >> c & 1:
            if not _pinned_to(b, s, k, 1 - us) or RELATION[s, k] == RELATION[s, sq]:
                n = _add_evasion(b, out, n, us, s, sq, c)
    knight = KNIGHT + WHITE_CODE * us
    for j in range(2):
        s = KNIGHT_FROM[us, sq, j]
        if s >= 0 and b[s] == knight and not _pinned_to(b, s, k, 1 - us):
            n = _add_evasion(b, out, n, us, s, sq, knight)
    return n


@njit(**REFCOUNTED)
def _gen_evasions(b, out):
    """The evasions of the side to move, in check, as cshogi's mate search generates them (every legal evasion but
    the non-promotions :func:`_add_evasion` leaves out), written to ``out``: the king's moves first. Returns the
    count."""
    memo = np.zeros(MEMO, np.int64)
    return _other_evasions(b, out, _king_evasions(b, out, memo))


@njit(**NO_REFCOUNTS)
def _king_evasions(b, out, memo):
    """The king's evasions (to its flights, judged as the mate-in-one detector judges them: ``memo`` is filled for
    the attacker's side, see :func:`_judge_flights`), written to ``out``. Returns the count."""
    us = b[TURN]
    k = b[KING + us]
    memo[0] = 0
    flights = _judge_flights(b, 1 - us, k, memo)
    n = 0
    for d in range(KING_DIRECTIONS):
        if flights >> d & 1:
            out[n] = _board_move(b, k, NEXT[k, d], 0)
            n += 1
    return n


@njit(**NO_REFCOUNTS)
def _other_evasions(b, out, n):
    """The evasions but the king's (taking the checker, blocking its line) appended to the ``n`` moves in ``out``.
    Returns the new count."""
    us = b[TURN]
    them = 1 - us
    k = b[KING + us]
    n_chk, csq = _attackers_of(b, k, them, 2)
    if n_chk >= 2:
        return n
    n = _evasions_to(b, out, n, us, k, csq)
    d = DIR_OF[k, csq]
    if d < 0:
        return n
    hand = HAND + 7 * us
    s = NEXT[k, d]
    while s != csq:
        n = _evasions_to(b, out, n, us, k, s)
        for h in range(7):
            if b[hand + h] and _droppable(b, us, HAND_TYPES[h], s):
                out[n] = _drop_move(HAND_TYPES[h], s)
                n += 1
        s = NEXT[s, d]
    return n


# ------------------------------------------------------------------------------------------------------------------
# The odd-ply search: an AND/OR tree on an explicit stack

# A frame's fields; a defender's frame lists the king's evasions first (F_STAGE 0), the others once those are tried
# (F_STAGE 1), and keeps the king's flights (F_FLIGHTS, F_EXPOSED: memo[1] and [3] of _judge_flights) for its leaves.
F_KIND, F_DEPTH, F_BUDGET, F_CHECKED, F_ROW, F_COUNT, F_NEXT, F_STAGE, F_FLIGHTS, F_EXPOSED = range(10)
FRAME_FIELDS = 10


@njit(**NO_REFCOUNTS)
def _expand(states, moves, frames, k, spare):
    """Generate the children of frame ``k``: checks at the attacker's nodes, evasions at the defender's."""
    kind = frames[k, F_KIND]
    frames[k, F_NEXT] = 0
    if kind == OR_NODE or kind == OR3_NODE:
        frames[k, F_COUNT] = _gen_checks(states[k], moves[k], frames[k, F_CHECKED] != 0, spare)
        return
    memo = spare[:MEMO]  # (free until the next _gen_checks)
    n = _king_evasions(states[k], moves[k], memo)
    frames[k, F_FLIGHTS], frames[k, F_EXPOSED] = memo[1], memo[3]
    frames[k, F_STAGE] = 0
    if n == 0:  # no king move: the rest at once, so that a count of 0 is a mate
        n = _other_evasions(states[k], moves[k], 0)
        frames[k, F_STAGE] = 1
    frames[k, F_COUNT] = n


@njit(**NO_REFCOUNTS)
def _set_frame(frames, k, kind, depth, budget, checked, row):
    frames[k, F_KIND] = kind
    frames[k, F_DEPTH] = depth
    frames[k, F_BUDGET] = budget
    frames[k, F_CHECKED] = checked
    frames[k, F_ROW] = row


@njit(**NO_REFCOUNTS)
def _leaf(states, frames, k, move, scratch):
    """The mate in one after the defender's ``move`` from frame ``k`` (its position in ``states[k + 1]``)."""
    return _mate1_after(states[k + 1], scratch, move, states[k, KING + states[k, TURN]], frames[k, F_FLIGHTS],
                        frames[k, F_EXPOSED])


@njit(**NO_REFCOUNTS)
def _search(states, moves, frames, history, scratch, spare):
    """Prove or refute the node set up in frame 0 (its position in ``states[0]``): cshogi's mateMoveInOddPly /
    mateMoveInEvenPly / mateMoveIn3Ply, with a budget of plies on top (a frame's F_BUDGET: the mate must end within
    it; the search's full depth leaves it unbinding, smaller ones find the quickest mate).

    Node kinds: OR_NODE (attacker, depth >= 3: every check, a repetition verdict after it), AND_NODE (defender:
    every evasion, a repetition verdict after it; at depth 2 each must leave a mate in one without a check back, at
    depth 4 a three-ply mate, deeper an OR_NODE), OR3_NODE and AND3_NODE (mateMoveIn3Ply: a repetition verdict
    after each check as at an OR_NODE, a check back refutes, and an evasion is refuted only by a mate in one the
    repetition rules leave standing). Returns whether the attacker wins."""
    _expand(states, moves, frames, 0, spare)
    k = 0
    ret = -1  # the value of frame k's last child, -1 while there is none to take
    while True:
        kind = frames[k, F_KIND]
        attacker = kind == OR_NODE or kind == OR3_NODE
        if ret >= 0:
            if ret == (1 if attacker else 0):  # decides frame k
                if k == 0:
                    return ret == 1
                k -= 1
                continue
            ret = -1
        if frames[k, F_NEXT] == frames[k, F_COUNT] and not attacker and frames[k, F_STAGE] == 0:
            frames[k, F_STAGE] = 1  # the king's evasions all refuted: now the others
            frames[k, F_COUNT] = _other_evasions(states[k], moves[k], frames[k, F_COUNT])
        if frames[k, F_NEXT] == frames[k, F_COUNT]:
            ret = 0 if attacker else 1
            if k == 0:
                return ret == 1
            k -= 1
            continue
        move = moves[k, frames[k, F_NEXT]]
        frames[k, F_NEXT] += 1
        c = k + 1
        for j in range(STATE):  # (element by element: no refcounts here)
            states[c, j] = states[k, j]
        push(states[c], move)
        budget = frames[k, F_BUDGET]
        if kind == OR_NODE:
            row = frames[k, F_ROW] + 1
            remember_move(states[c], history, row, True)
            verdict = repetition(history, row, REPETITION_PLIES)
            if verdict == REPETITION_LOSE:  # the defender's perpetual check: a win
                ret = 1
                continue
            if verdict == REPETITION_DRAW or verdict == REPETITION_WIN or verdict == REPETITION_SUPERIOR:
                ret = 0
                continue
            _set_frame(frames, c, AND_NODE, frames[k, F_DEPTH] - 1, budget - 1, 0, row)
        elif kind == AND_NODE:
            checking = in_check(states[c])
            row = frames[k, F_ROW] + 1
            remember_move(states[c], history, row, checking)
            verdict = repetition(history, row, REPETITION_PLIES)
            if verdict == REPETITION_WIN:  # the defender's perpetual check: it loses by it
                ret = 1
                continue
            if verdict == REPETITION_DRAW or verdict == REPETITION_LOSE or verdict == REPETITION_INFERIOR:
                ret = 0
                continue
            if budget < 2:
                ret = 0
                continue
            depth = frames[k, F_DEPTH]
            if depth == 2:
                ret = 0 if checking else (1 if _leaf(states, frames, k, move, scratch) else 0)
                continue
            _set_frame(frames, c, OR3_NODE if depth == 4 else OR_NODE, depth - 1, budget - 1, checking, row)
        elif kind == OR3_NODE:
            row = frames[k, F_ROW] + 1
            remember_move(states[c], history, row, True)
            verdict = repetition(history, row, REPETITION_PLIES)
            if verdict == REPETITION_LOSE:
                ret = 1
                continue
            if verdict == REPETITION_DRAW or verdict == REPETITION_WIN or verdict == REPETITION_SUPERIOR:
                ret = 0
                continue
            _set_frame(frames, c, AND3_NODE, 0, budget - 1, 0, row)
            _expand(states, moves, frames, c, spare)
            if frames[c, F_COUNT] == 0:
                ret = 1
            elif budget - 1 < 2:
                ret = 0
            else:
                k = c
            continue
        else:  # AND3_NODE: a check back refutes; then the mate in one, then the repetition verdict
            if budget < 2 or in_check(states[c]):
                ret = 0
            elif not _leaf(states, frames, k, move, scratch):
                ret = 0
            else:
                row = frames[k, F_ROW] + 1
                remember_move(states[c], history, row, False)
                verdict = repetition(history, row, REPETITION_PLIES)
                ret = 0 if verdict == REPETITION_DRAW or verdict == REPETITION_LOSE or \
                    verdict == REPETITION_INFERIOR else 1
            continue
        _expand(states, moves, frames, c, spare)
        k = c


@njit(**NO_REFCOUNTS)
def _proof(states, moves, frames, history, scratch, spare, state, depth, budget, checked, row, kind):
    """The attacker's move that proves the attacker's node ``state`` within ``budget`` plies (the first, in the
    order the search tries them, that does), or 0 when none does."""
    for j in range(STATE):
        states[0, j] = state[j]
    _set_frame(frames, 0, kind, depth, budget, checked, row)
    if not _search(states, moves, frames, history, scratch, spare):
        return 0
    return moves[0, frames[0, F_NEXT] - 1]  # the child that decided the node


@njit(**NO_REFCOUNTS)
def _quickest(states, moves, frames, history, scratch, spare, state, kind, depth, most, checked, row):
    """The fewest plies within which the attacker's node ``state`` (frame fields as given), known to be proven
    within ``most``, is proven (the budgets below ``most`` are tried), and the move that proves it then (0 when that
    is ``most``, which was not searched again)."""
    for budget in range(1, most - 1, 2):
        move = _proof(states, moves, frames, history, scratch, spare, state, depth, budget, checked, row, kind)
        if move:
            return budget, move
    return most, 0


@njit(**REFCOUNTED)
def _line(states, moves, frames, history, scratch, spare, root, ply, row, line, first):
    """The line of a mate proven from ``root`` (an OR node of ``ply`` plies on history row ``row``; ``first`` the
    move that proved it): at each of the attacker's nodes the first check that mates quickest, at each of the
    defender's the evasion that holds out longest, the leaves' mate in one last. Written to ``line``; returns its
    length. (A line may end instead in a check that wins by the repetition rule, which cshogi's search counts as a
    mate.)"""
    cur = root.copy()
    child = np.empty(STATE, np.int64)
    own = np.empty(MAX_MOVES, np.uint32)
    kind, depth, checked = OR_NODE, ply, 1 if in_check(root) else 0
    budget, move = _quickest(states, moves, frames, history, scratch, spare, cur, kind, depth, ply, checked, row)
    if move == 0:
        move = first
    n = 0
    while True:
        # the attacker's node: its move is the one that proved it within its budget
        line[n] = move
        n += 1
        child[:] = cur
        push(child, move)
        remember_move(child, history, row + 1, True)
        if repetition(history, row + 1, REPETITION_PLIES) == REPETITION_LOSE:
            return n  # the defender's perpetual check: won by the repetition rule
        cur[:] = child
        kind = AND_NODE if kind == OR_NODE else AND3_NODE
        depth -= 1
        budget -= 1
        row += 1
        # the defender's node: the evasion whose refutation takes longest
        count = _gen_evasions(cur, own)
        if count == 0:
            return n  # mate
        best, best_need, best_move = -1, -1, 0
        for i in range(count):
            child[:] = cur
            push(child, own[i])
            checking = in_check(child)
            remember_move(child, history, row + 1, checking)
            if kind == AND_NODE and repetition(history, row + 1, REPETITION_PLIES) == REPETITION_WIN:
                continue  # it loses by the repetition rule: no line needed
            if kind == AND3_NODE or depth == 2:
                need, proof = 1, 0  # the leaf's mate in one
            else:
                need, proof = _quickest(states, moves, frames, history, scratch, spare, child,
                                        OR3_NODE if depth == 4 else OR_NODE, depth - 1, budget - 1,
                                        1 if checking else 0, row + 1)
            if need > best_need:
                best, best_need, best_move = i, need, proof
        if best < 0:
            return n
        child[:] = cur
        push(child, own[best])
        checking = in_check(child)
        line[n] = own[best]
        n += 1
        remember_move(child, history, row + 1, checking)
        row += 1
        if kind == AND3_NODE or depth == 2:
            scratch[24:] = 0
            line[n] = _mate1(child, scratch)
            return n + 1
        cur[:] = child
        kind = OR3_NODE if depth == 4 else OR_NODE
        depth -= 1
        budget = best_need
        checked = 1 if checking else 0
        move = best_move
        if move == 0:  # proven within the most it was given, which _quickest did not search again
            move = _proof(states, moves, frames, history, scratch, spare, cur, depth, budget, checked, row, kind)


MAX_ODD_PLY = 9  # the deepest odd-ply search a workspace is made for (USI LeafMatePly's most)


class MateWork(NamedTuple):
    """The odd-ply search's working arrays, made once and reused: a search that allocated its own each call spent
    about a fifth of a five-ply leaf check on making them (issue 70). One frame a ply, two spare."""

    states: np.ndarray
    moves: np.ndarray
    frames: np.ndarray
    scratch: np.ndarray
    spare: np.ndarray

    @staticmethod
    def empty(ply: int = MAX_ODD_PLY) -> MateWork:
        levels = ply + 2
        return MateWork(np.empty((levels, STATE), np.int64), np.empty((levels, MAX_MOVES), np.uint32),
                        np.zeros((levels, FRAME_FIELDS), np.int64), np.empty(SCRATCH, np.int64),
                        np.empty(STATE, np.int64))


@njit(**REFCOUNTED)
def mate_in_odd(b, history, row, ply, line):
    """cshogi's ``Board.mate_move(ply)`` verdict on ``b`` (``ply`` odd, 3 or more): whether the side to move mates
    within ``ply`` plies, checking at every move, by cshogi's search (see the module's docstring). In check, its
    first move must also answer the check (as at an attacker's node after a defender's check back). ``history``
    is board.history_of's array with ``row`` the row of ``b``'s position; the search writes rows ``row + 1`` on
    (room for ``ply`` of them is needed). On a mate, writes its line to ``line``
    (``ply`` long at least: the attacker's moves and the defender's replies, the attacker's quickest mate against
    the longest defence, ending in mate) and returns its length; else returns 0. (A line that wins by a repetition
    rule instead, cshogi's verdict too, ends at the move that brings the repetition about.)"""
    levels = max(ply, 1) + 2
    return mate_in_odd_with(np.empty((levels, STATE), np.int64), np.empty((levels, MAX_MOVES), np.uint32),
                            np.zeros((levels, FRAME_FIELDS), np.int64), np.empty(SCRATCH, np.int64),
                            np.empty(STATE, np.int64), b, history, row, ply, line)


@njit(**REFCOUNTED)
def mate_in_odd_with(states, moves, frames, scratch, spare, b, history, row, ply, line):
    """:func:`mate_in_odd` in the working arrays of a :class:`MateWork` made for ``ply`` plies or more."""
    if ply < 3 or ply % 2 == 0 or ply + 2 > len(states):
        raise ValueError("mate_in_odd searches an odd number of plies, three or more, within its workspace")
    states[0, :] = b
    _set_frame(frames, 0, OR_NODE, ply, ply, 1 if in_check(b) else 0, row)
    if not _search(states, moves, frames, history, scratch, spare):
        return 0
    first = moves[0, frames[0, F_NEXT] - 1]  # the check that proved it
    return _line(states, moves, frames, history, scratch, spare, b, ply, row, line, first)
