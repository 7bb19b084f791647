"""The root's guard (MateGuardNodes): the bandit searches never choose a move that leaves the opponent a forced mate
cshogi's df-pn finds in the guard's nodes, where a move that leaves none exists.

The positions are from m9's games against gpsshogi (docs/strength.md), each before the move m9 played there, which
left a mate (df-pn, 20,000 nodes) while other moves left none; without the guard the search still chooses such a
move at these nodes, which the test checks first, so that it fails if the position stops exercising the guard."""

import cshogi
import numpy as np
import pytest

from messiah.evaluator import Evaluator
from messiah.search import Limits, make_searcher

GUARD = 20_000
NODES = 2_000
# (sfen, the move m9 played): a won position (messiah's search +3,900 cp after the guard) and a close one
POSITIONS = [
    ("1n1gkg1nl/4ps3/3+R3pp/p1p3p2/4+B1P2/5P3/P2PP1NPP/2+n1G2K1/Lr3L2L w BG3P3s2p 68", "8i4i+"),
    ("1nS6/l3p3l/p1p6/1p1p2pk1/n6p1/1lP2pP2/PbNPP4/1S1GG4/LKS4R1 b RGNbgs5p 99", "N*3g"),
]


@pytest.fixture(scope="module")
def evaluator():
    return Evaluator(threads=1, device="cpu")


def leaves_a_mate(board: cshogi.Board, move: int) -> bool:
    """Whether cshogi's df-pn (GUARD nodes) mates the side to move after ``move``: the oracle, not the search."""
    board.push(move)
    try:
        dfpn = cshogi.DfPn()
        dfpn.set_max_search_node(GUARD)
        return not board.is_game_over() and dfpn.search(board)
    finally:
        board.pop()


@pytest.mark.parametrize("name", ["puct", "ucb1"])
@pytest.mark.parametrize("sfen, played", POSITIONS)
def test_the_guard_refuses_a_move_that_leaves_a_mate(evaluator, name, sfen, played):
    board = cshogi.Board(sfen)
    assert leaves_a_mate(board, board.move_from_usi(played))
    unguarded = make_searcher(name, evaluator, guard_nodes=0).search(board, Limits(nodes=NODES))
    assert leaves_a_mate(board, unguarded.bestmove), "the position no longer tests the guard at these nodes"

    searcher = make_searcher(name, evaluator, guard_nodes=GUARD)
    guarded = searcher.search(board, Limits(nodes=NODES))
    assert not leaves_a_mate(board, guarded.bestmove)
    assert guarded.mate is None  # a move was left that the guard could not refute: no lost root
    # the refuted moves are proven lost (value exactly 0), the unguarded choice among them
    values = searcher.move_values(board)
    legal = list(board.legal_moves)
    refuted = {legal[i] for i in np.flatnonzero(values == 0.0)}
    assert unguarded.bestmove in refuted
    assert all(leaves_a_mate(board, move) for move in refuted)

