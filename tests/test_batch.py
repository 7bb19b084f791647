"""One batch and one value target for both learners (train/batch.py): the same teacher rows give pretraining
and self-play the same value target and value loss, alone or among self-play rows, and a field that only
some parts carry is filled for the others."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import TEACHER  # noqa: E402

from messiah.records import read_hcpe  # noqa: E402
from messiah.records.selfplay import SELFPLAY  # noqa: E402
from messiah.train.batch import concat, selfplay_rows, teacher_rows, value_target  # noqa: E402
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


def test_the_result_mix_moves_the_target_toward_the_result():
    records = np.array(read_hcpe(TEACHER)[:48])
    b = teacher_rows(records).tensors()
    plain, _, _ = value_target(b, 875.0)
    mixed, _, _ = value_target(b, 875.0, result_mix=0.25)
    assert torch.allclose(mixed, 0.75 * plain + 0.25 * b["result"])
