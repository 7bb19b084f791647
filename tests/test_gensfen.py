"""`messiah gensfen` with a real USI engine (fairy-stockfish at depth 1): games are appended whole, a
rerun resumes toward the target, and every record is a position with a legal best move and its game's
result. The records are checked here by replaying them with cshogi, not with the module's own helpers.
With fake engines (tests/fake_teacher.py): the go line carries the clocks an engine may need to search, a game
the engine did not search is refused, and a silent engine is an error in bounded time."""

import json
import os
import re
import sys
import time
from pathlib import Path

import cshogi
import numpy as np
import pytest
from conftest import GAMES, GUARD, program, read_hcpe

from messiah.arena.client import EngineError, UsiClient
from messiah.cli import main
from messiah.errors import DataError
from messiah.train.gensfen import GensfenConfig, Opening, gensfen, play_teacher_game

ENGINE = "/usr/games/fairy-stockfish"
HCPE = cshogi.HuffmanCodedPosAndEval
OPENING_PLIES = 24  # as long as the shared set's floodgate openings (records2016_10818.sfen)


@pytest.fixture
def engine():
    return program(ENGINE, "fairy-stockfish")


@pytest.fixture
def fake_teacher(tmp_path):
    """``fake_teacher(mode)``: the command of tests/fake_teacher.py in that mode (one executable, as gensfen runs
    engines) and the file where it logs its pid and every go it gets."""

    def make(mode: str) -> tuple[str, Path]:
        log = tmp_path / f"{mode}.log"
        script = tmp_path / mode
        script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).parent / "fake_teacher.py"}" '
                          f'{mode} "{log}"\n')
        script.chmod(0o755)
        return str(script), log

    return make


def gos(log: Path) -> list[str]:
    return [line.strip() for line in log.read_text().splitlines() if line.startswith("go")]


def games_in(records: np.ndarray) -> list[np.ndarray]:
    """Split records into games: a record continues a game when it is the previous position after one of
    its legal moves (gensfen records every ply from its first recorded one)."""
    board = cshogi.Board()
    games, start = [], 0
    for i in range(1, len(records)):
        board.set_hcp(records["hcp"][i - 1])
        children = set()
        for move in board.legal_moves:
            board.push(move)
            children.add(position(board))
            board.pop()
        board.set_hcp(records["hcp"][i])
        if position(board) not in children:
            games.append(records[start:i])
            start = i
    games.append(records[start:])
    return games


def position(board: cshogi.Board) -> str:
    """The sfen without its move number."""
    return " ".join(board.sfen().split()[:3])


def check_records(records: np.ndarray) -> list[np.ndarray]:
    """Every record decodes to a position whose best move is legal, evals are within the mate score and
    all records of a game carry one result. Returns the games."""
    board = cshogi.Board()
    for rec in records:
        board.set_hcp(rec["hcp"])
        assert board.move_from_move16(int(rec["bestMove16"])) in set(board.legal_moves)
        assert -30000 <= rec["eval"] <= 30000
    games = games_in(records)
    for game in games:
        assert len(set(game["gameResult"].tolist())) == 1
        assert game["gameResult"][0] in (cshogi.DRAW, cshogi.BLACK_WIN, cshogi.WHITE_WIN)
        # six plies in a row at 3000 or more for one side end the game, in that side's favour
        black_view = []
        for rec in game[-6:]:
            board.set_hcp(rec["hcp"])
            black_view.append(int(rec["eval"]) * (1 if board.turn == cshogi.BLACK else -1))
        if len(black_view) == 6 and min(black_view) >= 3000:
            assert game["gameResult"][0] == cshogi.BLACK_WIN
        if len(black_view) == 6 and max(black_view) <= -3000:
            assert game["gameResult"][0] == cshogi.WHITE_WIN
    return games


def test_generates_and_resumes_toward_the_target(tmp_path, engine):
    out = tmp_path / "teacher.hcpe"
    first = gensfen(GensfenConfig(out, depth=1, positions=40, seed=3), progress=False)
    assert first["positions"] == first["new_positions"] == out.stat().st_size // 38 >= 40
    assert out.stat().st_size % 38 == 0
    before = out.read_bytes()
    # a crash in the middle of a write leaves a partial record: the next run cuts it off and goes on
    with open(out, "ab") as f:
        f.write(before[:17])
    with pytest.warns(UserWarning, match="partial record of 17 bytes"):
        second = gensfen(GensfenConfig(out, depth=1, positions=first["positions"] + 30, seed=3), progress=False)
    after = out.read_bytes()
    assert after.startswith(before) and len(after) % 38 == 0
    assert second["positions"] == len(after) // 38 >= first["positions"] + 30
    assert second["new_positions"] == second["positions"] - first["positions"]
    games = check_records(np.fromfile(out, HCPE))
    assert len(games) == first["new_games"] + second["new_games"]
    # the game index beside the file holds each game's length
    assert np.fromfile(f"{out}.games", np.uint32).tolist() == [len(game) for game in games]
    assert len({game[:4].tobytes() for game in games}) == len(games)  # the rerun did not replay the games
    assert sum(second["endings"].values()) == second["new_games"]
    # the target already reached: nothing to do
    third = gensfen(GensfenConfig(out, depth=1, positions=10), progress=False)
    assert third["new_positions"] == 0 and out.read_bytes() == after


