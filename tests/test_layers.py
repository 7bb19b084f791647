"""The import layers (README, "Layout and layers"): playing needs no torch and no training code. A fresh
interpreter imports the USI engine, searches a position with the shipped model, and must not have
imported torch or any module of train/ or models/."""

import json
import subprocess
import sys

PLAY = """
import json, sys
import cshogi
import messiah.usi
from messiah.evaluator import Evaluator
from search import Limits, make_searcher

for name in ("alphabeta", "ucb1"):
    result = make_searcher(name, Evaluator(None, threads=1)).search(cshogi.Board(), Limits(nodes=300))
    assert result.bestmove in set(cshogi.Board().legal_moves), result.bestmove
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "train", "models"))
print(json.dumps(loaded))
"""


def test_playing_imports_no_torch_and_no_training_code():
    done = subprocess.run([sys.executable, "-c", PLAY], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == []
