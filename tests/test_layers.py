"""The import layers (docs/internals.md, "Layout and layers"): playing needs no torch and no training code. A fresh
interpreter imports the USI engine, searches a position with the shipped model, and must not have
imported torch or any module of train/ (the self-play loop in train/rl/ included) or models/."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

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


ROOT = Path(__file__).resolve().parents[1]
# The packages by layer (docs/internals.md, "Layout and layers"), each with the packages it may import besides its own.
# The core is messiah/'s own modules; search/, models/ and train/ install as messiah.search, .models, .train.
# scripts/ holds the programs the docs cite (matches, summaries, measurements): run from a checkout, never installed,
# they may import anything, and nothing may import them.
MAY_IMPORT = {
    "core": set(),
    "models": {"core"},  # PyTorch nets and ONNX export: torch, never played
    "search": {"core"},
    "engine": {"core", "search"},  # what a GUI runs: no torch, no training code
    "arena": {"core"},  # drives engines as processes: none of the engine's own code
    "train": {"core", "models", "search", "engine", "arena"},  # self-play plays the engine; gates are matches
    "tools": {"core", "models", "search", "engine", "arena", "train"},
    "cli": {"core", "models", "search", "engine", "arena", "train", "tools"},
    "scripts": {"core", "models", "search", "engine", "arena", "train", "tools", "cli"},
}
FOLDERS = {"search": "search", "models": "models", "train": "train"}  # pyproject's package-dir


def package_of(module: str) -> str:
    """The layer a module of the project belongs to: its subpackage of messiah, or the core."""
    parts = module.split(".")
    if parts[0] == "scripts":
        return "scripts"
    if len(parts) == 1 or parts[1] not in MAY_IMPORT:
        return "core"
    return parts[1]


def project_modules() -> dict[str, Path]:
    """Every module of the project by its import name, from the folders (a new module is checked unasked); a
    script by its path's name (``scripts.ship.summary``)."""
    modules = {}
    for top in ("messiah", *FOLDERS.values(), "scripts"):
        for path in (ROOT / top).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            modules[".".join(["messiah", *parts] if top not in ("messiah", "scripts") else parts)] = path
    return modules


def project_imports(path: Path) -> set[str]:
    """The project modules a file imports (at any depth of the file, lazy imports included), scripts included."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        found |= {n for n in names if n.split(".")[0] in ("messiah", "scripts")}
    return found


def test_every_module_imports_only_its_own_layer_and_those_below():
    modules = project_modules()
    assert {package_of(m) for m in modules} == set(MAY_IMPORT), sorted(modules)
    wrong = []
    for module, path in modules.items():
        own = package_of(module)
        for imported in project_imports(path):
            if package_of(imported) not in MAY_IMPORT[own] | {own}:
                wrong.append(f"{module} imports {imported}")
    assert not wrong, "\n".join(wrong)


# Tools that read data and train nothing: they read through the records layer, never the training code.
DATA_READING_TOOLS = ("messiah.tools.evaluate", "messiah.tools.book", "messiah.tools.fitwinrate")


def test_the_tools_that_only_read_data_import_no_training_code():
    modules = project_modules()
    for tool in DATA_READING_TOOLS:
        imported = project_imports(modules[tool])
        assert "messiah.records" in {".".join(m.split(".")[:2]) for m in imported}, tool
        assert not [m for m in imported if package_of(m) == "train"], tool


def test_the_layer_check_sees_a_wrong_import(tmp_path):
    """The check above must be able to fail: an engine module importing the training code is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from messiah.train.data import read_records\n")
    assert package_of("messiah.engine.bad") == "engine"
    assert [m for m in project_imports(bad) if package_of(m) not in MAY_IMPORT["engine"] | {"engine"}] == \
        ["messiah.train.data"]


def test_scripts_are_a_layer_above_everything(tmp_path):
    """scripts/ is checked too: a script may import any layer, and a module of messiah importing a script is caught
    (a wheel has no scripts/)."""
    modules = project_modules()
    scripts = [m for m in modules if package_of(m) == "scripts"]
    assert "scripts.ship.summary" in scripts and all(modules[m].is_relative_to(ROOT / "scripts") for m in scripts)
    assert MAY_IMPORT["scripts"] == set(MAY_IMPORT) - {"scripts"}
    bad = tmp_path / "bad.py"
    bad.write_text("from scripts.ship.summary import main\n")
    assert [m for m in project_imports(bad) if package_of(m) not in MAY_IMPORT["core"] | {"core"}] == \
        ["scripts.ship.summary"]


def test_no_stray_packages_are_importable_from_a_checkout():
    """Only messiah's own folders are its subpackages: not the repository's tests/, docs/ or scripts/, nor messiah
    again."""
    code = ("import importlib.util as u, json; print(json.dumps([n for n in ('messiah.tests', 'messiah.docs', "
            "'messiah.scripts', 'messiah.messiah') if u.find_spec(n)]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == []


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


def test_the_rl_actors_need_no_torch():
    """The self-play loop (train/rl/) sits above the engine (the layer test keeps it out of the engine): an actor
    process (selfplay) plays without torch."""
    code = ("import sys, json, messiah.train.rl.selfplay, messiah.records.selfplayfile, messiah.train.rl.targets; "
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'torch')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == []


def test_the_package_list_holds_every_package_folder():
    """pyproject's explicit package list is what a wheel (pip install ., not -e) carries: a new subpackage left
    out of it imports in a checkout and fails in every installed copy."""
    tomllib = pytest.importorskip("tomllib", reason="tomllib is Python 3.11's")
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {module for module, path in project_modules().items() if path.name == "__init__.py"}
    assert folders == listed, (sorted(folders - listed), sorted(listed - folders))
