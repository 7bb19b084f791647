"""The bandit searches' tree as arrays (search.tree): its arithmetic against numpy's, its memory bound and what a
full tree does, the subtree kept between moves, and the short mate check of LeafMatePly."""

import cshogi
import numpy as np
import pytest
from conftest import MATES

from messiah.evaluator import Evaluator
from messiah.search import Limits, make_searcher
from messiah.search.mcts import Puct
from messiah.search.playout import CoreLeaves
from messiah.search.tree import Tree, _pairwise_sum

MB = 2**20
# A middlegame position with 52 legal moves (record 700 of the fixture's teacher games).
MIDDLEGAME = "3g3n1/+S2pr1k2/ppplsp1pg/1s3P1+bN/1g2P4/PRP1+p1P1L/1PS4PP/1G4K2/LN3L1N1 w B3P 1"


@pytest.fixture(scope="module")
def evaluator():
    return Evaluator(threads=1, device="cpu")


def test_the_sum_behind_the_prior_is_numpys_to_the_bit():
    """The prior's normaliser is numpy's pairwise sum, so that PUCT's choices are those of the numpy tree before
    it; checked on every length a position's moves can have and beyond, at several scales."""
    rng = np.random.default_rng(0)
    for n in range(1, 700):
        a = np.exp(rng.normal(0, 3, n))
        assert _pairwise_sum(a, 0, n) == a.sum(), n
        assert _pairwise_sum(a, 3, n - 3) == a[3:].sum() if n > 3 else True, n


def test_a_node_is_its_moves_q_and_prior():
    tree = Tree(MB, prior_visits=1.0, temperature=0.5)
    moves, q = np.array([11, 22, 33], np.uint32), np.array([0.5, 0.25, 0.75], np.float32)
    node = tree.view(tree.add(123, moves, q, []))
    assert node.key == 123 and list(node.moves) == [11, 22, 33] and node.terminal is None
    assert list(node.n) == [1.0, 1.0, 1.0] and list(node.w) == [0.5, 0.25, 0.75]
    p = np.exp((q.astype(np.float64) - 0.75) / 0.5)
    assert np.array_equal(node.prior, p / p.sum())
    assert node.value() == 0.75 and node.most_visited() == 2
    mated = tree.view(tree.add(124, moves[:0], q[:0], []))
    assert mated.terminal == 0.0 and mated.value() == 0.0


def test_visits_count_past_what_float32_holds():
    """A root move's visits pass 2^24 in minutes of go infinite with helpers: each one must still count (in float32,
    2^24 + 1 is 2^24)."""
    tree = Tree(MB, prior_visits=1.0)
    node = tree.view(tree.add(1, np.array([11, 22], np.uint32), np.array([0.5, 0.25], np.float32), []))
    node.add_visits(np.array([2.0**24, 0.0]), np.array([2.0**23, 0.0]))
    node.add_visits(np.array([1.0, 0.0]), np.array([1.0, 0.0]))
    assert node.n[0] == 2**24 + 2 and node.w[0] == 0.5 + 2**23 + 1


def test_a_mate_line_found_as_a_node_is_made_proves_it():
    """df-pn's move may differ from the generator's above the low 16 bits: the node's own move is kept."""
    tree = Tree(MB, prior_visits=1.0)
    moves, q = np.array([11, 22 | (5 << 16), 33], np.uint32), np.array([0.5, 0.25, 0.75], np.float32)
    node = tree.view(tree.add(7, moves, q, [22, 40, 50]))
    assert node.terminal == 1.0 and node.plies == 3 and node.mate == [22 | (5 << 16), 40, 50]
    assert node.q[1] == 1.0 and node.w[1] == 1.0


def test_the_tree_never_grows_past_its_share_of_usi_hash(evaluator):
    """USI_Hash 2: the tree gets 1 MB. A search of many times what fits fills it, then goes on without
    expanding (leaves at the tree's edge valued by their move's Q): every playout is still counted at the root,
    and the arrays stay within their bytes."""
    searcher = make_searcher("puct", evaluator, mate_nodes=0)
    searcher.set_hash(2)
    tree = searcher.tree
    assert tree.max_bytes == MB
    board = cshogi.Board(MIDDLEGAME)
    result = searcher.search(board, Limits(nodes=3000))
    assert result.nodes == 3000 == searcher.root.visits
    assert tree.bytes() <= MB and searcher.hashfull() > 500  # what USI's hashfull reports: the tree's use
    # full: no room for another batch's worth of nodes with their moves
    assert not tree.room(searcher.batch_size, searcher.batch_size * 600)
    again = searcher.search(board, Limits(nodes=500))  # the same root: the full tree is kept and refined
    assert again.nodes == 500 and tree.bytes() <= MB
    assert again.evaluations < 50  # the leaves met at the full tree's edge take their Q, no forward pass
    assert result.bestmove in set(board.legal_moves) and again.bestmove in set(board.legal_moves)


