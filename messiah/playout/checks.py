"""The moves the odd-ply mate search (:mod:`messiah.playout.mate`) tries, as cshogi's search generates them: at the
attacker's nodes every legal check (cshogi's CheckAll, non-promotions included; in check, only those that also
answer it), at the defender's every legal evasion but the non-promotions cshogi's evasion generator leaves out (a
pawn, bishop or rook that could promote, a lance to its second-last rank), the king's moves first
(tests/test_playout_mate.py holds both against cshogi's).
"""

from __future__ import annotations

import numpy as np

from messiah.jit import njit
from messiah.playout.attacks import (
    DIR_OF,
    DRAGON,
    HORSE,
    KNIGHT_FROM,
    MEMO,
    MEMO_JUDGED,
    RELATION,
    attacked,
    attacker_along,
    attackers_of,
    blockers,
    forward,
    judge_flights,
    listed,
    occupancy,
    pinned_to,
    reach,
)
from messiah.playout.board import (
    BISHOP,
    HAND,
    HAND_TYPES,
    KING,
    KING_DIRECTIONS,
    KING_TYPE,
    KNIGHT,
    KNIGHT_JUMPS,
    LANCE,
    NEXT,
    NO_REFCOUNTS,
    NUM_DIRECTIONS,
    OPPOSITE,
    PAWN,
    PROMOTED,
    REFCOUNTED,
    ROOK,
    SILVER,
    SLIDES,
    STATE,
    STEPS,
    TURN,
    WHITE_CODE,
    board_move,
    colour_of,
    drop_move,
    in_zone,
    keeps_a_move,
    pawn_on_file,
    push,
    put,
    rank_from,
)
from messiah.playout.movegen import pawn_drop_mates

# The odd-ply search's spare state (STATE int64) lends its first slots to the check generator: the pieces that
# uncover a check (8), then the squares along the king's lines (32 at most: 8 lines of 4 or fewer, a piece ends
# each); or to a defender's node, its flight memo.
SPARE_UNCOVERING, SPARE_LINES, SPARE_LINES_END = 0, 8, 40


# ------------------------------------------------------------------------------------------------------------------
# Move generation for the search: the attacker's checks, the defender's evasions


@njit(**NO_REFCOUNTS)
def _droppable(b, us, t, to):
    """Whether ``us`` may drop the piece type ``t`` (held) on the empty square ``to``: a rank it can move from, no
    second pawn on a file, no mate by a pawn drop."""
    if not keeps_a_move(t, us, to):
        return False
    if t != PAWN:
        return True
    if pawn_on_file(b, us, to, -1):
        return False
    king = b[KING + 1 - us]
    if king >= 0 and NEXT[to, forward(us)] == king:  # rare: a pawn dropped between checks the other king
        return not pawn_drop_mates(b, us, to)
    return True


@njit(**NO_REFCOUNTS)
def _add_checks(b, out, n, us, frm, to, code, ksq, discovered):
    """Append the ways the piece ``code`` on ``frm`` may move to ``to`` (with and without promotion, as the rules
    allow) that give check: all of them when the move uncovers one. Returns the new count."""
    t = code & 15
    if t <= ROOK and (in_zone(us, frm) or in_zone(us, to)):
        if discovered or reach(b, code + PROMOTED, to, ksq, frm):
            out[n] = board_move(b, frm, to, 1)
            n += 1
        if not keeps_a_move(t, us, to):
            return n  # it must promote
    if discovered or reach(b, code, to, ksq, frm):
        out[n] = board_move(b, frm, to, 0)
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
                    safe = not attacked(b, to, them)
                    put(b, frm, code)
                    if safe:
                        out[n] = board_move(b, frm, to, 0)
                        n += 1
            else:
                n = _add_checks(b, out, n, us, frm, to, code, ksq, dc and RELATION[frm, ksq] != RELATION[frm, to])
            if target != 0 or slide == 0:
                break
            to = NEXT[to, d]
    return n


