"""The legal moves of the playout core's board (:mod:`messiah.playout.board`), as cshogi's: the king's moves to
squares not attacked, the other pieces' (a pinned piece along its pin; in check, only to the checker or the squares
between), promotions as the rules allow, and the drops (no pawn on a file twice, no mate by a pawn drop), with
perft to count them. Attacks, checkers and pins come from :mod:`~messiah.playout.attacks`; the pawn-drop mate rule
(:func:`pawn_drop_mates`) lives here once, and the mate searches' generators (:mod:`~messiah.playout.checks`) ask
it too. tests/test_playout_board.py holds the moves and perft against cshogi's.
"""

from __future__ import annotations

import numpy as np

from messiah.jit import njit
from messiah.playout.attacks import attacked, capturable, checks_and_pins, forward, mine
from messiah.playout.board import (
    HAND,
    HAND_TYPES,
    KING,
    KING_DIRECTIONS,
    KING_TYPE,
    MAX_MOVES,
    NEXT,
    NO_REFCOUNTS,
    NUM_DIRECTIONS,
    OPPOSITE,
    PAWN,
    REFCOUNTED,
    ROOK,
    SLIDES,
    STATE,
    STEPS,
    TURN,
    WHITE_CODE,
    colour_of,
    drop_move,
    encode_move,
    in_zone,
    keeps_a_move,
    pawn_on_file,
    push,
    put,
)


@njit(**NO_REFCOUNTS)
def _add_board_move(out, n, b, us, frm, to, code):
    """Append the moves of the piece ``code`` from ``frm`` to ``to``: with and without promotion as the rules
    allow. Returns the new count."""
    t = code & 15
    if t <= ROOK:  # promotable
        if in_zone(us, frm) or in_zone(us, to):
            out[n] = encode_move(frm, to, 1, t, b[to] & 15)
            n += 1
            if not keeps_a_move(t, us, to):
                return n  # it must promote
    out[n] = encode_move(frm, to, 0, t, b[to] & 15)
    return n + 1


@njit(**REFCOUNTED)
def _board_moves(b, out):
    """The legal king and board-piece moves of the side to move, written to ``out``. Returns their count, the
    number of checkers of the side to move's king, and the check mask (see
    :func:`~messiah.playout.attacks.checks_and_pins`)."""
    us = b[TURN]
    them = 1 - us
    king = b[KING + us]
    mask = np.zeros(81, np.bool_)
    pin = np.full(81, -1, np.int64)
    checkers = checks_and_pins(b, us, king, mask, pin) if king >= 0 else 0
    n = 0
    if king >= 0:  # the king: to a square not attacked once it has left its own
        code = b[king]
        put(b, king, 0)
        steps = STEPS[code]
        for d in range(KING_DIRECTIONS):
            if steps >> d & 1:
                to = NEXT[king, d]
                if to >= 0 and (b[to] == 0 or colour_of(b[to]) != us) and not attacked(b, to, them):
                    out[n] = encode_move(king, to, 0, KING_TYPE, b[to] & 15)
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
def pawn_drop_mates(b, us, to):
    """Whether a pawn of ``us`` dropped on ``to``, checking the king in front of it, leaves it no move: the drop is
    then illegal (uchifuzume). The rule's one home, asked by :func:`legal_moves` and by the mate searches' check and
    evasion generators (:mod:`~messiah.playout.checks`), and only for a drop that checks. Only the king's moves and
    captures of the pawn can answer it: nothing comes between, and the drop uncovers nothing."""
    them = 1 - us
    ksq = b[KING + them]
    if not attacked(b, to, us):
        return False  # the king takes it
    put(b, to, PAWN + WHITE_CODE * us)
    mates = not capturable(b, to, them, -1, ksq, b[:0], -1)
    if mates:
        king = b[ksq]
        put(b, ksq, 0)
        for d in range(KING_DIRECTIONS):
            e = NEXT[ksq, d]
            if e >= 0 and e != to and not mine(b, e, them) and not attacked(b, e, us):
                mates = False
                break
        put(b, ksq, king)
    put(b, to, 0)
    return mates


@njit(**REFCOUNTED)
def legal_moves(b, out):
    """The legal moves of the side to move as cshogi moves, written to ``out`` (MAX_MOVES long): returns their
    count. Board moves first (from the king, then by square), then drops."""
    n, checkers, mask = _board_moves(b, out)
    if checkers >= 2:
        return n
    us = b[TURN]
    them = 1 - us
    enemy_king = b[KING + them]
    pawn_files = np.zeros(9, np.bool_)
    for f in range(9):
        pawn_files[f] = pawn_on_file(b, us, f * 9, -1)
    for h in range(7):
        if b[HAND + 7 * us + h] == 0:
            continue
        t = HAND_TYPES[h]
        for to in range(81):
            if b[to] or (checkers and not mask[to]):
                continue
            if not keeps_a_move(t, us, to):
                continue
            if t == PAWN:
                if pawn_files[to // 9]:
                    continue  # two pawns on a file
                if enemy_king >= 0 and NEXT[to, forward(us)] == enemy_king and pawn_drop_mates(b, us, to):
                    continue  # a pawn dropped in front of the king may not mate it
            out[n] = drop_move(t, to)
            n += 1
    return n


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


def moves_of(b: np.ndarray) -> np.ndarray:
    """The legal moves of a state as a uint32 array (a convenience for tests and tools; the search writes into
    its own buffers)."""
    out = np.empty(MAX_MOVES, np.uint32)
    return out[: legal_moves(b, out)].copy()
