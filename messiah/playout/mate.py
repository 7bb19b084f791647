"""cshogi's odd-ply mate search (``Board.mate_move(ply)``, ``mateMoveInOddPly``) on the playout core's board, with
cshogi's verdicts: every new leaf of the search asks it (search/playout.py), so it is asked of the compiled board
without leaving numba (tests/test_playout_mate.py holds it against cshogi).

At the attacker's nodes every checking move, at the defender's every evasion (:mod:`messiah.playout.checks`), a
repetition verdict (``is_draw(16)``) after every move, the last three plies searched by ``mateMoveIn3Ply`` (a
defender's check there refutes), the last ply by the mate-in-one detector (:mod:`messiah.playout.mate_one`). On
success it also writes the line: the attacker's quickest mate in that search against the defender's longest
defence. It assumes the opponent has a king; in check it looks for a check that answers the check and mates, as
cshogi's does.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from messiah.jit import njit
from messiah.playout.attacks import (
    MEMO,
    MEMO_EXPOSED,
    MEMO_FLIGHTS,
    in_check,
)
from messiah.playout.board import (
    KING,
    MAX_MOVES,
    NO_REFCOUNTS,
    REFCOUNTED,
    STATE,
    TURN,
    push,
)
from messiah.playout.checks import (
    gen_checks,
    gen_evasions,
    king_evasions,
    other_evasions,
)
from messiah.playout.history import (
    REPETITION_DRAW,
    REPETITION_INFERIOR,
    REPETITION_LOSE,
    REPETITION_SUPERIOR,
    REPETITION_WIN,
    remember_move,
    repetition,
)
from messiah.playout.mate_one import (
    SCRATCH,
    SCRATCH_MEMO,
    mate1,
    mate1_after,
)
from messiah.rules import REPETITION_PLIES

# --- the searches' node kinds (an explicit stack: numba's cache cannot hold recursive functions): OR_NODE (attacker,
# depth >= 3: every check, a repetition verdict after it), AND_NODE (defender: every evasion, a repetition verdict
# after it; at depth 2 each must leave a mate in one without a check back, at depth 4 a three-ply mate, deeper an
# OR_NODE), OR3_NODE and AND3_NODE (mateMoveIn3Ply: a repetition verdict after each check as at an OR_NODE, a check
# back refutes, and an evasion is refuted only by a mate in one the repetition rules leave standing).
OR_NODE, AND_NODE, OR3_NODE, AND3_NODE = range(4)


# ------------------------------------------------------------------------------------------------------------------
# The odd-ply search: an AND/OR tree on an explicit stack

# A frame's fields; a defender's frame lists the king's evasions first (F_STAGE 0), the others once those are tried
# (F_STAGE 1), and keeps the king's flights (F_FLIGHTS, F_EXPOSED: its flight memo's) for its leaves.
F_KIND, F_DEPTH, F_BUDGET, F_CHECKED, F_ROW, F_COUNT, F_NEXT, F_STAGE, F_FLIGHTS, F_EXPOSED = range(10)
FRAME_FIELDS = 10


@njit(**NO_REFCOUNTS)
def _expand(states, moves, frames, k, spare):
    """Generate the children of frame ``k``: checks at the attacker's nodes, evasions at the defender's."""
    kind = frames[k, F_KIND]
    frames[k, F_NEXT] = 0
    if kind == OR_NODE or kind == OR3_NODE:
        frames[k, F_COUNT] = gen_checks(states[k], moves[k], frames[k, F_CHECKED] != 0, spare)
        return
    memo = spare[:MEMO]  # (free until the next gen_checks)
    n = king_evasions(states[k], moves[k], memo)
    frames[k, F_FLIGHTS], frames[k, F_EXPOSED] = memo[MEMO_FLIGHTS], memo[MEMO_EXPOSED]
    frames[k, F_STAGE] = 0
    if n == 0:  # no king move: the rest at once, so that a count of 0 is a mate
        n = other_evasions(states[k], moves[k], 0)
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
    return mate1_after(states[k + 1], scratch, move, states[k, KING + states[k, TURN]], frames[k, F_FLIGHTS],
                        frames[k, F_EXPOSED])


@njit(**NO_REFCOUNTS)
def _after_check(b, history, row):
    """The repetition verdict on the attacker's check that led to ``b`` (history row ``row``): 1 when it wins (the
    defender's perpetual check), 0 when it is refuted (a draw, or a repetition the defender gains by), -1 when the
    search goes on."""
    remember_move(b, history, row, True)
    verdict = repetition(history, row, REPETITION_PLIES)
    if verdict == REPETITION_LOSE:  # the defender's perpetual check: a win
        return 1
    if verdict == REPETITION_DRAW or verdict == REPETITION_WIN or verdict == REPETITION_SUPERIOR:
        return 0
    return -1


@njit(**NO_REFCOUNTS)
def _after_evasion(b, history, row, checking):
    """The repetition verdict on the defender's evasion that led to ``b`` (history row ``row``; ``checking``: it
    gives check): 1 when the attacker wins by it (the defender's perpetual check), 0 when it refutes (a draw, or a
    repetition the attacker loses by), -1 when the search goes on."""
    remember_move(b, history, row, checking)
    verdict = repetition(history, row, REPETITION_PLIES)
    if verdict == REPETITION_WIN:  # the defender's perpetual check: it loses by it
        return 1
    if verdict == REPETITION_DRAW or verdict == REPETITION_LOSE or verdict == REPETITION_INFERIOR:
        return 0
    return -1


@njit(**NO_REFCOUNTS)
def _search(states, moves, frames, history, scratch, spare):
    """Prove or refute the node set up in frame 0 (its position in ``states[0]``): cshogi's mateMoveInOddPly /
    mateMoveInEvenPly / mateMoveIn3Ply, with a budget of plies on top (a frame's F_BUDGET: the mate must end within
    it; the search's full depth leaves it unbinding, smaller ones find the quickest mate), by node kind (see their
    constants). Returns whether the attacker wins."""
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
            frames[k, F_COUNT] = other_evasions(states[k], moves[k], frames[k, F_COUNT])
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
            ret = _after_check(states[c], history, row)
            if ret >= 0:
                continue
            _set_frame(frames, c, AND_NODE, frames[k, F_DEPTH] - 1, budget - 1, 0, row)
        elif kind == AND_NODE:
            checking = in_check(states[c])
            row = frames[k, F_ROW] + 1
            ret = _after_evasion(states[c], history, row, checking)
            if ret >= 0:
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
            ret = _after_check(states[c], history, row)
            if ret >= 0:
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
                ret = 0 if _after_evasion(states[c], history, frames[k, F_ROW] + 1, False) == 0 else 1
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
        count = gen_evasions(cur, own)
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
            scratch[SCRATCH_MEMO:SCRATCH] = 0
            line[n] = mate1(child, scratch)
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
def mate_in_odd(work, b, history, row, ply, line):
    """cshogi's ``Board.mate_move(ply)`` verdict on ``b`` (``ply`` odd, 3 or more): whether the side to move mates
    within ``ply`` plies, checking at every move, by cshogi's search (see the module's docstring). In check, its
    first move must also answer the check (as at an attacker's node after a defender's check back). ``history``
    is history.history_of's array with ``row`` the row of ``b``'s position; the search writes rows ``row + 1`` on
    (room for ``ply`` of them is needed). On a mate, writes its line to ``line``
    (``ply`` long at least: the attacker's moves and the defender's replies, the attacker's quickest mate against
    the longest defence, ending in mate) and returns its length; else returns 0. (A line that wins by a repetition
    rule instead, cshogi's verdict too, ends at the move that brings the repetition about.) The search works in
    ``work``, a :class:`MateWork` made for ``ply`` plies or more."""
    states, moves, frames, scratch, spare = work
    if ply < 3 or ply % 2 == 0 or ply + 2 > len(states):
        raise ValueError("mate_in_odd searches an odd number of plies, three or more, within its workspace")
    states[0, :] = b
    _set_frame(frames, 0, OR_NODE, ply, ply, 1 if in_check(b) else 0, row)
    if not _search(states, moves, frames, history, scratch, spare):
        return 0
    first = moves[0, frames[0, F_NEXT] - 1]  # the check that proved it
    return _line(states, moves, frames, history, scratch, spare, b, ply, row, line, first)
