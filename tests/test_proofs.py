"""Proofs drive the bandit searches: a move proven lost is never selected while an unproven sibling remains, the
root ranks proven wins first and proven losses last and reports them as mates, a leaf that a mate check proves
costs no forward pass, and a leaf in check is checked for the counter-check mate too.

The reproductions build a tree by hand and run the real selection and backup (search.tree) on it: a proof that
arrives after a move already has visits, as a longer mate found later or a subtree kept from the previous move
brings it."""

import cshogi
import numpy as np
import pytest
from conftest import MATES

from messiah.evaluator import Evaluator
from messiah.search import Limits, make_searcher
from messiah.search.playout import S_COUNT, S_KEY, CoreLeaves
from messiah.search.tree import (
    CHILD,
    NEW_EDGE,
    PLIES,
    PUCT,
    TERMINAL,
    UCB1,
    VISITS,
    Tree,
    expand_and_backup,
    select_leaf,
)

MB = 2**20
C = {UCB1: 0.3, PUCT: 0.5}
# Positions of random play where the side to move is in check and parries it with a check that mates (cshogi's
# three-ply check finds each; df-pn confirms).
COUNTER_MATES = [
    "1r2s2n1/5g2l/lG2gsp1b/1p1ppp1pp/LPG5P/p1p2Pn2/S1nPPk3/P1PS1R3/1NB2K2L w 2p 124",
    "+Nrp4kb/G1P3s1l/3s3Kp/1P2lp1N1/lS1pgP1G1/P6PS/b1N1G1N1P/1p1P3R1/3+p4L b 4Pp 165",
    "1+R3s2l/+P8/2g2gp1l/1+PspppN2/lbp2PP1p/1l1k2S1P/G1NR+b1GP+n/1p5p1/2S1PK1N1 w P2p 158",
]


@pytest.fixture(scope="module")
def evaluator():
    return Evaluator(threads=1, device="cpu")


def _node(tree: Tree, key: int, n: list[float], means: list[float]) -> int:
    """A node whose moves 1, 2, ... have ``n`` visits at ``means`` (for its side to move)."""
    node = tree.add(key, np.arange(1, len(n) + 1, dtype=np.uint32), np.array(means, np.float32), [])
    view = tree.view(node)
    view.n[:] = n
    view.w[:] = np.array(n) * np.array(means)
    tree.node_f[node, VISITS] = sum(n)
    return node


def _link(tree: Tree, parent: int, index: int, child: int) -> None:
    first = tree.node_i[parent, 0]
    tree.edge_i[first + index, CHILD] = child


def _prove(tree: Tree, node: int, value: float, plies: int) -> None:
    """The solver's proof arriving late: ``node`` (with its visits) is now won (1) or lost (0) for its side to
    move, in ``plies``."""
    tree.node_f[node, TERMINAL], tree.node_i[node, PLIES] = value, plies


def _simulate(tree: Tree, rule: int, simulations: int, leaf_value: float) -> None:
    """Simulations from node 0 by the real descent and backup, one at a time; a new edge's leaf is worth
    ``leaf_value`` to its side to move (the network's stand-in), a proven node its proof."""
    paths, moves = np.zeros((1, 64), np.int64), np.zeros(64, np.int64)
    none = np.zeros(1, np.int64)
    for _ in range(simulations):
        depth, end = select_leaf(tree.node_f, tree.node_i, tree.edge_f, tree.edge_i, 0, rule, C[rule], 1.0,
                                 paths[0], moves)
        value = leaf_value if end == NEW_EDGE else tree.node_f[end, TERMINAL]
        expand_and_backup(tree.node_f, tree.node_i, tree.edge_f, tree.edge_s, tree.edge_i, tree.used, 0, paths,
                          np.array([depth]), np.array([value]), np.full(1, -1), none, np.zeros(1, np.int64),
                          np.zeros(1, np.uint32), np.zeros(0), np.zeros(0), 1.0, rule == PUCT)


