"""The bandit searches' tree as flat arrays, and its hot loops (selection, expansion, backup) compiled by numba.

A node is a row of the node arrays; its children (one per legal move, in the move generator's order) are a run of
rows of the edge arrays, each holding the move's visits N and total value W from the node's side to move, its prior
and its network Q, and the index of the child node once there is one. A simulation's descent and a batch's backups
then run in compiled code over arrays, and Python runs once per simulation (to push the chosen line on cshogi's
board and take the leaf down) instead of once per ply and per node.

The arithmetic is the one the searches had when the tree was Python objects, operation for operation (numpy's
pairwise summation included), so that a search to a fixed number of visits chooses the same moves.

Memory: an edge takes 36 bytes, since edges are nearly all of a tree (80 to 140 a node): W, N and the prior in
float64 (the searches' sums and products; N in float32 would stop counting at 2^24 visits, minutes of a ``go
infinite`` with helpers), Q in float32 (the network's own precision, so no bit of the arithmetic changes), the move
and the child in int32. The arrays are made for ``max_bytes`` (the search's share of USI_Hash) and filled as the tree
grows; the bytes its nodes and edges take, never past ``max_bytes``, are what fills it. A full tree stops expanding: a
simulation that reaches the tree's edge then takes the move's Q as the leaf's value, so a long ``go infinite`` keeps
refining the visits inside the tree it has.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from messiah.jit import njit
from messiah.rules import MAX_LEGAL_MOVES
from messiah.search.base import permille

# node_f columns (float64)
VISITS, TERMINAL = 0, 1
# node_i columns (int64): the first edge, the number of edges, plies to the end when proven, the length of the mate
# line found as the node was made (0: none), the position's zobrist key (its uint64 bits)
FIRST, COUNT, PLIES, MATE, KEY = 0, 1, 2, 3, 4
# edge_f columns (float64)
W, N, PRIOR = 0, 1, 2
# edge_s columns (float32)
Q = 0
# edge_i columns (int32)
MOVE, CHILD = 0, 1
NO_CHILD = -1  # an edge not yet expanded
IN_FLIGHT = -2  # an edge whose leaf waits in the batch for its forward pass
# what a descent ended on (``select``'s second value, when not a terminal node's index)
NEW_EDGE = -1
DROPPED = -2
UCB1, PUCT = 0, 1  # selection rules
VIRTUAL_LOSS = 1.0  # a visit counted as a loss (W unchanged) while its leaf waits in the batch
MAX_DEPTH = 1024  # plies a descent may take; deeper lines are dropped (no search grows one)
MAX_MOVES = MAX_LEGAL_MOVES  # the most edges a new node can bring (the tree's room check)
NODE_BYTES = 7 * 8
EDGE_BYTES = 3 * 8 + 4 + 2 * 4


@njit(cache=True, nogil=True)
def _block_sum(a, lo, n):
    """numpy's float64 sum of a[lo:lo+n] for n <= 128: eight running sums, then the rest in order."""
    if n < 8:
        s = 0.0
        for i in range(lo, lo + n):
            s += a[i]
        return s
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - n % 8:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    s = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        s += a[lo + i]
        i += 1
    return s


@njit(cache=True, nogil=True)
def _pairwise_sum(a, lo, n):
    """numpy's float64 sum of a[lo:lo+n]: its pairwise summation, which halves a sum (the first half a multiple of 8
    terms) until the parts have at most 128 terms, added in its order, so that priors match numpy's to the bit.
    Walked with a stack rather than by recursion: numba's cache cannot reload a recursive function (it crashes)."""
    starts, sizes, stage = np.empty(64, np.int64), np.empty(64, np.int64), np.empty(64, np.int64)
    sums = np.empty(64)
    top, done = 0, 0  # ranges on the stack; sums of finished ranges waiting for their sibling
    starts[0], sizes[0], stage[0] = lo, n, 0
    while top >= 0:
        size = sizes[top]
        if size <= 128:
            sums[done] = _block_sum(a, starts[top], size)
            done += 1
            top -= 1
            continue
        half = size // 2 - (size // 2) % 8
        if stage[top] == 2:  # both halves summed: combine them, left + right
            done -= 1
            sums[done - 1] = sums[done - 1] + sums[done]
            top -= 1
            continue
        left = stage[top] == 0
        stage[top] += 1
        starts[top + 1] = starts[top] if left else starts[top] + half
        sizes[top + 1] = half if left else size - half
        stage[top + 1] = 0
        top += 1
    return sums[0]


