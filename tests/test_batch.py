"""One batch and one value target for both learners (train/batch.py): the same teacher rows give pretraining
and self-play the same value target and value loss, alone or among self-play rows, and a field that only
some parts carry is filled for the others."""

import cshogi
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import TEACHER  # noqa: E402

from messiah.errors import DataError  # noqa: E402
from messiah.moves import move_index  # noqa: E402
from messiah.records import CANDIDATES, read_hcpe  # noqa: E402
from messiah.records.selfplayfile import FAST, SELFPLAY  # noqa: E402
from messiah.train.batch import NO_RANK, concat, selfplay_rows, teacher_rows, value_target  # noqa: E402
from messiah.train.data import TeacherData  # noqa: E402
from messiah.train.pretrain import TrainConfig, losses  # noqa: E402
from messiah.train.rl.config import RLConfig  # noqa: E402
from messiah.train.rl.learner import rl_losses  # noqa: E402


class FixedLogits(torch.nn.Module):
    """Returns the given logits as advantages and V(s) = 0, whatever the batch."""

    def __init__(self, z: torch.Tensor):
        super().__init__()
        self.z = z

    def forward(self, features, legal):
        return self.z, torch.zeros(len(self.z))


def selfplay_records(records: np.ndarray) -> np.ndarray:
    """Self-play rows at the teacher rows' positions: best move slot 0, played slot 1, values 0.25 a move."""
    out = np.zeros(len(records), SELFPLAY)
    out["hcp"] = records["hcp"]
    out["best"], out["played"], out["moves"] = 0, 1, 2
    out["values"][:, :2] = 0.25
    return out


def test_the_same_teacher_rows_give_both_learners_the_same_target_and_value_loss():
    records = np.array(read_hcpe(TEACHER)[:48])
    rows = teacher_rows(records)
    z = torch.linspace(-2, 2, rows.legal.size).reshape(rows.legal.shape)
    pre = losses(FixedLogits(z), rows.tensors(), TrainConfig(scale=875.0))
    rl = rl_losses(FixedLogits(z), rows.tensors(), RLConfig(scale=875.0))
    assert torch.equal(pre["target"], rl["target"]) and torch.equal(pre["has_target"], rl["has_target"])
    assert pre["value_loss"].item() == rl["value_loss"].item() > 0
    by_hand = 1 / (1 + np.exp(-rows.eval_cp.astype(np.float64) / 875.0))  # every teacher row has an eval
    assert np.allclose(pre["target"].numpy(), by_hand, atol=1e-6)

    # among self-play rows, the teacher rows keep their target; the self-play rows take their lambda-return
    played = selfplay_rows(selfplay_records(records[:8]), np.full(8, 0.75, np.float32))
    mixed = concat([played, rows])
    target, _, has_target = value_target(mixed.tensors(), 875.0)
    assert torch.equal(target[8:], pre["target"]) and has_target.all()
    assert torch.equal(target[:8], torch.full((8,), 0.75))
    assert np.isnan(mixed.dense[8:]).all() and (mixed.dense[:8, :2] == 0.25).all()
    assert np.array_equal(mixed.played, np.concatenate([np.ones(8, np.int64), rows.teacher]))


def test_a_fast_search_row_trains_its_value_only():
    """Playout cap randomisation: a row flagged FAST keeps its lambda-return but has no ranking target and no
    dense values, so the rank term averages over the deep searches' rows alone and the value term over all."""
    records = np.array(read_hcpe(TEACHER)[:8])
    sp = selfplay_records(records)
    sp["flags"][:3] = FAST
    batch = selfplay_rows(sp, np.linspace(0.1, 0.8, 8, dtype=np.float32))
    assert (batch.teacher[:3] == NO_RANK).all() and (batch.teacher[3:] == 0).all()
    assert np.isnan(batch.dense[:3]).all() and (batch.dense[3:, :2] == 0.25).all()
    assert (batch.played == 1).all()
    torch.manual_seed(0)
    z = torch.randn(8, batch.legal.shape[1])
    cfg = RLConfig(scale=875.0)
    out = rl_losses(FixedLogits(z), batch.tensors(), cfg)
    legal = torch.from_numpy(batch.legal_mask)
    zm = z.masked_fill(~legal, -1e4)
    rank = -torch.log_softmax(cfg.rank_scale * zm[3:], 1)[:, 0].mean()  # the best move is slot 0
    assert torch.isclose(out["rank_loss"], rank)
    value = ((torch.sigmoid(zm[:, 1]) - torch.from_numpy(batch.target)) ** 2).mean()  # played: slot 1
    assert torch.isclose(out["value_loss"], value)
    values = torch.from_numpy(np.asarray(sp["values"][3:, : z.shape[1]], np.float32))  # 0.25, 0.25, then 0
    deep = legal[3:]
    dense = ((torch.sigmoid(zm[3:]) - values) ** 2)[deep].mean()
    assert torch.isclose(out["dense_loss"], dense)
    sp["flags"][:] = FAST  # a batch of fast rows alone: no ranking term, not NaN
    out = rl_losses(FixedLogits(z), selfplay_rows(sp, batch.target).tensors(), cfg)
    assert out["rank_loss"].item() == 0 and out["dense_loss"].item() == 0 and torch.isfinite(out["loss"])


