"""One engine everywhere: the USI options are made from the registered searches, and every tool that plays or
analyses (analyze, annotate, play --web, bench --search, the self-play actors) builds the searcher the USI
engine builds from the same options."""

from __future__ import annotations

import inspect

import cshogi
import pytest
from conftest import LOOKS, STEP, TEACHER, TickingTime

import messiah.engine.engine as engine_module
from messiah.engine.engine import Engine, engine_settings
from messiah.engine.options import usi_options
from messiah.engine.usi import UsiEngine
from messiah.evaluator import Evaluator
from messiah.protocol import UsiError
from messiah.rules import GameRules
from messiah.search import SEARCHERS, Searcher, SearchOption, TimeBudget, search_options, timeman
from messiah.search.mcts import Puct


@pytest.fixture(scope="module")
def evaluator():
    return Evaluator(threads=1, device="cpu")


def test_the_usi_options_are_the_documented_ones():
    """The README's option table (section "Options"): the searches and their constants' defaults."""
    out: list[str] = []
    UsiEngine(out.append).handle("usi")
    assert "option name Search type combo default puct var puct var alphabeta var ucb1" in out
    for declared in ("MateNodes type spin default 20000 min 0 max 10000000",
                     "BatchSize type spin default 8 min 1 max 1024",
                     "LeafMatePly type spin default 5 min 3 max 9",
                     "Ucb1C type spin default 30 min 0 max 1000",
                     "PuctC type spin default 50 min 0 max 10000",
                     "PuctTemperature type spin default 24 min 1 max 10000",
                     "PriorVisits type spin default 100 min 10 max 10000"):
        assert f"option name {declared}" in out
    assert not [line for line in out if "PlayoutCore" in line or "LeafMateNodes" in line]  # gone (issue 93)


def test_a_removed_option_gets_an_info_string_and_the_engine_goes_on():
    """A GUI that still sends PlayoutCore or LeafMateNodes (removed with the Python leaves) is told so, and the
    engine answers the next command."""
    out: list[str] = []
    engine = UsiEngine(out.append)
    for name in ("PlayoutCore", "LeafMateNodes"):
        engine.handle(f"setoption name {name} value 1")
        assert out[-1].startswith("info string") and name in out[-1], out
    engine.handle("usi")
    assert out[-1] == "usiok"


class Greedy(Searcher):
    """A search that is one class and one registry entry: the network's best move."""

    name = "greedy"
    options = (*Searcher.options, SearchOption("GreedyWidth", "width", 3, 1, 9))

    def __init__(self, evaluator, width: int = 3, mate_nodes: int = 20_000):
        super().__init__(evaluator, mate_nodes)
        self.width = width

    def _search(self, board, limits, clock, info):
        raise NotImplementedError


def test_a_new_search_brings_its_options_into_the_engine():
    table = usi_options({**SEARCHERS, "greedy": Greedy})
    assert table["Search"].choices == ("puct", "alphabeta", "ucb1", "greedy")
    assert table["GreedyWidth"].declaration("GreedyWidth") == "option name GreedyWidth type spin default 3 min 1 max 9"
    assert table["BatchSize"] == usi_options()["BatchSize"]  # the others' options stay as they were


def test_two_searches_may_share_an_option_only_as_one_declaration():
    class Wider(Greedy):
        name = "wider"
        options = (*Searcher.options, SearchOption("BatchSize", "width", 4, 1, 1024))

    with pytest.raises(ValueError, match="BatchSize"):
        search_options({**SEARCHERS, "wider": Wider})


@pytest.mark.parametrize("name", sorted(SEARCHERS))
def test_a_declared_default_is_the_constructors(name):
    """One default per constant: a searcher made without options is the engine's."""
    cls = SEARCHERS[name]
    parameters = inspect.signature(cls.__init__).parameters
    for option in cls.options:
        assert parameters[option.argument].default == option.default, option


def test_usi_integers_become_constructor_arguments_by_their_scale(evaluator):
    """PuctC is c in hundredths, PuctTemperature T in thousandths, PriorVisits in hundredths; options of other
    searches are ignored."""
    puct = Puct.from_usi(evaluator, {"PuctC": 70, "PuctTemperature": 30, "BatchSize": 4, "Ucb1C": 99, "MateNodes": 5,
                                     "PriorVisits": 250})
    assert (puct.c, puct.temperature, puct.batch_size, puct.mate_nodes) == (0.7, 0.03, 4, 5)
    assert puct.prior_visits == puct.tree.prior_visits == 2.5
    assert puct.leaf_mate_ply == 5 and Puct.from_usi(evaluator, {"LeafMatePly": 4}).leaf_mate_ply == 3  # odd: 4 is 3


