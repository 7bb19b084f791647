"""What every search shares: limits, results, the value scale, the rules that end a line, mate search.

Values are win rates for the side to move (0 loss, 0.5 draw, 1 win), and the opponent's view of a
value v is ``1 - v`` (negamax on the win-rate scale). Proven results lie outside [0, 1] so that they
order correctly: a win in n plies from the root is ``MATE - n * MATE_STEP`` (shorter mates are worth
more) and the loss is ``1 -`` that.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import cshogi

from messiah.evaluator import Evaluator, MoveScores

MATE = 2.0
MATE_STEP = 1e-3
MAX_PLY = 512
DRAW = 0.5
# board.is_draw() codes for the side to move -> value. A "superior" repetition (the same position with
# more pieces in hand) is treated as a win, as shogi engines usually do in search.
REPETITION_VALUE = {
    cshogi.REPETITION_DRAW: DRAW,
    cshogi.REPETITION_WIN: 1.0,  # the opponent's perpetual check
    cshogi.REPETITION_LOSE: 0.0,  # our perpetual check
    cshogi.REPETITION_SUPERIOR: 1.0,
    cshogi.REPETITION_INFERIOR: 0.0,
}
REPETITION_LOOKBACK = 16  # plies of history searched for a repetition


def win_in(ply: int) -> float:
    """Value of a forced win delivered at ``ply`` plies from the root."""
    return MATE - ply * MATE_STEP


def is_proven(value: float) -> bool:
    return value > 1.0 + MATE_STEP / 2 or value < -MATE_STEP / 2


def mate_plies(value: float) -> int | None:
    """Plies to mate from the root for a proven value: positive when the root side wins."""
    if value > 1.0 + MATE_STEP / 2:
        return round((MATE - value) / MATE_STEP)
    if value < -MATE_STEP / 2:
        return -round((MATE - (1.0 - value)) / MATE_STEP)
    return None


def clamp(value: float) -> float:
    """A proven value as the win rate it stands for."""
    return min(1.0, max(0.0, value))


def terminal_value(board: cshogi.Board, ply: int, draw_ply: int = 0) -> float | None:
    """The value of ``board`` for the side to move if the game has ended there (mated, repetition,
    entering-king declaration, the draw ply passed), else None. ``ply`` is the distance from the root;
    ``draw_ply`` (0: none) the game length at which a game still going is a draw."""
    if ply > 0:
        if draw_ply and board.move_number > draw_ply:
            return DRAW
        repetition = board.is_draw(REPETITION_LOOKBACK)
        if repetition != cshogi.NOT_REPETITION:
            return REPETITION_VALUE[repetition]
    if board.is_nyugyoku():
        return win_in(ply)  # the side to move declares and wins
    if board.is_game_over():
        return 1.0 - win_in(ply)  # no legal move: mated
    return None


# Time-management factors applied to Limits.optimum (defaults of Limits.obvious and Limits.unstable; the USI
# options TimeObvious and TimeUnstable set them). Tuned by `messiah tune` with TimeHorizon at a Fischer clock
# (README); the reasoned values were 0.4 and 2.0.
OBVIOUS = 0.54  # the best move has not changed and is far ahead of the rest
UNSTABLE = 3.8  # the best move changed in the last iteration(s)


@dataclass
class Limits:
    """When to stop. Any of them may be None; with none set, a search stops at ``depth`` 1 or
    ``DEFAULT_NODES`` nodes, whichever its kind uses."""

    nodes: int | None = None
    depth: int | None = None
    movetime: float | None = None  # seconds: the hard limit
    stop: threading.Event | None = None
    start: float = field(default_factory=time.perf_counter)
    # seconds a move should take in a timed game (None: use all of movetime). A search stops past
    # optimum * its own stability factor: sooner when the best move is obvious, later when it keeps changing.
    optimum: float | None = None
    # seconds always searched, however obvious the move: byoyomi not used is lost
    minimum: float = 0.0
    obvious: float = OBVIOUS  # stability factor of an obvious best move
    unstable: float = UNSTABLE  # stability factor of a best move that keeps changing

    def out_of_time(self) -> bool:
        if self.stop is not None and self.stop.is_set():
            return True
        return self.movetime is not None and time.perf_counter() - self.start >= self.movetime

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def past_optimum(self, factor: float) -> bool:
        """Whether a search whose best move has stability ``factor`` (1 normal, <1 obvious, >1 unstable)
        has used its share of the time."""
        return self.optimum is not None and self.elapsed() >= max(self.minimum, self.optimum * factor)


# The root's df-pn in a timed move: cshogi's df-pn searches about 250k nodes a second on one core here.
DFPN_NODES_PER_SECOND = 200_000
ROOT_MATE_SHARE = 0.2  # of a timed move's normal time at most


@dataclass
class SearchResult:
    """bestmove is 0 when the side to move has no legal move. ``winrate`` is for the side to move;
    ``mate`` is the distance in plies when proven (positive: the side to move mates). ``lines`` holds the
    MultiPV lines, best first, as (win rate or proven value, mate, pv); empty when only one was searched."""

    bestmove: int
    winrate: float
    mate: int | None
    pv: list[int]
    nodes: int
    depth: int
    seldepth: int
    evaluations: int
    elapsed: float
    lines: list[tuple[float, int | None, list[int]]] = field(default_factory=list)

    @property
    def pv_usi(self) -> list[str]:
        return [cshogi.move_to_usi(m) for m in self.pv]


InfoCallback = Callable[[SearchResult], None]


class EvalCache:
    """The evaluator's answers by position (zobrist hash), least recently used first out. Searches
    revisit positions (transpositions, iterative deepening, tree reuse); each answer costs a forward
    pass."""

    def __init__(self, evaluator: Evaluator, max_entries: int = 200_000):
        self.evaluator = evaluator
        self.max_entries = max_entries
        self.entries: OrderedDict[int, MoveScores] = OrderedDict()
        self.evaluations = 0

    def get(self, board: cshogi.Board) -> MoveScores:
        key = board.zobrist_hash()
        hit = self.entries.get(key)
        if hit is not None:
            self.entries.move_to_end(key)
            return hit
        scores = self.evaluator.score(board)
        self.evaluations += 1
        self.put(key, scores)
        return scores

    def peek(self, board: cshogi.Board) -> MoveScores | None:
        """The cached answer for ``board``, or None (no forward pass)."""
        return self.entries.get(board.zobrist_hash())

    def put(self, key: int, scores: MoveScores) -> None:
        self.entries[key] = scores
        if len(self.entries) > self.max_entries:
            self.entries.popitem(last=False)

    def clear(self) -> None:
        self.entries.clear()


def has_opponent_king(board: cshogi.Board) -> bool:
    """False in a tsume-shogi problem's lines where the side to move is the defender and the attacker has
    no king: there is nothing to mate (and cshogi's df-pn crashes when asked to)."""
    return board.king_square(cshogi.opponent(board.turn)) < 81


def mate_in_one(board: cshogi.Board) -> int:
    """cshogi's mate-in-one move, or 0. Asked only when it means something: the side to move is not in
    check and the opponent has a king (cshogi answers a 'mate' of a missing king otherwise)."""
    if board.is_check() or not has_opponent_king(board):
        return 0
    return board.mate_move_in_1ply()


def root_mate(board: cshogi.Board, max_nodes: int) -> list[int] | None:
    """A forced mate for the side to move found by cshogi's df-pn within ``max_nodes``: its PV, or None."""
    if max_nodes <= 0 or board.is_check() or not has_opponent_king(board):  # in check we must escape first
        return None
    dfpn = cshogi.DfPn()
    dfpn.set_max_search_node(max_nodes)
    if not dfpn.search(board):
        return None
    return list(dfpn.get_pv(board)) or None  # a proof without its line is no mate we can report


class Searcher(ABC):
    """A search over the evaluator's move scores. Subclasses set ``name`` and implement ``search``."""

    name: str = ""

    def __init__(self, evaluator: Evaluator, mate_nodes: int = 20_000):
        self.cache = EvalCache(evaluator)
        self.mate_nodes = mate_nodes
        self.multipv = 1  # principal variations reported (USI MultiPV); the best move is the first's
        self.draw_ply = 0  # a game still going after this many plies is a draw (0: no limit)

    @abstractmethod
    def search(self, board: cshogi.Board, limits: Limits, info: InfoCallback | None = None) -> SearchResult:
        """Search ``board`` (left as it was) within ``limits``; ``info`` gets progress reports."""

    def new_game(self) -> None:
        self.cache.clear()

    def hashfull(self) -> int:
        """Permille of the evaluation cache in use (USI's hashfull); alpha-beta reports its table instead."""
        return min(1000, len(self.cache.entries) * 1000 // max(1, self.cache.max_entries))

    def root_mate_nodes(self, limits: Limits) -> int:
        """df-pn nodes for the root: ``mate_nodes``, but in a timed move never more than ROOT_MATE_SHARE of
        its time (df-pn cannot be interrupted; a fixed budget drained a short clock move by move)."""
        seconds = limits.optimum if limits.optimum is not None else limits.movetime
        if seconds is None:
            return self.mate_nodes
        return min(self.mate_nodes, int(ROOT_MATE_SHARE * seconds * DFPN_NODES_PER_SECOND))

    def _trivial(self, board: cshogi.Board, limits: Limits, info: InfoCallback | None = None) -> SearchResult | None:
        """The result without searching, if there is one; a move found so is reported through ``info`` like
        any other (what the engine plays, it has said)."""
        result = self._settled(board, limits)
        if result is not None and result.bestmove and info is not None:
            info(result)
        return result

    def _settled(self, board: cshogi.Board, limits: Limits) -> SearchResult | None:
        """The result without searching: no legal move, a forced mate, or the only legal move in a timed
        game."""
        start_evals = self.cache.evaluations
        if board.is_game_over():
            return SearchResult(0, 0.0, 0, [], 1, 0, 0, 0, limits.elapsed())
        if board.is_nyugyoku():
            return None  # the USI layer declares; the search itself plays on
        if limits.optimum is not None and self.multipv == 1:
            legal = list(board.legal_moves)
            if len(legal) == 1:
                return SearchResult(legal[0], self.cache.get(board).value(), None, legal, 1, 1, 1,
                                    self.cache.evaluations - start_evals, limits.elapsed())
        mate1 = mate_in_one(board)
        pv = [mate1] if mate1 else root_mate(board, self.root_mate_nodes(limits))
        if pv:
            return SearchResult(pv[0], 1.0, len(pv), pv, 1, len(pv), len(pv),
                                self.cache.evaluations - start_evals, limits.elapsed())
        return None