@njit(cache=True, nogil=True)
def _centred(q, offsets, temperature, out):
    """(Q - max Q) / T per position (position k's moves at [offsets[k], offsets[k + 1])): the argument of
    :func:`messiah.evaluator.softmax_weights`' exp, made in one pass for a batch instead of five numpy calls;
    subtraction and division round as numpy's do, and numpy takes the exp, so the priors keep their bits."""
    for k in range(len(offsets) - 1):
        lo, hi = offsets[k], offsets[k + 1]
        top = -np.inf
        for i in range(lo, hi):
            top = max(top, q[i])
        for i in range(lo, hi):
            out[i] = (q[i] - top) / temperature


@njit(cache=True, nogil=True)
def _add_node(node_f, node_i, edge_f, edge_s, edge_i, used, key, moves, q, p, hit, mate_len, prior_visits, puct):
    """Append the node of a scored position and return its index: its ``moves`` and their ``q`` (float64), every
    child starting as if visited ``prior_visits`` times at its Q. A position without moves is mated (value 0).
    ``hit`` >= 0: the move that starts a mate of ``mate_len`` plies found as the node was made (its Q is already 1),
    which proves a win. With ``puct``, the prior is softmax(Q / T) from ``p`` = exp((Q - max Q) / T), which numpy
    computed (its exp differs from libm's in the last bit, and the searches' choices follow these bits); else Q."""
    node, first, m = used[0], used[1], len(moves)
    used[0] += 1
    used[1] += m
    node_f[node, VISITS] = 0.0
    node_f[node, TERMINAL] = np.nan
    node_i[node, FIRST], node_i[node, COUNT], node_i[node, PLIES], node_i[node, MATE] = first, m, 0, 0
    node_i[node, KEY] = key
    for i in range(m):
        e = first + i
        edge_i[e, MOVE], edge_i[e, CHILD] = moves[i], NO_CHILD
        edge_s[e, Q] = q[i]
        edge_f[e, N] = prior_visits
        edge_f[e, W] = q[i] * prior_visits
    if m == 0:
        node_f[node, TERMINAL] = 0.0  # mated (tree values stay win rates so that they average)
    elif hit >= 0:
        node_f[node, TERMINAL] = 1.0
        node_i[node, PLIES] = mate_len
        node_i[node, MATE] = mate_len
    if puct and m > 0:
        total = _pairwise_sum(p, 0, m)
        for i in range(m):
            edge_f[first + i, PRIOR] = p[i] / total
    else:
        for i in range(m):
            edge_f[first + i, PRIOR] = q[i]
    return node


# Compiled at import (from numba's cache), as _value: Python calls them only on paths a warm-up search may not take
# (a line that ends the game, a position met before), which would otherwise compile them on a move's clock.
@njit("int64(float64[:, ::1], int64[:, ::1], int64[::1], int64, float64, int64)", cache=True, nogil=True)
def _add_terminal(node_f, node_i, used, key, value, plies):
    """Append a node without edges whose ``value`` is proven (1 won, 0 lost): where the game has ended
    (``plies`` 0), or where a mate of ``plies`` plies was found for the side to move."""
    node = used[0]
    used[0] += 1
    node_f[node, VISITS], node_f[node, TERMINAL] = 0.0, value
    node_i[node, FIRST], node_i[node, COUNT], node_i[node, PLIES], node_i[node, MATE] = used[1], 0, plies, plies
    node_i[node, KEY] = key
    return node


