"""A batch's leaf side in one compiled call: the bandit searches' descents, each leaf's line made on the playout
core's board (:mod:`messiah.playout.board`), the leaf judged by the rules (the draw ply, repetitions with the
game's history before the root, the try, a declaration, mate), and each new leaf taken down for the network: its
legal moves, its feature planes and move indices straight into the batch's input arrays, its key and the leaf mate
check. Python then runs the network once and :func:`search.tree.expand_and_backup` expands and backs up.

Today's Python per leaf (push the line on cshogi's board, the legal moves, the pieces, the mate check, pop) cost
8-17 us a leaf before the loop's own Python (issue 70); here a leaf costs its compiled work only. Not yet the bandit
searches' path: measured on the 2-core machine, a leaf costs about 26 us here, 22 of them the five-ply mate check
(cshogi's takes 7), which left the search slower than today's (docs/benchmarks.md, "The playout core"); the
searches switch to it once its mate check is fast enough. tests/test_playout_leaves.py runs whole batches through it.
"""

from __future__ import annotations

from typing import NamedTuple

import cshogi
import numpy as np
from numba import njit

from messiah.evaluator import Evaluator, MoveScores
from messiah.features import SHAPE, _write
from messiah.moves import _FROM_TABLES, _TO_TABLES, _indices
from messiah.playout import board as core
from messiah.playout import mate as core_mate
from messiah.playout import rules as core_rules
from messiah.search.base import HANDS_REPETITION_PLY, MATE, MATE_STEP
from messiah.search.tree import CHILD, DROPPED, IN_FLIGHT, MAX_DEPTH, TERMINAL, Q, _add_terminal, select_leaf

MAX_MATE_LINE = 16  # moves of a leaf's mate line: the leaf check searches at most 9 plies
LOOKBACK = core.REPETITION_PLIES


class RuleSet(NamedTuple):
    """What the compiled leaves need of :class:`messiah.rules.GameRules`, as numbers."""

    entering_king: int
    draw_black: float
    draw_white: float
    max_moves: int

    @staticmethod
    def of(rules) -> RuleSet:
        return RuleSet(core_rules.rule_code(rules.entering_king), rules.draw_black, rules.draw_white, rules.max_moves)


class Leaves(NamedTuple):
    """A batch's buffers, made once for ``size`` simulations: per simulation its depth, its leaf's value (NaN:
    from the forward pass) and its leaf's row (-1: none); per leaf its planes, key, turn, the start of its moves
    among the batch's (with their indices), and its mate line."""

    depths: np.ndarray
    values: np.ndarray
    leaf: np.ndarray
    planes: np.ndarray
    keys: np.ndarray
    turns: np.ndarray
    offsets: np.ndarray
    moves: np.ndarray
    indices: np.ndarray
    mate_len: np.ndarray
    mate_lines: np.ndarray
    state: np.ndarray

    @staticmethod
    def empty(size: int) -> Leaves:
        return Leaves(np.zeros(size, np.int64), np.zeros(size), np.zeros(size, np.int64),
                      np.zeros((size, *SHAPE), np.float32), np.zeros(size, np.int64), np.zeros(size, np.int64),
                      np.zeros(size + 1, np.int64), np.zeros(size * core.MAX_MOVES, np.uint32),
                      np.zeros(size * core.MAX_MOVES, np.int64), np.zeros(size, np.int64),
                      np.zeros((size, MAX_MATE_LINE), np.uint32), np.zeros(core.STATE, np.int64))


@njit(cache=True, nogil=True)
def position_key(b):
    """One key for the whole position (board, side to move, hands): the tree's and the evaluation cache's."""
    return b[core.BOARD_KEY] ^ b[core.HAND_KEY]


@njit(cache=True, nogil=True)
def _draw_value(turn, ply, draw_black, draw_white):
    """A draw's value for the side to move (``turn``) of a position ``ply`` plies from the root, where the engine
    is to move (messiah.rules.GameRules.draw_value)."""
    engine = turn if ply % 2 == 0 else 1 - turn
    value = draw_black if engine == 0 else draw_white
    return value if ply % 2 == 0 else 1.0 - value


@njit(cache=True, nogil=True)
def _win_in(ply):
    return MATE - ply * MATE_STEP


@njit(cache=True, nogil=True)
def _ended(b, history, row, ply, rules, moves):
    """The value for the side to move if the line has ended at ``b`` (search.base.terminal_value's verdicts in its
    order), and whether it is a proof; NaN when it goes on. ``moves`` gets the legal moves; returns their count."""
    ek, draw_black, draw_white, max_moves = rules
    turn = b[core.TURN]
    count = -1
    if ply > 0:
        if max_moves and b[core.PLY] > max_moves:
            return _draw_value(turn, ply, draw_black, draw_white), False, count
        repetition = core.repetition(history, row, LOOKBACK)
        if repetition == core.REPETITION_DRAW:
            return _draw_value(turn, ply, draw_black, draw_white), False, count
        hands = ply >= HANDS_REPETITION_PLY  # other hands end a line only so far below the root (search.base)
        if repetition == core.REPETITION_WIN or (repetition == core.REPETITION_SUPERIOR and hands):
            return 1.0, False, count
        if repetition == core.REPETITION_LOSE or (repetition == core.REPETITION_INFERIOR and hands):
            return 0.0, False, count
        if core_rules.tried(b, ek):
            return 1.0 - _win_in(ply), True, count
    declared = core_rules.declaration(b, ek)
    if declared != core_rules.NO_DECLARATION:
        return _win_in(ply if declared == 0 else ply + 1), True, count
    count = core.legal_moves(b, moves)
    if count == 0:
        return 1.0 - _win_in(ply), True, count
    return np.nan, False, count


