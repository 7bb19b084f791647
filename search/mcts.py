"""Bandit tree searches over the move scores: UCB1 and PUCT, sharing one tree.

A node is a position the evaluator has scored: each child (legal move) starts from its Q as if it had
been visited ``prior_visits`` times, so the tree is shaped by the network before any backup arrives. A
simulation descends by the selection rule to a child that has no node yet, scores that child's position
(one forward pass, which also values the leaf: its best Q), and backs the value up with the negamax flip
(``1 - v`` per ply). Leaves are gathered ``batch_size`` at a time under a virtual loss (each new leaf
once) and scored in one forward pass, which feeds a GPU full batches. The tree is kept between moves: a
later search from a position two plies (or more) down the previous root's tree reuses that subtree.

- UCB1: argmax mean + c * sqrt(ln N / n) (the method's multi-armed bandit search);
- PUCT: argmax mean + c * P * sqrt(N) / (1 + n) with P = softmax(Q / temperature), the move scores used
  as a policy (the variant the method's authors doubted: a match decides).

A depth limit means: stop once a simulation has reached that many plies below the root.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import cshogi
import numpy as np

from messiah.evaluator import Evaluator, MoveScores
from messiah.features import PositionArrays
from messiah.moves import legal_move_indices
from messiah.search.base import (
    MATE_NODES,
    InfoCallback,
    Limits,
    Searcher,
    SearchOption,
    SearchResult,
    clamp,
    has_opponent_king,
    is_proven,
    mate_in_one,
    terminal_value,
)
from messiah.search.parallel import Helpers, RootShare, RootTable
from messiah.search.timeman import Clock

DEFAULT_NODES = 800  # playouts when no limit is given
LEAF_MATE_NODES = 64  # df-pn budget at each new node: ~60 us, a sixth of a forward pass on a CPU
INFO_EVERY = 0.5  # seconds between progress reports
MAX_PV = 64  # moves of a principal variation
VIRTUAL_LOSS = 1
UCB1_C = 0.3  # ucb1's exploration constant (win-rate units), reasoned, not yet tuned
# PUCT's exploration constant and its prior's temperature softmax(Q / T) (win-rate units): tuned by `messiah
# tune` and confirmed against the earlier 1.5 and 0.05 by matches (docs/search.md, "PUCT's constants"). A
# smaller T trusts the one-pass move scores more; a smaller c explores less.
PUCT_C = 0.5
PUCT_TEMPERATURE = 0.024
# Leaves gathered under virtual loss per forward pass (USI BatchSize): a batch scores more positions a second
# on one CPU thread, and it won matches against one leaf at a time (docs/search.md, "BatchSize, int8 and fp16
# models").
BATCH_SIZE = 8
BATCH_OPTION = SearchOption("BatchSize", "batch_size", BATCH_SIZE, 1, 1024)
# USI LeafMateNodes: 0 leaves the tree's new nodes with the mate-in-one check only (a sixth of the self-play time
# goes to the leaf df-pn: whether it pays at a clock is a match's question)
LEAF_MATE_OPTION = SearchOption("LeafMateNodes", "leaf_mate_nodes", LEAF_MATE_NODES, 0, 100_000)
OBVIOUS_SHARE = 0.7  # share of the root's visits (virtual prior visits included) that makes a move obvious


class Node:
    """A scored position. Per child: total value W and visits N from this node's side to move."""

    __slots__ = ("key", "moves", "q", "prior", "w", "n", "children", "visits", "terminal", "plies", "mate", "shared")

    def __init__(self, key: int, scores: MoveScores | None, prior_visits: float, terminal: float | None = None):
        self.key = key
        # The value for the side to move when it is known for certain: the game ended here, or a proof
        # (1 win / 0 loss) came up from the children. ``plies`` is then the distance to the mate, counted
        # from this node (so it holds when the tree is reused from a later root).
        self.terminal = terminal
        self.plies = 0
        self.mate: list[int] | None = None  # the mating line when the win was proven as the node was made
        self.children: dict[int, Node] = {}
        self.visits = 0
        self.shared: tuple[np.ndarray, np.ndarray] | None = None  # other processes' root statistics taken in
        if scores is None:
            self.moves = np.zeros(0, np.uint32)
            self.q = self.prior = self.w = self.n = np.zeros(0)
            return
        self.moves = scores.moves
        self.q = scores.q.astype(np.float64)
        self.n = np.full(len(self.moves), prior_visits)
        self.w = self.q * prior_visits
        self.prior = self.q  # replaced by PUCT

    def most_visited(self) -> int:
        """The index of the search's choice here: the most visited move, ties to the better mean."""
        return int(np.argmax(self.n + 1e-6 * self.w / np.maximum(self.n, 1e-9)))

    def value(self) -> float:
        """The node's value for its side to move."""
        if self.terminal is not None:
            return self.terminal
        return float((self.w / np.maximum(self.n, 1e-9)).max()) if len(self.moves) else 0.0


