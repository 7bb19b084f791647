"""The compiled leaf path (search.playout) against the Python path it replaced: the feature planes and move indices
of a leaf byte for byte what messiah.features and messiah.moves give for the cshogi board, and a line's end judged
as search.base.terminal_value judges it (the draw ply, every repetition with the history before the root, the try,
declarations, mate) under every rule set."""

from __future__ import annotations

import random

import cshogi
import numpy as np
import pytest
from conftest import TEACHER, read_hcpe
from test_playout_board import shuffling_games
from test_playout_rules import positions as declaration_positions

from messiah.features import board_planes
from messiah.moves import legal_move_indices
from messiah.playout import board as core
from messiah.playout import history as core_history
from messiah.playout.mate import MateWork
from messiah.rules import GameRules
from messiah.search.base import terminal_value
from messiah.search.playout import (
    MAX_MATE_LINE,
    RuleSet,
    _ended,
    _leaf_mate,
    position_key,
    root_arrays,
    score_state,
)


class Planes:
    """An evaluator that keeps what it was given: the planes and indices of the leaf path."""

    def run(self, features: np.ndarray, indices: np.ndarray) -> np.ndarray:
        self.features, self.indices = features.copy(), indices.copy()
        return np.zeros(indices.shape, np.float32)


def test_a_leafs_planes_and_move_indices_are_byte_for_byte_todays():
    board = cshogi.Board()
    rng = random.Random(3)
    compared = 0
    boards = []
    for hcp in read_hcpe(TEACHER)["hcp"][::3]:
        board.set_hcp(hcp)
        boards.append(board.copy())
    for _ in range(300):  # random play's positions too, hands and promotions of every kind
        legal = list(board.legal_moves)
        if not legal:
            board = cshogi.Board()
            continue
        board.push(rng.choice(legal))
        boards.append(board.copy())
    evaluator = Planes()
    for board in boards:
        scores = score_state(evaluator, core.from_board(board))
        moves, indices = legal_move_indices(board)
        if not len(moves):
            continue
        assert evaluator.features[0].tobytes() == board_planes(board).tobytes(), board.sfen()
        theirs = dict(zip(moves.tolist(), indices.tolist(), strict=True))
        assert dict(zip(scores.moves.tolist(), scores.indices.tolist(), strict=True)) == theirs, board.sfen()
        compared += 1
    assert compared >= 1_500


RULE_SETS = [GameRules(), GameRules(entering_king="CSARule24", draw_black=0.3, draw_white=0.6),
             GameRules(entering_king="TryRule", max_moves=120), GameRules(entering_king="NoEnteringKing", max_moves=60)]


def judged(state, history, row, ply, rules: GameRules) -> float | None:
    """The compiled verdict as terminal_value gives it: None when the line goes on."""
    value, proven, _ = _ended(state, history, row, ply, tuple(RuleSet.of(rules)), np.empty(core.MAX_MOVES, np.uint32))
    return None if np.isnan(value) else value


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: r.entering_king)
def test_a_lines_end_is_judged_as_terminal_value_judges_it(rules):
    """Lines of games that repeat, searched from roots up to 20 plies back: each position's verdict at its ply from
    the root, the compiled one against search.base.terminal_value on cshogi's board with the whole game."""
    rng = random.Random(9)
    seen: dict[str, int] = {}
    root = None
    for board, move, first in shuffling_games(seed=8, games=80, plies=150):
        if first or root is None or rng.random() < 0.05:
            state, history, root_row = root_arrays(board)
            root, ply = state, 0
        else:
            core.push(root, move)
            ply += 1
            core_history.remember(root, history, root_row + ply, 0)
        theirs = terminal_value(board, ply, rules)
        mine = judged(root, history, root_row + ply, ply, rules)
        assert mine == pytest.approx(theirs) if theirs is not None else mine is None, (board.sfen(), ply)
        kind = "none" if theirs is None else "proof" if theirs > 1.0 or theirs < 0.0 else "value"
        seen[kind] = seen.get(kind, 0) + 1
    assert seen["value"] >= 300 and seen["none"] >= 1_000


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: r.entering_king)
def test_declarations_and_mates_at_a_leaf_are_judged_as_terminal_value_judges_them(rules):
    proofs = 0
    for board in declaration_positions(1_500, seed=21):
        state, history, row = root_arrays(board)
        for ply in (0, 3):
            theirs = terminal_value(board, ply, rules)
            mine = judged(state, history, row, ply, rules)
            assert mine == pytest.approx(theirs) if theirs is not None else mine is None, (board.sfen(), ply)
            proofs += theirs is not None
    assert (proofs > 100) == (rules.entering_king != "NoEnteringKing")


