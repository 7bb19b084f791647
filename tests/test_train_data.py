"""Teacher-data reading: clear errors on bad files, a by-game split, and batches that point at the
teacher's move."""

from pathlib import Path

import cshogi
import cshogi.CSA
import numpy as np
import pytest
from conftest import FORMATS, GAMES, TEACHER, mirror_board, mirror_usi, shared

from messiah.moves import move_index
from messiah.records import (
    HCPE,
    append_game_index,
    count_games,
    psv_to_hcpe,
    read_game_records,
    read_games,
    read_hcpe,
    read_psv,
    read_records,
    split_by_game,
)
from messiah.train.batch import mirror, teacher_rows
from messiah.train.data import TeacherData


def test_truncated_file_names_the_file(tmp_path):
    data = TEACHER.read_bytes()[: 38 * 10 + 7]
    bad = tmp_path / "cut.hcpe"
    bad.write_bytes(data)
    with pytest.raises(ValueError, match="cut.hcpe"):
        read_hcpe(bad)
    empty = tmp_path / "empty.hcpe"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="empty.hcpe"):
        read_hcpe(empty)


def test_split_is_by_game():
    """The file read bare (no game index): the split guesses the games and starts the validation part at the
    first game start past 90% of the records, which the game index beside the file says."""
    records = read_hcpe(TEACHER)
    train, val = split_by_game(records, 0.1)
    assert len(train) + len(val) == len(records) and train[-1] + 1 == val[0]
    # (On 20,000 records of one teacher file a game is about 0.5% of them, and the test asked for 8-12% held
    # out; of the fixture's 3,775 one game is up to 5.5%, so the test checks the exact start instead.)
    starts = np.cumsum(np.fromfile(f"{TEACHER}.games", "<u4"))[:-1]
    assert val[0] == starts[starts >= int(len(records) * 0.9)][0]
    # The first validation position starts a game: it is not the previous position after any legal move.
    board = cshogi.Board()
    board.set_hcp(records["hcp"][val[0] - 1])
    successors = set()
    for move in board.legal_moves:
        board.push(move)
        successors.add(board.zobrist_hash())
        board.pop()
    first = cshogi.Board()
    first.set_hcp(records["hcp"][val[0]])
    assert first.zobrist_hash() not in successors


def test_batch_points_at_the_teacher_move():
    records = np.array(read_hcpe(TEACHER)[1000:1200])
    batch = teacher_rows(records)
    assert batch.features.shape == (len(records), 36, 11, 9)
    board = cshogi.Board()
    for row, rec in enumerate(records):
        board.set_hcp(rec["hcp"])
        teacher = board.move_from_move16(int(rec["bestMove16"]))
        assert batch.legal[row, batch.teacher[row]] == move_index(board, teacher)
        assert batch.legal_mask[row].sum() == len(list(board.legal_moves))
        winner = {cshogi.BLACK_WIN: cshogi.BLACK, cshogi.WHITE_WIN: cshogi.WHITE}.get(int(rec["gameResult"]))
        expected = 0.5 if winner is None else float(winner == board.turn)
        assert batch.result[row] == expected
        assert batch.eval_cp[row] == rec["eval"]


def test_mirrored_batch_is_the_batch_of_the_mirrored_positions():
    records = np.array(read_hcpe(TEACHER)[2000:2064])
    rows = np.arange(len(records)) % 3 == 0
    batch = teacher_rows(records)
    mirror(batch, rows)
    mirrored = records.copy()
    board = cshogi.Board()
    for i in np.flatnonzero(rows):
        board.set_hcp(records[i]["hcp"])
        usi = cshogi.move_to_usi(board.move_from_move16(int(records[i]["bestMove16"])))
        image = mirror_board(board)
        image.to_hcp(mirrored["hcp"][i : i + 1])
        mirrored["bestMove16"][i] = cshogi.move16(image.move_from_usi(mirror_usi(usi)))
    expected = teacher_rows(mirrored)
    assert np.array_equal(batch.features, expected.features)
    for i in range(len(records)):
        own, other = batch.legal[i][batch.legal_mask[i]], expected.legal[i][expected.legal_mask[i]]
        assert sorted(own) == sorted(other)  # the move generator orders the mirror's moves its own way
        assert batch.legal[i, batch.teacher[i]] == expected.legal[i, expected.teacher[i]]
    assert np.array_equal(batch.eval_cp, expected.eval_cp) and np.array_equal(batch.result, expected.result)