@njit("float64(float64[:, ::1], int64[:, ::1], float64[:, ::1], int32[:, ::1], int64)", cache=True, nogil=True)
def _value(node_f, node_i, edge_f, edge_i, node):
    """A node's value for its side to move: its proven value, else its best child's mean, a proven child counting
    as its proof (0 without moves)."""
    if not math.isnan(node_f[node, TERMINAL]):
        return node_f[node, TERMINAL]
    first, m = node_i[node, FIRST], node_i[node, COUNT]
    if m == 0:
        return 0.0
    best = -np.inf
    for e in range(first, first + m):
        child = edge_i[e, CHILD]
        if child >= 0 and not math.isnan(node_f[child, TERMINAL]):
            best = max(best, 1.0 - node_f[child, TERMINAL])
        else:
            best = max(best, edge_f[e, W] / max(edge_f[e, N], 1e-9))
    return best


@njit(cache=True, nogil=True)
def _select_edge(node_f, node_i, edge_f, edge_i, node, rule, c, prior_visits, skip_lost):
    """The edge the selection ``rule`` takes from ``node``; with ``skip_lost``, never one whose position is proven
    won for the opponent (-1 when every edge is), as dlshogi's selection: such a visit adds a known loss, costs no
    forward pass, and would keep a refuted move's count rising until its mean sank below the others'."""
    first, m = node_i[node, FIRST], node_i[node, COUNT]
    best, best_score, log_total, root_n = -1, -np.inf, 0.0, 0.0
    if rule == UCB1:
        total = 0.0
        for e in range(first, first + m):
            total += edge_f[e, N]
        log_total = math.log(max(total, 1.0))
    else:
        root_n = math.sqrt(max(node_f[node, VISITS], 1.0))
    for e in range(first, first + m):
        if skip_lost:
            child = edge_i[e, CHILD]
            if child >= 0 and node_f[child, TERMINAL] == 1.0:
                continue
        if rule == UCB1:
            score = edge_f[e, W] / edge_f[e, N] + c * math.sqrt(log_total / edge_f[e, N])
        else:
            score = edge_f[e, W] / edge_f[e, N] + c * edge_f[e, PRIOR] * root_n / (1.0 + (edge_f[e, N] - prior_visits))
        if math.isnan(score):
            return e
        if score > best_score or best < 0:
            best, best_score = e, score
    return best


@njit(cache=True, nogil=True)
def select_leaf(node_f, node_i, edge_f, edge_i, root, rule, c, prior_visits, path, moves):
    """One simulation's descent from ``root`` by the selection ``rule``, each edge taken under a virtual loss;
    ``path`` gets the edges and ``moves`` their moves. Returns (depth, end): ``end`` is a proven node reached
    below the root (its value is the leaf's), NEW_EDGE when the last edge has no node yet, or DROPPED when it
    leads to a leaf already waiting in this batch (the virtual losses are then taken back)."""
    node, depth = root, 0
    while True:
        if node != root and not math.isnan(node_f[node, TERMINAL]):
            return depth, node
        best = _select_edge(node_f, node_i, edge_f, edge_i, node, rule, c, prior_visits, True)
        if best < 0:  # every move is proven lost: the node is (its next backup proves it), so any move will do
            best = _select_edge(node_f, node_i, edge_f, edge_i, node, rule, c, prior_visits, False)
        edge_f[best, N] += VIRTUAL_LOSS
        path[depth], moves[depth] = best, edge_i[best, MOVE]
        depth += 1
        child = edge_i[best, CHILD]
        if child == NO_CHILD:
            return depth, NEW_EDGE
        if child == IN_FLIGHT or depth == len(path):
            for k in range(depth):
                edge_f[path[k], N] -= VIRTUAL_LOSS
            return depth, DROPPED
        node = child


@njit(cache=True, nogil=True)
def _prove(node_f, node_i, edge_i, node, child):
    """MCTS-Solver: a move to a position lost for the opponent proves a win; a node whose every move leads to a
    position won for the opponent is lost. The distance is the quickest win known, or the longest defence."""
    if child < 0:
        return
    t = node_f[child, TERMINAL]
    if t != 0.0 and t != 1.0:
        return
    prove_node(node_f, node_i, edge_i, node)


