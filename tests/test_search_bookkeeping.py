"""Exact bookkeeping in the searches: every reported mate is a real line of the stated length, mate
distances survive the transposition table and the tree kept between moves, a batch backs each new leaf up
once, a stopped aspiration re-search reports no bound as a value, and the evaluation cache keeps to its bytes.

Mate lengths come from the problem files (the fixture's, tests/data/mates) and from replaying lines with cshogi,
never from the search under test. Budgets are nodes, not time."""

import threading

import cshogi
import pytest
from conftest import OPENINGS
from test_search import problems

from messiah.evaluator import Evaluator
from messiah.search import SEARCHERS, Clock, Limits, SearchResult, make_searcher
from messiah.search.alphabeta import AlphaBeta
from messiah.search.base import CACHE_ENTRY_OVERHEAD, EvalCache, clamp

NAMES = sorted(SEARCHERS)
MATE_FILES = ["mate1.tsv", "mate3.tsv", "mate5.tsv"]
SEARCH_NODES = 60  # the search's own budget; the mates come from df-pn, the nodes' checks and the backups
HANGING_ROOK = "lnsgkgsnl/7b1/ppppppppp/9/9/2r6/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"  # one move stands out
CACHE_SFENS = ("ln1g3nl/1r1s1kg2/p2ppsbpp/2p2pp2/1p7/2PP5/PPBSPPPPP/2G1K2R1/LN3GSNL b - 19",  # 35 legal moves
               "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 80")  # many, with pieces in hand


@pytest.fixture(scope="module")
def evaluator():
    return Evaluator(threads=1, device="cpu")


def mate_line_error(sfen: str, mate: int, pv: list[str]) -> str | None:
    """Why ``pv`` is not a mate of ``mate`` plies from ``sfen`` (positive: the side to move mates), or
    None when it is: legal moves, ``|mate|`` of them, ending with the loser in check and without a move."""
    if len(pv) != abs(mate) or mate == 0:
        return f"{len(pv)} moves for mate {mate}"
    if (mate > 0) != (len(pv) % 2 == 1):
        return f"the wrong side is mated for mate {mate}"
    board = cshogi.Board(sfen)
    for usi in pv:
        legal = {cshogi.move_to_usi(m): m for m in board.legal_moves}
        if usi not in legal:
            return f"{usi} is not legal in {board.sfen()}"
        board.push(legal[usi])
    if not (board.is_check() and board.is_game_over()):
        return f"no checkmate at the end: {board.sfen()}"
    return None


def reported_mates(report: SearchResult) -> list[tuple[int, list[str]]]:
    """(mate, pv) of every line of one report that states a mate."""
    lines = report.lines or [(report.winrate, report.mate, report.pv)]
    return [(mate, [cshogi.move_to_usi(m) for m in pv]) for _, mate, pv in lines if mate is not None]


def checked_search(searcher, sfen: str, limits: Limits) -> tuple[SearchResult, list[tuple]]:
    """The result of one search and what is wrong with the mates its info reports state. The result must
    be among the reports (what the engine plays, it has said)."""
    board = cshogi.Board(sfen)
    reports: list[SearchResult] = []
    result = searcher.search(board, limits, reports.append)
    assert board.sfen() == sfen
    assert reports, f"no info report for {sfen}"
    last = reports[-1]
    assert (last.bestmove, last.mate, last.pv) == (result.bestmove, result.mate, result.pv), sfen
    errors = [(sfen, mate, pv, mate_line_error(sfen, mate, pv)) for r in reports for mate, pv in reported_mates(r)]
    return result, [error for error in errors if error[-1] is not None]


def views(sfen: str, solution: list[str]) -> list[tuple[str, str]]:
    """The attacker's position and the defender's, after the solution's first move (unless that mates)."""
    board = cshogi.Board(sfen)
    board.push_usi(solution[0])
    return [("attacker", sfen)] + ([] if board.is_game_over() else [("defender", board.sfen())])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("file", MATE_FILES)
@pytest.mark.parametrize("mate_nodes", [20_000, 0])
def test_reported_mates_are_real_lines(evaluator, name, file, mate_nodes):
    """For each mate problem, from both sides, with root df-pn and without: every mate score reported
    replays with cshogi as legal moves ending in checkmate after exactly the stated plies. A defender
    facing a mate in two must see it (every search has the plies for it)."""
    searcher = make_searcher(name, evaluator, mate_nodes=mate_nodes)
    bad = []
    for sfen, length, solution in problems(file):
        for view, position in views(sfen, solution):
            result, errors = checked_search(searcher, position, Limits(nodes=SEARCH_NODES))
            bad += errors
            if view == "defender" and length == 3:
                assert result.mate == -(length - 1), (name, position, result.mate, result.pv_usi)
    assert not bad, bad[:5]


@pytest.mark.parametrize("name", NAMES)
def test_multipv_mate_lines_are_real(evaluator, name):
    """MultiPV: each line that states a mate (the mating moves, and the moves that lose to one) is a real
    line of that length."""
    searcher = make_searcher(name, evaluator, mate_nodes=0)
    searcher.multipv = 3
    bad = [error for sfen, _, solution in problems("mate3.tsv")[::4] for _, position in views(sfen, solution)
           for error in checked_search(searcher, position, Limits(nodes=SEARCH_NODES))[1]]
    assert not bad, bad[:5]


