"""Supervised pretraining of the all-moves network on teacher positions (METHOD.md section 3).

Loss per position, with z(s, a) = <h(s), E[a]> + b[a] and Q = sigmoid(z):

    value  = (Q(s, teacher move) - target)^2,  target = (1-lam) * sigmoid(eval / scale) + lam * result
    rank   = cross-entropy of softmax(rank_scale * z(s, legal moves)) against the teacher move
    loss   = value + rank_weight * rank

Only the teacher's move has a value target; the ranking term keeps the other moves' Q below it.
``rank_scale`` is the ranking term's inverse temperature: with a large one, a small gap in Q already
ranks the teacher move first, so the ranking does not have to pull Q away from a calibrated win rate.

The loop is deliberately plain: AdamW, linear warm-up then cosine decay, gradient clipping, an atomic
checkpoint every ``checkpoint_every`` steps that ``--resume`` continues from exactly, a CSV log.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from models.export import export_onnx
from models.net import AllMovesNet, NetConfig
from train.data import Batch, TeacherData, make_batch


@dataclass
class TrainConfig:
    data: list[str] = field(default_factory=list)
    out: str = "runs/pretrain"
    net: NetConfig = field(default_factory=NetConfig)
    steps: int = 20_000
    batch_size: int = 256
    lr: float = 2e-3
    weight_decay: float = 1e-4
    warmup: int = 500
    clip: float = 1.0
    scale: float = 600.0  # cp per logit unit of the teacher's eval
    result_mix: float = 0.0  # lam: weight of the game result in the value target
    rank_weight: float = 0.1
    rank_scale: float = 10.0
    val_fraction: float = 0.05
    val_positions: int = 4096
    eval_every: int = 1000
    checkpoint_every: int = 500
    seed: int = 0
    threads: int = 0


def to_torch(batch: Batch, device: torch.device) -> dict[str, torch.Tensor]:
    return {k: torch.from_numpy(v).to(device, non_blocking=True) for k, v in dataclasses.asdict(batch).items()}


def losses(net: AllMovesNet, b: dict[str, torch.Tensor], cfg: TrainConfig) -> dict[str, torch.Tensor]:
    h = net(b["features"])
    z = net.move_logits(h, b["legal"]).float().masked_fill(~b["legal_mask"], -1e4)
    z_teacher = z.gather(1, b["teacher"][:, None]).squeeze(1)
    target = (1 - cfg.result_mix) * torch.sigmoid(b["eval_cp"] / cfg.scale) + cfg.result_mix * b["result"]
    value = F.mse_loss(torch.sigmoid(z_teacher), target)
    rank = F.cross_entropy(cfg.rank_scale * z, b["teacher"])
    return {"loss": value + cfg.rank_weight * rank, "value_loss": value, "rank_loss": rank, "z": z,
            "target": target}


@torch.no_grad()
def validate(net: AllMovesNet, batches: list[dict[str, torch.Tensor]], cfg: TrainConfig) -> dict[str, float]:
    """agreement, top3, value_mse (max Q against the target) and sign accuracy against decisive results."""
    net.eval()
    sums = {"agreement": 0.0, "top3": 0.0, "value_mse": 0.0, "sign_hits": 0.0, "decisive": 0.0, "n": 0.0}
    for b in batches:
        out = losses(net, b, cfg)
        z, teacher = out["z"], b["teacher"]
        top3 = z.topk(min(3, z.shape[1]), dim=1).indices
        value = torch.sigmoid(z.max(1).values)
        decisive = b["result"] != 0.5
        sums["agreement"] += (top3[:, 0] == teacher).sum().item()
        sums["top3"] += (top3 == teacher[:, None]).any(1).sum().item()
        sums["value_mse"] += ((value - out["target"]) ** 2).sum().item()
        sums["sign_hits"] += ((value > 0.5) == (b["result"] > 0.5))[decisive].sum().item()
        sums["decisive"] += decisive.sum().item()
        sums["n"] += len(teacher)
    net.train()
    n = sums["n"]
    return {"agreement": sums["agreement"] / n, "top3": sums["top3"] / n, "value_mse": sums["value_mse"] / n,
            "sign_accuracy": sums["sign_hits"] / max(sums["decisive"], 1)}


def lr_at(step: int, cfg: TrainConfig) -> float:
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.lr * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0)))


def save_checkpoint(path: Path, state: dict) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)  # a kill at any moment leaves the previous checkpoint intact


def train(cfg: TrainConfig, resume: bool = False) -> Path:
    """Run (or resume) pretraining; returns the exported ONNX model's path."""
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(cfg.seed)
    data = TeacherData(cfg.data, cfg.val_fraction)
    net = AllMovesNet(cfg.net).to(device)
    optimizer = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    step = 0
    rng = np.random.default_rng(cfg.seed)
    ckpt = out / "checkpoint.pt"
    if resume and ckpt.exists():
        state = torch.load(ckpt, map_location=device, weights_only=False)
        net.load_state_dict(state["net"])
        optimizer.load_state_dict(state["optimizer"])
        step = state["step"]
        rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])
    val_rows = data.val_index[np.random.default_rng(1).permutation(len(data.val_index))[: cfg.val_positions]]
    val_batches = [to_torch(make_batch(data.records(val_rows[i : i + 512])), device)
                   for i in range(0, len(val_rows), 512)]
    log_path = out / "log.csv"
    fields = ["step", "lr", "loss", "value_loss", "rank_loss", "agreement", "top3", "value_mse",
              "sign_accuracy", "positions_per_s", "data_wait_share"]
    kept = []  # on resume, rows past the checkpoint are redone, so they go
    if resume and log_path.exists():
        with open(log_path, newline="") as f:
            kept = [row for row in csv.DictReader(f) if int(row["step"]) <= step]
    with open(log_path, "w", newline="") as f:
        writer = csv.DictWriter(f, fields)
        writer.writeheader()
        writer.writerows(kept)
    bar = tqdm(total=cfg.steps, initial=step, desc="pretrain", unit="step")
    window = {"loss": 0.0, "value_loss": 0.0, "rank_loss": 0.0, "n": 0, "positions": 0, "data_s": 0.0}
    t_window = time.perf_counter()
    while step < cfg.steps:
        t0 = time.perf_counter()
        rows = data.train_index[rng.integers(0, len(data.train_index), cfg.batch_size)]
        b = to_torch(make_batch(data.records(rows)), device)
        window["data_s"] += time.perf_counter() - t0
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, cfg)
        out_losses = losses(net, b, cfg)
        optimizer.zero_grad(set_to_none=True)
        out_losses["loss"].backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.clip)
        optimizer.step()
        step += 1
        for k in ("loss", "value_loss", "rank_loss"):
            window[k] += out_losses[k].item()
        window["n"] += 1
        window["positions"] += len(b["teacher"])
        bar.update(1)
        if step % cfg.checkpoint_every == 0 or step == cfg.steps:
            save_checkpoint(ckpt, {"net": net.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                                   "rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
                                   "config": dataclasses.asdict(cfg)})
        if step % cfg.eval_every == 0 or step == cfg.steps:
            elapsed = time.perf_counter() - t_window
            row = {"step": step, "lr": lr_at(step - 1, cfg),
                   **{k: window[k] / window["n"] for k in ("loss", "value_loss", "rank_loss")},
                   **validate(net, val_batches, cfg), "positions_per_s": window["positions"] / elapsed,
                   "data_wait_share": window["data_s"] / elapsed}
            with open(log_path, "a", newline="") as f:
                csv.DictWriter(f, fields).writerow(row)
            bar.set_postfix(agree=f"{row['agreement']:.3f}", vmse=f"{row['value_mse']:.4f}")
            window = {k: 0 for k in window}
            t_window = time.perf_counter()
    bar.close()
    return export_onnx(net.cpu(), out / "model.onnx", {"scale": cfg.scale, "steps": step})


def export_checkpoint(checkpoint: str | os.PathLike, out: str | os.PathLike) -> Path:
    """Export a pretraining checkpoint's network to ONNX."""
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    cfg = state["config"]
    net = AllMovesNet(NetConfig(**cfg["net"]))
    net.load_state_dict(state["net"])
    return export_onnx(net, out, {"scale": cfg["scale"], "steps": state["step"]})