@njit(cache=True, nogil=True)
def prove_node(node_f, node_i, edge_i, node):
    """What ``node``'s children prove of it (:func:`_prove`), from all of them: the root's proof at a search's
    start, when a kept subtree already holds it."""
    first, m = node_i[node, FIRST], node_i[node, COUNT]
    win, all_lost, longest = 1 << 60, True, 0
    for e in range(first, first + m):
        c = edge_i[e, CHILD]
        if c < 0:
            all_lost = False
            continue
        tc = node_f[c, TERMINAL]
        if tc == 0.0:
            win = min(win, node_i[c, PLIES] + 1)
        if tc == 1.0:
            longest = max(longest, node_i[c, PLIES])
        else:
            all_lost = False
    if node_i[node, MATE] > 0:
        win = min(win, node_i[node, MATE])
    if win < 1 << 60:
        node_f[node, TERMINAL], node_i[node, PLIES] = 1.0, win
    elif all_lost:
        node_f[node, TERMINAL], node_i[node, PLIES] = 0.0, longest + 1


@njit(cache=True, nogil=True)
def _backup(node_f, node_i, edge_f, edge_i, root, path, depth, leaf_value):
    """Back ``leaf_value`` (for the leaf's side to move) up the path with the negamax flip, replacing each
    edge's virtual loss by the visit, and prove what the leaf's result proves."""
    value = 1.0 - leaf_value
    for k in range(depth - 1, -1, -1):
        e = path[k]
        node = root if k == 0 else edge_i[path[k - 1], CHILD]
        edge_f[e, N] += 1.0 - VIRTUAL_LOSS
        edge_f[e, W] += value
        node_f[node, VISITS] += 1.0
        value = 1.0 - value
        _prove(node_f, node_i, edge_i, node, edge_i[e, CHILD])


@njit(cache=True, nogil=True)
def expand_and_backup(node_f, node_i, edge_f, edge_s, edge_i, used, root, paths, depths, values, leaf, keys, offsets,
                       moves, q, p, prior_visits, puct):
    """A batch's end, simulation by simulation in order: a simulation whose leaf was scored (``leaf[j]`` >= 0, its
    row in ``keys`` and ``offsets``; its moves, Q and exp values at [offsets[row], offsets[row + 1])) makes its node,
    links it to its edge and takes the node's value as the leaf's; then it is backed up. (A leaf with a mate is
    proven as the batch is gathered, never scored: no node made here has one.)"""
    for j in range(len(depths)):
        value = values[j]
        row = leaf[j]
        if row >= 0:
            lo, hi = offsets[row], offsets[row + 1]
            node = _add_node(node_f, node_i, edge_f, edge_s, edge_i, used, keys[row], moves[lo:hi], q[lo:hi],
                             p[lo:hi], -1, 0, prior_visits, puct)
            edge_i[paths[j, depths[j] - 1], CHILD] = node
            value = _value(node_f, node_i, edge_f, edge_i, node)
        _backup(node_f, node_i, edge_f, edge_i, root, paths[j], depths[j], value)


@njit(cache=True, nogil=True)
def root_stability(node_i, edge_f, root, obvious_share):
    """The shape of the root's visits for the time manager: 0 when one move has ``obvious_share`` of them (virtual
    prior visits included), 1 when the most visited move has the best mean, 2 when it has not."""
    first, m = node_i[root, FIRST], node_i[root, COUNT]
    most, best, total = first, first, 0.0
    for e in range(first, first + m):
        total += edge_f[e, N]
        if edge_f[e, N] > edge_f[most, N]:
            most = e
        if edge_f[e, W] / edge_f[e, N] > edge_f[best, W] / edge_f[best, N]:
            best = e
    if edge_f[most, N] >= obvious_share * total:
        return 0
    return 1 if most == best else 2


