"""Where the shared data is looked for, and the error when it is not there."""

import pytest

from messiah import paths
from messiah.errors import DataError, MessiahError


def test_a_missing_shared_file_names_both_places_it_is_looked_for(monkeypatch, tmp_path):
    monkeypatch.delenv("MESSIAH_DATA", raising=False)
    monkeypatch.setattr(paths, "SHARED_DATA", tmp_path)
    with pytest.raises(DataError) as caught:
        paths.shared_file("openings/none.sfen")
    message = str(caught.value)
    assert "openings/none.sfen" in message and "../shared/data beside the checkout" in message
    assert "MESSIAH_DATA" in message and isinstance(caught.value, MessiahError)


def test_messiah_data_is_named_when_it_is_set(monkeypatch, tmp_path):
    monkeypatch.setenv("MESSIAH_DATA", str(tmp_path))
    monkeypatch.setattr(paths, "SHARED_DATA", paths.shared_data())
    (tmp_path / "openings").mkdir()
    (tmp_path / "openings" / "a.sfen").write_text("startpos\n")
    assert paths.shared_file("openings/a.sfen") == tmp_path / "openings" / "a.sfen"
    with pytest.raises(DataError, match=f"MESSIAH_DATA \\({tmp_path}\\)"):
        paths.shared_file("teacher/x.hcpe")


def test_no_machine_path_is_a_fallback(monkeypatch):
    monkeypatch.delenv("MESSIAH_DATA", raising=False)
    assert paths.shared_data() == paths.BESIDE_CHECKOUT  # the tests run in a checkout
    assert paths.BESIDE_CHECKOUT.parts[-2:] == ("shared", "data")
    monkeypatch.setattr(paths, "BESIDE_CHECKOUT", None)  # an installed package: only $MESSIAH_DATA says
    assert paths.shared_data() == paths.UNSET == __import__("pathlib").Path("$MESSIAH_DATA")
    monkeypatch.setattr(paths, "SHARED_DATA", paths.UNSET)
    with pytest.raises(DataError, match=r"\$MESSIAH_DATA, which is not set"):
        paths.shared_file("teacher/teacher_s1.hcpe")