def test_the_result_mix_moves_the_target_toward_the_result():
    records = np.array(read_hcpe(TEACHER)[:48])
    b = teacher_rows(records).tensors()
    plain, _, _ = value_target(b, 875.0)
    mixed, _, _ = value_target(b, 875.0, result_mix=0.25)
    assert torch.allclose(mixed, 0.75 * plain + 0.25 * b["result"])


def test_the_teacher_s_top_lines_teach_their_moves_through_the_data_file_beside_the_records(tmp_path):
    """A data file with NAME.multipv beside it (gensfen --multipv): each line's eval lands on the slot of its move
    among the legal moves, the rest stay NaN, and pretraining's lines term is the squared error of those moves'
    win rates against the evals' (by hand here); without the file, or with the weight 0, it adds nothing."""
    records = np.array(read_hcpe(TEACHER)[:32])
    lines = np.zeros(len(records), CANDIDATES)
    board = cshogi.Board()
    second = []
    for i, rec in enumerate(records):
        board.set_hcp(rec["hcp"])
        teacher = board.move_from_move16(int(rec["bestMove16"]))
        other = next(m for m in board.legal_moves if m != teacher)
        second.append(move_index(board, other))
        lines["move16"][i, :2] = [cshogi.move16(teacher), cshogi.move16(other)]
        lines["eval"][i, :2] = [rec["eval"], -150]
    path = tmp_path / "lines.hcpe"
    records.tofile(path)
    lines.tofile(f"{path}.multipv")
    data = TeacherData([path], val_fraction=0.0)
    batch = data.gather(np.stack([np.zeros(len(records), np.int64), np.arange(len(records))], 1)).batch()
    assert len(batch) == len(records)
    rows = np.arange(len(records))
    slots = [int(np.flatnonzero(batch.legal[i] == second[i])[0]) for i in rows]
    assert np.array_equal(batch.lines_cp[rows, batch.teacher], records["eval"].astype(np.float32))
    assert (batch.lines_cp[rows, slots] == -150).all() and np.isfinite(batch.lines_cp).sum() == 2 * len(records)

    z = torch.linspace(-1.5, 1.5, batch.legal.size).reshape(batch.legal.shape)
    out = losses(FixedLogits(z), batch.tensors(), TrainConfig(scale=600.0, lines_weight=0.5))
    win = 1 / (1 + np.exp(-z.numpy().astype(np.float64)))
    by_hand = np.mean([(win[i, batch.teacher[i]] - 1 / (1 + np.exp(-records["eval"][i] / 600.0))) ** 2
                       for i in rows] + [(win[i, slots[i]] - 1 / (1 + np.exp(150 / 600.0))) ** 2 for i in rows])
    assert np.isclose(out["lines_loss"].item(), by_hand, rtol=1e-5) and by_hand > 0
    plain = losses(FixedLogits(z), teacher_rows(records).tensors(), TrainConfig(scale=600.0))
    unweighted = losses(FixedLogits(z), batch.tensors(), TrainConfig(scale=600.0, lines_weight=0.0))
    assert plain["lines_loss"].item() == 0.0 and torch.isclose(plain["loss"], unweighted["loss"])
    assert torch.isclose(out["loss"], plain["loss"] + 0.5 * out["lines_loss"])


def test_a_file_of_lines_that_does_not_match_its_records_is_named(tmp_path):
    records = np.array(read_hcpe(TEACHER)[:10])
    path = tmp_path / "cut.hcpe"
    records.tofile(path)
    np.zeros(9, CANDIDATES).tofile(f"{path}.multipv")
    with pytest.raises(DataError, match=r"cut\.hcpe\.multipv: 288 bytes, where 10 records"):
        TeacherData([path], val_fraction=0.0).gather(np.array([[0, 0]])).batch()
