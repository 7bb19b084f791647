"""cshogi's mate-in-one detector (Apery's, with YaneuraOu's additions) on the playout core's board, with cshogi's
verdicts: ``Board.mate_move_in_1ply()`` asked of the compiled board, so that a leaf can answer it without leaving
numba (tests/test_playout_mate.py holds it against cshogi).

It is not a complete mate-in-one search: it looks at checks by a piece next to the king (or a knight), distant drops
and moves along a line only when the defender holds nothing but pawns, double checks, and discovered checks near
the king when the defender holds nothing but pawns. A mate outside those shapes (a distant rook drop while the
defender has a gold in hand, a discovered check by a far piece...) is not found. It follows each of those rules,
cautious ones included, since the odd-ply search (:mod:`messiah.playout.mate`) calls it at its leaves and its
verdicts depend on them. It assumes the opponent has a king and the side to move is not in check (cshogi's does).
"""

from __future__ import annotations

import numpy as np

from messiah.jit import njit
from messiah.playout.attacks import (
    ADJACENT,
    B_HAND,
    DIR_OF,
    DRAGON,
    EDGE,
    G_HAND,
    GUARD,
    HORSE,
    KNIGHT_FROM,
    L_HAND,
    MEMO,
    MEMO_EXPOSED,
    MEMO_FLIGHTS,
    MEMO_JUDGED,
    MOST_GUARD,
    N_HAND,
    P_HAND,
    R_HAND,
    RELATION,
    S_HAND,
    WALL,
    attacked,
    attacked_occ,
    attacker_along,
    attackers_of,
    blockers,
    capturable,
    forward,
    judge_flights,
    mine,
    occupancy,
    pinned_to,
    reach,
)
from messiah.playout.board import (
    BISHOP,
    GOLD,
    HAND,
    KING,
    KING_DIRECTIONS,
    KING_TYPE,
    KNIGHT,
    KNIGHT_JUMPS,
    LANCE,
    NE,
    NEXT,
    NO_REFCOUNTS,
    NUM_DIRECTIONS,
    NW,
    OPPOSITE,
    PAWN,
    PROMOTED,
    REFCOUNTED,
    ROOK,
    SE,
    SILVER,
    SLIDES,
    STEPS,
    SW,
    TURN,
    WHITE_CODE,
    E,
    N,
    S,
    W,
    board_move,
    drop_move,
    in_zone,
    keeps_a_move,
    pawn_on_file,
    put,
    rank_from,
)

# The mate-in-one detector's scratch (SCRATCH int64): our pieces whose move uncovers a check (blockers, 8 at most),
# the defender's pieces between its king and our sliders (8), and the flight memo.
SCRATCH_UNCOVERING, SCRATCH_BLOCKING, SCRATCH_MEMO = 0, 8, 16
SCRATCH = SCRATCH_MEMO + MEMO