def test_a_mate_in_the_table_keeps_its_distance_two_plies_later(evaluator):
    """The table is kept between moves: a mate found at depth 5 is still known after the attacker's move
    and the defender's reply, as a mate in three (its entries are read two plies nearer the root than they
    were written). A depth-2 search cannot see that mate by itself, so the table must give it, with its
    line."""
    for sfen, length, _ in problems("mate5.tsv")[:4]:
        searcher = AlphaBeta(evaluator, mate_nodes=0)
        board = cshogi.Board(sfen)
        first = searcher.search(board, Limits(depth=length))
        assert first.mate == length, (sfen, first.mate, first.pv_usi)
        board.push(first.pv[0])
        board.push(first.pv[1])
        later = searcher.search(board, Limits(depth=2))
        assert later.mate == length - 2, (sfen, first.pv_usi, later.mate, later.pv_usi)
        assert mate_line_error(board.sfen(), later.mate, later.pv_usi) is None


class StoppedAtFailedPass(AlphaBeta):
    """Alpha-beta stopped (``stop`` set) as soon as a root pass fails low or high: the aspiration re-search
    that follows is stopped at its first move."""

    def __init__(self, evaluator: Evaluator, stop: threading.Event):
        super().__init__(evaluator, mate_nodes=0)
        self.stop = stop
        self.failed: tuple[float, float, float] | None = None  # alpha, beta, the bound the pass returned

    def _negamax(self, board, depth, alpha, beta, ply):
        value = super()._negamax(board, depth, alpha, beta, ply)
        if ply == 0 and not alpha < value < beta and self.failed is None:
            self.failed = (alpha, beta, value)
            self.stop.set()
        return value


def test_a_stopped_aspiration_research_reports_no_bound(evaluator):
    """In the first ten of the fixture's openings, wherever a root pass fails low or high of its aspiration
    window (most do): stopped in its re-search, the search has only a bound for that iteration, so it must
    report the last complete iteration's line, not the bound."""
    stopped = 0
    for opening in OPENINGS.read_text().splitlines()[:10]:
        board = cshogi.Board()
        for usi in opening.split()[2:]:
            board.push_usi(usi)
        stop = threading.Event()
        searcher = StoppedAtFailedPass(evaluator, stop)
        reports: list[SearchResult] = []
        result = searcher.search(board, Limits(depth=4), reports.append, Clock(stop=stop))
        if searcher.failed is None:
            continue  # every pass stayed in its window: nothing to stop here
        stopped += 1
        complete = next(r for r in reports if r.depth == result.depth)
        assert (result.winrate, result.pv) == (complete.winrate, complete.pv), (opening, searcher.failed)
        assert result.winrate != clamp(searcher.failed[2]), opening
    assert stopped, "no pass failed: the test needs other positions"


def expanded_edges(root) -> list[tuple[float, float, int]]:
    """(the parent's visit count of the edge, prior visits included; the child's own visits) for every edge
    to a child node still open (a proven child is not entered: its visits stay at the parent)."""
    edges, stack = [], [root]
    while stack:
        node = stack.pop()
        children = node.children
        for i, move in enumerate(node.moves):
            child = children.get(int(move))
            if child is not None and child.terminal is None:
                edges.append((float(node.n[i]), child.visits))
                stack.append(child)
    return edges


@pytest.mark.parametrize("name", ["ucb1", "puct"])
def test_a_batch_backs_each_new_leaf_up_once(evaluator, name):
    """Large batches from a position with few good moves make several simulations of one batch select the
    same new leaf. Each leaf is one evaluation and one visit: an edge's count is its prior visits, the visit
    that made the child, and the child's own visits; no virtual loss is left behind."""
    searcher = make_searcher(name, evaluator, mate_nodes=0, batch_size=32)
    board = cshogi.Board(HANGING_ROOK)
    result = searcher.search(board, Limits(nodes=256))
    root = searcher.root
    assert root.visits == result.nodes
    wrong = [(n, visits) for n, visits in expanded_edges(root) if n != searcher.prior_visits + 1 + visits]
    assert not wrong, wrong[:5]


def test_the_evaluation_cache_keeps_to_its_bytes_least_recently_used_out(evaluator):
    """An answer takes its three arrays (16 bytes a legal move) and CACHE_ENTRY_OVERHEAD; the cache never holds more
    than ``max_bytes`` of them, the least recently used leaving first, and an answer put twice counts once."""
    boards = [cshogi.Board(sfen) for sfen in (cshogi.STARTING_SFEN, HANGING_ROOK, CACHE_SFENS[1], CACHE_SFENS[0])]
    sizes = [16 * len(list(b.legal_moves)) + CACHE_ENTRY_OVERHEAD for b in boards]
    cache = EvalCache(evaluator, max_bytes=sum(sizes[:3]))
    for board, size in zip(boards[:3], sizes, strict=False):
        assert EvalCache.size(cache.get(board)) == size
    assert cache.evaluations == 3 and cache.bytes == sum(sizes[:3]) == cache.max_bytes
    cache.get(boards[0])  # a hit: no forward pass, and the first board is now the most recently used
    cache.put(boards[2].zobrist_hash(), cache.peek(boards[2]))  # the same answer again: counted once
    assert cache.evaluations == 3 and cache.bytes == sum(sizes[:3])
    cache.get(boards[3])  # no room: the second board leaves first, then as many as the new answer needs
    assert sizes[2] > sizes[3] > sizes[1]  # so the third leaves too, and the first, used last, stays
    assert [cache.peek(b) is not None for b in boards] == [True, False, False, True]
    assert cache.bytes == sum(EvalCache.size(a) for a in cache.entries.values()) <= cache.max_bytes
    cache.resize(sizes[3])  # a smaller USI_Hash
    assert list(cache.entries) == [boards[3].zobrist_hash()] and cache.bytes == sizes[3]
    cache.clear()
    assert cache.bytes == 0 and not cache.entries