# --- readers of other formats -------------------------------------------------------------------------


def psv_pair(name: str) -> tuple[Path, Path]:
    """A psv file and its hcpe twin: the fixture's (packed by cshogi), or the shared data's pair whose psv
    YaneuraOu itself wrote."""
    if name == "sample":
        return FORMATS / "sample.psv", FORMATS / "sample.hcpe"
    return shared(f"formats/{name}.psv"), shared(f"formats/{name}.hcpe")


def sfen_of(hcp: np.ndarray) -> str:
    board = cshogi.Board()
    board.set_hcp(np.asarray(hcp))
    return board.sfen()


def assert_same_records(got: np.ndarray, expected: np.ndarray) -> None:
    """Same positions (decoded), evals, moves and results."""
    assert len(got) == len(expected)
    assert [sfen_of(h) for h in got["hcp"]] == [sfen_of(h) for h in expected["hcp"]]
    for name in ("eval", "bestMove16", "gameResult"):
        assert np.array_equal(got[name], expected[name]), name


@pytest.mark.parametrize("name", ["sample", "psv_to_hcpe3_yaneuraou_sample"])
def test_psv_decodes_like_its_hcpe_twin(name):
    psv_path, hcpe_path = psv_pair(name)
    psv = read_records(psv_path)
    hcpe = read_hcpe(hcpe_path)
    assert_same_records(psv[:], np.asarray(hcpe))
    assert_same_records(psv_to_hcpe(read_psv(psv_path)), np.asarray(hcpe))
    rows = np.array([5, 0, len(hcpe) - 1, 5])  # lazy gathering: any order, repeats, single rows
    assert_same_records(psv[rows], np.asarray(hcpe)[rows])
    assert sfen_of(psv[3]["hcp"]) == sfen_of(hcpe[3]["hcp"])
    assert psv.has_evals
    # both files hold the same games, so the by-game split must cut them at the same record
    for fraction in (0.1, 0.3, 0.5):
        assert np.array_equal(split_by_game(psv, fraction)[1], split_by_game(hcpe, fraction)[1])


def test_bad_psv_files_name_the_file(tmp_path):
    data = (FORMATS / "sample.psv").read_bytes()
    cases = {"cut.psv": data[: 40 * 3 + 11], "empty.bin": b"", "text.psv": b"not a psv file at all, 40 bytes long!!!\n"}
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ValueError, match=name):
            read_records(tmp_path / name)
    # a game_result outside -1..1: an hcpe file whose size happens to fit 40-byte records
    hcpe = TEACHER.read_bytes()[: 38 * 40]
    (tmp_path / "hcpe.psv").write_bytes(hcpe)
    with pytest.raises(ValueError, match="hcpe.psv"):
        read_records(tmp_path / "hcpe.psv")
    (tmp_path / "data.txt").write_bytes(data)
    with pytest.raises(ValueError, match="data.txt"):
        read_records(tmp_path / "data.txt")
    # a psv file named .hcpe: 19 records are 20 hcpe records, and the first even decodes as a position
    (tmp_path / "psv.hcpe").write_bytes(data[: 40 * 19])
    with pytest.raises(ValueError, match="psv.hcpe"):
        read_records(tmp_path / "psv.hcpe")
    # a damaged record is named when it is gathered (a file's head is checked on opening, its rest later)
    damaged = bytearray(data)
    damaged[7 * 40 + 2 : 7 * 40 + 32] = b"\xff" * 30  # kings kept: cshogi raises rather than crashes
    (tmp_path / "damaged.psv").write_bytes(damaged)
    records = read_records(tmp_path / "damaged.psv")
    assert len(records[:7]) == 7
    with pytest.raises(ValueError, match=r"damaged.psv: record 7 is not a packed sfen"):
        records[np.array([3, 7])]
    # a king past the last square would crash cshogi's decoder: it is refused first
    damaged[40 * 5 : 40 * 5 + 2] = b"\xff\xff"
    (tmp_path / "crash.psv").write_bytes(damaged)
    with pytest.raises(ValueError, match=r"crash.psv: record 5 is not a valid psv record \(a king off the board\)"):
        read_records(tmp_path / "crash.psv")
    hcpe = bytearray((FORMATS / "sample.hcpe").read_bytes())
    hcpe[38 * 9 : 38 * 9 + 2] = b"\xff\xff"
    (tmp_path / "crash.hcpe").write_bytes(hcpe)
    with pytest.raises(ValueError, match=r"crash.hcpe: record 9 is not a valid hcpe record \(a king off the board\)"):
        read_records(tmp_path / "crash.hcpe")


