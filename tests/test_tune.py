"""`messiah tune`: parameter specs, and a real two-trial study at a tiny node budget that resumes."""

import csv

import pytest

from messiah.arena.tune import Param, TuneConfig, tune


def test_param_specs_parse_and_bad_ones_are_named():
    assert Param.parse("PuctC:50:400") == Param("PuctC", 50, 400, True, False)
    assert Param.parse("PuctTemperature:10:200:int:log") == Param("PuctTemperature", 10, 200, True, True)
    assert Param.parse("X:0.5:2:float") == Param("X", 0.5, 2, False, False)
    for bad in ("PuctC", "PuctC:400:50", "PuctC:a:b", "PuctC:0:10:log", "PuctC:1:2:int:float", "PuctC:1:2:cubic"):
        with pytest.raises(ValueError, match="PuctC"):
            Param.parse(bad)


def test_a_study_runs_games_logs_them_and_resumes(tmp_path, messiah_usi):
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


def test_a_main_time_clock_reaches_every_trials_match(tmp_path, monkeypatch):
    """The time-management options act only with a main time, so a study must be able to play Fischer games; its
    --openings reach every trial too."""
    pytest.importorskip("optuna")
    import messiah.arena.tune as tune_module
    from messiah.arena.stats import Game

    played = []

    def fake_match(match):
        played.append(match)
        return ("a", "b"), [Game(1, 0, True, "win", "%TORYO", 90, ""), Game(2, 0, False, "draw", "%SENNICHITE", 90, "")]

    monkeypatch.setattr(tune_module, "play_match", fake_match)
    openings = tmp_path / "openings.sfen"
    openings.write_text("startpos moves 7g7f 3c3d\n")
    cfg = TuneConfig(params=[Param.parse("TimeObvious:20:80")], trials=2, games=2, byoyomi=None, time=10000, inc=100,
                     openings=str(openings), out=str(tmp_path))
    result = tune(cfg)
    assert [(m.time, m.inc, m.byoyomi) for m in played] == [(10000, 100, None)] * 2
    assert [m.openings for m in played] == [str(openings)] * 2  # the study's own set, not the shared one
    assert all(20 <= int(m.options["TimeObvious"]) <= 80 for m in played)
    assert all("TimeObvious" not in m.opponent_options for m in played) and result["best_score"] == 0.75
