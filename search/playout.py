"""A batch's leaf side in one compiled call: the bandit searches' descents, each leaf's line made on the playout
core's board (:mod:`messiah.playout.board`), the leaf judged by the rules (the draw ply, repetitions with the
game's history before the root, the try, a declaration, mate), and each new leaf taken down for the network: its
legal moves, its feature planes and move indices straight into the batch's input arrays, its key and the leaf mate
check. Python then runs the network once and :func:`search.tree.expand_and_backup` expands and backs up.

The Python leaves this replaced (push the line on cshogi's board, the legal moves, the pieces, the mate check, pop)
cost 8-17 us a leaf before the loop's own Python (issue 70); here a leaf costs its compiled work only, and the
network's answers are kept in a compiled cache (:class:`LeafCache`) rather than as Python objects. It is the bandit
searches' only leaf path (:class:`CoreLeaves`, issue 93); tests/test_playout_leaves.py runs whole batches through it
and holds its searches to those Python leaves' (kept in tests/python_leaves.py as the oracle).
"""

from __future__ import annotations

from typing import NamedTuple

import cshogi
import numpy as np

from messiah.evaluator import Evaluator, MoveScores
from messiah.features import SHAPE, _write
from messiah.jit import njit
from messiah.moves import _FROM_TABLES, _TO_TABLES, _indices
from messiah.playout import attacks as core_attacks
from messiah.playout import board as core
from messiah.playout import history as core_history
from messiah.playout import mate as core_mate
from messiah.playout import mate_one
from messiah.playout import movegen as core_moves
from messiah.playout import rules as core_rules
from messiah.playout.mate import MateWork
from messiah.rules import MAX_LEGAL_MOVES, REPETITION_PLIES
from messiah.search.base import HANDS_REPETITION_PLY, MATE, MATE_STEP
from messiah.search.tree import (
    DROPPED,
    IN_FLIGHT,
    MAX_DEPTH,
    add_terminal,
    edge_q,
    link,
    proven_value,
    select_in,
)

