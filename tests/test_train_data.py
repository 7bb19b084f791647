"""Teacher-data reading: clear errors on bad files, a by-game split, and batches that point at the
teacher's move."""

from pathlib import Path

import cshogi
import numpy as np
import pytest

from messiah.moves import move_index
from train.data import make_batch, read_hcpe, split_by_game

TEACHER = Path(__file__).resolve().parents[2] / "shared" / "data" / "teacher" / "teacher_s2.hcpe"


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
    records = read_hcpe(TEACHER)[:20_000]
    train, val = split_by_game(records, 0.1)
    assert len(train) + len(val) == len(records) and train[-1] + 1 == val[0]
    assert 0.08 < len(val) / len(records) < 0.12
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
    batch = make_batch(records)
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
