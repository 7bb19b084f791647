"""The `messiah` command line as a newcomer meets it: a bad argument or file gets one line saying what is
wrong and exit code 2, never a traceback, an abort or a hang; every flag has help text that says its default
once; every subcommand's flags come from its configuration."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from messiah.cli import build_parser
from messiah.config import from_args

ABORTING_SFEN = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b +P 1"


def messiah(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "messiah.cli", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def assert_one_line_error(done: subprocess.CompletedProcess, needle: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr[-500:])
    assert "Traceback" not in done.stderr and needle in done.stderr, done.stderr[-500:]


@pytest.mark.parametrize("args,needle", [
    (("analyze", "--nodes", "-5", "startpos"), "must be at least 1"),
    (("analyze", "--nodes", "10", *ABORTING_SFEN.split()), "hands must be"),  # cshogi's parser aborts on it
    (("analyze", "--nodes", "10", "startpos", "moves", "7g7f", "7g7f"), "illegal move"),
])
def test_analyze_refuses_bad_input(args, needle):
    assert_one_line_error(messiah(*args), needle)


def test_bench_refuses_a_file_that_is_not_hcpe(tmp_path):
    junk = tmp_path / "random.hcpe"
    junk.write_bytes(bytes(range(256)) * 15)  # 3,840 bytes: not a whole number of records
    assert_one_line_error(messiah("bench", "evaluator", "--positions", str(junk)), "not a whole number")
    junk.write_bytes(bytes((i * 7919) % 251 for i in range(38 * 400)))  # whole records of garbage
    assert_one_line_error(messiah("bench", "search", "--positions", str(junk)), "not an hcpe file")


def test_match_against_something_that_is_not_an_engine_fails_at_once(tmp_path):
    done = messiah("match", "--opponent", "/bin/false", "--games", "2", "--out", str(tmp_path), timeout=100)
    assert_one_line_error(done, "/bin/false")


def commands(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every subcommand's parser by its words, 'bench search' included."""
    out = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                out[prefix + name] = command
                out.update(commands(command, f"{prefix}{name} "))
    return out


def flags(command: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in command._actions if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)]


def test_every_flag_has_help_and_shows_its_default():
    parsers = commands(build_parser())
    missing = [f"{name} {'/'.join(action.option_strings) or action.dest}"
               for name, command in parsers.items() for action in flags(command) if not action.help]
    assert not missing, missing
    assert "(default: the engine's Search option, puct)" in " ".join(parsers["analyze"].format_help().split())
    assert "(default: 320)" in " ".join(parsers["match"].format_help().split())


def test_no_flag_says_its_default_twice_or_an_empty_one():
    """A flag's help, as --help prints it, says 'default' at most once, never '(default: )' or
    '(default: None)', and shows no RST markup; a switch that turns something off says 'do not'."""
    for name, command in commands(build_parser()).items():
        formatter = command._get_formatter()
        for action in flags(command):
            text = formatter._expand_help(action) if action.help else ""
            assert text.lower().count("default") <= 1, (name, action.dest, text)
            assert "(default: )" not in text and "(default: None)" not in text, (name, action.dest, text)
            assert "``" not in text and ":func:" not in text and ":class:" not in text, (name, action.dest, text)
            if any(flag.startswith("--no-") for flag in action.option_strings):
                assert text.startswith("do not "), (name, action.dest, text)
        lines = command.format_help().splitlines()
        assert all(line.lower().count("default") <= 1 for line in lines), name


def test_no_help_shows_a_path_of_this_machine():
    """Defaults that live in the shared data folder are shown as $MESSIAH_DATA/..., not as where this machine
    keeps it (a user reading --help has another machine)."""
    from messiah.paths import BESIDE_CHECKOUT, SHARED_DATA

    for name, command in commands(build_parser()).items():
        text = " ".join(command.format_help().split())
        assert str(SHARED_DATA) not in text and str(BESIDE_CHECKOUT) not in text, name


def test_json_is_one_shared_flag():
    parsers = commands(build_parser())
    for name in ("analyze", "match", "match-report", "tune", "fit-winrate", "evaluate", "gensfen", "bench evaluator",
                 "bench search", "bench latency", "bench clock", "bench train"):
        help_texts = {a.help for a in parsers[name]._actions if "--json" in a.option_strings}
        assert help_texts == {"print the result as one JSON object"}, name


