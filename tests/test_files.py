"""messiah.files: a file is replaced whole or not at all, and the JSON written is strict."""

import json
import math

import pytest

from messiah.files import atomic_path, json_text, write_json


def strict_loads(text: str):
    """json.loads as jq and browsers read: NaN, Infinity and -Infinity are errors."""
    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_a_written_file_replaces_the_old_one_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("old\n")
    with atomic_path(path) as tmp:
        assert tmp.parent == tmp_path and tmp != path
        tmp.write_text("new\n")
        assert path.read_text() == "old\n"  # a reader meanwhile sees the old file whole
    assert path.read_text() == "new\n" and sorted(tmp_path.iterdir()) == [path]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "model.onnx"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_path(path) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("killed mid-write")
    assert path.read_bytes() == b"old" and sorted(tmp_path.iterdir()) == [path]


def test_the_temporary_name_keeps_a_suffix_that_names_the_format(tmp_path):
    with atomic_path(tmp_path / "log.png", ".tmp.png") as tmp:
        assert tmp.name == "log.png.tmp.png"
        tmp.write_bytes(b"png")
    assert (tmp_path / "log.png").read_bytes() == b"png"


def test_figures_that_are_not_finite_are_written_as_null_and_the_rest_as_they_are():
    """A match lost in every game has an Elo of -inf; a rate with nothing to count is NaN. Python's json would
    write -Infinity and NaN, which strict readers refuse."""
    data = {"elo": -math.inf, "elo_high": math.inf, "elo_low": -372.5, "rate": math.nan, "wins": 0,
            "rows": [{"elo": math.inf}, (1.5, math.nan)], "name": "NaN", "ok": True, "none": None}
    assert strict_loads(json_text(data)) == {"elo": None, "elo_high": None, "elo_low": -372.5, "rate": None,
                                             "wins": 0, "rows": [{"elo": None}, [1.5, None]], "name": "NaN",
                                             "ok": True, "none": None}
    assert json_text([1.0, 2]) == "[1.0, 2]"


def test_write_json_writes_strict_json_whole(tmp_path):
    path = tmp_path / "ladder.json"
    path.write_text("old")
    write_json(path, [{"rung": "gpsshogi", "elo": -math.inf}])
    assert strict_loads(path.read_text()) == [{"rung": "gpsshogi", "elo": None}]
    assert sorted(tmp_path.iterdir()) == [path]
