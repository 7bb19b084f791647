"""Bandit tree searches over the move scores: UCB1 and PUCT, sharing one tree.

A node is a position the evaluator has scored: each child (legal move) starts from its Q as if it had
been visited ``prior_visits`` times, so the tree is shaped by the network before any backup arrives. A
simulation descends by the selection rule to a child that has no node yet, scores that child's position
(one forward pass, which also values the leaf: its best Q), and backs the value up with the negamax flip
(``1 - v`` per ply). Leaves are gathered ``batch_size`` at a time under a virtual loss (each new leaf
once) and scored in one forward pass, which feeds a GPU full batches. The tree is kept between moves: a
later search from a position two plies (or more) down the previous root's tree reuses that subtree. The tree is
:mod:`search.tree`'s flat arrays, and a batch's descents, its leaves (each taken down on the playout core's board:
the line's end by the rules, the mate check, the planes) and its backups run in compiled code (:mod:`search.playout`);
Python runs the forward pass between.

- UCB1: argmax mean + c * sqrt(ln N / n) (the method's multi-armed bandit search);
- PUCT: argmax mean + c * P * sqrt(N) / (1 + n) with P = softmax(Q / temperature), the move scores used
  as a policy (the variant the method's authors doubted: a match decides).

A depth limit means: stop once a simulation has reached that many plies below the root.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import cshogi
import numpy as np

from messiah.evaluator import Evaluator, MoveScores
from messiah.search.base import (
    DEFAULT_CACHE_BYTES,
    DEFAULT_SETTINGS,
    DFPN_NODES_PER_SECOND,
    MATE_NODES,
    InfoCallback,
    Limits,
    Searcher,
    SearchOption,
    SearchResult,
    SearchSettings,
    Visited,
    mate_after,
)
from messiah.search.parallel import Helpers, RootShare, RootTable
from messiah.search.playout import CoreCache, CoreLeaves, RuleSet, in_legal_order
from messiah.search.timeman import Clock
from messiah.search.tree import (
    MAX_DEPTH,
    PUCT,
    UCB1,
    NodeView,
    Tree,
)

DEFAULT_NODES = 800  # playouts when no limit is given
MAX_PV = 64  # moves of a principal variation
REUSE_PLIES = 4  # a later search reuses the previous tree's node for its position this far below the old root
DEFAULT_TREE_BYTES = 128 * 2**20  # the tree's memory until the engine sizes it from USI_Hash (set_hash)
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
# The mate check at each new node: cshogi's checks for a mate in one ply and in LeafMatePly plies (five: two thirds of
# the mates of df-pn's 64 nodes; three: a third of the cost), in the playout core's compiled copy with the same
# verdicts (search.playout). Five plies beat df-pn's 64 nodes by +117 (+7 .. +227) in 40 games at byoyomi 1000, an
# SPRT (0, 50) that accepted; three plies and 256 nodes had lost to 64 (docs/search.md, "LeafMateNodes and
# LeafMatePly"); df-pn at each node (the old LeafMateNodes) went with the Python leaves (issue 93).
LEAF_MATE_PLY = 5
# The check takes an odd ply: a mate of at most an even number of plies is one of at most one ply fewer.
LEAF_MATE_PLY_OPTION = SearchOption("LeafMatePly", "leaf_mate_ply", LEAF_MATE_PLY, 3, 9)
# The visits a child's one-pass score counts for (USI PriorVisits, in hundredths): its Q starts as that many visits'
# mean, so backups outweigh it only once they outnumber it. Against 1.0 in 100 games each at 800 nodes: 4 scored -111
# (-182 .. -41), 2 and 0.25 near -60, 0.5 +10 (docs/search.md, "PriorVisits: one visit stands").
PRIOR_VISITS = 1.0
# At zero an unvisited edge would have no mean; below a tenth the score is all but gone after one visit.
PRIOR_VISITS_OPTION = SearchOption("PriorVisits", "prior_visits", PRIOR_VISITS, 10, 10000, scale=100)
# The root's guard (USI MateGuardNodes): the move the search is about to choose is checked by cshogi's df-pn for a
# forced mate it would leave the opponent; a move that leaves one is proven lost and the search chooses again. m9 lost
# 19 of 20 games to gpsshogi, and in 17 of the 19 its first move that left a mate df-pn finds in 20,000 nodes had an
# alternative that left none (docs/strength.md); the leaves' check sees five plies, the root's df-pn only our mates. A
# check costs a few milliseconds where the opponent's checks soon run out; its nodes cap the rest. 20,000 against none:
# +21 (+8 .. +34, pentanomial) in 300 games at 800 nodes, and 7-13 against gpsshogi at byoyomi 1000 on the openings of
# the 1-19 without it (docs/search.md, "The root's guard").
GUARD_NODES = 20_000
GUARD_OPTION = SearchOption("MateGuardNodes", "guard_nodes", GUARD_NODES, 0, 10_000_000)
GUARD_AFTER = 64  # root visits before the choice is checked: the first playouts' choices come and go
# The Dirichlet's total concentration over the root's moves when self-play mixes noise into PUCT's root prior: alpha =
# this / legal moves, as KataGo's 10.83 / moves (AlphaZero's shogi alpha 0.15 over its games' 70 to 90 moves: 10 to 14).
ROOT_NOISE_CONCENTRATION = 10.0


@dataclass
class RootNoise:
    """Dirichlet noise mixed into PUCT's root prior at the start of each search, AlphaZero's exploration in self-play:
    P becomes (1 - share) * P + share * Dir(ROOT_NOISE_CONCENTRATION / moves). The prior is softmax(Q / T), which
    gives a move a few points of win rate behind the best no visit at all; the noise gives every move a chance to
    show what its subtree holds. Never in play: only self-play sets :attr:`BanditSearch.root_noise`."""

    share: float
    rng: np.random.Generator
    concentration: float = ROOT_NOISE_CONCENTRATION

    def mix(self, prior: np.ndarray) -> None:
        """Mix the noise into ``prior`` in place (the root's view of the tree's prior column)."""
        eta = self.rng.dirichlet(np.full(len(prior), self.concentration / len(prior)))
        prior[:] = (1.0 - self.share) * prior + self.share * eta


OBVIOUS_SHARE = 0.7  # share of the root's visits (virtual prior visits included) that makes a move obvious


class BanditSearch(Searcher):
    """The shared tree (:class:`search.tree.Tree`); subclasses give the selection rule."""

    rule = UCB1
    options = (*Searcher.options, BATCH_OPTION, LEAF_MATE_PLY_OPTION, PRIOR_VISITS_OPTION, GUARD_OPTION)
    root_parallel = True  # Threads: helper processes (search.parallel), each on one onnxruntime thread

    def __init__(self, evaluator: Evaluator, c: float, prior_visits: float, batch_size: int = BATCH_SIZE,
                 mate_nodes: int = MATE_NODES, temperature: float = 0.0, leaf_mate_ply: int = LEAF_MATE_PLY,
                 guard_nodes: int = GUARD_NODES, settings: SearchSettings = DEFAULT_SETTINGS):
        super().__init__(evaluator, mate_nodes, settings)
        self.c = c
        self.guard_nodes = guard_nodes
        self._guarded: set[int] = set()  # the root moves the guard has checked in this search
        self.prior_visits = prior_visits
        self.batch_size = batch_size
        self.tree = Tree(DEFAULT_TREE_BYTES, prior_visits, temperature)
        self.root: NodeView | None = None
        self.helpers: Helpers | None = None  # root-parallel helper processes (start_helpers)
        self.share: RootShare | None = None  # this process's row of their shared root statistics
        self.root_noise: RootNoise | None = None  # self-play's exploration (PUCT only: UCB1 has no prior)
        # odd, as cshogi's check needs (LEAF_MATE_PLY_OPTION)
        self.leaf_mate_ply = max(3, leaf_mate_ply if leaf_mate_ply % 2 else leaf_mate_ply - 1)
        self._paths = np.zeros((batch_size, MAX_DEPTH), np.int64)  # the batch's descents, edge by edge
        self._moves = np.zeros(MAX_DEPTH, np.int64)  # the moves of the descent being taken down
        # the leaves' compiled side: the batch's buffers, the mate check's work, the root's state
        self.leaves = CoreLeaves(batch_size, self.cache)
        self.leaf_rules = RuleSet.of(self.rules)

    def _new_cache(self, evaluator: Evaluator) -> CoreCache:
        """One cache of the network's answers for the leaves, the root and whoever asks the search."""
        return CoreCache(evaluator, DEFAULT_CACHE_BYTES)

    @property
    def positions_a_pass(self) -> int:
        """A batch's leaves go through the network together."""
        return self.batch_size

    def new_game(self) -> None:
        super().new_game()
        self.root = None
        self.tree.clear()
        if self.helpers is not None:
            self.helpers.send(("new_game",))

    def set_hash(self, megabytes: int) -> None:
        """The evaluation cache gets half of ``megabytes``, the tree the other half."""
        super().set_hash(megabytes)
        self.tree.resize(megabytes * 2**20 // 2)

    def hashfull(self) -> int:
        """Permille of the tree's share of USI_Hash in use: at 1000 the tree stops expanding."""
        return self.tree.hashfull()

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

    def _mate_line(self, board: cshogi.Board) -> list[int]:
        """A mate for the side to move of the root's new node, or []: the leaves' own check (mate in one, else
        LeafMatePly plies; in check, a move that parries the check with a check and mates), as every other node of
        the tree is checked."""
        return self.leaves.mate_line(board, self.leaf_mate_ply)

    def _new_node(self, board: cshogi.Board, scores: MoveScores) -> int:
        """The node of ``board`` from its move scores; room for it must have been made."""
        line = self._mate_line(board) if len(scores.moves) else []
        return self.tree.add(self._key(board), scores.moves, scores.q, line)

    def _key(self, board: cshogi.Board) -> int:
        """The tree's key of ``board``: the playout core's position key, as the leaves' nodes are keyed."""
        return self.leaves.key(board)

    def reusable(self, board: cshogi.Board) -> NodeView | None:
        """The previous tree's node for this position, up to REUSE_PLIES plies below the old root, or None."""
        if self.root is None:
            return None
        node = self.tree.find(self.root.index, self._key(board), REUSE_PLIES)
        return self.tree.view(node) if node >= 0 else None

    def _root(self, board: cshogi.Board) -> NodeView:
        """The search's root: the :meth:`reusable` node with its subtree kept and the rest of the tree dropped;
        else a new tree."""
        tree, reused = self.tree, self.reusable(board)
        if reused is not None:
            tree.keep_subtree(reused.index)
        else:
            tree.clear()
            scores = self._root_scores(board)
            tree.room(1, len(scores.moves))  # the first node always fits: the arrays start larger than any
            self._new_node(board, scores)
        return tree.view(0)

    def _root_scores(self, board: cshogi.Board) -> MoveScores:
        """The root's move scores: from the cache, where the leaves' answers are kept."""
        return self.leaves.root_scores()

    def _search(self, board: cshogi.Board, limits: Limits, clock: Clock, info: InfoCallback | None) -> SearchResult:
        evals0 = self.cache.evaluations
        self._guarded.clear()
        self.leaves.set_root(board)
        root = self.root = self._root(board)
        root.set_terminal(None)  # the root is searched, whatever its mate-in-one flag says,
        self.tree.prove(0)  # unless its kept subtree proves it: then the proof is the answer
        if self.root_noise is not None and self.tree.temperature > 0.0 and len(root.moves) > 1:
            self.root_noise.mix(root.prior)  # on the priors as they stand: a root is searched once a self-play move
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
            terminal = root.terminal
            if terminal is not None:  # proven: a win (mate in root.plies) or a loss
                winrate, mate = terminal, root.plies if terminal == 1.0 else -root.plies
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
                depth, done = self._simulate_batch(board, want)
                playouts += done
                seldepth = max(seldepth, depth)
                self._guard(board, root, clock)
                if clock.past_optimum(self._stability(clock)):
                    break
                if info and clock.elapsed() - last_info >= self.info_every:
                    last_info = clock.elapsed()
                    info(result())
        finally:
            if helpers is not None:
                helper_evaluations = helpers.finish()
                share.exchange(root, self.prior_visits)  # their last statistics
        while self._guard(board, root, clock):  # a refuted choice: the next one is checked too, while time allows
            pass
        out = result()
        if info:
            info(out)
        return out

    def _guard(self, board: cshogi.Board, root: NodeView, clock: Clock) -> bool:
        """The root's guard (GUARD_NODES): check the search's current choice, once a search, for a forced mate it
        leaves the opponent (cshogi's df-pn in ``guard_nodes``, where the clock leaves time for that many); prove it
        lost if it does. Returns whether it did: the choice has changed."""
        if not self.guard_nodes or root.terminal is not None or root.visits < GUARD_AFTER:
            return False
        move = int(root.moves[root.choice()])
        if move in self._guarded:
            return False
        maximum = clock.sizing().maximum
        if maximum is not None and clock.elapsed() + self.guard_nodes / DFPN_NODES_PER_SECOND > maximum:
            return False
        self._guarded.add(move)
        child = root.children.get(move)
        if child is None or child.terminal is not None:  # not made (a full tree), or already proven
            return False
        line = mate_after(board, move, self.guard_nodes)
        if line is None:
            return False
        self.tree.prove_mate(child.index, line)
        self.tree.prove(root.index)
        return True

    def _lines(self, root: NodeView, mean: np.ndarray) -> list[tuple[float, int | None, list[int]]]:
        """MultiPV: the most visited root moves with their mean values and lines."""
        lines, children = [], root.children
        for i in root.ranking()[: self.multipv]:
            move = int(root.moves[i])
            child = children.get(move)
            mate = None
            if child is not None and child.terminal in (0.0, 1.0):
                mate = child.plies + 1 if child.terminal == 0.0 else -(child.plies + 1)
            value = 1.0 - child.terminal if mate is not None else float(mean[i])
            lines.append((value, mate, [move] + (self._pv(child) if child is not None else [])))
        return lines

    def _stability(self, clock: Clock) -> float:
        """Time-management factor: obvious when one move has most of the visits, unstable when the most
        visited move is not the best valued one."""
        shape = self.tree.stability(OBVIOUS_SHARE)
        return (clock.obvious, 1.0, clock.unstable)[shape]

    def _simulate_batch(self, board: cshogi.Board, count: int) -> tuple[int, int]:
        """Run ``count`` simulations from the root (node 0) whose leaves are scored in one forward pass, all but the
        pass in compiled code (:meth:`search.playout.CoreLeaves.simulate`: the descents, each new leaf taken down
        on the playout core's board, its mate check, the cache). A simulation that selects a leaf another one of the
        batch already waits for is dropped (python-dlshogi2's QUEUING and DISCARDED): scoring and backing up that
        leaf twice would count one evaluation as two visits. A full tree (USI_Hash) expands nothing: a new leaf is
        then valued by its move's Q. Returns the deepest ply and the simulations backed up."""
        return self.leaves.simulate(self.tree, self.rule, self.c, self.prior_visits, count, self._paths, self._moves,
                                    self.leaf_rules, self.leaf_mate_ply)

    def move_values(self, board: cshogi.Board) -> np.ndarray | None:
        """The root's moves' values (:meth:`NodeView.move_values`) when the last search's root is ``board``, in
        cshogi's order of its legal moves."""
        if self.root is None or self.root.key != self._key(board):
            return None
        return in_legal_order(board, self.root.moves, self.root.move_values())

    def visited(self, board: cshogi.Board, min_visits: int, skip: int) -> list[Visited]:
        """The nodes below the last search's root ``board``, outside ``skip``'s subtree, that it visited at least
        ``min_visits`` times (unproven, with moves), most visited first."""
        if self.root is None or self.root.key != self._key(board):
            return []
        found: list[Visited] = []
        position = board.copy()
        stack = [([move], child) for move, child in self.root.children.items() if move != skip]
        while stack:
            line, node = stack.pop()
            if node.visits < min_visits or node.terminal is not None or not node.count:
                continue  # a node's visits bound its children's: nothing below qualifies either
            best_move = int(node.moves[node.choice()])
            for move in line:
                position.push(move)
            values = in_legal_order(position, node.moves, node.move_values())
            best = list(position.legal_moves).index(best_move)
            for _ in line:
                position.pop()
            found.append(Visited(line, node.visits, values, node.value(), best, best_move))
            stack.extend(([*line, move], child) for move, child in node.children.items())
        return sorted(found, key=lambda v: -v.visits)

    def _pv(self, root: NodeView) -> list[int]:
        """The search's line (:meth:`NodeView.choice` at each node), up to a proven node; from there the proof's
        line."""
        pv, node = [], root
        while node is not None and len(pv) < MAX_PV:
            if node.terminal in (0.0, 1.0):
                return pv + self._proof_line(node)
            if not node.count:
                break
            i = node.choice()
            pv.append(int(node.moves[i]))
            node = node.children.get(pv[-1])
        return pv

    @staticmethod
    def _proof_line(node: NodeView) -> list[int]:
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
    """UCB1: mean + c * sqrt(ln N / n), children starting from PriorVisits virtual visits at their Q."""

    name = "ucb1"
    options = (*BanditSearch.options, SearchOption("Ucb1C", "c", UCB1_C, 0, 1000, scale=100))

    def __init__(self, evaluator: Evaluator, c: float = UCB1_C, prior_visits: float = PRIOR_VISITS,
                 batch_size: int = BATCH_SIZE, mate_nodes: int = MATE_NODES, leaf_mate_ply: int = LEAF_MATE_PLY,
                 guard_nodes: int = GUARD_NODES, settings: SearchSettings = DEFAULT_SETTINGS):
        super().__init__(evaluator, c, prior_visits, batch_size, mate_nodes, leaf_mate_ply=leaf_mate_ply,
                         guard_nodes=guard_nodes, settings=settings)


class Puct(BanditSearch):
    """PUCT with P = softmax(Q / temperature): the move scores as a policy prior."""

    name = "puct"
    rule = PUCT
    options = (*BanditSearch.options, SearchOption("PuctC", "c", PUCT_C, 0, 10000, scale=100),
               SearchOption("PuctTemperature", "temperature", PUCT_TEMPERATURE, 1, 10000, scale=1000))

    def __init__(self, evaluator: Evaluator, c: float = PUCT_C, temperature: float = PUCT_TEMPERATURE,
                 prior_visits: float = PRIOR_VISITS, batch_size: int = BATCH_SIZE, mate_nodes: int = MATE_NODES,
                 leaf_mate_ply: int = LEAF_MATE_PLY, guard_nodes: int = GUARD_NODES,
                 settings: SearchSettings = DEFAULT_SETTINGS):
        self.temperature = temperature
        super().__init__(evaluator, c, prior_visits, batch_size, mate_nodes, temperature, leaf_mate_ply, guard_nodes,
                         settings)