@njit(**NO_REFCOUNTS)
def gen_checks(b, out, checked, spare):
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
    dcs = spare[SPARE_UNCOVERING:SPARE_LINES]  # our pieces whose move off the line uncovers a check
    ndc = blockers(b, ksq, us, us, dcs)
    # The squares along the king's lines up to the first piece (included unless ours): a slider checks from there,
    # and they include the king's every neighbour a piece may move to.
    lines = spare[SPARE_LINES:SPARE_LINES_END]
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
        if ndc and listed(dcs, ndc, frm):
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
                if near and reach(b, code, frm, to, -1):  # (a cheap test of the geometry first)
                    n = _add_checks(b, out, n, us, frm, to, code, ksq, False)
        elif t != KING_TYPE:
            df, dr = abs(frm // 9 - ksq // 9), abs(frm % 9 - ksq % 9)
            if (df <= 2 and dr <= 4) if t == KNIGHT else (df <= 2 and dr <= 2):
                n = _piece_checks(b, out, n, us, frm, code, ksq, False)
        if n > start and t != KING_TYPE and pinned_to(b, frm, uksq, them):  # a pinned piece keeps to its line
            kept = start
            for i in range(start, n):
                if RELATION[frm, uksq] == RELATION[frm, out[i] & 0x7F]:
                    out[kept] = out[i]
                    kept += 1
            n = kept
    n = _drop_checks(b, out, n, us, ksq)
    return _keep_safe(b, out, n, us, spare) if checked else n


@njit(**NO_REFCOUNTS)
def _drop_checks(b, out, n, us, ksq):
    """Append the drops of ``us`` that check the king on ``ksq``. Returns the new count."""
    them = 1 - us
    hand = HAND + 7 * us
    for h in range(7):
        if b[hand + h] == 0:
            continue
        t = HAND_TYPES[h]
        code = t + WHITE_CODE * us
        if t == KNIGHT:
            for j in range(2):
                x = NEXT[ksq, KNIGHT_JUMPS[them, j]]
                if x >= 0 and b[x] == 0 and keeps_a_move(KNIGHT, us, x):
                    out[n] = drop_move(t, x)
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
                        out[n] = drop_move(t, x)
                        n += 1
                elif keeps_a_move(t, us, x):
                    out[n] = drop_move(t, x)
                    n += 1
                if slide == 0:
                    break
                x = NEXT[x, d]
    return n


@njit(**NO_REFCOUNTS)
def _keep_safe(b, out, n, us, spare):
    """Keep of the ``n`` moves in ``out`` those that leave the king of ``us`` unattacked (``spare``: a state to make
    each on). Returns their count."""
    them = 1 - us
    kept = 0
    for i in range(n):
        for j in range(STATE):  # (element by element: no refcounts here)
            spare[j] = b[j]
        push(spare, out[i])
        if not attacked(spare, spare[KING + us], them):
            out[kept] = out[i]
            kept += 1
    return kept


@njit(**NO_REFCOUNTS)
def _droppable_pawn_check(b, us, to):
    """Whether a pawn of ``us`` may be dropped on ``to``, in front of the opponent's king: no second pawn on the
    file, and no mate by it."""
    return not pawn_on_file(b, us, to, -1) and not pawn_drop_mates(b, us, to)


@njit(**NO_REFCOUNTS)
def _add_evasion(b, out, n, us, frm, to, code):
    """Append the moves of the piece ``code`` from ``frm`` to ``to`` that cshogi's evasion generator makes: it
    leaves out a pawn's, bishop's or rook's non-promotion where it could promote and a lance's on its second-last
    rank. Returns the new count."""
    t = code & 15
    if t > ROOK or not (in_zone(us, frm) or in_zone(us, to)):
        out[n] = board_move(b, frm, to, 0)
        return n + 1
    out[n] = board_move(b, frm, to, 1)
    n += 1
    rank = rank_from(us, to)
    if t == SILVER or (t == KNIGHT and rank >= 2) or (t == LANCE and rank >= 2):
        out[n] = board_move(b, frm, to, 0)
        n += 1
    return n


@njit(**NO_REFCOUNTS)
def _evasions_to(b, out, n, us, k, sq):
    """Append the moves of our pieces other than the king to ``sq`` (capturing the checker or blocking its line)
    that keep the king covered. Returns the new count."""
    lo, hi = occupancy(b)
    for d in range(KING_DIRECTIONS):
        s = attacker_along(b, lo, hi, sq, d, us)
        if s >= 0 and (not pinned_to(b, s, k, 1 - us) or RELATION[s, k] == RELATION[s, sq]):
            n = _add_evasion(b, out, n, us, s, sq, b[s])
    knight = KNIGHT + WHITE_CODE * us
    for j in range(2):
        s = KNIGHT_FROM[us, sq, j]
        if s >= 0 and b[s] == knight and not pinned_to(b, s, k, 1 - us):
            n = _add_evasion(b, out, n, us, s, sq, knight)
    return n


@njit(**REFCOUNTED)
def gen_evasions(b, out):
    """The evasions of the side to move, in check, as cshogi's mate search generates them (every legal evasion but
    the non-promotions :func:`_add_evasion` leaves out), written to ``out``: the king's moves first. Returns the
    count."""
    memo = np.zeros(MEMO, np.int64)
    return other_evasions(b, out, king_evasions(b, out, memo))


@njit(**NO_REFCOUNTS)
def king_evasions(b, out, memo):
    """The king's evasions (to its flights, judged as the mate-in-one detector judges them: ``memo`` is filled for
    the attacker's side, see :func:`judge_flights`), written to ``out``. Returns the count."""
    us = b[TURN]
    k = b[KING + us]
    memo[MEMO_JUDGED] = 0
    flights = judge_flights(b, 1 - us, k, memo)
    n = 0
    for d in range(KING_DIRECTIONS):
        if flights >> d & 1:
            out[n] = board_move(b, k, NEXT[k, d], 0)
            n += 1
    return n


@njit(**NO_REFCOUNTS)
def other_evasions(b, out, n):
    """The evasions but the king's (taking the checker, blocking its line) appended to the ``n`` moves in ``out``.
    Returns the new count."""
    us = b[TURN]
    them = 1 - us
    k = b[KING + us]
    n_chk, csq = attackers_of(b, k, them, 2)
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
                out[n] = drop_move(HAND_TYPES[h], s)
                n += 1
        s = NEXT[s, d]
    return n