@njit(cache=True, nogil=True)
def gather(node_f, node_i, edge_f, edge_s, edge_i, used, rule, c, prior_visits, count, paths, line, root_state,
           history, root_row, rules, mate_ply, room, depths, values, leaf, planes, keys, turns, offsets, moves,
           indices, mate_len, mate_lines, state):
    """Run ``count`` descents from the root (node 0) and take their leaves down (see the module's docstring).
    Returns (the deepest ply, the simulations kept, the leaves to score). A simulation that ends on a proven node
    or a finished game gets its value now; one whose leaf waits for the network gets its row in ``leaf``. With
    no ``room`` (a full tree) a new leaf is valued by its move's Q and nothing is made."""
    deepest = pending = n = 0
    offsets[0] = 0
    for _ in range(count):
        depth, end = select_leaf(node_f, node_i, edge_f, edge_i, 0, rule, c, prior_visits, paths[pending], line)
        deepest = max(deepest, depth)
        if end == DROPPED:
            continue
        depths[pending] = depth
        leaf[pending] = -1
        values[pending] = np.nan
        if end >= 0:  # a proven node: its value
            values[pending] = node_f[end, TERMINAL]
            pending += 1
            continue
        edge = paths[pending, depth - 1]
        state[:] = root_state
        for k in range(depth):
            core.push(state, line[k])
            core.remember(state, history, root_row + 1 + k, 0)
        lo = offsets[n]
        value, proven, legal = _ended(state, history, root_row + depth, depth, rules, moves[lo:])
        if proven:  # mated, a declaration or a try: a proof
            value = min(1.0, max(0.0, value))
            values[pending] = value
            if room:
                edge_i[edge, CHILD] = _add_terminal(node_f, node_i, used, position_key(state), value, 0)
        elif not np.isnan(value):  # a repetition or the draw ply: its value, but no proof (the line may go on)
            values[pending] = value
        elif not room:
            values[pending] = 1.0 - edge_s[edge, Q]
        else:
            edge_i[edge, CHILD] = IN_FLIGHT
            leaf[pending] = n
            turn = state[core.TURN]
            keys[n], turns[n] = position_key(state), turn
            offsets[n + 1] = lo + legal
            indices[lo : lo + legal] = _indices(moves[lo : lo + legal], turn, _FROM_TABLES, _TO_TABLES)
            planes[n] = 0.0
            _write(state[:81], state[core.HAND : core.HAND + 14].reshape((2, 7)), turn, planes[n])
            mate_len[n] = _leaf_mate(state, history, root_row + depth, mate_ply, mate_lines[n])
            n += 1
        pending += 1
    return deepest, pending, n


@njit(cache=True, nogil=True)
def _leaf_mate(b, history, row, mate_ply, out):
    """The leaf mate check (search.mcts' ``_mate_line`` with LeafMatePly): a mate for the side to move, in one ply
    or else within ``mate_ply`` (odd), written to ``out``; its length, 0 for none. In check, only the odd-ply search
    (a check that answers the check and mates; the mate in one assumes no check). Not asked when the opponent has
    no king (a tsume problem's defender has nothing to mate)."""
    if b[core.KING + 1 - b[core.TURN]] < 0:
        return 0
    if not core.in_check(b):
        move = core_mate.mate_in_one(b)
        if move:
            out[0] = move
            return 1
    return core_mate.mate_in_odd(b, history, row, mate_ply, out)


def root_arrays(board: cshogi.Board) -> tuple[np.ndarray, np.ndarray, int]:
    """The root's state, the history the line's repetitions are judged with, and the root's row in it."""
    state, history, row = core.history_of(board, LOOKBACK)
    assert len(history) >= row + 1 + MAX_DEPTH
    return state, history, row


def leaf_mate_line(state: np.ndarray, history: np.ndarray, row: int, mate_ply: int) -> list[int]:
    """:func:`_leaf_mate` from Python (the root's node): the mate line found, or []."""
    line = np.zeros(MAX_MATE_LINE, np.uint32)
    return [int(m) for m in line[: _leaf_mate(state, history, row, mate_ply, line)]]


def score_state(evaluator: Evaluator, state: np.ndarray) -> MoveScores:
    """The evaluator's answer for a position of the core's board, its moves in the core's order (every node of the
    tree has its moves in that order, so a cached answer fits any leaf of the same position)."""
    moves = core.moves_of(state)
    turn = int(state[core.TURN])
    indices = _indices(moves, turn, _FROM_TABLES, _TO_TABLES)
    if not len(moves):
        return MoveScores(moves, indices, np.zeros(0, np.float32))
    planes = np.zeros((1, *SHAPE), np.float32)
    _write(state[:81], state[core.HAND : core.HAND + 14].reshape((2, 7)), turn, planes[0])
    return MoveScores(moves, indices, evaluator.run(planes, indices[None])[0])


@njit(cache=True, nogil=True)
def pad_rows(indices, offsets, rows):
    """The move indices of the leaves ``rows`` (their moves at [offsets[k], offsets[k + 1])) as the network's
    (len(rows), most moves) input, padded with index 0."""
    width = 0
    for k in rows:
        width = max(width, offsets[k + 1] - offsets[k])
    out = np.zeros((len(rows), width), np.int64)
    for j in range(len(rows)):
        lo, hi = offsets[rows[j]], offsets[rows[j] + 1]
        out[j, : hi - lo] = indices[lo:hi]
    return out


@njit(cache=True, nogil=True)
def scatter_rows(q, offsets, rows, out):
    """The network's (len(rows), width) answer back into the leaves' moves, end to end in ``out``."""
    for j in range(len(rows)):
        lo, hi = offsets[rows[j]], offsets[rows[j] + 1]
        out[lo:hi] = q[j, : hi - lo]