def test_room_is_the_budget():
    """A node takes 56 bytes and an edge 36 (its W, N and prior in float64, its Q, move and child in 32 bits):
    the budget holds exactly what those bytes allow, in nodes and edges made, whatever their mix."""
    tree = Tree(4 * MB, prior_visits=1.0)
    assert tree.bytes() == 0 and tree.hashfull() == 0
    assert tree.room(1, (4 * MB - 56) // 36) and not tree.room(1, (4 * MB - 56) // 36 + 1)
    assert tree.room(4 * MB // 56, 0) and not tree.room(4 * MB // 56 + 1, 0)
    moves, q = np.arange(1, 81, dtype=np.uint32), np.linspace(0.1, 0.9, 80, dtype=np.float32)
    tree.add(1, moves, q, [])
    assert tree.bytes() == 56 + 80 * 36
    assert tree.room(1, (4 * MB - 2 * 56 - 80 * 36) // 36) and not tree.room(1, (4 * MB - 2 * 56 - 80 * 36) // 36 + 1)
    tree.resize(MB)  # USI_Hash changed: a new, smaller tree
    assert tree.bytes() == 0 and tree.nodes == 0 and tree.room(1, (MB - 56) // 36)


def test_the_next_search_keeps_only_the_subtree_of_its_position(evaluator):
    """Two plies later the old root's subtree for the new position is kept, renumbered from node 0, with its
    visits; nothing else of the old tree stays."""
    searcher = make_searcher("puct", evaluator, mate_nodes=0)
    board = cshogi.Board()
    first = searcher.search(board, Limits(nodes=400))
    total = searcher.tree.nodes
    board.push(first.pv[0])
    board.push(first.pv[1])
    kept = searcher.reusable(board)
    assert kept is not None and kept.index > 0
    visits, moves, n = kept.visits, kept.moves.copy(), kept.n.copy()

    def subtree_size(node) -> int:
        return 1 + sum(subtree_size(child) for child in node.children.values())

    size = subtree_size(kept)
    searcher.tree.keep_subtree(kept.index)
    root = searcher.tree.view(0)
    assert root.key == CoreLeaves.key(board) and root.visits == visits
    assert np.array_equal(root.moves, moves) and np.array_equal(root.n, n)
    assert searcher.tree.nodes == size == subtree_size(root) < total


@pytest.mark.parametrize("name", ["puct", "ucb1"])
@pytest.mark.parametrize("ply", [3, 5])
def test_the_leaf_mate_check_proves_a_short_mate_where_the_tree_meets_it(evaluator, name, ply):
    """With no df-pn at the root (MateNodes 0), cshogi's check of LeafMatePly plies proves a mate of that length as
    a node is made, with its line: the search ends proven at once, its first move the problem's solution. The
    three-ply check does not see a mate in five."""
    sfen, length, solution = (MATES / f"mate{ply}.tsv").read_text().splitlines()[0].split("\t")
    board = cshogi.Board(sfen)
    searcher = make_searcher(name, evaluator, mate_nodes=0, leaf_mate_ply=ply)
    line = searcher._mate_line(board)
    assert int(length) == len(line) == ply and cshogi.move_to_usi(line[0]) == solution.split()[0]
    if ply == 5:
        assert make_searcher(name, evaluator, mate_nodes=0, leaf_mate_ply=3)._mate_line(board) == []
    result = searcher.search(board, Limits(nodes=200))
    assert result.mate == ply and len(result.pv) == ply and result.pv[0] & 0xFFFF == line[0] & 0xFFFF, result
    for move in result.pv:  # a real line: legal moves that end in mate
        assert move in set(board.legal_moves)
        board.push(move)
    assert board.is_game_over()


def test_leaf_mate_ply_is_odd_as_cshogis_check_needs(evaluator):
    """A mate of at most an even number of plies is one of one ply fewer (mates are odd): LeafMatePly 4 checks 3."""
    plies = [Puct.from_usi(evaluator, {"LeafMatePly": n}).leaf_mate_ply for n in range(3, 10)]
    assert plies == [3, 3, 5, 5, 7, 7, 9]