@njit(**NO_REFCOUNTS)
def _near(a, b, reach):
    """Whether b is within ``reach`` files and ranks of a."""
    return abs(a // 9 - b // 9) <= reach and abs(a % 9 - b % 9) <= reach


@njit(**NO_REFCOUNTS)
def _pawn_droppable(b, colour, sq, taken):
    """cshogi's canPawnDrop: ``colour`` holds a pawn and may drop it on ``sq`` by the rank and the file, once the
    piece on ``taken`` is captured (-1: none; cshogi's discovered check asks it of the squares a check must not be
    blocked on). The pawn-drop mate is not asked."""
    return (b[HAND + 7 * colour + P_HAND] != 0 and keeps_a_move(PAWN, colour, sq)
            and not pawn_on_file(b, colour, sq, taken))


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
            if reach(b, code, to, e, -1) if actual else EDGE[code, to, e]:
                mask |= 1 << d
    return mask


@njit(**NO_REFCOUNTS)
def _has_flight(b, us, ksq, cover, to, to_open):
    """Whether the king on ``ksq`` (the opponent of ``us``) has a neighbour to go to: not its own piece's, not in
    ``cover``, not attacked by ``us`` on ``b`` as it stands (the caller sets the occupancy cshogi judges on), and not
    ``to`` unless ``to_open`` (the checking piece's square, which the king may take)."""
    them = 1 - us
    lo, hi = occupancy(b)
    for d in range(KING_DIRECTIONS):
        e = NEXT[ksq, d]
        if e < 0:
            continue
        if e == to:
            if not to_open:
                continue
        elif cover >> d & 1 or mine(b, e, them):
            continue
        if not attacked_occ(b, lo, hi, e, us):
            return True
    return False


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
    return s >= 0 and mine(b, s, us) and (SLIDES[b[s]] >> OPPOSITE[d] & 1) == 1


@njit(**NO_REFCOUNTS)
def _flight_left(b, us, ksq, memo, cover, to, frm):
    """Whether a flight (``memo``, every neighbour judged) stays open to the king after a check from ``to`` that
    guards ``cover`` (a bit a direction: a superset of what cshogi counts the piece to guard), the piece lifted from
    ``frm`` (-1 for a drop; ``b`` must still hold it). When one does, no rule of the detector finds the check
    mating, so it is not judged further. With ``frm`` < -1 no piece in particular is lifted: a flight some lift
    could close does not count."""
    left = memo[MEMO_FLIGHTS] & ~cover
    if left == 0:
        return False
    if to >= 0 and ADJACENT[ksq, to]:
        left &= ~(1 << DIR_OF[ksq, to])
    if left == 0 or frm == -1:
        return left != 0
    if left & ~memo[MEMO_EXPOSED]:
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
    if supported and not attacked(b, to, us):
        return False
    if _escapes_contact(b, us, ksq, to, code, False):
        return False
    return not capturable(b, to, 1 - us, -1, ksq, b[:0], -1)


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
    behind = OPPOSITE[forward(us)]  # the king's neighbour on our side of it, from which a lance checks
    viable = 0  # the empty neighbours a piece dropped on could guard every flight from
    for d in range(KING_DIRECTIONS):
        to = NEXT[ksq, d]
        if to >= 0 and b[to] == 0 and not _flight_left(b, us, ksq, memo, MOST_GUARD[d], to, -1):
            viable |= 1 << d
    if has_r:
        for d in (N, E, S, W):
            to = NEXT[ksq, d]
            if viable >> d & 1 and _drop_mates_contact(b, us, ksq, to, ROOK, True, memo):
                return drop_move(ROOK, to)
    elif has_l and rank_from(us, ksq) < 8:
        to = NEXT[ksq, behind]
        if viable >> behind & 1 and _drop_mates_contact(b, us, ksq, to, LANCE, True, memo):
            return drop_move(LANCE, to)
    if has_b:
        for d in (NE, SE, SW, NW):
            to = NEXT[ksq, d]
            if viable >> d & 1 and _drop_mates_contact(b, us, ksq, to, BISHOP, True, memo):
                return drop_move(BISHOP, to)
    gold, silver = GOLD + WHITE_CODE * us, SILVER + WHITE_CODE * us
    if has_g:
        beyond = NEXT[ksq, forward(us)]  # with a rook in hand, a gold there is a rook's weaker copy
        for d in range(KING_DIRECTIONS):
            to = NEXT[ksq, d]
            if not viable >> d & 1 or not EDGE[gold, to, ksq] or (has_r and to == beyond):
                continue
            if _drop_mates_contact(b, us, ksq, to, GOLD, True, memo):
                return drop_move(GOLD, to)
    if has_s and not (has_g and has_b):
        for d in range(KING_DIRECTIONS):
            to = NEXT[ksq, d]
            if not viable >> d & 1 or not EDGE[silver, to, ksq]:
                continue
            if has_g:  # only the squares a gold cannot check from: diagonally beyond the king
                if rank_from(us, to) >= rank_from(us, ksq):
                    continue
            elif has_b and not EDGE[gold, to, ksq]:  # the diagonals beyond were the bishop's
                continue
            if _drop_mates_contact(b, us, ksq, to, SILVER, True, memo):
                return drop_move(SILVER, to)
    if has_n and not _flight_left(b, us, ksq, memo, 0, -1, -1):  # a knight guards none of the king's neighbours
        for j in range(2):
            to = NEXT[ksq, KNIGHT_JUMPS[them, j]]
            if to >= 0 and _drop_mates_contact(b, us, ksq, to, KNIGHT, False, memo):
                return drop_move(KNIGHT, to)
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
    mates = (not supported or attacked(b, to, us)) and not _escapes_contact(b, us, ksq, to, cover, actual)
    put(b, frm, code)
    if mates and pinned_to(b, frm, uksq, 1 - us) and (knight or RELATION[frm, uksq] != RELATION[frm, to]):
        mates = False
    if mates and not (pinned_to(b, frm, ksq, us) and (knight or RELATION[frm, ksq] != RELATION[frm, to])):
        put(b, frm, 0)  # not a double check: no piece may take it (pins as they stand with frm empty)
        mates = not capturable(b, to, 1 - us, -1, ksq, b[:0], -1)
        put(b, frm, code)
    return board_move(b, frm, to, promote) if mates else 0


@njit(**NO_REFCOUNTS)
def _contact_mates(b, us, ksq, uksq, frm, code, to, memo):
    """cshogi's contact checks of the piece ``code`` on ``frm`` moving to the king's neighbour ``to`` (which it
    reaches): the move that mates, or 0. Where a promotion would check at least as well, only it is tried, as
    there."""
    them = 1 - us
    t = code & 15
    gold, silver = GOLD + WHITE_CODE * us, SILVER + WHITE_CODE * us
    zone_from = in_zone(us, frm)
    behind = OPPOSITE[forward(us)]
    if t == KNIGHT:  # a knight's jump next to the king checks only promoted
        if EDGE[gold, to, ksq] and in_zone(us, to):
            return _try_contact(b, us, ksq, uksq, frm, code, to, 1, gold, False, True, True, memo)
        return 0
    if t == PAWN:
        krank = rank_from(us, ksq)
        if krank >= 7:
            return 0
        if krank < 3 and EDGE[gold, to, ksq] and in_zone(us, to):
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
        promote = zone_from or in_zone(us, to)
        if not promote and (DIR_OF[ksq, to] % 2 == 0) != (t == ROOK):
            return 0  # unpromoted, it checks only along its own lines
        if promote:  # cshogi judges a promoting rook's guard on the board, a bishop's on an empty one
            return _try_contact(b, us, ksq, uksq, frm, code, to, 1, code + PROMOTED, t == ROOK, True, False, memo)
        return _try_contact(b, us, ksq, uksq, frm, code, to, 0, code, False, True, False, memo)
    if t == SILVER:
        if (zone_from or (rank_from(us, frm) == 3 and in_zone(us, to))) and EDGE[gold, to, ksq]:
            m = _try_contact(b, us, ksq, uksq, frm, code, to, 1, gold, False, True, False, memo)
            if m:
                return m
        # from the zone, short of the king's rank, a promoted silver checks wherever a silver does
        if EDGE[silver, to, ksq] and not (zone_from and rank_from(them, to) < rank_from(them, ksq)):
            return _try_contact(b, us, ksq, uksq, frm, code, to, 0, silver, False, True, False, memo)
        return 0
    if t == LANCE:
        if EDGE[gold, to, ksq] and in_zone(us, to):
            m = _try_contact(b, us, ksq, uksq, frm, code, to, 1, gold, False, True, False, memo)
            if m:
                return m
        if to == NEXT[ksq, behind] and rank_from(us, to) >= 2:
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
    lo, hi = occupancy(b)  # (the board is as it was after each try)
    for t in range(KING_DIRECTIONS):
        to = NEXT[ksq, t]
        if to < 0 or mine(b, to, us) or _flight_left(b, us, ksq, memo, MOST_GUARD[t], to, -2):
            continue
        for d in range(KING_DIRECTIONS):
            s = attacker_along(b, lo, hi, to, d, us)
            if s >= 0:
                m = _contact_mates(b, us, ksq, uksq, s, b[s], to, memo)
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
        if x < 0 or mine(b, x, us) or _flight_left(b, us, ksq, memo, 0, x, -2):
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
        if e < 0 or mine(b, e, them) or EDGE[guard, to, e]:
            continue
        if not attacked(b, e, us):
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
    behind = OPPOSITE[forward(us)]
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
        if pinned_to(b, frm, uksq, them) and RELATION[frm, uksq] != RELATION[frm, to]:
            continue
        code = b[frm]
        t = code & 15
        wide = diagonal or (t != LANCE and (in_zone(us, frm) or in_zone(us, to) or t == DRAGON))
        cover = _guard(rook, to, ksq) | (_guard(bishop, to, ksq) if wide else 0)
        if _flight_left(b, us, ksq, memo, cover, to, frm):
            continue
        ndct = blockers(b, ksq, us, them, dct)  # the pins as they stand before the move, which cshogi keeps
        put(b, frm, 0)
        # neither the moved piece taken nor ``one`` blocked (by a piece other than the one taken on ``to``)
        free = not capturable(b, to, them, -1, ksq, dct, ndct) and not capturable(b, one, them, to, ksq, dct, ndct)
        mate = False
        if free:
            saved = b[to]
            if saved == 0:
                put(b, to, WALL)
            mate = True
            for e_d in range(KING_DIRECTIONS):
                e = NEXT[ksq, e_d]
                if e < 0 or mine(b, e, them) or EDGE[rook, to, e] or (wide and EDGE[bishop, to, e]):
                    continue
                if not attacked(b, e, us):
                    mate = False
                    break
            put(b, to, saved)
        put(b, frm, code)
        if mate:
            promote = 1 if t != LANCE and t < PROMOTED and (in_zone(us, frm) or in_zone(us, to)) else 0
            return board_move(b, frm, to, promote)
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
        if e >= 0 and not mine(b, e, them) and (memo[MEMO_FLIGHTS] >> d & 1 or not attacked(b, e, us)):
            open_now += 1
    if open_now >= 4:
        return 0
    behind = OPPOSITE[forward(us)]
    for d in range(KING_DIRECTIONS):
        one = NEXT[ksq, d]
        if one < 0 or b[one] != 0:
            continue
        to = NEXT[one, d]
        if to < 0 or mine(b, to, us):
            continue
        if _pawn_droppable(b, them, one, -1):
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
        if t and b[to] == 0 and not capturable(b, one, them, -1, ksq, b[:0], -1) \
                and not capturable(b, to, them, -1, ksq, b[:0], -1):
            guard = (BISHOP if diagonal else ROOK) + WHITE_CODE * us  # a lance's too: its sides miss the king
            if _line_drop_mates(b, us, ksq, to, guard, memo):
                return drop_move(t, to)
            if open_now <= 2:  # one square further: the drop on `to` may have blocked one of our lines
                far = NEXT[to, d]
                if far >= 0 and b[far] == 0 and not _pawn_droppable(b, them, to, -1) \
                        and not capturable(b, far, them, -1, ksq, b[:0], -1) \
                        and _line_drop_mates(b, us, ksq, far, guard, memo):
                    return drop_move(t, far)
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
        pinned = pinned_to(b, frm, uksq, 1 - us)
        for d in range(NUM_DIRECTIONS):
            step, slide = STEPS[code] >> d & 1, SLIDES[code] >> d & 1
            if step == 0 and slide == 0:
                continue
            to = NEXT[frm, d]
            while to >= 0:
                if mine(b, to, us):
                    break
                if not ADJACENT[ksq, to] and reach(b, line, ksq, to, -1) \
                        and RELATION[frm, ksq] != RELATION[frm, to] \
                        and not (pinned and RELATION[frm, uksq] != RELATION[frm, to]):
                    promote = t < PROMOTED and (in_zone(us, frm) or in_zone(us, to))
                    if not _cangoto(b, us, ksq, frm, to, code - PROMOTED if t > PROMOTED else code,
                                    king if promote or t > PROMOTED else 0, memo):
                        return board_move(b, frm, to, 1 if promote else 0)
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
        if capturable(b, s, them, to, ksq, b[:0], -1):
            return False
        if s != frm and b[s] != 0:
            return True
        if _pawn_droppable(b, them, s, to):
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
        if t == KNIGHT and not 2 <= rank_from(us, frm) <= 4:
            continue  # only jumps that may promote
        n_att, att = attackers_of(b, frm, them, 2)  # the defender's attackers of frm, its king left out
        if n_att >= 2:
            continue
        pinned = pinned_to(b, frm, uksq, 1 - us)
        for d in range(NUM_DIRECTIONS):
            step, slide = STEPS[code] >> d & 1, SLIDES[code] >> d & 1
            if step == 0 and slide == 0:
                continue
            to = NEXT[frm, d]
            while to >= 0:
                blocked = b[to] != 0
                # to the one attacker, or anywhere near the king; never to a square from which the piece checks
                target = att == to if n_att == 1 else _near(to, ksq, 2) and not mine(b, to, us)
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
    if _pawn_droppable(b, them, frm, to):
        return 0  # the defender drops a pawn where the piece stood
    saved_to = b[to]
    put(b, frm, 0)
    if saved_to == 0:
        put(b, to, WALL)
    blockable = capturable(b, frm, them, to, ksq, b[:0], -1)  # a defender steps onto the square left
    put(b, to, saved_to)
    put(b, frm, code)
    if blockable:
        return 0
    if ADJACENT[ksq, to]:  # next to the king, the piece needs a defender other than itself (seen through frm)
        put(b, frm, 0)
        defended = attacked(b, to, us)
        put(b, frm, code)
        if not defended:
            return 0
    promotable = in_zone(us, frm) or in_zone(us, to)
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
        if not reach(b, guard, to, ksq, -1):  # a check by the piece too is a double check, judged above
            cover = _cover(b, guard, to, ksq, actual)
            put(b, ksq, 0)
            flight = _has_flight(b, us, ksq, cover, -1, False)
            put(b, ksq, KING_TYPE + WHITE_CODE * them)
            mate = not flight and _line_open(b, us, ksq, frm, to)
        put(b, to, saved_to)
        put(b, frm, code)
        if mate:
            return board_move(b, frm, to, promote)
    return 0


@njit(**NO_REFCOUNTS)
def mate1(b, scratch):
    """cshogi's mate-in-one detector on ``b`` (side to move not in check): a mating move, or 0. ``scratch`` holds at
    least SCRATCH int64, its flight memo set (its judged mask at least: 0 for none)."""
    us = b[TURN]
    them = 1 - us
    ksq = b[KING + them]
    if ksq < 0:
        return 0
    uksq = b[KING + us]
    memo = scratch[SCRATCH_MEMO:SCRATCH]
    judge_flights(b, us, ksq, memo)  # (memo[MEMO_JUDGED] says what the caller already knows)
    m = _mate1_drops(b, us, ksq, memo)
    if m:
        return m
    m = _mate1_moves(b, us, ksq, uksq, memo)
    if m:
        return m
    dcu, dct = scratch[SCRATCH_UNCOVERING:SCRATCH_BLOCKING], scratch[SCRATCH_BLOCKING:SCRATCH_MEMO]
    ndcu = blockers(b, ksq, us, us, dcu)
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
    return mate1(b, scratch)


@njit(**NO_REFCOUNTS)
def mate1_after(b, scratch, move, king_from, flights, exposed):
    """:func:`mate1` on the position a defender's evasion ``move`` led to, told the flights and exposable squares
    of the defender's king before it (``flights`` and ``exposed``, on ``king_from``): when the move took the king to
    an empty square, the board with either king square empty is the same, so what was judged of the squares next to
    both stands."""
    memo = scratch[SCRATCH_MEMO:SCRATCH]
    memo[MEMO_JUDGED] = memo[MEMO_FLIGHTS] = memo[MEMO_EXPOSED] = 0
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
        memo[MEMO_JUDGED], memo[MEMO_FLIGHTS], memo[MEMO_EXPOSED] = known, seen, exposable
    return mate1(b, scratch)
