"""What ships with the package says what it is: the model has a name, and CHANGELOG.md records that name
with the file's hash, so that a figure can be traced to the model that made it."""

import hashlib
import re
from pathlib import Path

from messiah.evaluator import Evaluator, default_model_path

ROOT = Path(__file__).resolve().parents[1]


def test_the_shipped_model_is_named_and_hashed_in_the_changelog():
    evaluator = Evaluator(threads=1)
    digest = hashlib.sha256(default_model_path().read_bytes()).hexdigest()
    rows = re.findall(r"^\| (\w+) \| [\d-]+ \| `([0-9a-f]{64})` \|", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert (evaluator.name, digest) in rows, "a new shipped model needs its name and SHA-256 in CHANGELOG.md"
    assert evaluator.sha256 == digest and evaluator.describe().startswith(f"{evaluator.name} (sha256 {digest[:8]})")


def test_license_and_credits_ship_with_the_source():
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    notice = (ROOT / "NOTICE.md").read_text()
    for credit in ("cshogi", "fairy-stockfish", "gpsshogi", "YaneuraOu", "floodgate", "GPL-3.0", "WCSC29"):
        assert credit in notice, credit