def recorded_games(count: int) -> list[np.ndarray]:
    """The first ``count`` of the fixture's game records (GAMES: whole games from the initial position, the
    moves played and the results, no evals, as floodgate's), cut by the game index beside the file."""
    records = np.fromfile(GAMES, HCPE)
    ends = np.cumsum(np.fromfile(f"{GAMES}.games", "<u4"))
    return [records[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)][:count]


def played_moves(game: np.ndarray) -> tuple[list[int], cshogi.Board]:
    """The game's moves as cshogi moves, and the board after the last one."""
    board = cshogi.Board()
    moves = []
    for rec in game:
        board.set_hcp(rec["hcp"])
        moves.append(board.move_from_move16(int(rec["bestMove16"])))
    board.push(moves[-1])
    return moves, board


def write_csa(path: Path, games: list[np.ndarray], endgame: bool = True) -> None:
    """The games through cshogi's CSA exporter; a resignation after the last move (the mover won)."""
    exporter = cshogi.CSA.Exporter(str(path))
    for game in games:
        exporter.info(cshogi.STARTING_SFEN, names=["black", "white"])
        moves, _ = played_moves(game)
        for move in moves:
            exporter.move(move)
        if endgame:
            exporter.endgame("%TORYO")
    exporter.close()


def test_csa_games_decode_like_the_hcpe_they_were_written_from(tmp_path):
    games = recorded_games(4)
    for game in games:  # %TORYO after the last move says the last mover won: true of these games
        board = cshogi.Board()
        board.set_hcp(game["hcp"][-1])
        assert game["gameResult"][0] == (cshogi.BLACK_WIN if board.turn == cshogi.BLACK else cshogi.WHITE_WIN)
    path = tmp_path / "four.csa"
    write_csa(path, games)
    got = read_games(path)
    assert_same_records(got.records, np.concatenate(games))
    assert got.game_starts.tolist() == np.cumsum([0] + [len(g) for g in games[:-1]]).tolist()
    assert not got.eval_known.any() and not read_records(path).has_evals
    assert np.array_equal(read_game_records(path), got.records)
    # the validation split of a game-record file starts at one of its games
    train, val = split_by_game(read_records(path), 0.4, got.game_starts)
    assert val[0] in got.game_starts and len(train) + len(val) == len(got.records)


def test_unfinished_game_has_no_known_result_unless_it_ends_in_mate(tmp_path):
    games = recorded_games(6)
    mated = next(g for g in games if played_moves(g)[1].is_game_over())
    unfinished = next(g for g in games if not played_moves(g)[1].is_game_over())
    write_csa(tmp_path / "open.csa", [mated, unfinished], endgame=False)
    games_read = read_games(tmp_path / "open.csa")
    results = games_read.records["gameResult"]
    assert set(results[: len(mated)]) == {mated["gameResult"][0]}
    assert set(results[len(mated) :]) == {cshogi.DRAW}
    # the unfinished game's draw is no result: training must not aim its value at 0.5
    known = games_read.result_known
    assert known[: len(mated)].all() and not known[len(mated) :].any()
    write_csa(tmp_path / "resigned.csa", [unfinished], endgame=True)
    assert read_games(tmp_path / "resigned.csa").result_known.all()


@pytest.mark.parametrize("suffix", [".kif", ".kifu"])
def test_kif_game_decodes_like_the_hcpe_it_was_written_from(tmp_path, suffix):
    from datetime import datetime

    import cshogi.KIF

    game = recorded_games(2)[1]
    path = tmp_path / f"game{suffix}"
    exporter = cshogi.KIF.Exporter(str(path))  # cp932 for .kif, utf-8 for .kifu
    exporter.header(["先手", "後手"], starttime=datetime(2024, 1, 1))
    moves, _ = played_moves(game)
    for move in moves:
        exporter.move(move)
    exporter.end("resign")
    exporter.close()
    assert_same_records(read_records(path)[:], game)