def test_engine_settings_refuse_what_setoption_refuses():
    lines: list[str] = []
    UsiEngine(lines.append).handle("setoption name BatchSize value 0")
    with pytest.raises(UsiError) as refused:
        engine_settings({"BatchSize": "0"})
    assert lines[-1] == f"info string error: {refused.value}"
    with pytest.raises(UsiError, match="unknown option"):
        engine_settings({"BatchSise": "8"})
    assert engine_settings({"BatchSize": "4"})["BatchSize"] == 4


def played_by(searcher) -> dict:
    """What makes a searcher play as it does: its class, its constants and its table sizes."""
    keys = ("batch_size", "c", "temperature", "prior_visits", "mate_nodes", "hash_entries", "multipv", "rules",
            "info_every")
    return {"class": type(searcher).__name__, "cache": searcher.cache.max_bytes,
            **{key: getattr(searcher, key) for key in keys if hasattr(searcher, key)}}


MB = 2**20
# Option sets and what the searcher must be, by the README's table: c in hundredths, T in thousandths, USI_Hash
# split in halves between the evaluation cache and alpha-beta's table (256 bytes an entry).
CASES = [
    ({}, {"class": "Puct", "batch_size": 8, "c": 0.5, "temperature": 0.024, "mate_nodes": 20000,
          "cache": 256 * MB // 2, "multipv": 1, "rules": GameRules(), "info_every": 0.5}),
    ({"Search": "ucb1", "Ucb1C": "45", "BatchSize": "4", "USI_Hash": "16", "MultiPV": "2", "PvInterval": "300"},
     {"class": "Ucb1", "batch_size": 4, "c": 0.45, "cache": 16 * MB // 2, "multipv": 2, "info_every": 0.3}),
    ({"Search": "alphabeta", "USI_Hash": "16", "MateNodes": "500", "MaxMovesToDraw": "300",
      "EnteringKingRule": "TryRule", "DrawValueBlack": "400", "DrawValueWhite": "600"},
     {"class": "AlphaBeta", "mate_nodes": 500, "hash_entries": 16 * MB // 2 // 256, "cache": 16 * MB // 2,
      "rules": GameRules("TryRule", 0.4, 0.6, 300)}),
]


@pytest.fixture
def built(monkeypatch) -> list:
    """The searchers the engine builds from here on, in order."""
    searchers: list = []
    build = engine_module.build_searcher

    def recording(settings, evaluator):
        searchers.append(build(settings, evaluator))
        return searchers[-1]

    monkeypatch.setattr(engine_module, "build_searcher", recording)
    return searchers


@pytest.mark.parametrize("options,expected", CASES)
def test_the_tools_build_the_usi_engines_searcher(tmp_path, evaluator, built, options, expected):
    from messiah.tools.analyze import analyze_position, search_board
    from messiah.tools.annotate import Record, annotate_record
    from messiah.tools.web import PlayServer

    usi = UsiEngine(lambda line: None)
    for name, value in options.items():
        usi.handle(f"setoption name {name} value {value}")
    usi.handle("isready")
    engine = played_by(usi.searcher)
    assert {key: engine[key] for key in expected} == expected

    analyze_position("startpos", nodes=10, options=options)
    search_board(cshogi.Board(), evaluator, nodes=10, options=options)
    annotate_record(Record(cshogi.STARTING_SFEN, [cshogi.Board().move_from_usi("7g7f")], ["a", "b"]), evaluator,
                    nodes=10, progress=False, options=options)
    PlayServer(evaluator, nodes=10, options=options)
    assert [played_by(s) for s in built] == [engine] * 5  # the USI engine's, then the tools'


def test_a_tools_own_search_parameter_is_the_search_option_and_options_win(evaluator, built):
    from messiah.tools.analyze import search_board

    assert search_board(cshogi.Board(), evaluator, "alphabeta", depth=1).search == "alphabeta"
    assert search_board(cshogi.Board(), evaluator, "alphabeta", depth=1, options={"Search": "ucb1"}).search == "ucb1"
    assert [type(s).__name__ for s in built] == ["AlphaBeta", "Ucb1"]


def test_the_bench_and_the_actors_play_the_engines_searcher(evaluator, built):
    """bench --search sets only the search, the leaf batch and MateNodes 0; the actors the run's Search,
    BatchSize and MateNodes; the rest is the engine's."""
    from messiah.tools.bench import bench_search, position_set
    from messiah.train.rl.config import RLConfig
    from messiah.train.rl.selfplay import make_game_searcher

    bench_search(evaluator, position_set(TEACHER, limit=1), 0.01, ["puct"])
    make_game_searcher(RLConfig(search="ucb1", search_batch=2, mate_nodes=2000), evaluator)
    assert played_by(built[0]) == {"class": "Puct", "batch_size": 8, "c": 0.5, "temperature": 0.024,
                                   "prior_visits": 1.0, "mate_nodes": 0, "cache": 256 * MB // 2,
                                   "multipv": 1, "rules": GameRules(), "info_every": 0.5}
    assert played_by(built[1]) == {"class": "Ucb1", "batch_size": 2, "c": 0.3, "prior_visits": 1.0,
                                   "mate_nodes": 2000, "cache": 256 * MB // 2, "multipv": 1,
                                   "rules": GameRules(), "info_every": 0.5}


def test_the_engine_searches_a_movetime_as_go_movetime_does(evaluator, monkeypatch):
    """movetime 300: 300 ms less the 50 ms NetworkDelay2, as `go movetime 300` gives the USI engine, a hard
    limit. On a clock that ticks at each reading (conftest.TickingTime) the search ends there: not before
    0.25 s, and no more than a few readings after."""
    engine = Engine.from_options({"Search": "ucb1"}, evaluator)
    assert engine.budget({"movetime": 300}, cshogi.Board()) == TimeBudget(0.25, None, 0.25)
    monkeypatch.setattr(timeman, "time", TickingTime())
    result = engine.search(cshogi.Board(), movetime=300)
    assert 0.25 <= result.elapsed <= 0.25 + LOOKS * STEP, result.elapsed
    nodes = Engine.from_options({"NodesLimit": "20"}, evaluator).search(cshogi.Board(), nodes=500).nodes
    assert nodes == 20  # NodesLimit caps a tool's request as it caps a go's


def test_the_options_that_reload_the_model_are_those_it_is_loaded_by():
    """EVALUATOR_OPTIONS, by which setoption decides to load the model again, are exactly the options
    load_evaluator reads; setting one of them drops the USI engine's evaluator, setting another keeps it."""

    class Reading(dict):
        def __getitem__(self, name):
            self.read.add(name)
            return super().__getitem__(name)

    read = set()
    for search in ("puct", "alphabeta"):  # Threads counts for alpha-beta only (onnxruntime's threads)
        settings = Reading(engine_settings({"Search": search, "Threads": "1"}))
        settings.read = read
        engine_module.load_evaluator(settings)
    assert read == set(engine_module.EVALUATOR_OPTIONS)
    usi = UsiEngine(lambda line: None)
    usi.handle("isready")
    loaded = usi.evaluator
    usi.handle("setoption name MultiPV value 2")
    assert usi.evaluator is loaded is not None
    for name, value in (("Device", "cpu"), ("Search", "alphabeta"), ("Threads", "2"), ("ModelPath", "<default>")):
        usi.handle("isready")
        assert usi.evaluator is not None
        usi.handle(f"setoption name {name} value {value}")
        assert usi.evaluator is None, name


def test_a_bug_in_the_warm_up_keeps_its_traceback(monkeypatch):
    """A model that cannot load is the user's to fix (UsiError); a failure while the loaded model scores the start
    position is messiah's bug, and must reach its caller as itself, traceback and all."""
    def broken(self, board):
        raise ZeroDivisionError("a bug in the feature code")

    monkeypatch.setattr(Evaluator, "score", broken)
    with pytest.raises(ZeroDivisionError, match="a bug in the feature code") as caught:
        engine_module.load_evaluator(engine_settings())
    assert caught.traceback[-1].name == "broken"
    with pytest.raises(UsiError, match="cannot load the model: model file not found"):
        engine_module.load_evaluator(engine_settings({"ModelPath": "/nonexistent/model.onnx"}))
