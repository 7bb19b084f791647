"""`messiah gensfen` with a real USI engine (fairy-stockfish at depth 1): games are appended whole, a
rerun resumes toward the target, and every record is a position with a legal best move and its game's
result. The records are checked here by replaying them with cshogi, not with the module's own helpers."""

import json

import cshogi
import numpy as np
import pytest
from conftest import GAMES, program, read_hcpe

from messiah.arena.client import EngineError
from messiah.cli import main
from messiah.train.gensfen import GensfenConfig, gensfen

ENGINE = "/usr/games/fairy-stockfish"
HCPE = cshogi.HuffmanCodedPosAndEval
OPENING_PLIES = 24  # as long as the shared set's floodgate openings (records2016_10818.sfen)


@pytest.fixture
def engine():
    return program(ENGINE, "fairy-stockfish")


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
