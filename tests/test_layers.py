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


ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
# The layers of the README, lowest first; each may import only its own and lower layers.
LAYERS = [
    {"messiah", "messiah.moves", "messiah.features", "messiah.evaluator", "messiah.winrate", "messiah.paths",
     "messiah.position", "messiah.mate"},
    {"search", "search.base", "search.alphabeta", "search.mcts"},
    {"messiah.usi"},
]


def project_imports(module: str) -> set[str]:
    """The project modules ``module``'s file imports (at any depth of the file, lazy imports included)."""
    import ast

    path = ROOT / (module.replace(".", "/") + ("/__init__.py" if module in ("messiah", "search") else ".py"))
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        found |= {n for n in names if n.split(".")[0] in ("messiah", "search", "train", "models")}
    return found


def test_core_search_and_engine_import_only_their_layer_and_below():
    allowed = set()
    for layer in LAYERS:
        allowed |= layer
        for module in layer:
            assert project_imports(module) <= allowed, (module, project_imports(module) - allowed)
