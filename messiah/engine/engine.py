"""The one place that builds the engine: USI option values in, the evaluator and the searcher out.

The USI engine builds from the values ``setoption`` left; every tool that plays or analyses (``analyze``,
``annotate``, ``play --web``, ``bench --search``, the self-play actors) builds from the engine's defaults
with its own overrides, parsed and checked by the same :meth:`Option.parse`. So they all play the engine
that was measured: its search, BatchSize, tuned constants, tables sized from USI_Hash, a warm searcher::

    engine = Engine.from_options({"Search": "alphabeta", "USI_Hash": "64"})
    result = engine.search(board, movetime=1000)  # as `go movetime 1000` would search it
"""

from __future__ import annotations

import os
import random
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Literal

import cshogi
import numpy as np

from messiah.config import setting
from messiah.engine.openingbook import NO_BOOK, Book, BookMove, read_book
from messiah.engine.options import DEFAULT_MODEL, OPTIONS, book_rules, game_rules
from messiah.engine.strength import Strength
from messiah.engine.thinktime import Delays, think_time
from messiah.errors import DataError
from messiah.evaluator import Evaluator, Model, ModelError
from messiah.protocol import UsiError, one_line
from messiah.search import SEARCH_NAMES, SEARCHERS, Clock, Limits, Searcher, SearchResult, TimeBudget
from messiah.search.base import InfoCallback, SearchSettings
from messiah.winrate import zero_sum

Settings = Mapping[str, object]  # USI option name -> its parsed value (the engine's defaults: engine_settings())


def overrides(options: Mapping[str, str] | None = None, **shorthands: object) -> dict[str, str]:
    """USI option overrides for a tool: ``shorthands`` (option name -> value, None: not given), the options a
    tool's own parameters stand for (``search`` is Search, ``threads`` Threads), under ``options``, which win."""
    return {**{name: str(value) for name, value in shorthands.items() if value is not None}, **(options or {})}


@dataclass
class EngineChoice:
    """The engine a tool plays: messiah-usi's defaults with these options"""

    options: dict[str, str] = setting(factory=dict, flag="--option")
    """a USI option of the engine, as setoption takes it, e.g. BatchSize=16; repeatable (README, "Options")"""
    search: Literal[SEARCH_NAMES] | None = None
    """the search (default: the engine's Search option, puct)"""
    model: str | None = None
    """ONNX model (default: the shipped one)"""
    threads: int | None = None
    """search processes of PUCT and UCB1, onnxruntime threads of alpha-beta (default: the engine's Threads)"""

    def engine_options(self) -> dict[str, str]:
        """The USI option overrides these fields stand for (``--option`` wins over the shorthands)."""
        return overrides(self.options, Search=self.search, ModelPath=self.model, Threads=self.threads)


def engine_settings(options: Mapping[str, str] | None = None) -> dict[str, object]:
    """The engine's option values: its defaults with ``options`` (option name -> the text setoption takes,
    e.g. ``{"Search": "alphabeta", "BatchSize": "1"}``), each parsed and checked by the option's own
    :meth:`Option.parse`; UsiError names an unknown option or a bad value."""
    values = {name: option.default for name, option in OPTIONS.items()}
    for name, text in (options or {}).items():
        if name not in OPTIONS:
            raise UsiError(f"unknown option {one_line(name, 40)!r}: choose from {', '.join(OPTIONS)}")
        values[name] = OPTIONS[name].parse(name, str(text))
    return values


def root_parallel(settings: Settings) -> bool:
    """Whether Threads means search processes (root-parallel, onnxruntime on one thread each) rather than
    onnxruntime's threads for one search process: the Search's own answer (Searcher.root_parallel)."""
    return SEARCHERS[settings["Search"]].root_parallel


# The options load_evaluator reads (Search through root_parallel, for onnxruntime's threads): a change to any of
# them loads the model again (the USI engine's setoption), any other option only builds a new searcher.
EVALUATOR_OPTIONS = ("ModelPath", "Device", "Threads", "Search")


def load_evaluator(settings: Settings) -> Evaluator:
    """The model of ModelPath, warmed up, on Device and onnxruntime's threads (Threads for alpha-beta, 1 for the
    bandit searches, whose Threads are processes); UsiError saying why it cannot load."""
    path = None if settings["ModelPath"] == DEFAULT_MODEL else settings["ModelPath"]
    try:
        evaluator = Evaluator(path, threads=1 if root_parallel(settings) else settings["Threads"],
                              device=settings["Device"])
    except (ModelError, OSError) as e:  # what a model file or its path can be wrong with (too long, a directory)
        raise UsiError(f"cannot load the model: {one_line(e)}") from None
    evaluator.score(cshogi.Board())  # warm up: a failure here is a bug in messiah, and keeps its traceback
    return evaluator


# What a fresh install's first start says while numba compiles the search (measured: docs/benchmarks.md, "First
# start"); numba caches the result beside the package, so it is once per install.
COMPILING_NOTE = ("compiling the search once for this installation (about a minute and a half of one core); "
                  "later starts take about a second")