def test_the_leaf_mate_check_is_cshogis_in_check_and_out():
    """The core's leaf mate check (``_leaf_mate``) against cshogi's as the Python leaves asked it
    (``cshogi_mate_line``) on capture-heavy, check-heavy random play: the same verdict on every position, in check (a
    check that parries the check and mates) and out of it, and every line found a real mate."""
    from python_leaves import cshogi_mate_line
    from test_playout_mate import line_problem, random_games

    from messiah.search.mcts import LEAF_MATE_PLY

    work, line = MateWork.empty(), np.zeros(MAX_MATE_LINE, np.uint32)
    seen = {False: [0, 0], True: [0, 0]}  # in check: [positions, mates]
    for board in random_games(seed=22, games=60, plies=200, captures=0.8, checks=0.6):
        state, history, row = root_arrays(board)
        mine = [int(m) for m in line[: _leaf_mate(state, history, row, LEAF_MATE_PLY, line, work)]]
        theirs = cshogi_mate_line(board, LEAF_MATE_PLY)
        assert bool(mine) == bool(theirs), (board.sfen(), theirs)
        if mine:
            assert line_problem(board, mine) is None, (board.sfen(), [cshogi.move_to_usi(m) for m in mine])
        seen[board.is_check()][0] += 1
        seen[board.is_check()][1] += bool(mine)
    assert seen[True][0] >= 2_000 and seen[True][1] >= 3, seen
    assert seen[False][1] >= 100, seen


def test_the_position_key_tells_hands_and_sides_apart():
    """One key for the tree and the cache: the same board with another hand or another side to move is another
    position."""
    base = core.from_board(cshogi.Board("4k4/9/9/9/9/9/9/9/4K4 b P 1"))
    other_hand = core.from_board(cshogi.Board("4k4/9/9/9/9/9/9/9/4K4 b p 1"))
    other_side = core.from_board(cshogi.Board("4k4/9/9/9/9/9/9/9/4K4 w P 1"))
    keys = {position_key(base), position_key(other_hand), position_key(other_side)}
    assert len(keys) == 3


