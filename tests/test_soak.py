"""`messiah bench soak`: games against one engine process over raw pipes. Its detectors are tried on a fake engine
that misbehaves on purpose (each fault must be counted once, and a go never answered must not hang the soak),
and a short soak of the real messiah-usi must find nothing wrong."""

import json

import pytest

from messiah.cli import build_parser
from messiah.config import from_args
from messiah.errors import UserError
from messiah.tools.soak import SoakBench, bench_soak


def quick(**kw) -> SoakBench:
    """A soak of a few short games, its timeouts small; no time loss ends a game early on a loaded machine."""
    return SoakBench(**{"games": 3, "byoyomi": 100, "max_plies": 10, "opponent_ms": 0, "timeout": 1000, "peek": 200,
                        "tolerance": 10000, "stop_rate": 0.0, "isready_rate": 0.0, "progress": False, **kw})


def test_the_fake_engines_faults_are_each_counted_once(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "faults")
    out = bench_soak(quick(engine=fake, setoption_rate=1.0))
    assert out["games"] == 3
    assert out["non_usi_lines"] == 1 and out["non_usi_lines_examples"] == ["game 1: 'hello from the fake'"]
    assert out["doubled_bestmoves"] == 1
    assert out["illegal_moves"] == 1 and "bestmove 5i5a" in out["illegal_moves_examples"][0]
    assert out["missing_bestmoves"] == 1  # go 5, in game 2: counted, the engine resynced, the game ended
    assert out["endings"]["illegal move"] == 1 and out["endings"]["missing bestmove"] == 1
    assert out["endings"]["max plies"] == 1  # game 3 is played to the ply cap
    assert out["setoptions"] == 2  # MultiPV, the one option of the list it declares, between games
    for kind in ("time_losses", "early_ponder_bestmoves", "missing_readyok", "unexpected_readyok", "slow_stops"):
        assert out[kind] == 0, kind
    assert out["alive_at_end"] and out["exit_code"] == 0
    assert out["verdict"].startswith("PROBLEMS: ") and "1 missing bestmoves" in out["verdict"]


def test_an_engine_that_dies_ends_the_soak_and_says_so(fake, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "die 2")
    out = bench_soak(quick(engine=fake, games=2))
    assert out["games"] == 0 and not out["alive_at_end"] and out["exit_code"] == 3
    assert "died" in out["verdict"] and "exit status 3" in out["verdict"]


def test_the_command_prints_the_report_and_its_json(fake, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "faults")
    from messiah.cli import main

    flags = ["bench", "soak", "--engine", fake, "--games", "1", "--byoyomi", "100", "--max-plies", "10",
             "--opponent-ms", "0", "--timeout", "1000", "--tolerance", "10000", "--no-progress"]
    main(flags)
    text = capsys.readouterr().out
    assert "doubled_bestmoves" in text and "non_usi_lines_examples" in text and "verdict" in text
    main([*flags, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 1 and out["doubled_bestmoves"] == 1 and out["illegal_moves"] == 1


def test_soak_flags_build_its_configuration():
    args = build_parser().parse_args(["bench", "soak", "--games", "5", "--no-ponder", "--option", "NodesLimit=10",
                                      "--time", "1000", "--inc", "100", "--byoyomi", "0"])
    cfg = from_args(args.config, args)
    assert args.run is bench_soak
    assert cfg == SoakBench(games=5, ponder=False, options={"NodesLimit": "10"}, time=1000, inc=100, byoyomi=0)
    with pytest.raises(UserError, match="a clock"):
        SoakBench(byoyomi=0)
    with pytest.raises(UserError, match="--stop-rate"):
        SoakBench(stop_rate=1.5)


@pytest.mark.usefixtures("messiah_usi")
def test_a_short_soak_of_messiah_finds_nothing_wrong():
    """Pondering, stops and isready in searches, a setoption between games: nothing wrong. Time losses and slow
    stops are left out: they depend on the machine's load, not on the protocol."""
    out = bench_soak(quick(games=2, max_plies=16, timeout=10000, stop_rate=0.3, isready_rate=0.3, setoption_rate=1.0,
                           options={"NodesLimit": "200"}))
    assert out["games"] == 2 and out["engine_moves"] >= 8
    for kind in ("illegal_moves", "missing_bestmoves", "doubled_bestmoves", "early_ponder_bestmoves",
                 "non_usi_lines", "illegal_ponder_moves", "missing_readyok", "unexpected_readyok",
                 "info_string_errors"):
        assert out[kind] == 0, (kind, out.get(f"{kind}_examples"))
    assert out["ponderhits"] + out["ponder_stops"] > 0 and out["setoptions"] == 1
    assert out["alive_at_end"] and out["exit_code"] == 0
    assert len(out["rss_mb"]) == 2 and all(mb > 0 for mb in out["rss_mb"])
