"""The first move a new user sees is a real search: what numba compiles, and what the first search allocates,
happen before the clock starts (issue: analyze once reported 'nodes 1 evaluations 2' on a fresh install)."""

import json
import subprocess
import sys
import time

from messiah.engine.usi import UsiEngine


def test_analyze_in_a_fresh_interpreter_with_an_empty_numba_cache_searches_for_real(tmp_path):
    env = {**__import__("os").environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    done = subprocess.run([sys.executable, "-m", "messiah.cli", "analyze", "startpos", "moves", "7g7f",
                           "--movetime", "1000", "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert out["evaluations"] > 100, out
    assert any((tmp_path / "numba").rglob("*.nbi")), "numba compiled nothing into the empty cache: not a cold start"


def test_the_first_go_after_isready_searches_before_it_is_stopped():
    out: list[str] = []
    engine = UsiEngine(out.append)
    engine.handle("isready")
    engine.handle("position startpos")
    engine.handle("go nodes 30000")
    time.sleep(0.3)
    engine.handle("stop")
    infos = [line.split() for line in out if line.startswith("info depth")]
    nodes = int(infos[-1][infos[-1].index("nodes") + 1])
    assert nodes > 1, out[-3:]
    assert sum(line.startswith("bestmove") for line in out) == 1
