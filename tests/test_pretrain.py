"""Pretraining: it learns, and an interrupted run resumes to exactly the weights of an uninterrupted one."""

import csv
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import train.pretrain as pretrain  # noqa: E402
from messiah.evaluator import Evaluator  # noqa: E402
from models.net import NetConfig  # noqa: E402

TEACHER = Path(__file__).resolve().parents[2] / "shared" / "data" / "teacher" / "teacher_s4.hcpe"


@pytest.fixture(scope="module")
def small_data(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "small.hcpe"
    path.write_bytes(TEACHER.read_bytes()[: 38 * 3000])
    return str(path)


def config(data: str, out: Path, steps: int) -> pretrain.TrainConfig:
    return pretrain.TrainConfig(data=[data], out=str(out), net=NetConfig(channels=8, blocks=1, head_channels=4,
                                embed_dim=16), steps=steps, batch_size=32, warmup=2, val_positions=128,
                                eval_every=4, checkpoint_every=3, threads=1)


class Interrupted(Exception):
    pass


def test_resume_after_interruption_is_exact(small_data, tmp_path, monkeypatch):
    straight = config(small_data, tmp_path / "straight", 8)
    pretrain.train(straight)
    expected = torch.load(tmp_path / "straight" / "checkpoint.pt", weights_only=False)["net"]

    calls = {"n": 0}
    real_make_batch = pretrain.make_batch

    def crashing_make_batch(records):
        calls["n"] += 1
        if calls["n"] == 5 + 1:  # 5th training batch (after the validation batch): mid-run, after checkpoint 3
            raise Interrupted
        return real_make_batch(records)

    broken = config(small_data, tmp_path / "broken", 8)
    monkeypatch.setattr(pretrain, "make_batch", crashing_make_batch)
    with pytest.raises(Interrupted):
        pretrain.train(broken)
    state = torch.load(tmp_path / "broken" / "checkpoint.pt", weights_only=False)
    assert state["step"] == 3
    monkeypatch.setattr(pretrain, "make_batch", real_make_batch)
    pretrain.train(broken, resume=True)
    resumed = torch.load(tmp_path / "broken" / "checkpoint.pt", weights_only=False)["net"]
    # The first training run in a process differs from later ones in the last float bits (~1e-6: the CPU
    # kernels it picks); a resume that replayed or skipped a batch or lost the optimizer state moves the
    # weights by orders of magnitude more.
    for key, value in expected.items():
        assert torch.allclose(value, resumed[key], rtol=0, atol=1e-5), (key, (value - resumed[key]).abs().max())
    rows = list(csv.DictReader(open(tmp_path / "broken" / "log.csv")))
    assert [int(r["step"]) for r in rows] == [4, 8]


def test_training_lowers_the_loss_and_exports_a_playable_model(small_data, tmp_path):
    cfg = config(small_data, tmp_path / "run", 60)
    cfg.lr, cfg.warmup, cfg.eval_every = 5e-3, 5, 10
    model = pretrain.train(cfg)
    rows = list(csv.DictReader(open(tmp_path / "run" / "log.csv")))
    first, last = float(rows[0]["loss"]), float(rows[-1]["loss"])
    assert last < first
    assert 0 <= float(rows[-1]["agreement"]) <= 1
    scores = Evaluator(model, device="cpu").score(__import__("cshogi").Board())
    assert len(scores.q) == 30 and np.isfinite(scores.q).all()