class _Leaf(NamedTuple):
    """A new leaf waiting in a batch for its forward pass: its position's key and :meth:`BanditSearch._mate_line`."""

    key: int
    mate: list[int]


class BanditSearch(Searcher):
    """The shared tree; subclasses give the selection score."""

    def __init__(self, evaluator: Evaluator, c: float, prior_visits: float, batch_size: int = BATCH_SIZE,
                 mate_nodes: int = MATE_NODES, leaf_mate_nodes: int = LEAF_MATE_NODES):
        super().__init__(evaluator, mate_nodes)
        self.c = c
        self.prior_visits = prior_visits
        self.batch_size = batch_size
        self.root: Node | None = None
        self.helpers: Helpers | None = None  # root-parallel helper processes (start_helpers)
        self.share: RootShare | None = None  # this process's row of their shared root statistics
        self.leaf_dfpn = None
        if leaf_mate_nodes > 0:
            self.leaf_dfpn = cshogi.DfPn()
            self.leaf_dfpn.set_max_search_node(leaf_mate_nodes)

    def new_game(self) -> None:
        super().new_game()
        self.root = None
        if self.helpers is not None:
            self.helpers.send(("new_game",))

    def start_helpers(self, count: int, factory: Callable[[], BanditSearch]) -> None:
        """Search timed and endless moves with ``count`` helper processes beside this one (root parallelism,
        :mod:`search.parallel`), each running the searcher ``factory()`` builds (picklable: it is called in
        the helper). A helper that cannot start or fails later is dropped with a line in :attr:`notes`."""
        self.close()
        table = RootTable(count + 1)
        self.helpers = Helpers(factory, count, table, self.notes)
        self.share = RootShare(table, 0)

    def close(self) -> None:
        if self.helpers is not None:
            self.helpers.close()
            self.helpers = self.share = None

    def scores_to_prior(self, node: Node) -> None:
        """Hook: PUCT turns the move scores into a policy."""

    def selection(self, node: Node) -> np.ndarray:
        raise NotImplementedError

    def _new_node(self, board: cshogi.Board, scores: MoveScores) -> Node:
        return self._node(board.zobrist_hash(), scores, self._mate_line(board) if len(scores.moves) else [])

    def _mate_line(self, board: cshogi.Board) -> list[int]:
        """The part of a new node that needs its board: a mate for the side to move (mate in one, else the
        leaf df-pn's), or []."""
        if board.is_check() or not has_opponent_king(board):
            return []
        mate = mate_in_one(board)
        if mate:
            return [mate]
        if self.leaf_dfpn is not None and self.leaf_dfpn.search(board):
            return [int(m) for m in self.leaf_dfpn.get_pv(board)]
        return []

    def _node(self, key: int, scores: MoveScores, line: list[int]) -> Node:
        """The node of position ``key`` from its move scores and :meth:`_mate_line`."""
        node = Node(key, scores, self.prior_visits)
        if len(node.moves) == 0:
            node.terminal = 0.0  # mated (tree values stay win rates so that they average)
        elif line:
            # df-pn's move can differ from the generator's in the upper (piece) bits: compare move16s
            hit = np.flatnonzero((node.moves & 0xFFFF) == (line[0] & 0xFFFF))
            if len(hit):  # a proven win: the mating move's Q is 1, and the node needs no deeper search
                i = int(hit[0])
                node.q[i], node.w[i] = 1.0, self.prior_visits
                node.terminal, node.plies, node.mate = 1.0, len(line), [int(node.moves[i])] + line[1:]
        self.scores_to_prior(node)
        return node

    def _find_reusable(self, board: cshogi.Board) -> Node | None:
        """The previous tree's node for this position, up to 4 plies below the old root."""
        if self.root is None:
            return None
        key, frontier = board.zobrist_hash(), [self.root]
        for _ in range(5):
            for node in frontier:
                if node.key == key and node.terminal is None:
                    return node
            frontier = [child for node in frontier for child in node.children.values()]
        return None

    def _search(self, board: cshogi.Board, limits: Limits, clock: Clock, info: InfoCallback | None) -> SearchResult:
        evals0 = self.cache.evaluations
        root = self._find_reusable(board)
        if root is None:
            root = self._new_node(board, self.cache.get(board))
        root.terminal = None  # the root is searched, whatever its mate-in-one flag says
        self.root = root
        counted = limits.nodes is not None or limits.visits is not None or limits.depth is not None
        budget = DEFAULT_NODES if not counted and not clock.bounded() else limits.nodes
        if limits.visits is not None:
            budget = min(budget or limits.visits, max(1, limits.visits - root.visits))
        playouts, seldepth, last_info, visits0 = 0, 0, clock.elapsed(), root.visits
        # Helpers join timed and endless searches only: a search to a number of nodes or visits or to a depth
        # stays the same search on any machine (fixed-node matches, self-play, tests).
        helpers = self.helpers if not counted and len(self.helpers or ()) else None
        if helpers is not None:
            helpers.go(board)
        # a helper process always shares; the main process only when its helpers search with it
        share = self.share if helpers is not None or self.helpers is None else None
        helper_evaluations = 0

        def result() -> SearchResult:
            pv = self._pv(root)
            mean = root.w / np.maximum(root.n, 1e-9)
            best = int(np.flatnonzero(root.moves == pv[0])[0])
            if root.terminal is not None:  # proven: a win (mate in root.plies) or a loss
                winrate, mate = root.terminal, root.plies if root.terminal == 1.0 else -root.plies
            else:
                winrate, mate = float(mean[best]), None
            # nodes: the root's new visits, the helpers' taken in included
            return SearchResult(pv[0], winrate, mate, pv, root.visits - visits0, len(pv), max(seldepth, len(pv)),
                                self.cache.evaluations - evals0 + helper_evaluations, clock.elapsed(),
                                self._lines(root, mean) if self.multipv > 1 else [])

        try:
            while budget is None or playouts < budget:
                if share is not None:
                    share.exchange(root, self.prior_visits)
                if clock.out_of_time() or root.terminal is not None:
                    break
                if limits.depth is not None and (seldepth >= limits.depth or playouts >= DEFAULT_NODES * limits.depth):
                    break  # the tree has reached the asked depth (or cannot: every line ends before it)
                want = self.batch_size if budget is None else min(self.batch_size, budget - playouts)
                depth, done = self._simulate_batch(root, board, want)
                playouts += done
                seldepth = max(seldepth, depth)
                if clock.past_optimum(self._stability(root, clock)):
                    break
                if info and clock.elapsed() - last_info >= INFO_EVERY:
                    last_info = clock.elapsed()
                    info(result())
        finally:
            if helpers is not None:
                helper_evaluations = helpers.finish()
                share.exchange(root, self.prior_visits)  # their last statistics
        out = result()
        if info:
            info(out)
        return out

    def _lines(self, root: Node, mean: np.ndarray) -> list[tuple[float, int | None, list[int]]]:
        """MultiPV: the most visited root moves with their mean values and lines."""
        lines = []
        for i in np.argsort(-root.n, kind="stable")[: self.multipv]:
            move = int(root.moves[i])
            child = root.children.get(move)
            mate = None
            if child is not None and child.terminal in (0.0, 1.0):
                mate = child.plies + 1 if child.terminal == 0.0 else -(child.plies + 1)
            value = 1.0 - child.terminal if mate is not None else float(mean[i])
            lines.append((value, mate, [move] + (self._pv(child) if child is not None else [])))
        return lines

    @staticmethod
    def _stability(root: Node, clock: Clock) -> float:
        """Time-management factor: obvious when one move has most of the visits, unstable when the most
        visited move is not the best valued one."""
        best = int(np.argmax(root.n))
        if root.n[best] >= OBVIOUS_SHARE * root.n.sum():
            return clock.obvious
        return 1.0 if best == int(np.argmax(root.w / root.n)) else clock.unstable

    def _simulate_batch(self, root: Node, board: cshogi.Board, count: int) -> tuple[int, int]:
        """Run ``count`` simulations whose leaves are scored in one forward pass. A simulation that selects a
        new leaf another one of the batch has already taken is dropped (python-dlshogi2's QUEUING and
        DISCARDED): scoring and backing up that leaf twice would count one evaluation as two visits.
        A new leaf is taken down (its arrays, legal moves and mate line) while the board stands on it, rather
        than copied: a board's copy carries its whole game history, 20 us at ply 120.
        Returns the deepest ply and the simulations backed up."""
        pending: list[tuple[list[tuple[Node, int]], _Leaf | None, float | None]] = []
        in_flight: set[tuple[int, int]] = set()  # (id(node), child index) of the leaves waiting to be scored
        arrays, legal = PositionArrays.empty(count), []  # the leaves to score, in pending's order
        deepest = 0
        for _ in range(count):
            path: list[tuple[Node, int]] = []
            node, pushed, leaf_value, leaf = root, 0, None, None
            while True:
                if node.terminal is not None and node is not root:
                    leaf_value = node.terminal
                    break
                i = int(np.argmax(self.selection(node)))
                path.append((node, i))
                node.n[i] += VIRTUAL_LOSS  # counted as a loss until the backup replaces it
                move = int(node.moves[i])
                board.push(move)
                pushed += 1
                child = node.children.get(move)
                if child is None:
                    ended = terminal_value(board, pushed, self.draw_ply)
                    if ended is not None and is_proven(ended):  # mated or a won declaration: a proof
                        node.children[move] = Node(board.zobrist_hash(), None, 0, terminal=clamp(ended))
                        leaf_value = clamp(ended)
                    elif ended is not None:  # a repetition: its value, but no proof (cshogi flags the
                        leaf_value = ended   # first recurrence, and the line may still be played on)
                    else:
                        cached = self.cache.peek(board)
                        if cached is not None:
                            child = self._new_node(board, cached)
                            node.children[move] = child
                            leaf_value = child.value()
                        elif (id(node), i) not in in_flight:
                            in_flight.add((id(node), i))
                            arrays.set(len(legal), board)
                            legal.append(legal_move_indices(board))
                            leaf = _Leaf(board.zobrist_hash(), self._mate_line(board) if len(legal[-1][0]) else [])
                    break
                node = child
            deepest = max(deepest, pushed)
            for _ in range(pushed):
                board.pop()
            if leaf is None and leaf_value is None:  # its leaf is in flight: take back the virtual loss
                for node, i in path:
                    node.n[i] -= VIRTUAL_LOSS
                continue
            pending.append((path, leaf, leaf_value))
        n = len(legal)
        scored = iter(self.cache.evaluator.score_arrays(PositionArrays(*(a[:n] for a in arrays)), legal) if n else [])
        for path, leaf, leaf_value in pending:
            if leaf is not None:
                scores = next(scored)
                self.cache.evaluations += 1
                self.cache.put(leaf.key, scores)
                parent, i = path[-1]
                child = self._node(leaf.key, scores, leaf.mate)
                parent.children[int(parent.moves[i])] = child
                leaf_value = child.value()
            self._backup(path, leaf_value)
        return deepest, len(pending)

    def _backup(self, path: list[tuple[Node, int]], leaf_value: float) -> None:
        value = 1.0 - leaf_value  # the leaf's value seen from its parent
        for node, i in reversed(path):
            node.n[i] += 1 - VIRTUAL_LOSS
            node.w[i] += value
            node.visits += 1
            value = 1.0 - value
            self._prove(node, node.children.get(int(node.moves[i])))

    @staticmethod
    def _prove(node: Node, child: Node | None) -> None:
        """MCTS-Solver: a move to a position lost for the opponent proves a win; a node whose every move
        leads to a position won for the opponent is lost. The distance is the quickest win known, or the
        longest defence: the length of the line that :meth:`_proof_line` shows."""
        if child is None or child.terminal not in (0.0, 1.0):
            return
        wins = [c.plies + 1 for c in node.children.values() if c.terminal == 0.0]
        wins += [len(node.mate)] if node.mate else []
        if wins:
            node.terminal, node.plies = 1.0, min(wins)
        elif len(node.children) == len(node.moves) and all(c.terminal == 1.0 for c in node.children.values()):
            node.terminal, node.plies = 0.0, max(c.plies for c in node.children.values()) + 1

    def _pv(self, root: Node) -> list[int]:
        """The most visited line, up to a proven node; from there the proof's line."""
        pv, node = [], root
        while node is not None and len(node.moves) and len(pv) < MAX_PV:
            if node.terminal in (0.0, 1.0):
                return pv + self._proof_line(node)
            i = node.most_visited()
            pv.append(int(node.moves[i]))
            node = node.children.get(pv[-1])
        return pv

    @staticmethod
    def _proof_line(node: Node) -> list[int]:
        """A proven node's line of exactly ``node.plies`` moves, ending in mate: through the child one ply
        nearer the end (the quickest win, the longest defence), or the mate found as the node was made."""
        line: list[int] = []
        while node.plies:
            want = 0.0 if node.terminal == 1.0 else 1.0
            step = next((m for m, c in node.children.items() if c.terminal == want and c.plies == node.plies - 1),
                        None)
            if step is None:
                return line + (node.mate or [])
            line.append(step)
            node = node.children[step]
        return line