MAX_MATE_LINE = 16  # moves of a leaf's mate line: the leaf check searches at most 9 plies


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
    from the forward pass) and its leaf's row (-1: none). A row is a new node to make: its key, the start of
    its moves among the batch's (with their indices and Q). The rows the network scores (the others' Q came from
    the cache) are listed in ``rows``, their planes in that order; a leaf proven by the mate check has its node and
    mate line in ``mate_nodes`` and ``mate_lines``."""

    depths: np.ndarray
    values: np.ndarray
    leaf: np.ndarray
    keys: np.ndarray
    offsets: np.ndarray
    moves: np.ndarray
    indices: np.ndarray
    q: np.ndarray
    rows: np.ndarray
    planes: np.ndarray
    mate_nodes: np.ndarray
    mate_len: np.ndarray
    mate_lines: np.ndarray
    state: np.ndarray

    @staticmethod
    def empty(size: int) -> Leaves:
        moves = size * core.MAX_MOVES
        return Leaves(np.zeros(size, np.int64), np.zeros(size), np.zeros(size, np.int64),
                      np.zeros(size, np.int64), np.zeros(size + 1, np.int64),
                      np.zeros(moves, np.uint32), np.zeros(moves, np.int64), np.zeros(moves, np.float32),
                      np.zeros(size, np.int64), np.zeros((size, *SHAPE), np.float32), np.zeros(size, np.int64),
                      np.zeros(size, np.int64), np.zeros((size, MAX_MATE_LINE), np.uint32),
                      np.zeros(core.STATE, np.int64))


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
        repetition = core_history.repetition(history, row, REPETITION_PLIES)
        if repetition == core_history.REPETITION_DRAW:
            return _draw_value(turn, ply, draw_black, draw_white), False, count
        hands = ply >= HANDS_REPETITION_PLY  # other hands end a line only so far below the root (search.base)
        if repetition == core_history.REPETITION_WIN:  # the opponent's perpetual check: a proof (search.base)
            return _win_in(ply), True, count
        if repetition == core_history.REPETITION_LOSE:
            return 1.0 - _win_in(ply), True, count
        if repetition == core_history.REPETITION_SUPERIOR and hands:
            return 1.0, False, count
        if repetition == core_history.REPETITION_INFERIOR and hands:
            return 0.0, False, count
        if core_rules.tried(b, ek):
            return 1.0 - _win_in(ply), True, count
    declared = core_rules.declaration(b, ek)
    if declared != core_rules.NO_DECLARATION:
        return _win_in(ply if declared == 0 else ply + 1), True, count
    count = core_moves.legal_moves(b, moves)
    if count == 0:
        return 1.0 - _win_in(ply), True, count
    return np.nan, False, count


# --- the bandit searches' evaluation cache: the network's answers by position key, in compiled code
CACHE_WAYS = 4  # slots a key may sit in; a new answer replaces the oldest of them
CACHE_MOVES_A_SLOT = 64  # pool values a slot is sized for: about a middlegame's legal moves
S_KEY, S_START, S_COUNT = range(3)


class LeafCache(NamedTuple):
    """The network's Q of each scored leaf's moves (the core's move order, which every node of a position shares),
    by position key: a table of ``slots`` (key, where its values start, their count; count -1: empty) and a
    ``pool`` written as a ring. ``head[0]`` is where the next answer goes, counted from the first (never wrapped),
    so an answer is whole while the ring has not come round over it: start + len(pool) >= head. A full cache loses
    its oldest answers first, as the evaluation cache's least-recently-used one does (search.base), but by age."""

    slots: np.ndarray
    pool: np.ndarray
    head: np.ndarray

    @staticmethod
    def of_bytes(max_bytes: int) -> LeafCache:
        """A cache in about ``max_bytes`` (at least room for one position's moves)."""
        # float32s, each with its share of a slot's 24 bytes
        pool = max(2 * core.MAX_MOVES, int(max_bytes / (4 + 24 / CACHE_MOVES_A_SLOT)))
        slots = 1 << max(4, int(pool // CACHE_MOVES_A_SLOT).bit_length() - 1)
        table = np.zeros((slots, 3), np.int64)
        table[:, S_COUNT] = -1
        return LeafCache(table, np.zeros(pool, np.float32), np.zeros(1, np.int64))

    def clear(self) -> None:
        self.slots[:, S_COUNT] = -1
        self.head[0] = 0


@njit(cache=True, nogil=True)
def _cache_slot(slots, key):
    """The first of ``key``'s CACHE_WAYS slots."""
    return (key ^ (key >> 29)) & (len(slots) - 1)


@njit(cache=True, nogil=True)
def cache_find(cache, key, count):
    """Where the cached answer of ``key`` with ``count`` moves starts in the :class:`LeafCache`'s pool, or -1."""
    slots, pool, head = cache
    first = _cache_slot(slots, key)
    for w in range(CACHE_WAYS):
        s = (first + w) & (len(slots) - 1)
        if slots[s, S_KEY] == key and slots[s, S_COUNT] == count and slots[s, S_START] + len(pool) >= head[0]:
            return slots[s, S_START] % len(pool)
    return -1


@njit(cache=True, nogil=True)
def cache_store(cache, keys, q, offsets, rows):
    """Keep the answers of the leaves ``rows`` (row k's key ``keys[k]``, its Q at q[offsets[k]:offsets[k + 1]]) in
    the :class:`LeafCache`."""
    slots, pool, head = cache
    size = len(pool)
    for k in rows:
        lo, hi = offsets[k], offsets[k + 1]
        count = hi - lo
        start = head[0]
        if start % size + count > size:  # an answer is never split over the ring's end
            start += size - start % size
        first = _cache_slot(slots, keys[k])
        best = first
        for w in range(CACHE_WAYS):
            s = (first + w) & (len(slots) - 1)
            if slots[s, S_KEY] == keys[k] or slots[s, S_COUNT] < 0:
                best = s
                break
            if slots[s, S_START] < slots[best, S_START]:
                best = s
        at = start % size
        for i in range(count):
            pool[at + i] = q[lo + i]
        slots[best, S_KEY], slots[best, S_START], slots[best, S_COUNT] = keys[k], start, count
        head[0] = start + count


@njit(cache=True, nogil=True)
def _walk(state, root, line, depth):
    """Set ``state`` to the position ``depth`` moves of ``line`` below the root (a :func:`root_arrays` triple), each
    position of the line remembered in the root's history after the root's row."""
    root_state, history, root_row = root
    for i in range(core.STATE):
        state[i] = root_state[i]
    for k in range(depth):
        core.push(state, line[k])
        core_history.remember(state, history, root_row + 1 + k, 0)


@njit(cache=True, nogil=True)
def _add_row(batch, n, scored, key, legal, cache, at):
    """Row ``n`` of the batch for the new leaf on ``batch.state`` (its ``legal`` moves already at offsets[n]): its
    key and its moves' end, and its Q from the cache (``at``: where its answer starts, -1 for none), else its planes
    and move indices for the network. Returns the rows the network scores so far."""
    state, lo = batch.state, batch.offsets[n]
    batch.keys[n] = key
    batch.offsets[n + 1] = lo + legal
    if at >= 0:
        for i in range(legal):
            batch.q[lo + i] = cache.pool[at + i]
        return scored
    turn = state[core.TURN]
    batch.indices[lo : lo + legal] = _indices(batch.moves[lo : lo + legal], turn, _FROM_TABLES, _TO_TABLES)
    batch.planes[scored] = 0.0
    _write(state[:81], state[core.HAND : core.HAND + 14].reshape((2, 7)), turn, batch.planes[scored])
    batch.rows[scored] = n
    return scored + 1


@njit(cache=True, nogil=True)
def gather(tree, root, rules, rule, c, prior_visits, count, paths, line, mate_ply, room, cache, batch, work):
    """Run ``count`` descents from the root (node 0) of ``tree`` (a :class:`search.tree.TreeArrays`; ``root`` the
    :func:`root_arrays` of its position) and take their leaves down (see the module's docstring) into ``batch`` (a
    :class:`Leaves`), the network's answers looked up in ``cache`` (a :class:`LeafCache`) and the mate check working
    in ``work`` (a :class:`MateWork`), in the order of the Python leaves (tests/python_leaves.py): the line's end,
    then the mate check, then the cache, then the network. Returns (the deepest ply, the simulations kept, the rows
    to make, the rows the network scores, the mates found). A simulation that ends on a proven node, a finished game
    or a mate gets its value now (a proof gets its node); one whose leaf waits for a node gets its row in ``leaf``.
    With no ``room`` (a full tree) nothing is made: a new leaf is valued by its cached answer, else by its move's Q."""
    history, root_row, state, values = root[1], root[2], batch.state, batch.values
    deepest = pending = n = scored = mates = 0
    batch.offsets[0] = 0
    for _ in range(count):
        depth, end = select_in(tree, rule, c, prior_visits, paths[pending], line)
        deepest = max(deepest, depth)
        if end == DROPPED:
            continue
        batch.depths[pending] = depth
        batch.leaf[pending] = -1
        values[pending] = np.nan
        pending += 1  # (the simulation is kept, whatever follows)
        if end >= 0:  # a proven node: its value
            values[pending - 1] = proven_value(tree, end)
            continue
        edge = paths[pending - 1, depth - 1]
        _walk(state, root, line, depth)
        lo = batch.offsets[n]
        value, proven, legal = _ended(state, history, root_row + depth, depth, rules, batch.moves[lo:])
        key = position_key(state)
        if proven:  # mated, a declaration or a try: a proof
            values[pending - 1] = min(1.0, max(0.0, value))
            if room:
                link(tree, edge, add_terminal(tree, key, values[pending - 1], 0))
            continue
        if not np.isnan(value):  # a repetition or the draw ply: its value, but no proof (the line may go on)
            values[pending - 1] = value
            continue
        plies = _leaf_mate(state, history, root_row + depth, mate_ply, batch.mate_lines[mates], work)
        if plies:  # proven: no forward pass
            values[pending - 1] = 1.0
            batch.mate_len[mates] = plies
            batch.mate_nodes[mates] = add_terminal(tree, key, 1.0, plies) if room else -1
            if room:
                link(tree, edge, batch.mate_nodes[mates])
            mates += 1
            continue
        at = cache_find(cache, key, legal)
        if not room:  # the cached answer's value (its best move's Q), else the move's
            values[pending - 1] = _best(cache.pool, at, legal) if at >= 0 else 1.0 - edge_q(tree, edge)
            continue
        link(tree, edge, IN_FLIGHT)
        batch.leaf[pending - 1] = n
        scored = _add_row(batch, n, scored, key, legal, cache, at)
        n += 1
    return deepest, pending, n, scored, mates


@njit(cache=True, nogil=True)
def _best(pool, at, count):
    """The best of a cached answer's ``count`` values from ``at``: its value (0 at the least)."""
    best = 0.0
    for i in range(count):
        best = max(best, pool[at + i])
    return best


@njit(cache=True, nogil=True)
def _leaf_mate(b, history, row, mate_ply, out, work):
    """The leaf mate check (cshogi's verdicts; the root's new node asks it too, search.mcts' ``_mate_line``): a mate
    for the side to move, in one ply or else within ``mate_ply`` (odd), written to ``out``; its length, 0 for none. In
    check, only the odd-ply search (a check that answers the check and mates; the mate in one assumes no check). Not
    asked when the opponent has no king (a tsume problem's defender has nothing to mate). The search works in ``work``
    (a :class:`MateWork`)."""
    if b[core.KING + 1 - b[core.TURN]] < 0:
        return 0
    if not core_attacks.in_check(b):
        move = mate_one.mate_in_one(b)
        if move:
            out[0] = move
            return 1
    return core_mate.mate_in_odd(work, b, history, row, mate_ply, out)


def root_arrays(board: cshogi.Board) -> tuple[np.ndarray, np.ndarray, int]:
    """The root's state, the history the line's repetitions are judged with, and the root's row in it."""
    state, history, row = core_history.history_of(board, REPETITION_PLIES)
    assert len(history) >= row + 1 + MAX_DEPTH
    return state, history, row


def score_state(evaluator: Evaluator, state: np.ndarray) -> MoveScores:
    """The evaluator's answer for a position of the core's board, its moves in the core's order (every node of the
    tree has its moves in that order, so a cached answer fits any leaf of the same position)."""
    moves = core_moves.moves_of(state)
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


UNSIGNED = (1 << 64) - 1  # the tree takes and gives keys as unsigned 64-bit integers


def in_legal_order(board: cshogi.Board, moves: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` of ``moves`` (the playout core's order, which the tree and the cache keep) in the order of cshogi's
    legal moves of ``board``: the order Searcher.move_values and the evaluator's answers promise and records keep."""
    at = {int(m): i for i, m in enumerate(moves)}
    return values[[at[m] for m in board.legal_moves]]


class CoreCache:
    """The bandit searches' one cache of the network's answers, by the core's position key (a :class:`LeafCache`):
    the leaves', the root's, and any position the engine, self-play or a tool asks of the search
    (:meth:`get`, as search.base.EvalCache answers for alpha-beta), so a position a search has scored costs no
    second pass. Counts the positions and moves the network scored."""

    def __init__(self, evaluator: Evaluator, max_bytes: int):
        self.evaluator = evaluator
        self.max_bytes = max_bytes
        self.table = LeafCache.of_bytes(max_bytes)
        self.evaluations = 0
        self.moves_scored = 0

    @property
    def bytes(self) -> int:
        """The bytes of answers written so far, at most the table's."""
        return min(int(self.table.head[0]), len(self.table.pool)) * self.table.pool.itemsize

    def state_scores(self, state: np.ndarray) -> MoveScores:
        """The answer for a position of the core's board, its moves in the core's order: from the cache, else from
        the network (and then kept)."""
        moves = core_moves.moves_of(state)
        key = position_key(state)
        at = cache_find(self.table, key, len(moves))
        if at >= 0 and len(moves):
            indices = _indices(moves, int(state[core.TURN]), _FROM_TABLES, _TO_TABLES)
            return MoveScores(moves, indices, self.table.pool[at : at + len(moves)].copy())
        scores = score_state(self.evaluator, state)
        if len(moves):
            cache_store(self.table, np.array([key]), scores.q, np.array([0, len(moves)], np.int64),
                        np.zeros(1, np.int64))
            self.evaluations += 1
            self.moves_scored += len(moves)
        return scores

    def get(self, board: cshogi.Board) -> MoveScores:
        """The answer for ``board`` in the evaluator's order (cshogi's legal moves), as the evaluator gives it."""
        scores = self.state_scores(core.from_board(board))
        order = in_legal_order(board, scores.moves, np.arange(len(scores.moves)))
        return MoveScores(scores.moves[order], scores.indices[order], scores.q[order])

    def resize(self, max_bytes: int) -> None:
        """A table of ``max_bytes``, empty."""
        self.max_bytes = max_bytes
        self.table = LeafCache.of_bytes(max_bytes)

    def clear(self) -> None:
        self.table.clear()


class CoreLeaves:
    """A bandit search's leaf side on the playout core: the batch's buffers, the mate check's work arrays, and the
    root's state and history, set once a search (:meth:`set_root`); the network's answers go through the search's
    :class:`CoreCache`. The tree's nodes are keyed by :func:`position_key`, the root's too (:meth:`key`)."""

    def __init__(self, batch_size: int, cache: CoreCache):
        self.leaves = Leaves.empty(batch_size)
        self.cache = cache
        self.work = MateWork.empty()
        self.root: tuple[np.ndarray, np.ndarray, int] | None = None

    @staticmethod
    def key(board: cshogi.Board) -> int:
        """The tree's key of ``board``'s position."""
        return int(position_key(core.from_board(board))) & UNSIGNED

    def set_root(self, board: cshogi.Board) -> None:
        self.root = root_arrays(board)

    def root_scores(self) -> MoveScores:
        """The root's move scores, from the cache (a position that was a leaf of an earlier search costs no pass)."""
        return self.cache.state_scores(self.root[0])

    def mate_line(self, board: cshogi.Board, mate_ply: int) -> list[int]:
        """The leaves' mate check (:func:`_leaf_mate`) on ``board``, with the game's history it holds: a mate's line
        for the side to move, or []."""
        state, history, row = root_arrays(board)
        line = np.zeros(MAX_MATE_LINE, np.uint32)
        return [int(m) for m in line[: _leaf_mate(state, history, row, mate_ply, line, self.work)]]

    def simulate(self, tree, rule: int, c: float, prior_visits: float, count: int, paths: np.ndarray,
                 line: np.ndarray, rules: RuleSet, mate_ply: int) -> tuple[int, int]:
        """One batch of ``count`` simulations from the root of ``tree`` (a :class:`search.tree.Tree` whose root is
        :meth:`set_root`'s position): :func:`gather`, one forward pass for the leaves the cache lacks, then
        :func:`search.tree.expand_and_backup`. Returns the deepest ply and the simulations backed up."""
        b, cache = self.leaves, self.cache.table
        room = tree.room(count, count * MAX_LEGAL_MOVES)
        deepest, pending, n, scored, mates = gather(tree.arrays, self.root, tuple(rules), rule, c, prior_visits, count,
                                                    paths, line, mate_ply, room, cache, b, self.work)
        for k in range(mates):
            if b.mate_nodes[k] >= 0:
                tree.mates[int(b.mate_nodes[k])] = [int(m) for m in b.mate_lines[k, : b.mate_len[k]]]
        offsets = b.offsets[: n + 1]
        if scored:
            rows = b.rows[:scored]
            answer = self.cache.evaluator.run(b.planes[:scored], pad_rows(b.indices, offsets, rows))
            scatter_rows(answer, offsets, rows, b.q)
            cache_store(cache, b.keys, b.q, offsets, rows)
            self.cache.evaluations += scored
            self.cache.moves_scored += int(np.sum(offsets[rows + 1] - offsets[rows]))
        end = offsets[n]
        q, p = tree.prepare(b.moves[:end], b.q[:end], offsets)
        tree.expand_and_backup(paths[:pending], b.depths[:pending], b.values[:pending], b.leaf[:pending], b.keys,
                               offsets, b.moves[:end], q, p)
        return deepest, pending