@pytest.mark.parametrize("rule", [UCB1, PUCT], ids=["ucb1", "puct"])
def test_a_move_proven_lost_after_its_visits_is_never_visited_again_nor_chosen(rule):
    """The issue's reproduction: A has 300 visits at 0.60, B 100 at 0.55; A's reply is then proven to win for the
    opponent. Before, A still took 44 of the next 200 simulations and stayed the most visited, so the search
    played the proven loss."""
    tree = Tree(MB, prior_visits=1.0, temperature=0.024 if rule == PUCT else 0.0)
    root = _node(tree, 1, [300.0, 100.0], [0.60, 0.55])
    reply = _node(tree, 2, [150.0, 150.0], [0.40, 0.38])
    _link(tree, root, 0, reply)
    _prove(tree, reply, 1.0, 5)
    _simulate(tree, rule, 200, leaf_value=0.45)
    view = tree.view(root)
    assert view.n[0] == 300.0 and view.n[1] == 300.0  # every new simulation went to B
    assert view.choice() == 1 and view.ranking().tolist() == [1, 0]
    assert view.terminal is None  # B is unproven: nothing is proven of the root


@pytest.mark.parametrize("rule", [UCB1, PUCT], ids=["ucb1", "puct"])
def test_two_plies_down_a_refuted_reply_is_skipped_and_proofs_climb_to_the_root(rule):
    """Inside the tree: the root's move A leads to X, where X's move a1 is proven lost for X's side after its
    visits. Simulations through X take a2 only (no spurious zeros mixed into X's mean); once a2 is proven lost
    too, X is lost, so A wins and the root is proven won in A's plies."""
    tree = Tree(MB, prior_visits=1.0, temperature=0.024 if rule == PUCT else 0.0)
    root = _node(tree, 1, [200.0, 50.0], [0.55, 0.50])
    x = _node(tree, 2, [150.0, 49.0], [0.46, 0.44])
    a1 = _node(tree, 3, [100.0, 49.0], [0.50, 0.50])
    a2 = _node(tree, 4, [30.0, 18.0], [0.52, 0.5])
    _link(tree, root, 0, x)
    _link(tree, x, 0, a1)
    _link(tree, x, 1, a2)
    _prove(tree, a1, 1.0, 3)
    before = tree.view(x).n.copy()
    _simulate(tree, rule, 100, leaf_value=0.5)
    after = tree.view(x).n
    assert after[0] == before[0] and after[1] > before[1]
    assert tree.view(x).choice() == 1
    _prove(tree, a2, 1.0, 7)
    _simulate(tree, rule, 1, leaf_value=0.5)  # a backup through X or its sibling: either proves along its path
    _simulate(tree, rule, 50, leaf_value=0.5)
    assert tree.view(x).terminal == 0.0 and tree.view(x).plies == 8  # the longest defence
    assert tree.view(root).terminal == 1.0 and tree.view(root).plies == 9
    assert tree.view(root).choice() == 0


def test_the_root_ranks_proven_wins_first_and_losses_last():
    """Proven wins by the shortest mate, then unproven moves by visits, then proven losses by the longest
    defence, whatever their visits."""
    tree = Tree(MB, prior_visits=1.0)
    root = _node(tree, 1, [500.0, 40.0, 60.0, 300.0, 10.0, 20.0], [0.6, 0.5, 0.5, 0.6, 0.9, 0.9])
    for index, value, plies in [(0, 1.0, 3), (3, 1.0, 9), (4, 0.0, 6), (5, 0.0, 2)]:
        child = _node(tree, 10 + index, [1.0], [0.5])
        _link(tree, root, index, child)
        _prove(tree, child, value, plies)
    assert tree.view(root).ranking().tolist() == [5, 4, 2, 1, 3, 0]
    assert tree.view(root).choice() == 5


def _two_plies_down(name: str, evaluator) -> tuple:
    """A searcher after 1,200 nodes from the start position, the board two plies down its most visited line, and
    that position's node in the searcher's tree (the next search's root, kept with its subtree)."""
    searcher = make_searcher(name, evaluator, mate_nodes=0)
    board = cshogi.Board()
    searcher.search(board, Limits(nodes=1200))
    node = searcher.root
    for _ in range(2):
        move = int(node.moves[node.most_visited()])
        board.push(move)
        node = node.children[move]
    return searcher, board, node