def test_bench_subcommands_parse_into_their_configurations():
    from messiah.tools import bench

    parser = build_parser()

    def config(*argv: str):
        args = parser.parse_args(["bench", *argv])
        return args.run, from_args(args.config, args)

    run, cfg = config("evaluator", "--threads", "2", "--arch", "7x64")
    assert run is bench.bench_evaluator and cfg == bench.EvaluatorBench(threads=2, arch="7x64")
    run, cfg = config("search", "--movetime", "50", "--batch-size", "1", "8", "--option", "PuctC=50")
    assert run is bench.bench_searches
    assert cfg == bench.SearchBench(movetime=50, batch_size=[1, 8], options={"PuctC": "50"})
    run, cfg = config("latency", "--byoyomi", "300", "--moves", "10")
    assert run is bench.bench_latency and cfg == bench.LatencyBench(byoyomi=300, moves=10)
    run, cfg = config("clock", "--time", "10000", "--inc", "100")
    assert run is bench.bench_clock and (cfg.time, cfg.inc, cfg.byoyomi, cfg.plies) == (10000, 100, 0, 50)
    run, cfg = config("train", "--steps", "5", "--workers", "0", "2", "--batch-size", "64")
    assert run is bench.bench_train and cfg == bench.TrainBench(steps=5, workers=[0, 2], batch_size=64)
    with pytest.raises(SystemExit):  # a flag of another bench
        parser.parse_args(["bench", "latency", "--batch-size", "8"])
    with pytest.raises(ValueError, match="--time or --byoyomi"):
        config("clock")


def test_match_tune_and_ladder_flags_build_their_configurations():
    """The defaults are the dataclasses'; byoyomi falls back to the configuration's own default only without
    a main time; NAME=VALUE options add to the default ones."""
    from messiah.arena.ladder import LadderConfig
    from messiah.arena.match import BYOYOMI, MatchConfig
    from messiah.arena.tune import TuneConfig

    parser = build_parser()

    def config(*argv: str):
        args = parser.parse_args(list(argv))
        return from_args(args.config, args)

    assert config("match", "--opponent", "x") == MatchConfig(opponent="x") and MatchConfig("x").byoyomi == BYOYOMI
    cfg = config("match", "--opponent", "x", "--time", "10000", "--inc", "100", "--option", "Skill Level=-20",
                 "--openings", "none", "--sprt=-30,30")
    assert (cfg.byoyomi, cfg.time, cfg.options, cfg.openings, cfg.sprt) == (None, 10000, {"Skill Level": "-20"},
                                                                           None, (-30.0, 30.0))
    tune = config("tune", "--param", "PuctC:50:400", "--param", "PuctTemperature:10:200:log", "--option", "Search=puct")
    assert [p.name for p in tune.params] == ["PuctC", "PuctTemperature"] and tune.byoyomi == 300
    assert tune.options == {"Threads": "1", "Search": "puct"}
    assert config("tune", "--param", "A:1:2", "--nodes", "100").byoyomi is None
    with pytest.raises(ValueError, match="--nodes replaces the clock"):
        config("tune", "--param", "A:1:2", "--nodes", "100", "--byoyomi", "300")
    ladder = config("ladder", "--option", "Threads=2", "--merge", "a", "--merge", "b", "--games", "0")
    assert ladder == LadderConfig(games=0, options={"Threads": "2"}, merge=["a", "b"])
    assert TuneConfig.__dataclass_fields__["options"].default_factory() == {"Threads": "1"}
    with pytest.raises(SystemExit):  # a malformed option is argparse's error, naming the flag
        parser.parse_args(["match", "--opponent", "x", "--option", "Threads"])


def test_one_default_search_everywhere():
    """analyze, annotate and play name no search of their own: without --search they play the engine's Search
    option, which is the registry's default."""
    from messiah.config import from_args
    from messiah.engine.engine import engine_settings
    from messiah.engine.usi import OPTIONS
    from messiah.search import DEFAULT_SEARCH

    parser = build_parser()
    for argv in (["analyze", "startpos"], ["annotate", "game.csa"], ["play", "--web"]):
        args = parser.parse_args(argv)
        cfg = from_args(args.config, args)
        assert cfg.search is None and "Search" not in cfg.engine_options(), argv
        assert engine_settings(cfg.engine_options())["Search"] == DEFAULT_SEARCH == "puct"
        args = parser.parse_args([*argv, "--search", "ucb1", "--option", "BatchSize=4"])
        assert from_args(args.config, args).engine_options() == {"Search": "ucb1", "BatchSize": "4"}
    assert OPTIONS["Search"].default == DEFAULT_SEARCH