def test_multipv_keeps_each_position_s_top_lines_beside_it_and_resumes(tmp_path, engine):
    """--multipv 3: OUT.multipv holds a row a record (8 move16, then 8 int16 evals, little-endian, as
    docs/data.md gives the layout): the engine's lines, line 1 the record's own move and eval, each move legal
    there and none twice, evals best first; a rerun cuts off lines beyond the records, and neither a file without
    lines nor a run without --multipv on a file with them goes on silently."""
    out = tmp_path / "lines.hcpe"
    gensfen(GensfenConfig(out, depth=2, positions=30, seed=5, multipv=3), progress=False)
    records = np.fromfile(out, HCPE)
    row = np.dtype([("move16", "<u2", (8,)), ("eval", "<i2", (8,))])
    lines = np.fromfile(f"{out}.multipv", row)
    assert len(lines) == len(records) >= 30
    board = cshogi.Board()
    full = 0
    for rec, line in zip(records, lines, strict=True):
        board.set_hcp(rec["hcp"])
        moves = [board.move_from_move16(int(m)) for m in line["move16"] if m]
        assert moves[0] == board.move_from_move16(int(rec["bestMove16"])) and line["eval"][0] == rec["eval"]
        assert len(set(moves)) == len(moves) <= 3 and set(moves) <= set(board.legal_moves)
        assert (line["move16"][len(moves):] == 0).all() and (line["eval"][len(moves):] == 0).all()
        evals = line["eval"][: len(moves)].tolist()
        assert evals == sorted(evals, reverse=True)
        full += len(moves) == 3
    assert full >= len(records) // 2  # most middlegame positions have three moves worth a line
    # a game whose lines were written but not its records (an interruption between the two writes)
    with open(f"{out}.multipv", "ab") as f:
        f.write(lines[:2].tobytes())
    more = gensfen(GensfenConfig(out, depth=2, positions=len(records) + 10, seed=5, multipv=3), progress=False)
    assert np.fromfile(f"{out}.multipv", row)[: len(records)].tobytes() == lines.tobytes()
    assert len(np.fromfile(f"{out}.multipv", row)) == len(np.fromfile(out, HCPE)) == more["positions"]
    with pytest.raises(DataError, match="--multipv it was made with"):
        gensfen(GensfenConfig(out, depth=2, positions=more["positions"] + 10), progress=False)
    plain = tmp_path / "plain.hcpe"
    gensfen(GensfenConfig(plain, depth=1, positions=5, seed=1), progress=False)
    with pytest.raises(DataError, match="lines for 0"):
        gensfen(GensfenConfig(plain, depth=1, positions=50, multipv=2), progress=False)


def test_games_target_and_openings_through_the_cli(tmp_path, capsys, engine):
    # three 24-ply openings: the first moves of three of the fixture's games
    rows, lengths, board, lines = read_hcpe(GAMES), np.fromfile(f"{GAMES}.games", "<u4"), cshogi.Board(), []
    for start in [0, *np.cumsum(lengths)[:2].tolist()]:
        usi = []
        for row in rows[start : start + OPENING_PLIES]:
            board.set_hcp(row["hcp"])
            usi.append(cshogi.move_to_usi(board.move_from_move16(int(row["bestMove16"]))))
        lines.append("startpos moves " + " ".join(usi))
    openings = tmp_path / "openings.sfen"
    openings.write_text("\n".join(lines) + "\n")
    out = tmp_path / "games.hcpe"
    args = ["gensfen", "--depth", "1", "--out", str(out), "--openings", str(openings), "--seed", "5", "--json"]
    main([*args, "--games", "2", "--workers", "2"])
    counts = json.loads(capsys.readouterr().out)
    assert counts["games"] == counts["new_games"] == 2
    main([*args, "--games", "3"])
    counts = json.loads(capsys.readouterr().out)
    assert counts["games"] == 3 and counts["new_games"] == 1
    games = check_records(np.fromfile(out, HCPE))
    assert len(games) == 3
    # the openings are 24 plies long and no random moves follow them by default, so each game's first
    # record (ply 16 on is recorded) is the end position of one of the openings
    ends = set()
    for line in openings.read_text().splitlines():
        board = cshogi.Board()
        board.set_position(line)
        ends.add(position(board))
    board = cshogi.Board()
    for game in games:
        board.set_hcp(game["hcp"][0])
        assert position(board) in ends


