"""What ships with the package says what it is: the model has a name, and CHANGELOG.md records that name
with the file's hash, so that a figure can be traced to the model that made it; and the result summaries that
the docs cite are JSON that any reader takes."""

import hashlib
import json
import re
from pathlib import Path

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
