"""`messiah ladder`'s bookkeeping: which rungs get more games, where the 50% rung lies, the table. The
games themselves are a command to run, never a timed test."""

import math

from messiah.arena.ladder import default_rungs, fifty_percent, ladder_table, needs_more


def row(name: str, wins: int, losses: int, elo: float) -> dict:
    return {"rung": name, "games": wins + losses, "wins": wins, "losses": losses, "draws": 0,
            "score": wins / (wins + losses), "elo": elo, "elo_low": elo - 100, "elo_high": elo + 100,
            "forfeits": [0, 0]}


def test_rungs_are_the_debian_engines_on_one_thread():
    rungs = default_rungs()
    assert [r.options.get("Skill Level") for r in rungs[:7]] == ["-20", "-10", "0", "5", "10", "15", "20"]
    assert all(r.options.get("Threads") == "1" for r in rungs[:7]) and rungs[-1].options == {"Thread": "1"}


def test_only_rungs_near_even_get_more_games():
    assert not needs_more(0.9) and not needs_more(0.1) and needs_more(0.5) and needs_more(0.3)


def test_fifty_percent_is_interpolated_by_elo_between_the_rungs_around_it():
    rows = [row("a", 19, 1, 400.0), row("b", 15, 5, 100.0), row("c", 5, 15, -300.0), row("d", 0, 20, -math.inf)]
    assert fifty_percent(rows) == "between b and c (25% of the way up)"
    assert fifty_percent(rows[:2]).startswith("above every rung played")
    assert fifty_percent(rows[2:]).startswith("below every rung played")


def test_table_shows_each_rung_with_its_interval():
    lost = {**row("gpsshogi 0.7.0", 0, 20, -math.inf), "elo_high": -287.4}  # all lost: the interval's one end
    table = ladder_table([row("fairy-stockfish Skill 0", 12, 8, 70.4), lost])
    lines = table.splitlines()
    assert lines[2] == "| fairy-stockfish Skill 0 | 20 | 12-8-0 | 60.0% | +70 (-30 .. +170) | 0 |"
    assert "| at most -287 (95%; every game lost) |" in lines[3] and "inf" not in table


def _timed_pair(commands, names, options, cfg, opening, games, first_number, ponder_log):
    """Stands in for a pair of real games: sleeps, notes when it ran, and wins both games against 'Skill 0',
    one of two against 'Skill 5'."""
    import time
    from pathlib import Path

    from messiah.arena.stats import Game

    start = time.monotonic()
    time.sleep(0.5)
    Path(cfg.out, f"ran{first_number:04d}").write_text(f"{start} {time.monotonic()}")
    outcomes = ["win", "win"] if options[1]["Skill Level"] == "0" else ["win", "loss"]
    return [Game(first_number + i, opening, i == 0, outcomes[i], "%TORYO", 80, "") for i in range(games)], ""


def test_rungs_share_one_pool_and_only_the_even_one_plays_more(tmp_path, monkeypatch):
    """With as many workers as rungs, every rung's first pair runs at once (rung by rung, a 16-core machine sat
    mostly idle at each rung's tail); the even rung then gets its extra games."""
    import sys

    import messiah.arena.match as match
    from messiah.arena.ladder import Rung, run_ladder

    monkeypatch.setattr(match, "_play_pair", _timed_pair)  # the forked workers see it
    monkeypatch.setattr(match, "check_engines", lambda commands, options: None)
    rungs = [Rung(f"Skill {s}", sys.executable, {"Skill Level": str(s)}) for s in (0, 5, 0)]
    base = match.MatchConfig(opponent="", engine=sys.executable, jobs=3, openings=None, out=str(tmp_path))
    rows = run_ladder(base, rungs, games=2, more=2)
    assert [(r["games"], r["wins"], r["losses"]) for r in rows] == [(2, 2, 0), (4, 2, 2), (2, 2, 0)]
    spans = [tuple(map(float, p.read_text().split())) for k in range(3) for p in tmp_path.glob(f"rung{k:02d}/ran*")]
    assert len(spans) == 3 and max(start for start, _ in spans) < min(end for _, end in spans)


def test_merged_ladders_add_up_rung_by_rung_in_ladder_order():
    from messiah.arena.ladder import merge_rows
    from messiah.arena.stats import elo_interval

    first = [row("gpsshogi 0.7.0", 0, 20, -math.inf), row("fairy-stockfish Skill 10", 10, 10, 0.0)]
    second = [row("fairy-stockfish Skill 10", 13, 5, 105.0), row("fairy-stockfish Skill -20", 20, 0, math.inf)]
    second[0].update(draws=2, games=20, forfeits=[1, 0])
    rows = merge_rows(first, second)
    assert [r["rung"] for r in rows] == ["fairy-stockfish Skill -20", "fairy-stockfish Skill 10", "gpsshogi 0.7.0"]
    ten = rows[1]
    assert (ten["games"], ten["wins"], ten["losses"], ten["draws"], ten["forfeits"]) == (40, 23, 15, 2, [1, 0])
    assert ten["score"] == 24 / 40
    assert (ten["elo"], ten["elo_low"], ten["elo_high"]) == elo_interval(23, 15, 2)
    _, low20, high20 = elo_interval(11, 9, 0)
    assert ten["elo_high"] - ten["elo_low"] < high20 - low20  # 40 games say more than 20
    assert rows[0]["wins"] == 20 and rows[2]["losses"] == 20