def test_bad_engines_and_files_are_reported(tmp_path):
    with pytest.raises(ValueError, match="no-such-engine"):
        gensfen(GensfenConfig(tmp_path / "a.hcpe", engine=str(tmp_path / "no-such-engine"), depth=1, positions=1))
    with pytest.raises(EngineError, match="not a USI engine"):
        gensfen(GensfenConfig(tmp_path / "a.hcpe", engine="/bin/true", depth=1, positions=1), progress=False)
    with pytest.raises(ValueError, match="exactly one of --depth and --nodes"):
        gensfen(GensfenConfig(tmp_path / "a.hcpe", positions=1))
    foreign = tmp_path / "notes.hcpe"
    foreign.write_text("these are my notes, not teacher data\n" * 3)
    with pytest.raises(ValueError, match="notes.hcpe"):  # refused before the engine (/bin/true: none) starts
        gensfen(GensfenConfig(foreign, engine="/bin/true", depth=1, positions=1))
    assert foreign.read_text().startswith("these are my notes")  # left untouched
    bad = tmp_path / "bad.sfen"
    bad.write_text("startpos moves 7g7f 3c3d\nstartpos moves 7g7f 7g7f\n")
    with pytest.raises(ValueError, match=r"bad.sfen:2"):
        gensfen(GensfenConfig(tmp_path / "a.hcpe", depth=1, positions=1, openings=bad))


def test_the_go_line_carries_clocks_so_an_engine_that_wants_them_searches(tmp_path, fake_teacher):
    """The fake answers a go without btime and wtime at once with a junk label (eval 0), as YaneuraOu is said to;
    gensfen's go lines carry the clocks, so every record holds a searched eval. The fake's honest early answers,
    mates found at once at every third ply, do not count against its searches."""
    command, log = fake_teacher("yaneuraou")
    out = tmp_path / "nodes.hcpe"
    counts = gensfen(GensfenConfig(out, engine=command, nodes=1000, games=2, seed=7), progress=False)
    assert counts["new_games"] == 2 and counts["new_positions"] == out.stat().st_size // 38 > 0
    records = np.fromfile(out, HCPE)
    check_records(records)
    assert 0 not in records["eval"].tolist()  # no junk answer was recorded
    assert (np.abs(records["eval"]) == 30000).any()  # the mates found at once were
    assert gos(log) and all(re.fullmatch(r"go btime \d+ wtime \d+ nodes 1000", go) for go in gos(log))
    depth_out = tmp_path / "depth.hcpe"
    gensfen(GensfenConfig(depth_out, engine=command, depth=6, games=1, seed=7), progress=False)
    assert 0 not in np.fromfile(depth_out, HCPE)["eval"].tolist()
    assert any(re.fullmatch(r"go btime \d+ wtime \d+ depth 6", go) for go in gos(log))


def test_a_game_the_engine_did_not_search_is_refused_with_one_line(tmp_path, fake_teacher, capsys):
    """An engine that answers every go at once (depth 1, 0 nodes) even with the clocks: gensfen writes none of its
    game and stops with a one-line error naming the engine, the go line and what it reported. The same answer in
    a position with a single legal move is honest and is written."""
    command, log = fake_teacher("junk")
    out = tmp_path / "junk.hcpe"
    with pytest.raises(SystemExit) as stopped:
        main(["gensfen", "--engine", command, "--nodes", "1000", "--games", "1", "--out", str(out), "--seed", "1"])
    assert stopped.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"messiah gensfen: worker 0: EngineError: {command} (fake-junk) did not search: ")
    assert "fewer than 50% of the 1,000 nodes asked" in error
    assert f"{gos(log)[0]!r} was answered with depth 1, nodes 0" in error
    assert not out.exists() or out.stat().st_size == 0
    # ply 16, black to move: the king's one legal move, 9i8i; the game ends (max_ply) once it is played
    single = Opening("sfen 8k/9/9/9/9/9/9/2r6/K8 b - 17", ())
    client = UsiClient(command)
    try:
        cfg = GensfenConfig(str(out), engine=command, nodes=1000, random_moves=0)
        records, _, _ = play_teacher_game(client, cfg, np.random.default_rng(0), single, max_ply=17)
    finally:
        client.close()
    assert len(records) == 1 and records["eval"][0] == 0


