"""The `messiah` command line as a newcomer meets it: a bad argument or file gets one line saying what is
wrong and exit code 2, never a traceback, an abort or a hang; every flag has help text."""

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


def test_every_flag_has_help_and_shows_its_default():
    parser = build_parser()
    subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [f"{name} {'/'.join(action.option_strings) or action.dest}"
               for name, command in subcommands.choices.items() for action in command._actions
               if not isinstance(action, argparse._HelpAction) and not action.help]
    assert not missing, missing
    assert "(default: puct)" in subcommands.choices["analyze"].format_help()


def test_one_default_search_everywhere():
    from messiah.engine.usi import OPTIONS
    from messiah.search import DEFAULT_SEARCH

    parser = build_parser()
    subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name in ("analyze", "annotate", "play"):
        search = next(a for a in subcommands.choices[name]._actions if a.dest == "search")
        assert search.default == DEFAULT_SEARCH, name
    assert OPTIONS["Search"].default == DEFAULT_SEARCH


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