def test_combining_ladders_plays_nothing_and_writes_table_and_plots(tmp_path, capsys):
    import json

    import pytest

    from messiah.cli import main

    for k, rows in enumerate([[row("fairy-stockfish Skill 10", 10, 10, 0.0)],
                              [row("fairy-stockfish Skill 10", 6, 14, -147.0), row("gpsshogi 0.7.0", 0, 20, -9e9)]]):
        (tmp_path / f"run{k}").mkdir()
        (tmp_path / f"run{k}" / "ladder.json").write_text(json.dumps(rows))
    out = tmp_path / "all"
    main(["ladder", "--games", "0", "--merge", str(tmp_path / "run0"), "--merge", str(tmp_path / "run1"),
          "--out", str(out)])
    table = capsys.readouterr().out
    assert "| fairy-stockfish Skill 10 | 40 | 16-24-0 | 40.0% |" in table
    again = tmp_path / "again"  # the merged ladder.json (with its infinite Elo bounds) reads back
    main(["ladder", "--games", "0", "--merge", str(out / "ladder.json"), "--out", str(again)])
    assert "| gpsshogi 0.7.0 | 20 | 0-20-0 | 0.0% |" in capsys.readouterr().out
    assert not list(out.glob("rung*"))  # nothing was played
    pytest.importorskip("matplotlib")
    svg = (out / "ladder.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "fs Skill 10" in svg  # text kept as text, for a README
    assert (out / "ladder.png").read_bytes()[:4] == b"\x89PNG"


def test_combining_a_file_that_is_no_ladder_is_a_clear_error(tmp_path, capsys):
    import json

    import pytest

    from messiah.cli import main

    good = row("fairy-stockfish Skill 0", 12, 8, 70.0)
    cases = {"rows.json": ('{"not": "rows"}', "a list of rows"), "broken.json": ("[{", "not a ladder's"),
             "missing.json": (None, "not a ladder's"),
             "bytes.json": (b"\xff\xfe[", "not a ladder's"),
             "type.json": ([{**good, "wins": "12"}], "row 0: games, wins, losses and draws must be counts"),
             "sum.json": ([good, {**good, "games": 21}], "row 1: games 21 is not wins + losses + draws"),
             "forfeits.json": ([{**good, "forfeits": 0}], "forfeits must be two counts")}
    for name, (text, message) in cases.items():
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        elif text is not None:
            path.write_text(text if isinstance(text, str) else json.dumps(text))
        with pytest.raises(SystemExit) as exit_:
            main(["ladder", "--games", "0", "--merge", str(path), "--out", str(tmp_path / "o")])
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and message in err and name in err, (name, err)
    (tmp_path / "empty.json").write_text("[]")
    for argv, message in ((["--merge", str(tmp_path / "empty.json")], "hold no games"),
                          ([], "--merge DIR"), (["--games", "-2"], "--merge DIR")):
        with pytest.raises(SystemExit) as exit_:
            main(["ladder", "--games", "0", *argv, "--out", str(tmp_path / "o")])
        assert exit_.value.code == 2 and message in capsys.readouterr().err


def _no_games(*args, **kwargs):
    raise AssertionError("a ladder that was refused must not play")


def test_a_merge_that_would_count_openings_twice_is_refused_before_any_game(tmp_path, monkeypatch, capsys):
    import json

    import pytest

    import messiah.arena.match as match
    from messiah.arena.ladder import merge_rows
    from messiah.cli import main

    monkeypatch.setattr(match, "_play_pair", _no_games)
    monkeypatch.setattr("messiah.arena.ladder.play_matches", _no_games)
    seeded = {**row("fairy-stockfish Skill 10", 10, 10, 0.0), "seeds": [4]}
    with pytest.raises(ValueError, match="seed 4 counted twice"):
        merge_rows([seeded], [seeded])
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    (earlier / "ladder.json").write_text(json.dumps([seeded]))
    refused = [  # Skill 10 is rung 4 of the full ladder, rung 0 with --rungs: seed 4 again either way
        (["--seed", "0"], "seed 4 counted twice"), (["--rungs", "Skill 10", "--seed", "4"], "seed 4 counted twice"),
        (["--merge", str(earlier), "--seed", "9"], "named twice"),  # the same ladder twice
        (["--seed", "9", "--out", str(earlier)], "would be overwritten")]
    for argv, message in refused:
        with pytest.raises(SystemExit) as exit_:
            main(["ladder", "--games", "2", "--merge", str(earlier), "--out", str(tmp_path / "new"), *argv])
        assert exit_.value.code == 2 and message in capsys.readouterr().err, argv


def _opening_noting_pair(commands, names, options, cfg, opening, games, first_number, ponder_log):
    """Stands in for a pair of games: notes the opening file and the line it was given, and loses both."""
    from pathlib import Path

    from messiah.arena.stats import Game

    Path(cfg.out, f"opening{first_number:04d}").write_text(f"{cfg.openings}\n{opening}")
    return [Game(first_number + i, opening, i == 0, "loss", "%TORYO", 80, "") for i in range(games)], ""


def test_the_ladder_plays_every_rung_from_the_opening_set_it_is_given(tmp_path, monkeypatch):
    """`--openings FILE` reaches every rung's games (a second opening set is how a ladder is rechecked away from
    the set its constants were tuned on); the seeds still choose the lines."""
    import messiah.arena.match as match
    from messiah.arena.ladder import LadderConfig, ladder

    monkeypatch.setattr(match, "_play_pair", _opening_noting_pair)
    monkeypatch.setattr(match, "check_engines", lambda commands, options: None)
    openings = tmp_path / "mine.sfen"
    openings.write_text("".join(f"startpos moves 7g7f 3c3d {m}\n" for m in ("2g2f", "6g6f", "8h2b+", "1g1f")))
    ladder(LadderConfig(games=4, more=0, rungs="Skill 10,Skill 15", openings=str(openings),
                        out=str(tmp_path / "ladder")))
    noted = [p.read_text().split("\n") for p in sorted((tmp_path / "ladder").glob("rung*/opening*"))]
    assert len(noted) == 4 and {file for file, _ in noted} == {str(openings)}
    assert all(0 <= int(line) < 4 for _, line in noted)


def test_yaneuraous_rungs_are_its_nodes_a_move_with_its_readmes_options(tmp_path):
    """With its binary, YaneuraOu-KP256 joins as rungs of nodes a move, its evaluation found beside the binary, no
    book, one thread and no network delay (which would spend a one-second byoyomi); without it, no such rung."""
    binary = tmp_path / "YaneuraOu-kp256"
    yo = [r for r in default_rungs(str(binary)) if r.name.startswith("YaneuraOu")]
    assert [r.name for r in yo] == [f"YaneuraOu-KP256 NodesLimit {n}" for n in (1000, 3000, 5000, 10000, 30000)]
    assert all(r.command == str(binary) and r.options["EvalDir"] == str(tmp_path.resolve() / "eval") for r in yo)
    assert all(r.options["Threads"] == "1" and r.options["NetworkDelay2"] == "0" and r.options["BookFile"] == "no_book"
               for r in yo)
    assert not any(r.name.startswith("YaneuraOu") for r in default_rungs())


def test_each_ladder_has_its_own_fifty_percent_rung(tmp_path):
    """YaneuraOu's rungs are another engine's scale: where messiah scores 50% is said for each ladder apart (one
    list would call the scores not monotonic, or place the 50% between two engines)."""
    from messiah.arena.ladder import ladders, write_ladder

    rows = [row("fairy-stockfish Skill 15", 15, 5, 190.0), row("gpsshogi 0.7.0", 0, 20, -math.inf),
            row("YaneuraOu-KP256 NodesLimit 3000", 11, 5, 137.0), row("YaneuraOu-KP256 NodesLimit 10000", 3, 7, -147.0)]
    split = ladders(rows)
    assert [r["rung"] for r in split["YaneuraOu-KP256"]] == ["YaneuraOu-KP256 NodesLimit 3000",
                                                              "YaneuraOu-KP256 NodesLimit 10000"]
    paths = write_ladder(rows, tmp_path)
    assert paths["fifty_percent"] == {  # gpsshogi's Elo is -inf: halfway, by the rule
        "fairy-stockfish and gpsshogi": "between fairy-stockfish Skill 15 and gpsshogi 0.7.0 (50% of the way up)",
        "YaneuraOu-KP256": "between YaneuraOu-KP256 NodesLimit 3000 and YaneuraOu-KP256 NodesLimit 10000 "
                           "(48% of the way up)"}
    assert "Against YaneuraOu-KP256, messiah scores 50% between" in (tmp_path / "ladder.md").read_text()


def test_rungs_are_picked_by_whole_numbers():
    from messiah.arena.ladder import names_rung

    assert names_rung("NodesLimit 1000", "YaneuraOu-KP256 NodesLimit 1000")
    assert not names_rung("NodesLimit 1000", "YaneuraOu-KP256 NodesLimit 10000")
    assert names_rung("Skill 1", "fairy-stockfish Skill 15") is False and names_rung("gpsshogi", "gpsshogi 0.7.0")
    assert names_rung("Skill -10", "fairy-stockfish Skill -10")
    assert not names_rung("Skill -1", "fairy-stockfish Skill -10")
