"""Alpha-beta: negamax with iterative deepening on the win-rate scale.

One forward pass at a node scores all its children, so a node at remaining depth 1 (the horizon) needs
no visit to its children: its value is the best Q. A depth-d search calls the network only at plies
0..d-1. On top of that:

- iterative deepening with aspiration windows around the previous iteration's value;
- a transposition table keyed by cshogi's zobrist hash (size-limited, least recently written out first) whose
  best move is searched first; the other moves go in order of Q. It is kept between moves, so mate
  distances in it count from the node, not from the root of the search that wrote them;
- principal variation search: moves after the first get a null window, and late quiet moves are
  reduced by a ply (re-searched at full depth when they beat alpha);
- at the horizon, the best moves by Q that capture or check are verified by one more forward pass
  (a short quiescence): Q of a capture often misses the recapture;
- mate in one by cshogi at every interior node, df-pn at the root; repetition, perpetual check and
  entering-king rules through cshogi (see :func:`search.base.terminal_value`);
- the principal variation is the line that gave the root's value (a triangular PV table), so that a mate
  score comes with its mating line.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import cshogi
import numpy as np

from messiah.evaluator import Evaluator
from messiah.search.base import (
    DEFAULT_SETTINGS,
    MATE,
    MATE_NODES,
    MATE_STEP,
    PV_PLIES,
    InfoCallback,
    Limits,
    Searcher,
    SearchResult,
    SearchSettings,
    clamp,
    is_proven,
    mate_in_one,
    mate_plies,
    permille,
    repetition_value,
    terminal_value,
    win_in,
)
from messiah.search.timeman import Clock

EXACT, LOWER, UPPER = 0, 1, 2
ASPIRATION = 0.03  # half-width of the root window, in win rate
NULL_WINDOW = 1e-4
FULL_DEPTH_MOVES = 4  # moves searched at full depth before late-move reductions start
VERIFY_MOVES = 3  # captures/checks at the horizon verified by one more forward pass
OBVIOUS_GAP = 0.15  # Q lead of the best root move over the second that makes it obvious (with no changes)
DEFAULT_DEPTH = 3  # when no limit is given at all
MAX_DEPTH = 64
HASH_ENTRY_BYTES = 256  # rough size of a transposition-table entry in Python


def value_to_tt(value: float, ply: int) -> float:
    """``value`` at ``ply`` as the table keeps it: a proven result counted from the node, not from the root,
    so that the entry holds wherever the position recurs, in this search or a later one (Stockfish's
    value_to_tt)."""
    if not is_proven(value):
        return value
    return value + ply * MATE_STEP if value > 1.0 else value - ply * MATE_STEP


def value_from_tt(value: float, ply: int) -> float:
    """A table value read at ``ply``: a proven result counted from the root again."""
    if not is_proven(value):
        return value
    return value - ply * MATE_STEP if value > 1.0 else value + ply * MATE_STEP


class _Abort(Exception):
    """Limits reached inside the tree: unwind (every push is popped on the way out)."""


@dataclass
class _Entry:
    depth: int
    value: float
    flag: int
    move: int


class AlphaBeta(Searcher):
    name = "alphabeta"

    def __init__(self, evaluator: Evaluator, hash_entries: int = 1 << 20, quiescence: bool = True,
                 mate_nodes: int = MATE_NODES, settings: SearchSettings = DEFAULT_SETTINGS):
        super().__init__(evaluator, mate_nodes, settings)
        self.hash_entries = hash_entries
        self.quiescence = quiescence
        self.tt: dict[int, _Entry] = {}
        self.exclude: set[int] = set()
        # the best root move of the pass in progress that beat alpha: its value and line
        self.root_best: tuple[float, list[int]] | None = None
        # the principal variation below each ply of the node being searched (a triangular PV table)
        self.pv: list[list[int]] = [[] for _ in range(PV_PLIES + 2)]

    def new_game(self) -> None:
        super().new_game()
        self.tt.clear()

    def set_hash(self, megabytes: int) -> None:
        """The evaluation cache gets half of USI_Hash, the transposition table the other half."""
        super().set_hash(megabytes)
        self.hash_entries = max(1, megabytes * 2**20 // 2 // HASH_ENTRY_BYTES)
        while len(self.tt) > self.hash_entries:
            del self.tt[next(iter(self.tt))]

    def hashfull(self) -> int:
        """Permille of the transposition table in use (USI's hashfull)."""
        return permille(len(self.tt), self.hash_entries)

    def _search(self, board: cshogi.Board, limits: Limits, clock: Clock, info: InfoCallback | None) -> SearchResult:
        if limits.visits is not None and limits.nodes is None:  # no tree kept: visits are this search's nodes
            limits = replace(limits, nodes=limits.visits)
        self.limits, self.clock, self.nodes, self.seldepth = limits, clock, 0, 0
        evals0 = self.cache.evaluations
        scores = self.cache.get(board)
        order = np.argsort(-scores.q, kind="stable")
        count = min(self.multipv, len(order))
        # (value, pv) per line, best first; depth 1 is the network's own ranking
        lines = [(float(scores.q[i]), [int(scores.moves[i])]) for i in order[:count]]
        depth_done, changes = 1, 0.0
        no_limit = limits.nodes is None and not clock.bounded()
        max_depth = limits.depth or (DEFAULT_DEPTH if no_limit else MAX_DEPTH)
        gap = float(scores.q[order[0]] - scores.q[order[1]]) if len(order) > 1 else 1.0

        def result() -> SearchResult:
            value, pv = lines[0]
            return SearchResult(pv[0], clamp(value), mate_plies(value), pv, self.nodes, depth_done,
                                max(self.seldepth, depth_done), self.cache.evaluations - evals0, clock.elapsed(),
                                [(clamp(v), mate_plies(v), p) for v, p in lines] if count > 1 else [])

        if info:
            info(result())
        for depth in range(2, max_depth + 1):
            found: list[tuple[float, list[int]]] = []
            try:
                for k in range(count):
                    exclude = {p[0] for _, p in found}
                    value, line = self._search_root(board, depth, lines[k][0] if k < len(lines) else None, exclude)
                    found.append((value, self._pv(board, line, value, depth)))
            except _Abort:
                if self.root_best is not None:  # a move beat alpha in the pass that was stopped: it is sound
                    value, line = self.root_best
                    found.append((value, self._pv(board, line, value, depth)))
                if found:  # lines this iteration did not reach keep the previous iteration's values
                    rest = [line for line in lines if line[1][0] not in {p[0] for _, p in found}]
                    lines = sorted(found, key=lambda x: -x[0]) + rest[: count - len(found)]
                    if info:
                        info(result())
                break
            changes = changes / 2 + (found[0][1][0] != lines[0][1][0])
            lines, depth_done = sorted(found, key=lambda x: -x[0]), depth
            if info:
                info(result())
            best = lines[0][0]
            if mate_plies(best) is not None and mate_plies(best) <= depth:
                break  # a proven result does not change with depth
            obvious = changes == 0 and gap >= OBVIOUS_GAP
            if clock.past_optimum(clock.obvious if obvious else 1.0 + (clock.unstable - 1.0) * min(changes, 1.0)):
                break
        return result()

    def _search_root(self, board: cshogi.Board, depth: int, guess: float | None,
                     exclude: set[int]) -> tuple[float, list[int]]:
        """One root search to ``depth`` over the moves not in ``exclude``, in an aspiration window around
        ``guess``: its value and principal variation. A pass that fails low or high gives only a bound,
        so what it found is forgotten before the re-search: a stop during that re-search must not report
        the bound as the line's value."""
        self.exclude = exclude
        alpha, beta = (guess - ASPIRATION, guess + ASPIRATION) if guess is not None else (-MATE, MATE)
        while True:
            self.root_best = None
            v = self._negamax(board, depth, alpha, beta, 0)
            if v <= alpha:
                alpha = -MATE
            elif v >= beta:
                beta = MATE
            else:
                return v, self.pv[0]

    def _check_limits(self) -> None:
        if self.clock.out_of_time() or (self.limits.nodes is not None and self.nodes >= self.limits.nodes):
            raise _Abort

    def _negamax(self, board: cshogi.Board, depth: int, alpha: float, beta: float, ply: int) -> float:
        """The value of ``board`` searched to ``depth`` in the window (alpha, beta); a value inside the window
        leaves its line in ``self.pv[ply]``."""
        self.nodes += 1
        self.seldepth = max(self.seldepth, ply)
        self.pv[ply] = []
        if ply > 0:
            self._check_limits()
            ended = terminal_value(board, ply, self.rules)
            if ended is not None:
                return ended
        key = board.zobrist_hash()
        entry = self.tt.get(key)
        if entry is not None and entry.depth >= depth and ply > 0:
            value = value_from_tt(entry.value, ply)
            if (entry.flag == EXACT or (entry.flag == LOWER and value >= beta) or (
                entry.flag == UPPER and value <= alpha
            )) and self._table_line(board, entry.value, alpha < value < beta, ply):
                return value
        scores = self.cache.get(board)
        mate = mate_in_one(board) if ply > 0 else 0
        if mate:
            self.pv[ply] = [mate]
            return win_in(ply + 1)
        if depth <= 1:
            if self.rules.max_moves and board.move_number >= self.rules.max_moves:
                return self.rules.draw_value(board, ply)  # every move reaches the draw ply
            return self._horizon(board, scores.moves, scores.q, ply)
        order = np.argsort(-scores.q, kind="stable")
        moves = scores.moves[order]
        if entry is not None and entry.move in moves:  # (a hash collision could give a foreign move)
            moves = np.concatenate(([entry.move], moves[moves != entry.move]))
        if ply == 0 and self.exclude:  # MultiPV: the lines already found are left out
            moves = moves[~np.isin(moves, list(self.exclude))]
        alpha0, best, best_move = alpha, -MATE, int(moves[0])
        for i, m in enumerate(moves):
            m = int(m)
            board.push(m)
            try:
                if i == 0:
                    v = 1.0 - self._negamax(board, depth - 1, 1.0 - beta, 1.0 - alpha, ply + 1)
                else:
                    quiet = cshogi.move_cap(m) == 0 and not board.is_check()
                    reduced = depth - 2 if (i >= FULL_DEPTH_MOVES and depth >= 3 and quiet) else depth - 1
                    v = 1.0 - self._negamax(board, reduced, 1.0 - alpha - NULL_WINDOW, 1.0 - alpha, ply + 1)
                    if v > alpha and (v < beta or reduced < depth - 1):
                        v = 1.0 - self._negamax(board, depth - 1, 1.0 - beta, 1.0 - alpha, ply + 1)
            finally:
                board.pop()
            if v > best:
                best, best_move = v, m
            if v > alpha:
                self.pv[ply] = [m] + self.pv[ply + 1]
                if ply == 0:
                    self.root_best = (v, self.pv[0])
                alpha = v
            if alpha >= beta:
                break
        flag = UPPER if best <= alpha0 else LOWER if best >= beta else EXACT
        if ply > 0 or not self.exclude:  # a root value without its best moves is not the root's value
            self._store(key, _Entry(depth, value_to_tt(best, ply), flag, best_move))
        return best

    def _table_line(self, board: cshogi.Board, stored: float, exact: bool, ply: int) -> bool:
        """Whether a table cutoff at ``ply`` may be taken, leaving its line in ``self.pv[ply]``. Only a value
        inside the window (``exact``) becomes part of a principal variation; a proven one may then be taken
        only when the table shows its mate, as a line of the stored length (``stored`` counts from the node).
        Other lines are cut here and continued from the table when the root's PV is printed."""
        if not exact or not is_proven(stored):
            return True
        line = self._mate_line(board, mate_plies(stored))
        if line is not None:
            self.pv[ply] = line
        return line is not None

    def _mate_line(self, board: cshogi.Board, plies: int) -> list[int] | None:
        """The table's line of a mate in ``plies`` from ``board`` (negative: the side to move is mated),
        replayed to check it: legal moves, the last a mate in one, the side to move mated after exactly
        ``abs(plies)`` of them. None when the table does not hold such a line."""
        line: list[int] = []
        try:
            for left in range(abs(plies), 0, -1):
                entry = self.tt.get(board.zobrist_hash())
                move = mate_in_one(board) if left == 1 else entry.move if entry is not None else 0
                if not move or move not in set(board.legal_moves):
                    return None
                board.push(move)
                line.append(move)
            return line if board.is_game_over() else None
        finally:
            for _ in line:
                board.pop()

    def _horizon(self, board: cshogi.Board, moves: np.ndarray, q: np.ndarray, ply: int) -> float:
        """Value of a node at depth 1: the best Q of its moves, taken in Q order. A move that repeats a
        position gets the repetition's value; the first ``VERIFY_MOVES`` captures and checks get the value
        of one more forward pass. The loop ends when no remaining Q can beat the best value so far. The best
        move is the node's line."""
        best, best_move, verified = -MATE, 0, 0
        for i in np.argsort(-q, kind="stable"):
            value = float(q[i])
            if value <= best:
                break
            m = int(moves[i])
            board.push(m)
            try:
                repetition = repetition_value(board, ply + 1, self.rules)
                if repetition is not None:
                    value = 1.0 - repetition
                elif self.quiescence and verified < VERIFY_MOVES and (cshogi.move_cap(m) or board.is_check()):
                    verified += 1
                    self.nodes += 1
                    self.seldepth = max(self.seldepth, ply + 1)
                    reply = self.cache.get(board)
                    value = 1.0 - float(reply.q.max()) if len(reply.q) else win_in(ply + 1)
            finally:
                board.pop()
            if value > best:
                best, best_move = value, m
        self.pv[ply] = [best_move] if best_move else []
        return best

    def _store(self, key: int, entry: _Entry) -> None:
        self.tt.pop(key, None)  # a rewritten entry goes to the back: eviction takes the least recently written
        self.tt[key] = entry
        if len(self.tt) > self.hash_entries:
            del self.tt[next(iter(self.tt))]

    def _pv(self, board: cshogi.Board, line: list[int], value: float, depth: int) -> list[int]:
        """The principal variation of a root search's ``line`` and ``value``. A proven value's line is its
        mate, complete as it is; another is continued with the table's best moves (and a horizon node's best
        Q) while they are legal, up to ``depth`` moves, past where a table cutoff ended it."""
        if is_proven(value) or len(line) >= depth:
            return line
        pv, pushed, seen = list(line), 0, set()
        for move in line:
            board.push(move)
            pushed += 1
            seen.add(board.zobrist_hash())
        while len(pv) < depth:
            entry = self.tt.get(board.zobrist_hash())
            scores = self.cache.peek(board)
            if entry is not None and scores is not None and entry.move in scores.moves:
                move = entry.move
            elif scores is not None and len(scores.moves):  # a horizon node: its best Q
                move = scores.best()[0]
            else:
                break
            board.push(move)
            pushed += 1
            if board.zobrist_hash() in seen:
                break
            seen.add(board.zobrist_hash())
            pv.append(move)
        for _ in range(pushed):
            board.pop()
        return pv