@njit(cache=True, nogil=True)
def _find(node_f, node_i, edge_i, root, key, levels):
    """The first node of position ``key`` not proven, breadth first from ``root`` down ``levels`` plies, each
    node's children in the order they were made; -1 when there is none."""
    frontier = np.array([root], np.int64)
    for _ in range(levels + 1):
        for node in frontier:
            if node_i[node, KEY] == key and math.isnan(node_f[node, TERMINAL]):
                return node
        count = 0
        for node in frontier:
            for e in range(node_i[node, FIRST], node_i[node, FIRST] + node_i[node, COUNT]):
                count += edge_i[e, CHILD] >= 0
        nxt = np.empty(count, np.int64)
        count = 0
        for node in frontier:
            start = count
            for e in range(node_i[node, FIRST], node_i[node, FIRST] + node_i[node, COUNT]):
                if edge_i[e, CHILD] >= 0:
                    nxt[count] = edge_i[e, CHILD]
                    count += 1
            nxt[start:count] = np.sort(nxt[start:count])
        frontier = nxt
    return -1


@njit(cache=True, nogil=True)
def _keep_subtree(node_f, node_i, edge_f, edge_s, edge_i, used, root):
    """Keep only ``root`` and what lies below it, in place, nodes and edges in their old order (so children keep
    the order they were made in). Returns the old index of each kept node by its new index."""
    n = used[0]
    kept = np.zeros(n, np.bool_)
    stack = [root]
    kept[root] = True
    while len(stack):
        node = stack.pop()
        for e in range(node_i[node, FIRST], node_i[node, FIRST] + node_i[node, COUNT]):
            c = edge_i[e, CHILD]
            if c >= 0 and not kept[c]:
                kept[c] = True
                stack.append(c)
    new = np.full(n, -1, np.int64)
    count = 0
    for node in range(n):
        if kept[node]:
            new[node] = count
            count += 1
    old = np.empty(count, np.int64)
    edges = 0
    for node in range(n):
        if not kept[node]:
            continue
        to = new[node]
        old[to] = node
        first, m = node_i[node, FIRST], node_i[node, COUNT]
        node_f[to] = node_f[node]
        node_i[to] = node_i[node]
        node_i[to, FIRST] = edges
        for i in range(m):  # destinations never pass their sources: copying upwards in order is safe
            edge_f[edges + i] = edge_f[first + i]
            edge_s[edges + i] = edge_s[first + i]
            c = edge_i[first + i, CHILD]
            edge_i[edges + i, MOVE] = edge_i[first + i, MOVE]
            edge_i[edges + i, CHILD] = new[c] if c >= 0 else NO_CHILD
        edges += m
    used[0], used[1] = count, edges
    return old


class TreeArrays(NamedTuple):
    """A tree's arrays as one record, for compiled code that works on the tree (search.playout's leaves): it reads
    and writes them only through this module's functions (:func:`select_leaf`, :func:`proven_value`, :func:`link`,
    :func:`add_terminal`)."""

    node_f: np.ndarray
    node_i: np.ndarray
    edge_f: np.ndarray
    edge_s: np.ndarray
    edge_i: np.ndarray
    used: np.ndarray


@njit(cache=True, nogil=True)
def select_in(tree, rule, c, prior_visits, path, moves):
    """:func:`select_leaf` from the root (node 0) of a :class:`TreeArrays`."""
    return select_leaf(tree.node_f, tree.node_i, tree.edge_f, tree.edge_i, 0, rule, c, prior_visits, path, moves)


@njit(cache=True, nogil=True)
def proven_value(tree, node):
    """The proven value of ``node`` for its side to move (NaN: not proven)."""
    return tree.node_f[node, TERMINAL]


@njit(cache=True, nogil=True)
def link(tree, edge, node):
    """Make ``node`` the child of ``edge`` (IN_FLIGHT: its leaf waits in the batch)."""
    tree.edge_i[edge, CHILD] = node


@njit(cache=True, nogil=True)
def add_terminal(tree, key, value, plies):
    """:func:`_add_terminal` on a :class:`TreeArrays`: a node without edges whose ``value`` is proven."""
    return _add_terminal(tree.node_f, tree.node_i, tree.used, key, value, plies)


@njit(cache=True, nogil=True)
def edge_q(tree, edge):
    """The network's Q of ``edge``'s move, for the side to move at its node."""
    return tree.edge_s[edge, Q]


