"""The watchdog relay (messiah.arena.watchdog): an engine that stops answering a search, or dies in one, is
resigned for instead of stalling cshogi.cli, and a match against it finishes; a healthy engine's lines pass
through unchanged."""

import os
import time

import pytest

from messiah.arena.watchdog import Relay, move_seconds


def wait_for(lines: list[str], text: str, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if text in lines:
            return True
        time.sleep(0.02)
    return False


def test_a_go_is_timed_by_its_whole_clock():
    assert move_seconds("go btime 60000 wtime 1000 byoyomi 1000") == 61.0  # the larger main time
    assert move_seconds("go btime 0 wtime 0 binc 2000 winc 2000") == 2.0
    assert move_seconds("go movetime 300") == 0.3
    for untimed in ("go infinite", "go ponder btime 0 wtime 0 byoyomi 1000", "go mate 1000", "go nodes 500", "go"):
        assert move_seconds(untimed) is None, untimed


def test_a_healthy_engine_passes_through_unchanged(fake, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_MODE", "ok")
    lines: list[str] = []
    relay = Relay([fake], grace=0.3, write=lines.append)
    for command in ("usi", "isready", "position startpos", "go btime 0 wtime 0 byoyomi 100"):
        relay.send(command)
    assert wait_for(lines, "bestmove 1g1f", 10)
    time.sleep(0.6)  # past the grace: nothing more comes
    assert lines == ["id name fake", "option name MultiPV type spin default 1 min 1 max 10", "usiok", "readyok",
                     "bestmove 1g1f"]
    assert relay.send("quit") is False
    relay.close()
    assert relay.proc.poll() is not None and not relay.silent
    assert "watchdog" not in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["hang", "die"])
def test_a_silent_or_dead_engine_resigns_once_per_search_and_is_stopped(fake, monkeypatch, capsys, mode):
    monkeypatch.setenv("FAKE_MODE", f"{mode} 2")
    lines: list[str] = []
    relay = Relay([fake], grace=0.5, write=lines.append)
    relay.send("usi")
    relay.send("position startpos")
    relay.send("go btime 0 wtime 0 byoyomi 100")
    assert wait_for(lines, "bestmove 1g1f", 10)  # its first move is its own
    relay.send("position startpos moves 1g1f 9c9d")
    start = time.monotonic()
    relay.send("go btime 0 wtime 0 byoyomi 100")
    assert wait_for(lines, "bestmove resign", 10)
    if mode == "hang":  # not before its clock and the grace (how long after is the load's, not the relay's)
        assert time.monotonic() - start >= 0.6
    assert lines.count("bestmove resign") == 1 and any("watchdog" in x for x in lines if x.startswith("info string"))
    time.sleep(0.2)
    assert relay.proc.poll() is not None  # stopped (or gone), not left running
    # from now on the relay answers for it at once: the rest of the session's games are resigned
    relay.send("isready")
    relay.send("go btime 0 wtime 0 byoyomi 100")
    assert lines[-2:] == ["readyok", "bestmove resign"]
    assert relay.send("quit") is False
    relay.close()
    assert "watchdog: fake" in capsys.readouterr().err


def test_a_pondering_engine_is_timed_from_ponderhit_and_stop(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "hang 1")
    lines: list[str] = []
    relay = Relay([fake], grace=0.3, write=lines.append)
    relay.send("position startpos")
    relay.send("go ponder btime 0 wtime 0 byoyomi 100")
    time.sleep(1.0)
    assert "bestmove resign" not in lines  # pondering has no clock
    relay.send("ponderhit")
    assert wait_for(lines, "bestmove resign", 5)
    relay.send("quit")
    relay.close()


def fake_as(tmp_path, fake: str, name: str, mode: str) -> str:
    """The fake engine under its own ``name``, always misbehaving as ``mode`` whatever $FAKE_MODE says."""
    script = tmp_path / name
    script.write_text(f"#!/bin/sh\nexport FAKE_MODE='{mode}'\nexec {fake} \"$@\"\n")
    script.chmod(0o755)
    return str(script)


def test_a_match_against_an_engine_that_hangs_finishes_with_its_resignations(fake, tmp_path, monkeypatch):
    """Before the relay, cshogi.cli waited for ever here."""
    from messiah.arena import match

    monkeypatch.setattr(match, "WATCHDOG_GRACE", 1.0)
    hanging = fake_as(tmp_path, fake, "hanging", "hang 3")
    monkeypatch.setenv("FAKE_MODE", "ok")
    cfg = match.MatchConfig(opponent=hanging, engine=fake, games=2, byoyomi=100, openings="none",
                            out=str(tmp_path / "m"))
    names, games = match.play_match(cfg, progress=False)  # it returns: the hanging engine's games are resigned
    assert [g.outcome for g in games] == ["win", "win"]
    assert all(g.ending == "%TORYO" for g in games)
    assert names == ("fake", "hanging")
    assert not [p for p in os.listdir(tmp_path / "m") if p.startswith(".pair")]


def test_a_match_says_when_an_engine_played_broken(fake, tmp_path, monkeypatch):
    """An engine whose model will not load resigns every game: the records alone show plain losses. The relay keeps
    the errors it reported, and the match's report and match-report warn with the count and the first error."""
    from messiah.arena import match
    from messiah.arena.stats import summarize

    broken = fake_as(tmp_path, fake, "broken", "broken")
    monkeypatch.setenv("FAKE_MODE", "ok")
    cfg = match.MatchConfig(opponent=broken, engine=fake, games=2, byoyomi=100, openings="none",
                            out=str(tmp_path / "m"))
    names, games = match.play_match(cfg, progress=False)
    assert [g.outcome for g in games] == ["win", "win"]
    errors = match.engine_errors(cfg.out)
    assert errors["engine"]["count"] == 0 and errors["opponent"]["count"] >= 2
    assert errors["opponent"]["first"] == "cannot load the model: no such file: gone.onnx"
    text = match.report(cfg, names, {**summarize(games), "engine_errors": errors})
    assert "WARNING: errors the engines reported" in text and "broken" in text and "gone.onnx" in text
    text, summary = match.match_report(match.MatchReportConfig([cfg.out]))
    assert summary["engine_errors"]["opponent"]["count"] == errors["opponent"]["count"]
    assert "WARNING" in text and "gone.onnx" in text

    healthy = match.MatchConfig(opponent=fake, engine=fake, games=2, byoyomi=100, openings="none",
                                out=str(tmp_path / "h"))
    names, games = match.play_match(healthy, progress=False)
    text = match.report(healthy, names, {**summarize(games), "engine_errors": match.engine_errors(healthy.out)})
    assert "WARNING" not in text
