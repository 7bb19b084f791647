"""What every search shares: the request (limits), results, the USI options a search declares, the value scale,
the rules that end a line, mate search.

Values are win rates for the side to move (0 loss, 0.5 draw, 1 win), and the opponent's view of a
value v is ``1 - v`` (negamax on the win-rate scale). Proven results lie outside [0, 1] so that they
order correctly: a win in n plies from the root is ``MATE - n * MATE_STEP`` (shorter mates are worth
more) and the loss is ``1 -`` that.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

import cshogi
import numpy as np

from messiah.evaluator import Evaluator, MoveScores
from messiah.rules import REPETITION_PLIES, GameRules
from messiah.search.timeman import Clock

MATE = 2.0
MATE_STEP = 1e-3
PV_PLIES = 512  # the rows of alpha-beta's PV table: a line kept for each ply of a search (not a game's length)
# board.is_draw() codes for the side to move -> value. A plain repetition is the rules' draw value. A perpetual check
# is a result by the rules, a proof as a mate is (YaneuraOu's mate_in/mated_in, dlshogi's VALUE_WIN/VALUE_LOSE): a
# win or a loss delivered at its ply, so that a side that is mated anyway plays the longest line, not a checking
# cycle that loses at once (valued 0.0, above every proven loss, it did: a lost game ended by messiah's own
# perpetual check against gpsshogi). A "superior" repetition (the same board with more pieces in hand) is treated as
# a win and an "inferior" one as a loss, as shogi engines usually do in search, from HANDS_REPETITION_PLY plies below
# the root on: the line only goes round a cycle again, and ending it there keeps a delaying drop from looking good.
# The rules end nothing there, so a root's move into one is searched as any other position: the score a GUI shows for
# a plain recapture is the position's, not a won game's (issue 71; the search scored it 1.0, and cp 25433, when this
# ply was 1).
HANDS_REPETITION_VALUE = {cshogi.REPETITION_SUPERIOR: 1.0, cshogi.REPETITION_INFERIOR: 0.0}
HANDS_REPETITION_PLY = 2
RULES = GameRules()  # the default rules: CSARule27, draws at 0.5 for both sides, no ply limit
INFO_EVERY = 0.5  # seconds between a search's progress reports (USI PvInterval)


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


def repetition_value(board: cshogi.Board, ply: int, rules: GameRules) -> float | None:
    """The value of a repetition for the side to move of ``board``, ``ply`` plies from the root, or None when
    the position does not repeat (or repeats with other hands closer to the root than HANDS_REPETITION_PLY)."""
    repetition = board.is_draw(REPETITION_PLIES)
    if repetition == cshogi.NOT_REPETITION:
        return None
    if repetition == cshogi.REPETITION_DRAW:
        return rules.draw_value(board, ply)
    if repetition == cshogi.REPETITION_WIN:  # the opponent's perpetual check
        return win_in(ply)
    if repetition == cshogi.REPETITION_LOSE:  # our own
        return 1.0 - win_in(ply)
    if ply < HANDS_REPETITION_PLY:
        return None
    return HANDS_REPETITION_VALUE[repetition]


def terminal_value(board: cshogi.Board, ply: int, rules: GameRules = RULES) -> float | None:
    """The value of ``board`` for the side to move if the game has ended there (mated, repetition, the draw ply
    passed, a king that reached its try square) or the side to move wins at once by the entering-king rule (a
    declaration, or a try a ply later), else None. ``ply`` is the distance from the root."""
    if ply > 0:
        if rules.past_max_moves(board):
            return rules.draw_value(board, ply)
        repetition = repetition_value(board, ply, rules)
        if repetition is not None:
            return repetition
        if rules.tried(board):
            return 1.0 - win_in(ply)
    declaration = rules.declaration(board)
    if declaration is not None:
        return win_in(ply if declaration == 0 else ply + 1)  # the side to move declares (or tries) and wins
    if board.is_game_over():
        return 1.0 - win_in(ply)  # no legal move: mated
    return None


@dataclass(frozen=True)
class Limits:
    """What a search was asked for (go's nodes, depth, movetime): pure data. Any may be None; with none set
    and no clock that can end it, a search stops at its own small default (alpha-beta's ``DEFAULT_DEPTH``, the
    bandit searches' ``DEFAULT_NODES``). The running move's time is a :class:`search.timeman.Clock`."""

    nodes: int | None = None
    depth: int | None = None
    movetime: float | None = None  # seconds, a hard limit: the clock of a search given no clock of its own
    # The root's visits, those kept from the previous move's tree included: a bandit search adds playouts until
    # its root has this many (at least one). Self-play's budget, as KataGo's and Lc0's playout caps: a game's
    # searcher plays both sides, so each move starts from the subtree its last search grew. A search that
    # keeps no tree (alpha-beta) takes it as ``nodes``.
    visits: int | None = None


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


# What a cached answer takes beyond its arrays' data: the MoveScores, its three arrays' headers, the table's slot and
# key (tracemalloc, 20,000 answers of 35, 80 and 137 moves: 575 bytes each at every length)
CACHE_ENTRY_OVERHEAD = 600
DEFAULT_CACHE_BYTES = 128 * 2**20  # the cache's share of the default USI_Hash (256), until the engine sizes it


def permille(used: int, whole: int) -> int:
    """USI's hashfull: the permille of a table's budget in use, at most 1000."""
    return min(1000, used * 1000 // max(1, whole))


class EvalCache:
    """The evaluator's answers by position (zobrist hash), least recently used first out, in at most ``max_bytes``
    (what its answers' arrays and their Python objects take: :meth:`size`). Searches revisit positions
    (transpositions, iterative deepening, tree reuse); each answer costs a forward pass."""

    def __init__(self, evaluator: Evaluator, max_bytes: int = DEFAULT_CACHE_BYTES):
        self.evaluator = evaluator
        self.max_bytes = max_bytes
        self.bytes = 0
        self.entries: OrderedDict[int, MoveScores] = OrderedDict()
        self.evaluations = 0  # positions the network scored
        self.moves_scored = 0  # and their legal moves

    @staticmethod
    def size(scores: MoveScores) -> int:
        """The bytes an answer takes in the cache: its arrays and CACHE_ENTRY_OVERHEAD. A position's answer grows
        with its legal moves (35 at the start, 130 and more with pieces in hand)."""
        return scores.moves.nbytes + scores.indices.nbytes + scores.q.nbytes + CACHE_ENTRY_OVERHEAD

    def get(self, board: cshogi.Board) -> MoveScores:
        key = board.zobrist_hash()
        hit = self.entries.get(key)
        if hit is not None:
            self.entries.move_to_end(key)
            return hit
        scores = self.evaluator.score(board)
        self.evaluations += 1
        self.moves_scored += len(scores.moves)
        self.put(key, scores)
        return scores

    def peek(self, board: cshogi.Board) -> MoveScores | None:
        """The cached answer for ``board``, or None (no forward pass)."""
        return self.entries.get(board.zobrist_hash())

    def put(self, key: int, scores: MoveScores) -> None:
        old = self.entries.get(key)
        if old is not None:
            self.bytes -= self.size(old)
        self.entries[key] = scores
        self.bytes += self.size(scores)
        self._shrink()

    def resize(self, max_bytes: int) -> None:
        """Keep at most ``max_bytes`` of answers, the least recently used leaving first."""
        self.max_bytes = max_bytes
        self._shrink()

    def _shrink(self) -> None:
        while self.bytes > self.max_bytes and self.entries:
            self.bytes -= self.size(self.entries.popitem(last=False)[1])

    def clear(self) -> None:
        self.entries.clear()
        self.bytes = 0


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
    # In check too: the mate then starts with a move that parries the check with a check (cshogi's df-pn answers
    # there; on 40,000 positions of random play in check its 77 lines were all legal and ended in mate).
    if max_nodes <= 0 or not has_opponent_king(board):
        return None
    dfpn = cshogi.DfPn()
    dfpn.set_max_search_node(max_nodes)
    if not dfpn.search(board):
        return None
    return list(dfpn.get_pv(board)) or None  # a proof without its line is no mate we can report


def mate_after(board: cshogi.Board, move: int, max_nodes: int) -> list[int] | None:
    """The forced mate :func:`root_mate` finds for the opponent after our ``move`` (board left as it was): the root's
    guard's question (search.mcts)."""
    board.push(move)
    try:
        return None if board.is_game_over() else root_mate(board, max_nodes)
    finally:
        board.pop()


@dataclass(frozen=True)
class SearchOption:
    """A USI spin option a search takes: its USI ``name``, the constructor ``argument`` it sets, that argument's
    ``default``, the USI range ``low``..``high``, and ``scale``: the USI integer is the argument times this (PuctC
    is c in hundredths). The engine's option table is made of these (:func:`messiah.search.search_options`)."""

    name: str
    argument: str
    default: float
    low: int
    high: int
    scale: int = 1

    @property
    def usi_default(self) -> int:
        return round(self.default * self.scale)

    def argument_value(self, usi: int) -> float:
        """The constructor argument the USI integer ``usi`` stands for."""
        return usi / self.scale if self.scale != 1 else usi


MATE_NODES = 20_000  # df-pn nodes at the root of a search: a fraction of a second (DFPN_NODES_PER_SECOND)


class Visited(NamedTuple):
    """A position the last search visited below its root: the moves that reach it from the root, its visits, each
    of its moves' values for its side to move (cshogi's order of its legal moves), its own value, and the move a
    search from it would choose with its index in that order (self-play's tree rows)."""

    line: list[int]
    visits: int
    values: np.ndarray
    value: float
    best: int
    best_move: int


@dataclass(frozen=True)
class SearchSettings:
    """What every search takes from the engine, whichever search it is: the lines to report (USI MultiPV; the best
    move is the first's), the seconds between progress reports (PvInterval), and the rules a line's end is judged
    by (the entering-king rule, draw values, the draw ply)."""

    multipv: int = 1
    rules: GameRules = RULES
    info_every: float = INFO_EVERY


DEFAULT_SETTINGS = SearchSettings()  # a search on its own: one line, the default rules


class Searcher(ABC):
    """A search over the evaluator's move scores. Subclasses set ``name`` and ``options`` (the USI options they
    take: these and their own), say what ``Threads`` means for them (``root_parallel``), and implement
    ``_search``; the engine asks the class, never which class it is."""

    name: str = ""
    options: tuple[SearchOption, ...] = (SearchOption("MateNodes", "mate_nodes", MATE_NODES, 0, 10_000_000),)
    # Threads: True, search processes each on one onnxruntime thread (search.parallel); False, onnxruntime's
    # threads for this one search process.
    root_parallel: ClassVar[bool] = False

    def __init__(self, evaluator: Evaluator, mate_nodes: int = MATE_NODES, settings: SearchSettings = DEFAULT_SETTINGS):
        self.cache = self._new_cache(evaluator)
        self.mate_nodes = mate_nodes
        self.multipv = settings.multipv
        self.rules = settings.rules
        self.info_every = settings.info_every
        self.notes: list[str] = []  # what the user should hear (a helper process lost); the engine says and clears

    def _new_cache(self, evaluator: Evaluator) -> EvalCache:
        """The search's cache of the network's answers, which the engine and the tools ask too (``cache.get``):
        an :class:`EvalCache` here; the bandit searches keep theirs on the playout core."""
        return EvalCache(evaluator)

    @classmethod
    def from_usi(cls, evaluator: Evaluator, values: Mapping[str, int],
                 settings: SearchSettings = DEFAULT_SETTINGS) -> Searcher:
        """This search with the values of the USI options it declares (name -> the integer USI has; one left
        out keeps its default) and the engine's ``settings``; other names in ``values`` are not this search's and
        are left alone."""
        own = {o.argument: o.argument_value(values[o.name]) for o in cls.options if o.name in values}
        return cls(evaluator, **own, settings=settings)

    def search(self, board: cshogi.Board, limits: Limits = Limits(), info: InfoCallback | None = None,
               clock: Clock | None = None) -> SearchResult:
        """Search ``board`` (left as it was) within ``limits`` and ``clock`` (the running move's time; without
        one, ``limits.movetime`` is the hard limit); ``info`` gets progress reports."""
        if clock is None:
            clock = Clock.hard(limits.movetime)
        elif limits.movetime is not None:
            raise ValueError("give a search its time as limits.movetime or as a clock, not both")
        trivial = self._trivial(board, clock, info)
        if trivial is not None:
            return trivial
        return self._search(board, limits, clock, info)

    @abstractmethod
    def _search(self, board: cshogi.Board, limits: Limits, clock: Clock, info: InfoCallback | None) -> SearchResult:
        """The search proper, once :meth:`_settled` has found no result without one."""

    @property
    def positions_a_pass(self) -> int:
        """The positions this search gives the network in one pass, at most (the evaluator's batch on a GPU)."""
        return 1

    def move_values(self, board: cshogi.Board) -> np.ndarray | None:
        """The last search's value of each legal move of ``board`` (cshogi's legal move order) for its side to
        move, when that search kept them (a tree rooted at ``board``); None otherwise (alpha-beta keeps none)."""
        return None

    def visited(self, board: cshogi.Board, min_visits: int, skip: int) -> list[Visited]:
        """The positions the last search from ``board`` visited at least ``min_visits`` times below it, outside
        the subtree of the move ``skip``, most visited first; none for a search that keeps no tree."""
        return []

    def new_game(self) -> None:
        self.cache.clear()

    def close(self) -> None:  # noqa: B027 - most searches hold nothing to release
        """Release what the search holds beyond memory (the bandit searches' helper processes)."""

    def set_hash(self, megabytes: int) -> None:
        """Size the tables from USI_Hash: the evaluation cache gets half, and the other half is left for what
        the search keeps beside it (alpha-beta's transposition table; the bandit searches' tree)."""
        self.cache.resize(megabytes * 2**20 // 2)

    def hashfull(self) -> int:
        """Permille of the evaluation cache in use (USI's hashfull); alpha-beta reports its table instead."""
        return permille(self.cache.bytes, self.cache.max_bytes)

    def root_mate_nodes(self, clock: Clock) -> int:
        """df-pn nodes for the root: ``mate_nodes``, but in a timed move never more than ROOT_MATE_SHARE of
        its time (df-pn cannot be interrupted; a fixed budget drained a short clock move by move). A ponder search
        is sized by the move it becomes at ponderhit: a full df-pn there answered a stop or a ponderhit up to half a
        second late (`messiah bench soak`)."""
        budget = clock.sizing()
        seconds = budget.optimum if budget.optimum is not None else budget.maximum
        if seconds is None:
            return self.mate_nodes
        return min(self.mate_nodes, int(ROOT_MATE_SHARE * seconds * DFPN_NODES_PER_SECOND))

    def _trivial(self, board: cshogi.Board, clock: Clock, info: InfoCallback | None = None) -> SearchResult | None:
        """The result without searching, if there is one; a move found so is reported through ``info`` like
        any other (what the engine plays, it has said)."""
        result = self._settled(board, clock)
        if result is not None and result.bestmove and info is not None:
            info(result)
        return result

    def _settled(self, board: cshogi.Board, clock: Clock) -> SearchResult | None:
        """The result without searching: no legal move, a forced mate, or the only legal move in a timed
        game."""
        start_evals = self.cache.evaluations
        if board.is_game_over():
            return SearchResult(0, 0.0, 0, [], 1, 0, 0, 0, clock.elapsed())
        if self.rules.declaration(board) is not None:
            return None  # the USI layer declares (or plays the try); the search itself plays on
        if clock.budget.optimum is not None and self.multipv == 1:
            legal = list(board.legal_moves)
            if len(legal) == 1:
                return SearchResult(legal[0], self.cache.get(board).value(), None, legal, 1, 1, 1,
                                    self.cache.evaluations - start_evals, clock.elapsed())
        mate1 = mate_in_one(board)
        pv = [mate1] if mate1 else root_mate(board, self.root_mate_nodes(clock))
        if pv:
            return SearchResult(pv[0], 1.0, len(pv), pv, 1, len(pv), len(pv),
                                self.cache.evaluations - start_evals, clock.elapsed())
        return None
