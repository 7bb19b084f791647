"""The bandit searches' leaf side as it ran in Python until the compiled leaves (search.playout) became the only
path (issue 93): each leaf's line pushed on cshogi's board, judged by search.base.terminal_value, its mate checked by
cshogi (:func:`cshogi_mate_line`, the root's check too until the core's took its place), its position scored through
the evaluation cache (search.base.EvalCache).
Kept here only as the oracle tests/test_playout_leaves.py holds the compiled leaves to: the same searches at fixed
visits."""

from __future__ import annotations

from typing import NamedTuple

import cshogi
import numpy as np

from messiah.evaluator import Evaluator, MoveScores
from messiah.features import PositionArrays
from messiah.search.base import (
    EvalCache,
    clamp,
    has_opponent_king,
    is_proven,
    mate_in_one,
    root_mate,
    terminal_value,
)
from messiah.search.mcts import Puct, Ucb1
from messiah.search.tree import DROPPED, IN_FLIGHT, MAX_MOVES, add_terminal, edge_q, link, proven_value, select_in


class _Batch(NamedTuple):
    """A batch's buffers, made once: per simulation its depth, its leaf's value (NaN: from the forward pass) and its
    leaf's row (-1: none); per leaf to score its position's arrays, key and where its moves start among the batch's."""

    depths: np.ndarray
    values: np.ndarray
    leaf: np.ndarray
    arrays: PositionArrays
    keys: np.ndarray
    offsets: np.ndarray

    @staticmethod
    def empty(size: int) -> _Batch:
        return _Batch(np.zeros(size, np.int64), np.zeros(size), np.zeros(size, np.int64), PositionArrays.empty(size),
                      np.zeros(size, np.uint64), np.zeros(size + 1, np.int64))


MATE_LINE_NODES = 2_000  # df-pn nodes that find the line of a mate cshogi's short check has proven


def cshogi_mate_line(board: cshogi.Board, ply: int) -> list[int]:
    """cshogi's leaf mate check: a mate for the side to move (mate in one, else ``Board.mate_move(ply)``, its line by
    df-pn), or []. In check too: a move that parries the check with a check can mate (cshogi's short check then
    takes only such moves); none when the opponent has no king."""
    if not has_opponent_king(board):
        return []
    mate = mate_in_one(board) if not board.is_check() else 0  # cshogi's mate in one assumes no check
    if mate:
        return [mate]
    if board.mate_move(ply):
        return root_mate(board, MATE_LINE_NODES) or []
    return []


class PythonLeaves:
    """A bandit search (mixed in before Puct or Ucb1) whose leaves are taken down in Python on cshogi's board, its
    tree keyed by cshogi's Zobrist hash and its answers kept in the evaluation cache."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._batch = _Batch.empty(self.batch_size)

    def _new_cache(self, evaluator: Evaluator) -> EvalCache:
        return EvalCache(evaluator)

    def _key(self, board: cshogi.Board) -> int:
        return board.zobrist_hash()

    def _mate_line(self, board: cshogi.Board) -> list[int]:
        return cshogi_mate_line(board, self.leaf_mate_ply)

    def _root_scores(self, board: cshogi.Board) -> MoveScores:
        return self.cache.get(board)

    def _simulate_batch(self, board: cshogi.Board, count: int) -> tuple[int, int]:
        """``count`` simulations whose leaves are scored in one forward pass, each new leaf taken down while the
        board stands on it (its arrays, legal moves and mate line). Returns the deepest ply and the simulations
        backed up."""
        tree, paths, line, batch = self.tree, self._paths, self._moves, self._batch
        arrays = tree.arrays
        room = tree.room(count, count * MAX_MOVES)
        batch.values.fill(np.nan)
        batch.leaf.fill(-1)
        legal = []
        deepest = pending = 0
        for _ in range(count):
            depth, end = select_in(arrays, self.rule, self.c, self.prior_visits, paths[pending], line)
            deepest = max(deepest, depth)
            if end == DROPPED:
                continue
            batch.depths[pending] = depth
            if end >= 0:  # a proven node: its value
                batch.values[pending] = proven_value(arrays, end)
                pending += 1
                continue
            edge = paths[pending, depth - 1]
            moves = line[:depth].tolist()
            for move in moves:
                board.push(move)
            ended = terminal_value(board, depth, self.rules)
            if ended is not None and is_proven(ended):  # mated or a won declaration: a proof
                batch.values[pending] = clamp(ended)
                if room:
                    link(arrays, edge, tree.add_terminal(board.zobrist_hash(), clamp(ended)))
            elif ended is not None:  # a repetition: its value, but no proof (cshogi flags the first recurrence,
                batch.values[pending] = ended  # and the line may still be played on)
            elif mate := self._mate_line(board):  # proven: no forward pass
                batch.values[pending] = 1.0
                if room:
                    node = add_terminal(arrays, np.int64(np.uint64(board.zobrist_hash())), 1.0, len(mate))
                    tree.mates[node] = list(mate)
                    link(arrays, edge, node)
            else:
                cached = self.cache.peek(board)
                if not room:
                    batch.values[pending] = cached.value() if cached is not None else 1.0 - float(edge_q(arrays, edge))
                elif cached is not None:
                    child = tree.add(board.zobrist_hash(), cached.moves, cached.q, [])
                    link(arrays, edge, child)
                    batch.values[pending] = tree.view(child).value()
                else:
                    link(arrays, edge, IN_FLIGHT)
                    k = len(legal)
                    batch.leaf[pending] = k
                    batch.arrays.set(k, board)
                    batch.keys[k] = board.zobrist_hash()
                    legal.append(np.fromiter(board.legal_moves, np.uint32))
                    batch.offsets[k + 1] = batch.offsets[k] + len(legal[-1])
            for _ in moves:
                board.pop()
            pending += 1
        n = len(legal)
        offsets = batch.offsets[: n + 1]
        if n:
            moves = np.concatenate(legal)
            indices, q32 = self.cache.evaluator.score_flat(PositionArrays(*(a[:n] for a in batch.arrays)), moves,
                                                           offsets)
            for k in range(n):
                lo, hi = offsets[k], offsets[k + 1]
                self.cache.put(int(batch.keys[k]), MoveScores(legal[k], indices[lo:hi], q32[lo:hi]))
            self.cache.evaluations += n
            q, p = tree.prepare(moves, q32, offsets)
        else:
            moves = np.zeros(1, np.uint32)
            q = p = np.zeros(0)
        tree.expand_and_backup(paths[:pending], batch.depths[:pending], batch.values[:pending], batch.leaf[:pending],
                               batch.keys.view(np.int64), offsets, moves, q, p)
        return deepest, pending


class PythonPuct(PythonLeaves, Puct):
    pass


class PythonUcb1(PythonLeaves, Ucb1):
    pass