def test_a_whole_batch_runs_through_the_compiled_leaves_as_the_python_path_takes_them_down():
    """A tree's root, a batch of descents by gather, the network's answer (a stand-in of 0.5s) back through
    pad_rows and scatter_rows, then search.tree's expand_and_backup: each leaf is the position of its line, with
    cshogi's legal moves and the planes of today's path; a leaf where cshogi's check finds a mate (mate in one, else
    in five plies; in check, in five plies only; none to look for when the opponent has no king, as a tsume
    problem's attacker) is proven at once, with no row for the network; and the root's visits count every
    simulation."""
    from messiah.search.base import has_opponent_king, mate_in_one
    from messiah.search.playout import LeafCache, Leaves, gather, pad_rows, scatter_rows
    from messiah.search.tree import PUCT, Tree

    checked = mated = 0
    for sfen in ("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
                 "ln1g1g1nl/1ks2r3/1pppp1bpp/p4pp2/7P1/P1P1P1P2/1PBPSPP1P/2KS2R2/LN1G1G1NL b Ss 1",
                 "9/8k/9/7RG/9/9/9/9/9 b r2b3g4s4n4l18p 1",  # a mate in three for the root
                 "8k/9/7GG/9/9/9/9/9/K8 w r2b2g4s4n4l18p 1"):  # white to move into mates: leaves proven
        board = cshogi.Board(sfen)
        state, history, row = root_arrays(board)
        root = score_state(Planes(), state)
        tree = Tree(2**24, prior_visits=1.0, temperature=0.02)
        tree.add(int(position_key(state)) & (2**64 - 1), root.moves, np.full(len(root.moves), 0.5, np.float32), [])
        count = 8
        leaves, cache = Leaves.empty(count), LeafCache.of_bytes(2**16)
        paths, line = np.zeros((count, 1024), np.int64), np.zeros(1024, np.int64)
        _, pending, n, scored, mates = gather(tree.arrays, (state, history, row), tuple(RuleSet.of(GameRules())), PUCT,
                                              0.5, 1.0, count, paths, line, 5, True, cache, leaves, MateWork.empty())
        assert pending == count and scored == n <= count  # an empty cache: the network scores every row
        offsets = leaves.offsets[: n + 1]
        found = 0
        for j in range(pending):
            k = leaves.leaf[j]
            child = board.copy()
            child.push(int(tree.edge_i[paths[j, 0], 0]))
            theirs = bool(has_opponent_king(child) and (  # cshogi's check (no mate in one in check)
                (not child.is_check() and mate_in_one(child)) or child.mate_move(5)))
            if k < 0:  # proven at once: by the mate check here (the root's children are no finished games)
                assert theirs and leaves.values[j] == 1.0, child.sfen()
                found += 1
                continue
            assert not theirs, child.sfen()
            lo, hi = offsets[k], offsets[k + 1]
            assert sorted(leaves.moves[lo:hi].tolist()) == sorted(child.legal_moves), child.sfen()
            assert leaves.planes[int(np.flatnonzero(leaves.rows[:scored] == k)[0])].tobytes() == \
                board_planes(child).tobytes()
            checked += 1
        assert found == mates and (leaves.mate_nodes[:mates] >= 0).all() and (leaves.mate_len[:mates] > 0).all()
        mated += mates
        rows = leaves.rows[:scored]
        answer = np.full((scored, pad_rows(leaves.indices, offsets, rows).shape[1]), 0.5, np.float32)
        scatter_rows(answer, offsets, rows, leaves.q)
        q, p = tree.prepare(leaves.moves[: offsets[n]], leaves.q[: offsets[n]], offsets)
        nodes = tree.nodes
        tree.expand_and_backup(paths[:pending], leaves.depths[:pending], leaves.values[:pending],
                               leaves.leaf[:pending], leaves.keys, offsets, leaves.moves[: offsets[n]], q, p)
        assert tree.view(0).visits == pending and tree.nodes == nodes + n  # a node for every row
    assert checked >= 14 and mated >= 1


def test_the_leaf_cache_finds_what_it_kept_until_the_ring_comes_round():
    """The core's evaluation cache: an answer is found by its key and move count, not by another count (a key's
    collision), nor once the ring has been written over it; a full set of ways loses its oldest answer."""
    from messiah.search.playout import CACHE_WAYS, LeafCache, cache_find, cache_store

    cache = LeafCache.of_bytes(2**14)  # a pool of a few thousand values
    size = len(cache.pool)

    def store(key: int, values: np.ndarray) -> None:
        cache_store(cache, np.array([key]), values.astype(np.float32), np.array([0, len(values)]),
                    np.zeros(1, np.int64))

    def found(key: int, count: int) -> np.ndarray | None:
        at = cache_find(cache, np.int64(key), count)
        return None if at < 0 else cache.pool[at : at + count].copy()

    store(12345, np.linspace(0, 1, 80))
    assert np.array_equal(found(12345, 80), np.linspace(0, 1, 80).astype(np.float32))
    assert found(12345, 79) is None and found(54321, 80) is None
    store(-7, np.full(30, 0.25))  # keys are signed 64-bit position keys
    assert np.array_equal(found(-7, 30), np.full(30, 0.25, np.float32))
    key, filled = 1 << 40, 0
    while filled <= size:  # the ring comes round over the first answers
        store(key, np.full(100, 0.5))
        key, filled = key + 1, filled + 100
    assert found(12345, 80) is None and found(-7, 30) is None
    assert np.array_equal(found(key - 1, 100), np.full(100, 0.5, np.float32))
    cache.clear()
    assert found(key - 1, 100) is None
    slots = len(cache.slots)  # keys that share their first slot: the fifth pushes out the first
    same = [3 + slots * i for i in range(CACHE_WAYS + 1)]
    for i, k in enumerate(same):
        store(k, np.full(10, i / 10))
    assert found(same[0], 10) is None
    assert all(np.array_equal(found(k, 10), np.full(10, i / 10, np.float32)) for i, k in enumerate(same) if i)


