"""The first move a new user sees is a real search: what numba compiles happens before the clock starts (issue:
analyze once reported 'nodes 1 evaluations 2' on a fresh install, its movetime spent compiling). Checked by
what was compiled when, in a fresh interpreter, not by how much a second of this machine searches (how late
moves come is `messiah bench latency`'s figure)."""

import json
import os
import subprocess
import sys

import cshogi

# Run in a fresh interpreter: ``program`` is "usi" (messiah-usi on stdin) or a messiah subcommand with its
# arguments; writes to ``report`` how many signatures each numba dispatcher of messiah's modules had compiled
# when the first clock that can end a search (a move's clock: a time limit or a stop flag) started, and at
# the end.
PROBE = """
import json, sys
from numba.core.dispatcher import Dispatcher
from messiah import cli
from messiah.engine import usi
from messiah.search import timeman

def compiled():
    return {f"{module.__name__}.{name}": len(f.signatures) for module in list(sys.modules.values())
            if module.__name__.startswith("messiah") for name, f in vars(module).items() if isinstance(f, Dispatcher)}

report, start = {}, timeman.Clock.__init__

def clock(self, *args, **kwargs):
    start(self, *args, **kwargs)
    if self.bounded():
        report.setdefault("at_clock", compiled())

timeman.Clock.__init__ = clock
path, program, *args = sys.argv[1:]
usi.main([]) if program == "usi" else cli.main([program, *args])
report["at_end"] = compiled()
open(path, "w").write(json.dumps(report))
"""
GUARD = 300  # seconds: a guard against a hung child, not a speed claim (model load and numba compile)


def assert_nothing_compiled_on_the_clock(report: dict) -> None:
    assert "at_clock" in report, "no move's clock was started"
    assert sum(report["at_clock"].values()) > 0, f"nothing compiled before the clock: {report}"
    assert report["at_end"] == report["at_clock"], f"numba compiled during the move: {report}"


def test_analyze_in_a_fresh_interpreter_with_an_empty_numba_cache_compiles_nothing_on_its_clock(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    report = tmp_path / "compiled.json"
    done = subprocess.run([sys.executable, "-c", PROBE, str(report), "analyze", "startpos", "moves", "7g7f",
                           "--movetime", "1000", "--json"], capture_output=True, text=True, env=env, timeout=GUARD)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    board = cshogi.Board()
    board.push_usi("7g7f")
    assert board.move_from_usi(out["bestmove"]) in set(board.legal_moves), out
    assert any((tmp_path / "numba").rglob("*.nbi")), "numba compiled nothing into the empty cache: not a cold start"
    assert_nothing_compiled_on_the_clock(json.loads(report.read_text()))


def test_the_first_go_after_isready_compiles_nothing_on_its_clock(tmp_path):
    """isready builds the engine, warmed up: its first go (300 nodes, then the position that waits for its
    bestmove) compiles nothing and searches all its nodes."""
    report = tmp_path / "compiled.json"
    script = "isready\nposition startpos\ngo nodes 300\nposition startpos\nquit\n"
    done = subprocess.run([sys.executable, "-c", PROBE, str(report), "usi"], input=script, capture_output=True,
                          text=True, timeout=GUARD)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert sum(line.startswith("bestmove") for line in lines) == 1, lines[-3:]
    infos = [line.split() for line in lines if line.startswith("info depth")]
    assert int(infos[-1][infos[-1].index("nodes") + 1]) == 300, lines[-3:]
    assert_nothing_compiled_on_the_clock(json.loads(report.read_text()))