def test_a_silent_engine_is_an_error_in_bounded_time_and_is_killed(tmp_path, fake_teacher, capsys):
    """An engine that never answers a go: the search ends after --search-seconds with an error naming the engine
    and the go line, the engine is killed, and gensfen stops with one line."""
    command, log = fake_teacher("silent")
    start = time.monotonic()
    with pytest.raises(SystemExit) as stopped:
        main(["gensfen", "--engine", command, "--depth", "3", "--games", "1", "--out", str(tmp_path / "a.hcpe"),
              "--search-seconds", "1"])
    assert stopped.value.code == 2 and time.monotonic() - start < GUARD
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error == (f"messiah gensfen: worker 0: EngineError: {command} (fake-silent) sent no bestmove within 1 s "
                     f"of {gos(log)[0]!r}; it was killed")
    pid = int(log.read_text().split()[1])
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    # the client itself: the same error, the engine gone, and close() returns at once
    client = UsiClient(command, search_seconds=0.5)
    with pytest.raises(EngineError, match=r"sent no bestmove within 0.5 s of 'go btime \d+ wtime \d+ nodes 10'"):
        client.search("startpos", [], None, 10)
    assert client.proc.poll() is not None
    client.close()
    assert client.proc is None


def _exit_with_three(results, stop):
    raise SystemExit(3)


def test_the_pool_names_the_exit_codes_when_every_worker_has_died():
    """The shared pool of gensfen and the self-play actors: a message is returned; silence with every worker
    dead is an error naming their exit codes, not a wait for ever."""
    from messiah.arena.client import EngineError
    from messiah.train.pool import WorkerPool

    with WorkerPool(_exit_with_three, [()], EngineError, "every worker has exited", "gensfen") as pool:
        pool.procs[0].join()
        pool.results.put(("done", 1, 2))
        assert pool.next() == ("done", 1, 2)
        with pytest.raises(EngineError, match=r"every worker has exited \(exit codes \[3\]"):
            pool.next()


def test_an_engine_that_is_slow_to_get_ready_is_waited_for_but_not_for_ever(fake, monkeypatch):
    """usiok must come within the handshake's seconds (an executable that is no USI engine must not hang a match),
    readyok within READY_SECONDS, far longer: messiah's first start after an install compiles at isready for over
    a minute, which the handshake's limit cut short (`messiah ladder` from a fresh install failed at once). The
    fake answers its first isready at once and later ones a second late, so the engine's start is not timed."""
    from messiah.arena import client as client_module

    monkeypatch.setenv("FAKE_MODE", "slow-ready 1.0")
    client = UsiClient(fake)
    monkeypatch.setattr(client_module, "HANDSHAKE_SECONDS", 0.3)
    monkeypatch.setattr(client_module, "READY_SECONDS", 30.0)
    client.isready()  # a second late: past the handshake's limit, inside the ready limit
    monkeypatch.setattr(client_module, "READY_SECONDS", 0.3)
    with pytest.raises(EngineError, match="did not answer 'isready' with 'readyok' within 0.3 s"):
        client.isready()
    client.close()


def test_a_multipv_line_is_read_from_its_info_line_and_bounds_are_not():
    """What USI engines print for a MultiPV line (Stockfish's order, YaneuraOu's 'mate +'): its number, first move and
    exact score, mates at the mate score; an aspiration window's bound, a line without multipv or pv, and an info
    string are no line's report."""
    from messiah.arena.client import line_report

    assert line_report("info depth 12 seldepth 15 multipv 2 score cp -35 nodes 9000 nps 1 pv 3c3d 7g7f") == \
        (2, "3c3d", -35)
    assert line_report("info depth 9 score cp 120 multipv 1 nodes 10 pv 2g2f") == (1, "2g2f", 120)
    assert line_report("info depth 3 multipv 3 score mate + pv 2b8h+ 8b8h") == (3, "2b8h+", 30000)
    assert line_report("info depth 3 multipv 1 score mate -4 pv 5a4b") == (1, "5a4b", -30000)
    assert line_report("info depth 20 multipv 1 score cp 99999 pv 7g7f") == (1, "7g7f", 30000)
    for line in ("info depth 10 multipv 1 score cp 40 lowerbound nodes 5 pv 7g7f",
                 "info depth 10 multipv 1 score cp 40 upperbound pv 7g7f", "info depth 10 score cp 40 pv 7g7f",
                 "info depth 10 multipv 1 score cp 40 nodes 100", "info string multipv 1 score cp 3 pv 7g7f"):
        assert line_report(line) is None, line
