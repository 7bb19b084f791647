"""messiah.files.atomic_path: a file is replaced whole or not at all."""

import pytest

from messiah.files import atomic_path


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