@pytest.mark.parametrize("search", ["puct", "ucb1"])
def test_a_search_on_the_playout_core_is_the_python_leaves_search(search):
    """The compiled leaves and the Python ones they replaced (tests/python_leaves.py), the same evaluator (stored
    scores: each move index's fixed Q), the same positions:
    teacher positions, then games that shuffle kings into repetitions, searched move after move (the tree kept
    between moves, the root's answer from the cache where it was a leaf before). Each search has the same value, the
    same nodes, evaluations (forward passes and the cache's hits alike) and root visits; the move chosen is the same
    but where equal visits and values tie (the core may order a position's moves otherwise)."""
    from python_leaves import PythonPuct, PythonUcb1

    from messiah.search import Limits
    from messiah.search.mcts import Puct, Ucb1
    from messiah.tools.bench import stored_scores

    evaluator = stored_scores(None)
    python, compiled = {"puct": (PythonPuct, Puct), "ucb1": (PythonUcb1, Ucb1)}[search]
    python, compiled = python(evaluator), compiled(evaluator)
    board = cshogi.Board()
    boards = []
    for hcp in read_hcpe(TEACHER)["hcp"][::200]:
        board.set_hcp(hcp)
        boards.append(board.copy())
    searched = same_move = 0

    def both(board: cshogi.Board) -> int:
        nonlocal searched, same_move
        mine, theirs = compiled.search(board, Limits(nodes=300)), python.search(board, Limits(nodes=300))
        assert (mine.winrate, mine.nodes, mine.evaluations, mine.mate) == \
            (theirs.winrate, theirs.nodes, theirs.evaluations, theirs.mate), board.sfen()
        if python.root is not None:
            assert sorted(compiled.root.n) == sorted(python.root.n), board.sfen()
        searched += 1
        same_move += mine.bestmove == theirs.bestmove
        return theirs.bestmove

    for board in boards:
        python.new_game()
        compiled.new_game()
        both(board)
    for seed in range(2):
        python.new_game()
        compiled.new_game()
        board, rng = cshogi.Board(), random.Random(seed)
        for _ in range(8):
            board.push(rng.choice(list(board.legal_moves)))
        for _ in range(40):
            if board.is_game_over():
                break
            board.push(both(board))
    assert searched >= 90 and same_move >= searched - 3


def test_the_bandit_searches_one_cache_answers_as_the_evaluator_and_scores_a_position_once():
    """The bandit searches keep one cache (search.playout.CoreCache) for their leaves, their root and whoever asks
    the search (the engine's strength, self-play's last position, annotate): its answer is the evaluator's own, in
    cshogi's legal move order, and a position the search has scored (the root, a leaf) costs no second pass. (Before,
    such a question went to a second cache the leaves never filled: one more pass a move.)"""
    from messiah.evaluator import Evaluator
    from messiah.search import Limits, make_searcher

    evaluator = Evaluator(threads=1, device="cpu")
    searcher = make_searcher("puct", evaluator, mate_nodes=0)
    board = cshogi.Board("ln1g1g1nl/1ks2r3/1pppp1bpp/p4pp2/7P1/P1P1P1P2/1PBPSPP1P/2KS2R2/LN1G1G1NL b Ss 1")
    result = searcher.search(board, Limits(nodes=64))
    passes = evaluator.calls
    asked = [board.copy()]
    child = board.copy()
    child.push(result.bestmove)  # a leaf of that search
    asked.append(child)
    for position in asked:
        mine, theirs = searcher.cache.get(position), evaluator.score(position)
        assert mine.moves.tolist() == theirs.moves.tolist() == list(position.legal_moves)
        assert np.array_equal(mine.indices, theirs.indices)
        np.testing.assert_allclose(mine.q, theirs.q, atol=1e-6)
    assert evaluator.calls == passes + len(asked)  # the evaluator.score calls only
    fresh = cshogi.Board()
    counted = searcher.cache.evaluations, searcher.cache.moves_scored
    searcher.cache.get(fresh)
    assert evaluator.calls == passes + len(asked) + 1  # a position it never saw: one pass, counted
    assert (searcher.cache.evaluations, searcher.cache.moves_scored) == (counted[0] + 1, counted[1] + 30)