@pytest.mark.parametrize("name", ["puct", "ucb1"])
def test_a_kept_subtree_brings_its_proof_to_the_next_search(evaluator, name):
    """Tree reuse: the previous search's tree holds the next root two plies down. Its most visited move is then
    refuted (its reply proven won for the opponent, as a solver finding a longer mate would): the next search
    never visits it again, does not play it, and reports the next move's value, not a mate."""
    searcher, board, node = _two_plies_down(name, evaluator)
    refuted = node.most_visited()
    reply = node.children[int(node.moves[refuted])]
    _prove(searcher.tree, reply.index, 1.0, 5)
    visits = float(node.n[refuted])
    result = searcher.search(board, Limits(nodes=300))
    root = searcher.root
    assert root.key == CoreLeaves.key(board) and root.visits > 300  # the subtree was kept
    assert float(root.n[refuted]) == visits
    assert result.bestmove != int(root.moves[refuted]) and result.mate is None


@pytest.mark.parametrize("name", ["puct", "ucb1"])
def test_a_kept_proof_of_the_root_is_its_answer(evaluator, name):
    """A kept subtree that proves the root won (a move whose reply is proven lost) or lost (every move's reply
    proven won) settles the next search at once: ``score mate N`` with the proof's line, the quickest win or
    the longest defence."""
    searcher, board, node = _two_plies_down(name, evaluator)
    children = node.children
    won_move = int(node.moves[len(node.moves) - 1])  # a move the search hardly visited: not its own choice
    if won_move not in children:
        searcher.tree.room(1, 0)
        _link(searcher.tree, node.index, len(node.moves) - 1, searcher.tree.add_terminal(12345, 0.0))
    _prove(searcher.tree, node.children[won_move].index, 0.0, 4)
    result = searcher.search(board, Limits(nodes=300))
    assert result.bestmove == won_move and result.mate == 5 and result.winrate == 1.0
    assert result.nodes == 0  # settled by the kept proof, no playout spent

    lost, board, node = _two_plies_down(name, evaluator)
    for i, move in enumerate(node.moves):
        child = node.children.get(int(move))
        if child is None:
            lost.tree.room(1, 0)
            child = lost.tree.view(lost.tree.add_terminal(1000 + i, 1.0))
            _link(lost.tree, node.index, i, child.index)
        _prove(lost.tree, child.index, 1.0, 2 + 2 * (i == 3))
    defence = int(node.moves[3])  # (the view's index is the old tree's: read before the search cuts it)
    result = lost.search(board, Limits(nodes=300))
    assert result.mate == -5 and result.winrate == 0.0
    assert result.bestmove == defence  # the longest defence, not the most visited


def test_a_leaf_proven_by_the_mate_check_costs_no_forward_pass(evaluator):
    """The defender's view of five-ply mate problems: every reply leads to a leaf where the mate check finds the
    attacker's mate. Each such node is proven without edges and its position never reaches the network (before,
    each took a forward pass: about 4% of them in a game); every reply refuted, the root is lost and says so."""
    searcher = make_searcher("puct", evaluator, mate_nodes=0)
    rows = [line.split("\t") for line in (MATES / "mate5.tsv").read_text().splitlines() if line.strip()]
    checked = 0
    for sfen, _, solution in rows[:6]:
        board = cshogi.Board(sfen)
        board.push_usi(solution.split()[0])
        searcher.new_game()
        result = searcher.search(board, Limits(nodes=400))
        tree = searcher.tree
        mated = [node for node in tree.mates if node != 0]
        assert mated
        table = searcher.cache.table.slots
        scored = set(table[table[:, S_COUNT] >= 0, S_KEY].tolist())  # the positions the network answered
        for node in mated:
            assert tree.node_i[node, 1] == 0 and tree.view(node).terminal == 1.0
            assert int(tree.node_i[node, 4]) not in scored
        checked += len(mated)
        assert result.mate is not None and result.mate < 0 and result.winrate == 0.0
        for move in result.pv:
            board.push(move)
        assert board.is_game_over()
    assert checked >= 6


def test_a_leaf_in_check_is_checked_for_the_counter_check_mate(evaluator):
    """The side to move in check can mate with the move that parries it: the leaf check asks there too (before,
    a leaf in check was never checked)."""
    searcher = make_searcher("puct", evaluator, mate_nodes=0)
    for sfen in COUNTER_MATES:
        board = cshogi.Board(sfen)
        assert board.is_check()
        line = searcher._mate_line(board)
        assert line and line[0] in list(board.legal_moves)
        for move in line:
            board.push(move)
        assert board.is_game_over()
