"""What ships with the package says what it is: the model has a name, and CHANGELOG.md records that name
with the file's hash, so that a figure can be traced to the model that made it; and the result summaries that
the docs cite are JSON that any reader takes."""

import hashlib
import json
import re
from pathlib import Path

import pytest

from messiah.cli import main
from messiah.evaluator import Evaluator, default_model_path

ROOT = Path(__file__).resolve().parents[1]


def test_the_shipped_models_are_named_and_hashed_in_the_changelog():
    """The float model and its int8 copy for the CPU (the one the engine opens there by default)."""
    rows = re.findall(r"^\| ([\w-]+) \| [\d-]+ \| `([0-9a-f]{64})` \|", (ROOT / "CHANGELOG.md").read_text(), re.M)
    for int8 in (False, True):
        path = default_model_path(int8)
        evaluator = Evaluator(path, threads=1)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert (evaluator.name, digest) in rows, "a new shipped model needs its name and SHA-256 in CHANGELOG.md"
        assert evaluator.sha256 == digest
        assert evaluator.describe().startswith(f"{evaluator.name} (sha256 {digest[:8]})")
    assert Evaluator(threads=1, device="cpu").path == default_model_path(int8=True)


def test_a_version_per_shipped_model():
    """pyproject's version is ``messiah.__version__``, what ``id name``, ``messiah --version`` and ``messiah-usi
    --version`` say, and the newest released CHANGELOG section, which is named for the model the package ships
    (its ONNX metadata name): a new shipped model needs a new version, and the version moves only with a section."""
    from messiah import __version__
    from messiah.engine.usi import ENGINE_NAME, UsiEngine

    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert __version__ == version and ENGINE_NAME == f"messiah {version}"
    lines: list[str] = []
    UsiEngine(lines.append).handle("usi")
    assert lines[0] == f"id name {ENGINE_NAME}"
    changelog = (ROOT / "CHANGELOG.md").read_text()
    released = re.findall(r"^## (\d+\.\d+\.\d+) \(([^)]*)\): (\S+)$", changelog, re.M)
    assert changelog.index("## Unreleased") < changelog.index(f"## {released[0][0]} ")
    newest, _, model = released[0]
    assert newest == version, "the newest released CHANGELOG section is the version pyproject gives"
    shipped = Evaluator(default_model_path(int8=False), threads=1).name
    assert model == shipped, f"{newest} is named for {model}, but the package ships {shipped}: a version a model"
    assert Evaluator(default_model_path(int8=True), threads=1).name == f"{shipped}-int8"
    assert len({m for _, _, m in released}) == len(released), "one version a shipped model"


def test_version_is_printed(capsys):
    """``messiah --version`` and ``messiah-usi --version`` print what ``id name`` says."""
    from messiah.engine.usi import ENGINE_NAME
    from messiah.engine.usi import main as usi_main

    for command in (main, usi_main):
        with pytest.raises(SystemExit) as done:
            command(["--version"])
        assert done.value.code == 0 and capsys.readouterr().out == f"{ENGINE_NAME}\n"


def test_license_and_credits_ship_with_the_source():
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    notice = (ROOT / "NOTICE.md").read_text()
    for credit in ("cshogi", "fairy-stockfish", "gpsshogi", "YaneuraOu", "floodgate", "GPL-3.0", "WCSC29"):
        assert credit in notice, credit


def test_every_result_summary_and_fixture_is_strict_json():
    """jq, browsers and strict parsers refuse NaN and Infinity, which Python's json writes by default: a figure
    that is not finite is null (messiah.files.json_text)."""
    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    paths = sorted([*(ROOT / "docs").rglob("*.json"), *(ROOT / "tests" / "data").rglob("*.json")])
    assert any(p.parent.name == "results" for p in paths)
    for path in paths:
        try:
            json.loads(path.read_text(), parse_constant=refuse)
        except ValueError as exc:
            raise AssertionError(f"{path.relative_to(ROOT)}: {exc}") from None
