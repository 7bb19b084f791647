"""Attacks on the playout core's board (:mod:`messiah.playout.board`), the one home of attack queries for the legal
move generator (:mod:`~messiah.playout.movegen`), the rules and the mate searches: the geometry tables (lines,
rays, the squares between, what a piece guards around a king), the nearest piece along a ray, whether a square is
attacked and whether the side to move is in check, the checkers of a king and the pieces pinned to it, the pieces
standing alone between a king and a slider, whether a piece can be captured, and the defending king's flights as
cshogi's mate-in-one detector judges them.

The board is an array, so attacks are found along rays; to find the nearest piece along a ray quickly, the
functions below take the occupied squares as a two-word bit board (the state's ``OCCUPIED`` and ``SLIDERS``, which
:func:`~messiah.playout.board.put` keeps: a square changed for a moment must be changed through it) and count zero
bits (LLVM's cttz and ctlz).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from messiah.jit import njit
from messiah.playout.board import (
    BISHOP,
    BLACK,
    DELTAS,
    KING,
    KING_DIRECTIONS,
    KING_TYPE,
    KNIGHT,
    KNIGHT_JUMPS,
    NEXT,
    NO_REFCOUNTS,
    NUM_DIRECTIONS,
    OCCUPIED,
    OPPOSITE,
    PROMOTED,
    ROOK,
    SLIDERS,
    SLIDES,
    STEPS,
    TURN,
    WHITE_CODE,
    N,
    S,
    colour_of,
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
# A flight memo's slots (see judge_flights), a bit a direction from the defending king each.
MEMO_JUDGED, MEMO_FLIGHTS, MEMO_EXPOSED = range(3)
MEMO = 3


# ------------------------------------------------------------------------------------------------------------------
# The nearest piece, attacks, pins


@njit(**NO_REFCOUNTS)
def forward(colour):
    """The direction ``colour``'s pawns move in."""
    return N if colour == BLACK else S


@njit(**NO_REFCOUNTS)
def mine(b, sq, colour):
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
def occupancy(b):
    """The occupied squares of ``b`` (the WALL included) as a bit board: squares 0-63, then 64-80, as the state
    keeps them (board.put writes every square the functions below change for a moment)."""
    return np.uint64(b[OCCUPIED]), np.uint64(b[OCCUPIED + 1])


@njit(**NO_REFCOUNTS)
def nearest(lo, hi, sq, d):
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
def attacked_occ(b, lo, hi, sq, by):
    """Whether a piece of ``by`` attacks ``sq``, ``lo``/``hi`` being ``b``'s occupancy."""
    for d in range(KING_DIRECTIONS):
        s = nearest(lo, hi, sq, d)
        if s >= 0 and (NEAR[by, d] if s == NEXT[sq, d] else FAR[by, d]) >> b[s] & 1:
            return True
    knight = KNIGHT + WHITE_CODE * by
    for j in range(2):
        s = KNIGHT_FROM[by, sq, j]
        if s >= 0 and b[s] == knight:
            return True
    return False


@njit(**NO_REFCOUNTS)
def attacked(b, sq, by):
    """Whether a piece of ``by`` attacks ``sq`` (pinned pieces and the king included)."""
    lo, hi = occupancy(b)
    return attacked_occ(b, lo, hi, sq, by)


@njit(**NO_REFCOUNTS)
def in_check(b):
    """Whether the side to move's king is attacked (never, for a side with no king)."""
    us = b[TURN]
    king = b[KING + us]
    return king >= 0 and attacked(b, king, 1 - us)


@njit(**NO_REFCOUNTS)
def checks_and_pins(b, us, king, mask, pin):
    """The checkers of ``us``'s king on ``king``, as the legal move generator needs them: returns their count and
    sets in ``mask`` the squares a non-king move must end on to answer the check (the checker and, for a distant
    slider, the squares between), and in ``pin`` the direction from the king of each pinned piece of ``us`` (the
    other squares left as they are)."""
    them = 1 - us
    checkers = 0
    lo, hi = occupancy(b)
    for d in range(KING_DIRECTIONS):
        s = nearest(lo, hi, king, d)
        if s < 0:
            continue
        code = b[s]
        if colour_of(code) == them:
            if (NEAR[them, d] if s == NEXT[king, d] else FAR[them, d]) >> code & 1:
                checkers += 1
                r = NEXT[king, d]
                while True:
                    mask[r] = True
                    if r == s:
                        break
                    r = NEXT[r, d]
            continue
        x = nearest(lo, hi, s, d)  # our piece shields the king: pinned if a slider of theirs aims through it
        if x >= 0 and colour_of(b[x]) == them and SLIDES[b[x]] >> OPPOSITE[d] & 1:
            pin[s] = d
    knight = KNIGHT + WHITE_CODE * them
    for j in range(2):
        s = KNIGHT_FROM[them, king, j]
        if s >= 0 and b[s] == knight:
            checkers += 1
            mask[s] = True
    return checkers


@njit(**NO_REFCOUNTS)
def reach(b, code, frm, sq, skip):
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
def pinned_to(b, s, k, by):
    """Whether the piece on ``s`` is the only piece between the king square ``k`` and a slider of colour ``by``
    aimed at it (a pin when the piece is the king's, a discovered-check candidate when it is the slider's)."""
    if k < 0:
        return False
    d = DIR_OF[k, s]
    if d < 0:
        return False
    lo, hi = occupancy(b)
    if nearest(lo, hi, k, d) != s:
        return False
    x = nearest(lo, hi, s, d)
    if x < 0:
        return False
    c = b[x]
    return colour_of(c) == by and (SLIDES[c] >> OPPOSITE[d] & 1) == 1