def test_csa_scores_become_evals_for_the_side_to_move(tmp_path):
    """Scores written as cshogi.cli writes them (its own function, from an engine's info line: black's
    view) come back as the teacher's evals (side to move's view)."""
    from cshogi.cli import usi_info_to_csa_comment

    records = np.fromfile(TEACHER, HCPE)
    board = cshogi.Board()
    run = [0]  # a stretch of records in which each position follows from the last by the teacher's move
    for i in range(1, len(records)):
        board.set_hcp(records["hcp"][i - 1])
        board.push(board.move_from_move16(int(records["bestMove16"][i - 1])))
        if sfen_of(records["hcp"][i]).split()[:3] == board.sfen().split()[:3] and len(run) < 40:
            run.append(i)
        elif len(run) >= 40:
            break
        else:
            run = [i]
    game = records[run]
    assert len(game) == 40 and np.abs(game["eval"]).max() > 0
    start = cshogi.Board()
    start.set_hcp(game["hcp"][0])
    exporter = cshogi.CSA.Exporter(str(tmp_path / "scored.csa"))
    exporter.info(start.copy(), names=["a", "b"])
    for rec in game:
        move = start.move_from_move16(int(rec["bestMove16"]))
        info = f"info depth 8 score cp {int(rec['eval'])} pv {cshogi.move_to_usi(move)}"
        exporter.move(move, comment=usi_info_to_csa_comment(start, info))  # "** score pv", black's view
        start.push(move)
    exporter.close()
    got = read_games(tmp_path / "scored.csa")
    assert got.eval_known.all()
    assert np.array_equal(got.records["eval"], game["eval"])
    assert [sfen_of(h) for h in got.records["hcp"]] == [sfen_of(h) for h in game["hcp"]]


def test_bad_game_records_name_the_file(tmp_path):
    write_csa(tmp_path / "good.csa", recorded_games(1))
    lines = (tmp_path / "good.csa").read_text().splitlines()
    moves = [i for i, line in enumerate(lines) if line[:1] in "+-" and len(line) == 7]
    lines[moves[10]] = lines[moves[10]][0] + "5957OU"  # a king two squares forward: an illegal move anywhere
    (tmp_path / "illegal.csa").write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"illegal.csa.*move 11"):
        read_records(tmp_path / "illegal.csa")
    # inputs on which cshogi's CSA parser itself crashes the process: refused before they reach it
    crashing = {"score_first.csa": "'** 30\nPI\n+\n+7776FU\n", "turn_only.csa": "N-b\n-\n",
                "bad_move.csa": "PI\n+\n+None\n", "no_board.csa": "P+00FU\n+\n+7776FU\n",
                "second_game.csa": "PI\n+\n+7776FU\n/\n'** 5\nPI\n+\n"}
    for name, text in crashing.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(ValueError, match=f"{name}: not a CSA record"):
            read_records(tmp_path / name)
    for name, content in {"empty.csa": b"", "binary.kif": bytes(range(256)) * 4, "words.csa": b"hello\n",
                          "truncated.kifu": "手合割：平手\n".encode()}.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ValueError, match=name):
            read_records(tmp_path / name)


def test_count_games_finds_the_recorded_games():
    records = np.fromfile(GAMES, HCPE)
    starts = sum(sfen_of(h) == cshogi.STARTING_SFEN for h in records["hcp"])
    assert count_games(records) == starts == len(np.fromfile(f"{GAMES}.games", "<u4"))


def test_a_game_index_gives_exact_boundaries_where_guessing_fails(tmp_path):
    """Every third position of six recorded games (3 plies apart, as in psv files with unscored plies):
    the guess cannot follow a game and splits by position, and says so; the game index beside the file
    (what gensfen writes) gives the exact games."""
    import warnings

    gapped = [game[::3] for game in recorded_games(6)]
    path = tmp_path / "gapped.hcpe"
    np.concatenate(gapped).tofile(path)
    starts = np.cumsum([0] + [len(g) for g in gapped])[:-1].tolist()
    with pytest.warns(UserWarning, match="gapped.hcpe: no game index .* games guessed"):
        guessed = TeacherData([path], val_fraction=0.3)
    val = guessed.val_index[:, 1]
    assert guessed.val_games == [len(val)]  # every position taken for a game of its own
    assert val[0] not in starts  # so the split cuts a game in two
    append_game_index(path, [len(g) for g in gapped[:2]])
    append_game_index(path, [len(g) for g in gapped[2:]])
    assert read_records(path).game_starts.tolist() == starts
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exact = TeacherData([path], val_fraction=0.3)
    assert exact.val_index[0, 1] in starts and exact.val_games == [None]
    append_game_index(path, [5])  # an index that no longer fits the file is ignored, with a warning
    with pytest.warns(UserWarning, match="gapped.hcpe.games: covers"):
        assert read_records(path).game_starts is None


