"""`messiah ladder`'s bookkeeping: which rungs get more games, where the 50% rung lies, the table. The
games themselves are a command to run, never a timed test."""

import math

from messiah.ladder import default_rungs, fifty_percent, ladder_table, needs_more


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
    table = ladder_table([row("fairy-stockfish Skill 0", 12, 8, 70.4), row("gpsshogi 0.7.0", 0, 20, -math.inf)])
    lines = table.splitlines()
    assert lines[2] == "| fairy-stockfish Skill 0 | 20 | 12-8-0 | 60.0% | +70 (-30 .. +170) | 0 |"
    assert "| -inf (-inf .. -inf) |" in lines[3]


def _timed_pair(commands, names, options, cfg, opening, games, first_number):
    """Stands in for a pair of real games: sleeps, notes when it ran, and wins both games against 'Skill 0',
    one of two against 'Skill 5'."""
    import time
    from pathlib import Path

    from messiah.match import Game

    start = time.monotonic()
    time.sleep(0.5)
    Path(cfg.out, f"ran{first_number:04d}").write_text(f"{start} {time.monotonic()}")
    outcomes = ["win", "win"] if options[1]["Skill Level"] == "0" else ["win", "loss"]
    return [Game(first_number + i, opening, i == 0, outcomes[i], "%TORYO", 80, "") for i in range(games)], ""


def test_rungs_share_one_pool_and_only_the_even_one_plays_more(tmp_path, monkeypatch):
    """With as many workers as rungs, every rung's first pair runs at once (rung by rung, a 16-core machine sat
    mostly idle at each rung's tail); the even rung then gets its extra games."""
    import sys

    import messiah.match as match
    from messiah.ladder import Rung, run_ladder

    monkeypatch.setattr(match, "_play_pair", _timed_pair)  # the forked workers see it
    monkeypatch.setattr(match, "check_engines", lambda commands, options: None)
    rungs = [Rung(f"Skill {s}", sys.executable, {"Skill Level": str(s)}) for s in (0, 5, 0)]
    base = match.MatchConfig(opponent="", engine=sys.executable, jobs=3, openings=None, out=str(tmp_path))
    rows = run_ladder(base, rungs, games=2, more=2)
    assert [(r["games"], r["wins"], r["losses"]) for r in rows] == [(2, 2, 0), (4, 2, 2), (2, 2, 0)]
    spans = [tuple(map(float, p.read_text().split())) for k in range(3) for p in tmp_path.glob(f"rung{k:02d}/ran*")]
    assert len(spans) == 3 and max(start for start, _ in spans) < min(end for _, end in spans)