class Tree:
    """The arrays of one search tree, bounded by ``max_bytes``; ``mates`` holds the mating lines found as nodes
    were made and ``shared`` the root statistics taken in from other processes (:mod:`search.parallel`), by node."""

    def __init__(self, max_bytes: int, prior_visits: float, temperature: float = 0.0):
        self.max_bytes = max_bytes
        self.prior_visits = prior_visits
        self.temperature = temperature  # > 0: PUCT's softmax prior
        self.used = np.zeros(2, np.int64)  # nodes, edges
        self.mates: dict[int, list[int]] = {}
        self.shared: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._start()

    def _start(self) -> None:
        """Arrays for the whole budget, empty: as many edges as ``max_bytes`` holds, and as many nodes (nodes without
        edges are proven ends). numpy's zeros are pages the system maps when first written, so the memory in use is
        what the nodes and edges made take (:meth:`bytes`), never past ``max_bytes`` (:meth:`room`), and the arrays
        never need to be copied."""
        self.clear()
        self.node_f = self.node_i = self.edge_f = self.edge_s = self.edge_i = None  # the old go before the new come
        while True:
            nodes, edges = self.max_bytes // NODE_BYTES, self.max_bytes // EDGE_BYTES
            try:
                self.node_f, self.node_i = np.zeros((nodes, 2)), np.zeros((nodes, 5), np.int64)
                self.edge_f, self.edge_s = np.zeros((edges, 3)), np.zeros((edges, 1), np.float32)
                self.edge_i = np.zeros((edges, 2), np.int32)
                return
            except MemoryError:  # a USI_Hash beyond what the system will map: the most it will
                self.max_bytes //= 2

    def resize(self, max_bytes: int) -> None:
        """A new budget: the tree starts again, empty."""
        self.max_bytes = max_bytes
        self._start()

    @property
    def nodes(self) -> int:
        return int(self.used[0])

    def bytes(self) -> int:
        """What the nodes and edges made so far take."""
        return int(self.used[0]) * NODE_BYTES + int(self.used[1]) * EDGE_BYTES

    def hashfull(self) -> int:
        """Permille of ``max_bytes`` the nodes and edges made so far take (USI's hashfull)."""
        return permille(self.bytes(), self.max_bytes)

    def clear(self) -> None:
        self.used[:] = 0
        self.mates.clear()
        self.shared.clear()

    def room(self, nodes: int, edges: int) -> bool:
        """Whether ``nodes`` more nodes with ``edges`` more edges in all fit. False: the tree is full."""
        return self.bytes() + nodes * NODE_BYTES + edges * EDGE_BYTES <= self.max_bytes

    def prepare(self, moves: np.ndarray, q: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The inputs of nodes to be made from scored positions, many at once (``moves`` and their ``q`` end to end,
        position k's at [offsets[k], offsets[k + 1])): Q as float64 and PUCT's exp values."""
        q = q.astype(np.float64)
        if self.temperature <= 0.0 or not len(q):
            return q, q
        p = np.empty_like(q)
        _centred(q, offsets, self.temperature, p)
        return q, np.exp(p, out=p)

    def add(self, key: int, moves: np.ndarray, q: np.ndarray, line: list[int]) -> int:
        """The node of a scored position (``line``: a mate found for its side to move, or []: the mating move's Q
        is set to 1); room for it must have been made (:meth:`room`)."""
        q, hit = q.astype(np.float64), -1
        if line:  # df-pn's move can differ from the generator's in the upper (piece) bits: compare move16s
            found = np.flatnonzero((moves & 0xFFFF) == (line[0] & 0xFFFF))
            if len(found):
                hit = int(found[0])
                q[hit] = 1.0
        q, p = self.prepare(moves, q, np.array([0, len(moves)]))
        node = _add_node(self.node_f, self.node_i, self.edge_f, self.edge_s, self.edge_i, self.used,
                         np.int64(np.uint64(key)), moves, q, p, hit, len(line), self.prior_visits,
                         self.temperature > 0.0)
        self.keep_mate(node, line)
        return node

    def keep_mate(self, node: int, line: list[int]) -> None:
        """Keep the mating line of a node just made from a position where ``line`` was found."""
        if line and self.node_i[node, MATE]:
            first, m = self.node_i[node, FIRST], self.node_i[node, COUNT]
            moves = self.edge_i[first : first + m, MOVE]
            hit = int(np.flatnonzero((moves & 0xFFFF) == (line[0] & 0xFFFF))[0])
            self.mates[node] = [int(moves[hit])] + line[1:]

    def prove_mate(self, node: int, line: list[int]) -> None:
        """Prove ``node`` won for its side to move by ``line``, a mate found outside the tree (the root's guard,
        :class:`search.mcts.BanditSearch`), as the leaves' mate check proves a new node: its mate length, its line
        kept, its proof. The parent's proof follows at the parent's next :meth:`prove`."""
        self.node_i[node, MATE] = len(line)
        self.keep_mate(node, line)
        self.prove(node)

    def add_terminal(self, key: int, value: float) -> int:
        """A node where the game has ended, with its proven ``value``."""
        return _add_terminal(self.node_f, self.node_i, self.used, np.int64(np.uint64(key)), value, 0)

    def prove(self, node: int) -> None:
        """:func:`prove_node`: what ``node``'s children already prove of it."""
        prove_node(self.node_f, self.node_i, self.edge_i, node)

    def find(self, root: int, key: int, levels: int) -> int:
        """:func:`_find`: the node of position ``key`` within ``levels`` plies below ``root``, or -1."""
        return int(_find(self.node_f, self.node_i, self.edge_i, root, np.int64(np.uint64(key)), levels))

    def keep_subtree(self, root: int) -> None:
        """Keep ``root``'s subtree only; ``root`` becomes node 0."""
        old = _keep_subtree(self.node_f, self.node_i, self.edge_f, self.edge_s, self.edge_i, self.used, root)
        new = {int(o): i for i, o in enumerate(old)}
        self.mates = {new[k]: v for k, v in self.mates.items() if k in new}
        self.shared = {new[k]: v for k, v in self.shared.items() if k in new}

    def view(self, node: int) -> NodeView:
        return NodeView(self, node)

    @property
    def arrays(self) -> TreeArrays:
        """The arrays as one record, for compiled code (they are replaced when the tree is resized)."""
        return TreeArrays(self.node_f, self.node_i, self.edge_f, self.edge_s, self.edge_i, self.used)

    def expand_and_backup(self, paths: np.ndarray, depths: np.ndarray, values: np.ndarray, leaf: np.ndarray,
                          keys: np.ndarray, offsets: np.ndarray, moves: np.ndarray, q: np.ndarray,
                          p: np.ndarray) -> None:
        """:func:`expand_and_backup` of a batch from the root."""
        expand_and_backup(self.node_f, self.node_i, self.edge_f, self.edge_s, self.edge_i, self.used, 0, paths,
                          depths, values, leaf, keys, offsets, moves, q, p, self.prior_visits,
                          self.temperature > 0.0)

    def stability(self, obvious_share: float) -> int:
        """:func:`root_stability` of the root."""
        return int(root_stability(self.node_i, self.edge_f, 0, obvious_share))


class NodeView(NamedTuple):
    """A node of a :class:`Tree` seen from Python: its children's statistics as numpy views of the tree's arrays
    (writes go to the tree). Valid until the tree next grows or is cut (:meth:`Tree.keep_subtree`)."""

    tree: Tree
    index: int

    def _edges(self, column: int, arrays: str = "edge_f") -> np.ndarray:
        first, m = self.tree.node_i[self.index, FIRST], self.tree.node_i[self.index, COUNT]
        return getattr(self.tree, arrays)[first : first + m, column]

    @property
    def key(self) -> int:
        return int(np.int64(self.tree.node_i[self.index, KEY]).view(np.uint64))

    @property
    def moves(self) -> np.ndarray:
        return self._edges(MOVE, "edge_i").astype(np.uint32)

    @property
    def q(self) -> np.ndarray:
        """The moves' network Q, as float64 (a copy: the tree keeps the network's float32)."""
        return self._edges(Q, "edge_s").astype(np.float64)

    @property
    def prior(self) -> np.ndarray:
        return self._edges(PRIOR)

    @property
    def w(self) -> np.ndarray:
        return self._edges(W)

    @property
    def n(self) -> np.ndarray:
        return self._edges(N)

    @property
    def visits(self) -> int:
        return int(self.tree.node_f[self.index, VISITS])

    @property
    def terminal(self) -> float | None:
        t = self.tree.node_f[self.index, TERMINAL]
        return None if math.isnan(t) else float(t)

    @property
    def plies(self) -> int:
        return int(self.tree.node_i[self.index, PLIES])

    @property
    def count(self) -> int:
        """The node's moves (0: a proven end, or a position found mated)."""
        return int(self.tree.node_i[self.index, COUNT])

    @property
    def mate(self) -> list[int] | None:
        return self.tree.mates.get(self.index)

    @property
    def shared(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The visits and values taken in from other processes so far (:mod:`search.parallel`), or None."""
        return self.tree.shared.get(self.index)

    @property
    def children(self) -> dict[int, NodeView]:
        """The children made so far, by move, in the order they were made."""
        links = self._edges(CHILD, "edge_i")
        made = sorted((int(c), i) for i, c in enumerate(links) if c >= 0)
        moves = self.moves
        return {int(moves[i]): NodeView(self.tree, c) for c, i in made}

    def add_visits(self, n: np.ndarray, w: np.ndarray) -> None:
        """Add visits and values to the children (another process's work, :mod:`search.parallel`)."""
        self.n[:] += n
        self.w[:] += w
        self.tree.node_f[self.index, VISITS] += round(float(n.sum()))

    def set_terminal(self, value: float | None) -> None:
        self.tree.node_f[self.index, TERMINAL] = np.nan if value is None else value

    def most_visited(self) -> int:
        """The index of the most visited move, ties to the better mean."""
        n, w = self.n, self.w
        return int(np.argmax(n + 1e-6 * w / np.maximum(n, 1e-9)))

    def ranking(self, proven: list[tuple[int, NodeView]] | None = None) -> np.ndarray:
        """The moves' indices, the search's choice first: proven wins (the shortest mate first), then the unproven
        moves by visits (ties to the better mean), then proven losses (the longest defence first), as dlshogi
        ranks its root. Visits alone would choose a refuted move that was visited before its refutation. ``proven``:
        :meth:`_proven`'s answer, when the caller has it."""
        n, w = self.n, self.w
        tier = np.ones(len(n))  # 0 won, 1 unproven, 2 lost
        within = -(n + 1e-6 * w / np.maximum(n, 1e-9))
        for i, child in self._proven() if proven is None else proven:
            if child.terminal == 0.0:
                tier[i], within[i] = 0, child.plies
            else:
                tier[i], within[i] = 2, -child.plies
        return np.lexsort((within, tier))

    def choice(self) -> int:
        """The index of the search's choice here: the first of :meth:`ranking`."""
        proven = self._proven()
        return int(self.ranking(proven)[0]) if proven else self.most_visited()

    def _proven(self) -> list[tuple[int, NodeView]]:
        """(index, child) of the moves whose positions are proven."""
        links = self._edges(CHILD, "edge_i")
        made = np.flatnonzero(links >= 0)
        node_f = self.tree.node_f
        return [(int(i), NodeView(self.tree, int(links[i]))) for i in made
                if not math.isnan(node_f[links[i], TERMINAL])]

    def move_values(self) -> np.ndarray:
        """Each move's value for the node's side to move: the mean of its visits (its Q as the prior visit where it
        has no other), exactly 1 or 0 where the move's position is proven."""
        values = self.w / np.maximum(self.n, 1e-9)
        for i, child in self._proven():
            if child.terminal in (0.0, 1.0):
                values[i] = 1.0 - child.terminal
        return np.clip(values, 0.0, 1.0)

    def value(self) -> float:
        """The node's value for its side to move."""
        return float(_value(self.tree.node_f, self.tree.node_i, self.tree.edge_f, self.tree.edge_i, self.index))