def search_compiled() -> bool:
    """Whether numba's cache already holds the search's compiled code, so that a start loads it (a second) rather
    than compiles it. Read from numba's cache index of the leaves' gather, the compiled leaf path's entry, which a
    first search compiles (numba's own layout: when it cannot be read, True, and nothing is said)."""
    from messiah.search.playout import gather

    try:
        return os.path.exists(gather._cache._cache_file._index_path)
    except AttributeError:
        return True


def compile_search() -> None:
    """Compile (numba) what the first search would: a few nodes of each search, with a
    stand-in forward pass and no model opened (the features and move indices are the real ones; the network's
    session would only cost time here). Run on a thread from the GUI's first command, it overlaps the handshake;
    ``isready`` then finds the code compiled."""
    stand_in = Model(None, Path("stand-in"), {}, None, {}, "stand-in", "", ["CPUExecutionProvider"])
    evaluator = Evaluator(model=stand_in, forward=lambda features, indices: np.full(indices.shape, 0.5, np.float32))
    for search in SEARCHERS.values():
        searcher = search(evaluator)
        searcher.search(cshogi.Board(), Limits(nodes=2))
        searcher.search(cshogi.Board(), Limits(nodes=2))  # and what a search that keeps its tree compiles


def cores() -> int:
    """The cores this process may run on (a container's or taskset's share, not the whole machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def search_processes(settings: Settings) -> int:
    """Processes a search runs in: Threads for the bandit searches, at most one per core (a helper process
    beyond the cores only splits them, and each holds its own model and tree); 1 for alpha-beta."""
    return min(settings["Threads"], cores()) if root_parallel(settings) else 1


def build_searcher(settings: Settings, evaluator: Evaluator) -> Searcher:
    """The Search option's searcher with the options it declares, its tables sized by USI_Hash, warmed up; a
    bandit search with Threads > 1 also starts its helper processes (search.parallel; one process a core at
    most, :func:`search_processes`), each with the searcher these settings build on one thread
    (:func:`helper_searcher`)."""
    shared = SearchSettings(settings["MultiPV"], game_rules(settings), settings["PvInterval"] / 1000)
    searcher = SEARCHERS[settings["Search"]].from_usi(evaluator, settings, shared)
    evaluator.set_batch(searcher.positions_a_pass)
    processes = search_processes(settings)
    searcher.set_hash(max(1, settings["USI_Hash"] // processes))  # USI_Hash is the whole engine's memory
    # A tiny search now compiles (numba) what the first timed move would otherwise compile on its clock: on a
    # fresh install that made the first byoyomi move late.
    searcher.search(cshogi.Board(), Limits(nodes=2))
    searcher.search(cshogi.Board(), Limits(nodes=2))  # and what a search that keeps the last tree compiles
    searcher.new_game()
    if processes > 1:
        searcher.start_helpers(processes - 1, partial(helper_searcher, dict(settings), processes))
    return searcher


def helper_searcher(settings: Settings, processes: int) -> Searcher:
    """A root-parallel helper's searcher (built in the helper process): these settings on one thread, with its
    share of USI_Hash among the ``processes``."""
    one = {**settings, "Threads": 1, "USI_Hash": max(1, settings["USI_Hash"] // processes)}
    return build_searcher(one, load_evaluator(one))


# (BookFile, its size and modification time) -> its book (None: unreadable): a file is read once per process as
# long as it stays the same, and again once it is rebuilt (or made, or mended), without a restart of the engine.
BOOKS: dict[tuple[str, int | None, int | None], Book | None] = {}


def _book_key(name: str) -> tuple[str, int | None, int | None]:
    try:
        stat = os.stat(name)
    except OSError:  # not there (yet), or not readable: a later build looks again
        return name, None, None
    return name, stat.st_size, stat.st_mtime_ns


class Engine:
    """The engine its option values make: the evaluator (loaded from ModelPath and Threads unless one is
    given), the searcher, the score scale, the opening book, the Strength level, and how a ``go`` becomes the
    search's limits and clock, how a search's result becomes the move to play or a resignation."""

    def __init__(self, settings: Settings, evaluator: Evaluator | None = None):
        self.settings = dict(settings)
        self.rules = game_rules(self.settings)  # the rules the GUI plays by (declarations, draws)
        self.notes: list[str] = []  # what the user should hear once (the book read, or why not): take_notes()
        self.evaluator = load_evaluator(self.settings) if evaluator is None else evaluator
        self.searcher = build_searcher(self.settings, self.evaluator)
        processes = search_processes(self.settings)
        if processes < self.settings["Threads"] and root_parallel(self.settings):
            self.notes.append(f"Threads {self.settings['Threads']}: this machine gives {cores()} cores, so "
                              f"{processes} search processes")
        self.scale = zero_sum(self.settings["ScoreScale"])
        self.strength = Strength(self.settings["Strength"]) if self.settings["Strength"] else None
        self.rng = random.Random()  # book moves and a weakened level's choices: a new game, new moves
        self.book = self._open_book()

    def _open_book(self) -> Book | None:
        """The BookFile's book when the book is in use (USI_OwnBook, not ConsiderationMode). It is read once as
        long as the file stays the same (an engine is rebuilt whenever an option changes), and read again once the
        file has changed; what was read, or why it could not be and is not used, is said once a version of the
        file (:meth:`take_notes`)."""
        name = self.settings["BookFile"]
        if name == NO_BOOK or not self.settings["USI_OwnBook"] or self.settings["ConsiderationMode"]:
            return None
        key = _book_key(name)
        if key not in BOOKS:
            try:
                BOOKS[key] = read_book(name)
                self.notes.append(f"book {one_line(name, 100)}: {len(BOOKS[key]):,} positions")
            except DataError as e:
                BOOKS[key] = None
                self.notes.append(f"error: {one_line(e)}; playing without a book")
        return BOOKS[key]

    def book_move(self, board: cshogi.Board) -> tuple[BookMove | None, list[str]]:
        """The book's move for ``board`` under the Book options (None: search instead) and why moves were
        dropped, as lines for an info string."""
        if self.book is None:
            return None, []
        return self.book.choose(board, book_rules(self.settings), self.rng)

    def resigns(self, result: SearchResult) -> bool:
        """Whether to resign rather than play ``result``: its score at or below -ResignValue (never while
        analysing, in ConsiderationMode)."""
        return bool(result.bestmove) and not self.settings["ConsiderationMode"] and \
            self.scale.to_cp(result.winrate) <= -self.settings["ResignValue"]

    def take_notes(self) -> list[str]:
        """What the engine and its search want said, once: the book, a helper process that could not start or
        was lost; cleared as taken."""
        notes = self.notes + self.searcher.notes
        self.notes.clear()
        self.searcher.notes.clear()
        return notes

    def close(self) -> None:
        """End the search's helper processes, if it has any (the evaluator stays: it may be shared)."""
        self.searcher.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @classmethod
    def from_options(cls, options: Mapping[str, str] | None = None, evaluator: Evaluator | None = None) -> Engine:
        """The engine of the default options with ``options`` (name -> text, as setoption takes it)."""
        return cls(engine_settings(options), evaluator)

    def limits(self, go: Mapping[str, int]) -> Limits:
        """The request of a ``go`` (its nodes and depth), NodesLimit and DepthLimit capping them."""

        def capped(asked: int | None, cap: int) -> int | None:
            return min(asked or cap, cap) if cap else asked

        # fixed-node matches: the same work per move whatever the machine's load; a Strength level's nodes
        nodes = capped(go.get("nodes"), self.settings["NodesLimit"])
        return Limits(nodes=capped(nodes, self.strength.nodes) if self.strength else nodes,
                      depth=capped(go.get("depth"), self.settings["DepthLimit"]))

    def choose(self, board: cshogi.Board, result: SearchResult) -> int:
        """The move to play from a search's ``result``: its best move, or at a Strength level, a move the network
        values nearly as much (engine.strength). The position's value stays the search's."""
        if self.strength is None or not result.bestmove:
            return result.bestmove
        proven_win = result.mate is not None and result.mate > 0
        return self.strength.choose(result.bestmove, proven_win, self.searcher.cache.get(board), self.rng)

    def line(self, board: cshogi.Board, result: SearchResult, move: int) -> list[int]:
        """The line to report and ponder on for ``move`` played from ``board``: the search's PV when it starts
        with ``move`` and goes on, else ``move`` and the network's best reply (one forward pass), so that a GUI
        gets a ponder move whenever the game goes on after ``move``."""
        if result.pv[:1] == [move] and len(result.pv) > 1:
            return list(result.pv)
        board.push(move)
        try:
            reply = [] if board.is_game_over() else [self.searcher.cache.get(board).best()[0]]
        finally:
            board.pop()
        return [move, *reply]

    def budget(self, go: Mapping[str, int], board: cshogi.Board) -> TimeBudget:
        """The time ``go``'s clock gives the side to move of ``board`` (engine.thinktime.think_time)."""
        return think_time(dict(go), board.turn, board.move_number, Delays.of(self.settings),
                          self.settings["TimeHorizon"], self.settings["TimeMinMovesToGo"])

    def clock(self, budget: TimeBudget, stop: threading.Event | None = None, ponder: TimeBudget | None = None) -> Clock:
        """A move's clock with ``budget`` and the engine's stability factors (TimeObvious, TimeUnstable); a ponder
        search's has no budget until ponderhit, when it gets ``ponder``."""
        return Clock(budget, self.settings["TimeObvious"] / 100, self.settings["TimeUnstable"] / 100, stop, ponder)

    def search(self, board: cshogi.Board, nodes: int | None = None, depth: int | None = None,
               movetime: int | None = None, info: InfoCallback | None = None) -> SearchResult:
        """Search ``board`` as ``go nodes N depth D movetime MS`` would (movetime in milliseconds, the
        NetworkDelay2 kept back as the engine does); with no limit, the search's own small default."""
        go = {key: value for key, value in (("nodes", nodes), ("depth", depth), ("movetime", movetime))
              if value is not None}
        clock = None if movetime is None else self.clock(self.budget(go, board))
        return self.searcher.search(board, self.limits(go), info, clock)
