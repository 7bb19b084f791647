"""The import layers (README, "Layout and layers"): playing needs no torch and no training code. A fresh
interpreter imports the USI engine, searches a position with the shipped model, and must not have
imported torch or any module of train/ (the self-play loop in train/rl/ included) or models/."""

import json
import subprocess
import sys

PLAY = """
import json, sys
import cshogi
import messiah.engine.usi
from messiah.evaluator import Evaluator
from messiah.search import Limits, make_searcher

for name in ("alphabeta", "ucb1"):
    result = make_searcher(name, Evaluator(None, threads=1)).search(cshogi.Board(), Limits(nodes=300))
    assert result.bestmove in set(cshogi.Board().legal_moves), result.bestmove
loaded = sorted(m for m in sys.modules if m.split(".")[0] == "torch"
                or m.startswith(("messiah.train", "messiah.models", "messiah.train.rl")))
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
     "messiah.position", "messiah.engine.mate"},
    {"messiah.search", "messiah.search.base", "messiah.search.alphabeta", "messiah.search.mcts"},
    {"messiah.engine.usi"},
]


def project_imports(module: str) -> set[str]:
    """The project modules ``module``'s file imports (at any depth of the file, lazy imports included)."""
    import ast

    parts = module.split(".")
    if parts[:2] in (["messiah", "search"], ["messiah", "models"], ["messiah", "train"], ["messiah", "rl"]):
        parts = parts[1:]  # pyproject's package-dir: messiah.search is the repository's search/
    path = ROOT.joinpath(*parts)
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        found |= {n for n in names if n.split(".")[0] == "messiah"}
    return found


def test_core_search_and_engine_import_only_their_layer_and_below():
    allowed = set()
    for layer in LAYERS:
        allowed |= layer
        for module in layer:
            assert project_imports(module) <= allowed, (module, project_imports(module) - allowed)


def test_a_users_own_train_models_and_search_modules_do_not_shadow_messiahs(tmp_path):
    """Every ML project has a train.py or models.py; run from such a directory, messiah still finds its own."""
    for name in ("train", "models", "search"):
        (tmp_path / f"{name}.py").write_text(f"raise ImportError('the user\\'s own {name}.py was imported')\n")
    code = ("import messiah.engine.usi, messiah.search, messiah.train.data, messiah.models.net; "
            "print(messiah.search.__file__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "search" in done.stdout and str(tmp_path) not in done.stdout
    sfen = "lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2"
    # python -m puts the working directory first on sys.path: the harshest case for shadowing.
    done = subprocess.run([sys.executable, "-m", "messiah.cli", "analyze", sfen, "--nodes", "50", "--json"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    board = __import__("cshogi").Board(sfen)
    legal = {__import__("cshogi").move_to_usi(m) for m in board.legal_moves}
    assert json.loads(done.stdout)["bestmove"] in legal


def test_the_rl_actors_need_no_torch_and_nothing_below_imports_rl():
    """The self-play loop (train/rl/) sits above search/: an actor process (selfplay) plays without torch, and no
    module of the core, the searches or the engine imports it."""
    for layer in LAYERS:
        for module in layer:
            assert not any(m.startswith("messiah.train.rl") for m in project_imports(module)), module
    code = ("import sys, json, messiah.train.rl.selfplay, messiah.train.rl.records, messiah.train.rl.targets; "
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'torch')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == []
