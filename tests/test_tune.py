"""`messiah tune`: parameter specs, and a real two-trial study at a tiny node budget that resumes."""

import csv
import shutil

import pytest

from messiah.tune import Param, TuneConfig, tune


def test_param_specs_parse_and_bad_ones_are_named():
    assert Param.parse("PuctC:50:400") == Param("PuctC", 50, 400, True, False)
    assert Param.parse("PuctTemperature:10:200:int:log") == Param("PuctTemperature", 10, 200, True, True)
    assert Param.parse("X:0.5:2:float") == Param("X", 0.5, 2, False, False)
    for bad in ("PuctC", "PuctC:400:50", "PuctC:a:b", "PuctC:0:10:log", "PuctC:1:2:int:float", "PuctC:1:2:cubic"):
        with pytest.raises(ValueError, match="PuctC"):
            Param.parse(bad)


@pytest.mark.skipif(shutil.which("messiah-usi") is None, reason="messiah-usi is not installed")
def test_a_study_runs_games_logs_them_and_resumes(tmp_path):
    pytest.importorskip("optuna")
    cfg = TuneConfig(params=[Param.parse("PuctC:50:400")], trials=1, games=2, nodes=20,
                     options={"Search": "puct", "Threads": "1", "MateNodes": "0"}, out=str(tmp_path))
    first = tune(cfg)
    assert first["trials"] == 1 and 50 <= first["best"]["PuctC"] <= 400
    assert first["setoption"] == [f"setoption name PuctC value {first['best']['PuctC']}"]
    cfg.trials = 2  # the same command asking for one more trial: the study resumes, nothing is replayed
    second = tune(cfg)
    with open(tmp_path / "trials.csv") as f:
        rows = list(csv.DictReader(f))
    assert second["trials"] == 2 and [r["trial"] for r in rows] == ["0", "1"]
    assert all(int(r["wins"]) + int(r["losses"]) + int(r["draws"]) == 2 for r in rows)
    assert len(list(tmp_path.glob("trial0001/*.csa"))) == 2