@njit(**NO_REFCOUNTS)
def listed(squares, count, sq):
    for i in range(count):
        if squares[i] == sq:
            return True
    return False


@njit(**NO_REFCOUNTS)
def blockers(b, k, slider, blocker, out):
    """The pieces of colour ``blocker`` that stand alone between the king square ``k`` and a slider of colour
    ``slider`` aimed at it, written to ``out``: returns their count (at most eight, one a direction)."""
    n = 0
    if k < 0:
        return 0
    lo, hi = occupancy(b)
    for d in range(KING_DIRECTIONS):
        s = nearest(lo, hi, k, d)
        if s < 0 or colour_of(b[s]) != blocker:
            continue
        x = nearest(lo, hi, s, d)
        if x >= 0 and colour_of(b[x]) == slider and SLIDES[b[x]] >> OPPOSITE[d] & 1:
            out[n] = s
            n += 1
    return n


@njit(**NO_REFCOUNTS)
def capturable(b, sq, by, avoid, k, pins, npins):
    """Whether a piece of ``by`` other than its king (and other than the one on ``avoid``) can move to ``sq``
    without leaving its king on ``k`` open to a pinner (cshogi's canPieceCapture / can_piece_capture). The pinned
    pieces are those listed in ``pins`` (``npins`` of them), or, with ``npins`` < 0, those pinned on ``b`` as it
    stands."""
    lo, hi = occupancy(b)
    for d in range(KING_DIRECTIONS):
        s = nearest(lo, hi, sq, d)
        if s < 0 or s == avoid:
            continue
        c = b[s]
        if c & 15 != KING_TYPE and (NEAR[by, d] if s == NEXT[sq, d] else FAR[by, d]) >> c & 1:
            pinned = listed(pins, npins, s) if npins >= 0 else pinned_to(b, s, k, 1 - by)
            if not pinned or RELATION[s, k] == RELATION[s, sq]:
                return True
    knight = KNIGHT + WHITE_CODE * by
    for j in range(2):
        s = KNIGHT_FROM[by, sq, j]
        if s >= 0 and s != avoid and b[s] == knight:
            pinned = listed(pins, npins, s) if npins >= 0 else pinned_to(b, s, k, 1 - by)
            if not pinned or RELATION[s, k] == RELATION[s, sq]:
                return True
    return False


@njit(**NO_REFCOUNTS)
def attacker_along(b, lo, hi, sq, d, by):
    """The square of the nearest piece from ``sq`` in direction ``d`` (``lo``, ``hi``: the occupancy) when it is a
    piece of ``by`` other than its king that attacks ``sq`` from there, else -1."""
    s = nearest(lo, hi, sq, d)
    if s < 0:
        return -1
    c = b[s]
    if c & 15 != KING_TYPE and (NEAR[by, d] if s == NEXT[sq, d] else FAR[by, d]) >> c & 1:
        return s
    return -1


@njit(**NO_REFCOUNTS)
def attackers_of(b, sq, by, most):
    """How many pieces of ``by`` other than its king attack ``sq``, counted up to ``most``; and the last one's
    square."""
    n = 0
    last = -1
    lo, hi = occupancy(b)
    for d in range(KING_DIRECTIONS):
        s = attacker_along(b, lo, hi, sq, d, by)
        if s >= 0:
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


# The detector's first test of a check: the king's neighbours it leaves open. ``memo`` (MEMO int64 a position) holds,
# a bit a direction from the king: MEMO_JUDGED the neighbours judged, MEMO_FLIGHTS the flights among them (not the
# king's own pieces' and not attacked by the attacker even with the king's square empty), MEMO_EXPOSED the exposable
# flights (a piece of the attacker's alone blocks one of its sliders from it: lifting that piece may close the
# flight). The detector judges them all before its first test (judging them one by one as its tests ask came out
# slower); an evasion of the king hands on to the detector at its leaf what it judged of the squares the leaf's king
# shares with it.


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
    lo, hi = occupancy(b)
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
        if mine(b, s, us):
            attacked |= NEXT_GUARD[b[s], s // 9 - kf, s % 9 - kr]
    while near_hi:
        s = 64 + np.int64(_cttz(near_hi))
        near_hi &= near_hi - np.uint64(1)
        if mine(b, s, us):
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
                    if s >= 0 and mine(b, s, us):
                        behind |= 1 << d
    return attacked, behind


@njit(**NO_REFCOUNTS)
def judge_flights(b, us, ksq, memo):
    """Judge every neighbour of the king on ``ksq`` (the opponent of ``us``) into ``memo`` at once, but those
    ``memo[MEMO_JUDGED]`` marks as judged already. Returns the flights: the neighbours on the board that hold none of
    the king's side's pieces and that ``us`` does not attack with the king's square empty (the exposable among them:
    those a slider of ours reaches through one piece of ours)."""
    them = 1 - us
    attacked, behind = _neighbour_attacks(b, us, ksq)
    flights = 0
    for d in range(KING_DIRECTIONS):
        e = NEXT[ksq, d]
        if e >= 0 and not attacked >> d & 1 and not mine(b, e, them):
            flights |= 1 << d
    known = memo[MEMO_JUDGED]
    flights = (memo[MEMO_FLIGHTS] & known) | (flights & ~known)
    memo[MEMO_JUDGED] = 0xFF
    memo[MEMO_FLIGHTS] = flights
    memo[MEMO_EXPOSED] = (memo[MEMO_EXPOSED] & known) | (behind & flights & ~known)
    return flights