def test_teacher_data_mixes_formats(tmp_path):
    games = recorded_games(3)
    write_csa(tmp_path / "three.csa", games)
    paths = [TEACHER, FORMATS / "sample.psv", tmp_path / "three.csa"]
    data = TeacherData(paths, val_fraction=0.5)
    assert data.has_evals == [True, True, False]
    sizes = [len(read_hcpe(TEACHER)), len(read_hcpe(FORMATS / "sample.hcpe")), sum(len(g) for g in games)]
    for f, size in enumerate(sizes):
        rows = np.concatenate([data.train_index, data.val_index])
        assert sorted(rows[rows[:, 0] == f, 1].tolist()) == list(range(size))
    expected = [np.asarray(read_hcpe(TEACHER)), read_hcpe(FORMATS / "sample.hcpe"), np.concatenate(games)]
    pick = np.concatenate([data.train_index[:: len(data.train_index) // 50], data.val_index[-20:]])
    got = data.records(pick)
    for (f, i), rec in zip(pick, got, strict=True):
        assert rec.tobytes() == expected[f][i].tobytes()
    csa_val = data.val_index[data.val_index[:, 0] == 2, 1]  # the first game start past the middle
    assert csa_val[0] == (len(games[0]) if len(games[0]) >= sizes[2] // 2 else len(games[0]) + len(games[1]))


def test_records_pickle_as_file_names():
    import pickle

    records = read_records(TEACHER)
    blob = pickle.dumps(records)
    assert records.game_starts is not None and len(records.game_starts) == 40  # the fixture has a game index
    # both travel by name: the file's 143 kB are not in the pickle, nor are the game starts' bytes (a few
    # hundred, too few for the size alone to show)
    assert len(blob) < 10_000 and records.game_starts.tobytes() not in blob
    again = pickle.loads(blob)
    assert again[123].tobytes() == records[123].tobytes() and len(again) == len(records)
    assert np.array_equal(again.game_starts, records.game_starts)


def test_teacher_records_written_as_psv_read_back_the_same(tmp_path):
    """hcpe -> psv with cshogi's own encoders (to_psfen, move16_to_psv, result for the side to move), then
    back through the reader: thousands of real positions, drops and promotions among their moves."""
    records = np.fromfile(TEACHER, HCPE)
    psv = np.zeros(len(records), cshogi.PackedSfenValue)
    board = cshogi.Board()
    for i, rec in enumerate(records):
        board.set_hcp(rec["hcp"])
        board.to_psfen(psv["sfen"][i])
        psv["score"][i] = rec["eval"]
        psv["move"][i] = cshogi.move16_to_psv(int(rec["bestMove16"]) & 0xFFFF)
        won = {cshogi.BLACK_WIN: cshogi.BLACK, cshogi.WHITE_WIN: cshogi.WHITE}.get(int(rec["gameResult"]))
        psv["game_result"][i] = 0 if won is None else (1 if won == board.turn else -1)
    psv.tofile(tmp_path / "teacher.bin")
    back = read_records(tmp_path / "teacher.bin")
    assert back[:].tobytes() == records.tobytes()
    assert split_by_game(back, 0.2)[1][0] == split_by_game(records, 0.2)[1][0]


def test_a_batch_and_an_evaluation_decode_each_record_once(monkeypatch, tmp_path):
    """Building a batch or evaluating a file decodes each hcp record once (it was twice: once for the
    planes, once for the legal moves)."""
    calls = {"n": 0}

    class CountingBoard(cshogi.Board):
        def set_hcp(self, hcp):
            calls["n"] += 1
            return super().set_hcp(hcp)

    records = np.array(read_hcpe(TEACHER)[3000:3100])
    monkeypatch.setattr(cshogi, "Board", CountingBoard)
    teacher_rows(records)
    assert calls["n"] == len(records)
    pytest.importorskip("onnxruntime")
    from messiah.tools.evaluate import evaluate_file

    path = tmp_path / "some.hcpe"
    records.tofile(path)
    calls["n"] = 0
    evaluate_file(None, str(path), threads=1)
    assert calls["n"] <= len(records) + 2  # opening the file decodes its first record to check it