class Ucb1(BanditSearch):
    """UCB1: mean + c * sqrt(ln N / n), children starting from one virtual visit at their Q."""

    name = "ucb1"
    options = (*Searcher.options, BATCH_OPTION, LEAF_MATE_OPTION,
               SearchOption("Ucb1C", "c", UCB1_C, 0, 1000, scale=100))

    def __init__(self, evaluator: Evaluator, c: float = UCB1_C, prior_visits: float = 1.0,
                 batch_size: int = BATCH_SIZE, mate_nodes: int = MATE_NODES, leaf_mate_nodes: int = LEAF_MATE_NODES):
        super().__init__(evaluator, c, prior_visits, batch_size, mate_nodes, leaf_mate_nodes)

    def selection(self, node: Node) -> np.ndarray:
        total = node.n.sum()
        return node.w / node.n + self.c * np.sqrt(math.log(max(total, 1.0)) / node.n)


class Puct(BanditSearch):
    """PUCT with P = softmax(Q / temperature): the move scores as a policy prior."""

    name = "puct"
    options = (*Searcher.options, BATCH_OPTION, LEAF_MATE_OPTION,
               SearchOption("PuctC", "c", PUCT_C, 0, 10000, scale=100),
               SearchOption("PuctTemperature", "temperature", PUCT_TEMPERATURE, 1, 10000, scale=1000))

    def __init__(self, evaluator: Evaluator, c: float = PUCT_C, temperature: float = PUCT_TEMPERATURE,
                 prior_visits: float = 1.0, batch_size: int = BATCH_SIZE, mate_nodes: int = MATE_NODES,
                 leaf_mate_nodes: int = LEAF_MATE_NODES):
        self.temperature = temperature
        super().__init__(evaluator, c, prior_visits, batch_size, mate_nodes, leaf_mate_nodes)

    def scores_to_prior(self, node: Node) -> None:
        if len(node.q):
            z = (node.q - node.q.max()) / self.temperature
            p = np.exp(z)
            node.prior = p / p.sum()

    def selection(self, node: Node) -> np.ndarray:
        real = node.n - self.prior_visits
        return node.w / node.n + self.c * node.prior * math.sqrt(max(node.visits, 1)) / (1.0 + real)
