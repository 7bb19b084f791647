"""Supervised pretraining of the all-moves network on teacher positions (METHOD.md section 3).

Per position, with z(s, a) = V(s) + A(s, a) the logit of Q (V = 0 unless the net is a dueling net),
A(s, a) = <h(s), E[a]> + b[a], t the teacher's move and target = (1-lam) sigmoid(eval/scale) + lam result:

    value   = (sigmoid(z(s, t)) - target)^2            only the teacher's move has a value target
    loss    = value + rank_weight * rank (+ anchor_weight * anchor), the ranking term by ``loss``:

    "value"    no ranking term (rank_loss is logged, not trained)
    "rank"     rank = cross-entropy of softmax(rank_scale * z(s, legal moves)) against t
    "margin"   rank = mean over the other legal moves a of max(0, margin - (z(s, t) - z(s, a)))
    "dueling"  as "rank", on a net with a value head V, plus anchor = A(s, t)^2: the teacher's move has
               advantage 0, so V(s) alone is the position's value and A only ranks moves

The ranking terms keep the other moves' Q below the teacher's. ``rank_scale`` is the cross-entropy's
inverse temperature: with a large one a small gap in Q already ranks the teacher move first, so the
ranking does not have to pull Q away from a calibrated win rate. ``zero_embedding`` starts the Magic Vec
at zero (every Q at 0.5) instead of random.

The loop is deliberately plain: AdamW, linear warm-up then cosine decay, gradient clipping, batches
built in worker processes (train/loader.py), bf16/fp16 autocast on CUDA, an atomic checkpoint every
``checkpoint_every`` steps that ``--resume`` continues from exactly, a CSV log and its PNG, ONNX at the
end. Under ``torchrun`` (WORLD_SIZE > 1) it trains data-parallel: each process draws its own batches
of ``batch_size`` positions, and only rank 0 validates and writes.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from tqdm import tqdm

from models.export import export_onnx
from models.net import AllMovesNet, NetConfig
from train.data import TeacherData
from train.loader import StepBatches, batch_tensors, step_batches

LOSSES = ("value", "rank", "margin", "dueling")
DUELING_HIDDEN = 64  # the value head's width when ``loss="dueling"`` and the net config names none
LOG_FIELDS = ["step", "lr", "loss", "value_loss", "rank_loss", "anchor_loss", "eval_rows", "result_rows", "agreement",
              "top3", "value_mse",
              "sign_accuracy", "val_rank_loss", "positions_per_s", "data_wait_share"]


@dataclass
class TrainConfig:
    data: list[str] = field(default_factory=list)
    out: str = "runs/pretrain"
    net: NetConfig = field(default_factory=NetConfig)
    # the loss (module docstring)
    loss: str = "rank"
    scale: float = 600.0  # cp per logit unit of the teacher's eval
    result_mix: float = 0.0  # lam: weight of the game result in the value target
    rank_weight: float = 0.1
    rank_scale: float = 10.0
    margin: float = 0.1  # "margin": the logit gap the teacher's move should keep over every other move
    anchor_weight: float = 1.0  # "dueling": weight of A(s, teacher)^2
    zero_embedding: bool = False
    mirror: bool = True  # train on left-right mirrored positions too (half of each batch, at random)
    # optimisation
    steps: int = 20_000
    batch_size: int = 256  # per process
    lr: float = 2e-3
    weight_decay: float = 1e-4
    warmup: int = 500
    clip: float = 1.0
    # the loop
    val_fraction: float = 0.05
    val_positions: int = 4096
    eval_every: int = 1000
    checkpoint_every: int = 500
    seed: int = 0
    threads: int = 0  # torch intra-op threads; 0: torch's default
    workers: int = 0  # processes building batches; 0: the training process builds them between steps
    amp: str = "bf16"  # autocast dtype on CUDA: bf16, fp16 (with a gradient scaler) or off; ignored on the CPU
    device: str = "auto"  # auto (CUDA when there is one), cpu or cuda
    export: bool = True  # write OUT/model.onnx at the end
    progress: bool = True  # a tqdm bar on stderr

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise ValueError(f"loss {self.loss!r}: expected one of {', '.join(LOSSES)}")
        if self.amp not in ("bf16", "fp16", "off"):
            raise ValueError(f"amp {self.amp!r}: expected bf16, fp16 or off")
        if self.loss == "dueling" and not self.net.value_hidden:
            self.net = dataclasses.replace(self.net, value_hidden=DUELING_HIDDEN)


class TrainGraph(nn.Module):
    """One forward() for everything a step differentiates, so DistributedDataParallel sees it all: the
    legal moves' advantage logits A(s, a) and the state logit V(s). The Magic Vec product runs in float32
    under autocast: ranking needs logit gaps that bf16 rounds away."""

    def __init__(self, net: AllMovesNet):
        super().__init__()
        self.net = net

    def forward(self, features: torch.Tensor, legal: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.net(features)
        with torch.autocast(h.device.type, enabled=False):
            h = h.float()
            return self.net.advantage_logits(h, legal), self.net.state_logit(h)


def to_device(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def losses(model: nn.Module, b: dict[str, torch.Tensor], cfg: TrainConfig) -> dict[str, torch.Tensor]:
    """The loss and its named parts for one batch, plus ``z`` (B, M) and ``target`` (B,) for validation."""
    advantage, state = model(b["features"], b["legal"])
    mask, teacher = b["legal_mask"], b["teacher"][:, None]
    z = (advantage + state[:, None]).masked_fill(~mask, -1e4)
    z_teacher = z.gather(1, teacher).squeeze(1)
    target, has_eval, has_target = value_target(b, cfg)
    weight = has_target.float()
    value = ((torch.sigmoid(z_teacher) - target) ** 2 * weight).sum() / weight.sum().clamp(min=1)
    if cfg.loss == "margin":
        others = mask.clone()
        others.scatter_(1, teacher, False)
        hinge = F.relu(cfg.margin - (z_teacher[:, None] - z)) * others
        rank = (hinge.sum(1) / others.sum(1).clamp(min=1)).mean()
    else:
        rank = F.cross_entropy(cfg.rank_scale * z, b["teacher"])
    anchor = advantage.gather(1, teacher).pow(2).mean() if cfg.loss == "dueling" else value.new_zeros(())
    loss = value + (0.0 if cfg.loss == "value" else cfg.rank_weight) * rank + cfg.anchor_weight * anchor
    return {"loss": loss, "value_loss": value, "rank_loss": rank, "anchor_loss": anchor, "z": z, "target": target,
            "has_target": has_target, "eval_rows": has_eval.float().mean(),
            "result_rows": (has_target & ~has_eval).float().mean()}


def value_target(b: dict[str, torch.Tensor], cfg: TrainConfig) -> tuple[torch.Tensor, ...]:
    """The value target of each row, and which rows have one: a row with an eval aims at
    (1-lam) sigmoid(eval/scale) + lam result (the eval alone when its result is unknown); a row without an
    eval (floodgate, KIF, CSA without comments) aims at its game's result; a row with neither trains only
    the ranking term. Returns (target, has_eval, has_target)."""
    has_eval, has_result = b["eval_known"], b["result_known"]
    from_eval = torch.sigmoid(b["eval_cp"] / cfg.scale)
    mixed = torch.where(has_result, (1 - cfg.result_mix) * from_eval + cfg.result_mix * b["result"], from_eval)
    target = torch.where(has_eval, mixed, b["result"])
    return target, has_eval, has_eval | has_result


@torch.no_grad()
def validate(model: nn.Module, batches: list[dict[str, torch.Tensor]], cfg: TrainConfig,
             autocast: contextlib.AbstractContextManager) -> dict[str, float]:
    """agreement, top3, value_mse (max Q against the target, over the rows with one), sign accuracy against
    decisive known results, and the ranking cross-entropy at ``rank_scale`` (whatever the loss) to see
    overfitting."""
    model.eval()
    sums = dict.fromkeys(("agreement", "top3", "value_mse", "targets", "sign_hits", "decisive", "rank", "n"), 0.0)
    for b in batches:
        with autocast:
            out = losses(model, b, cfg)
        z, teacher = out["z"], b["teacher"]
        top3 = z.topk(min(3, z.shape[1]), dim=1).indices
        value = torch.sigmoid(z.max(1).values)
        decisive = (b["result"] != 0.5) & b["result_known"]
        sums["agreement"] += (top3[:, 0] == teacher).sum().item()
        sums["top3"] += (top3 == teacher[:, None]).any(1).sum().item()
        sums["value_mse"] += ((value - out["target"]) ** 2)[out["has_target"]].sum().item()
        sums["targets"] += out["has_target"].sum().item()
        sums["sign_hits"] += ((value > 0.5) == (b["result"] > 0.5))[decisive].sum().item()
        sums["decisive"] += decisive.sum().item()
        sums["rank"] += F.cross_entropy(cfg.rank_scale * z, teacher, reduction="sum").item()
        sums["n"] += len(teacher)
    model.train()
    n = sums["n"]
    return {"agreement": sums["agreement"] / n, "top3": sums["top3"] / n,
            "value_mse": sums["value_mse"] / max(sums["targets"], 1),
            "sign_accuracy": sums["sign_hits"] / max(sums["decisive"], 1), "val_rank_loss": sums["rank"] / n}


def lr_at(step: int, cfg: TrainConfig) -> float:
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.lr * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0)))


def save_checkpoint(path: Path, state: dict) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)  # a kill at any moment leaves the previous checkpoint intact


@dataclass
class Process:
    """Where this process trains: its rank among ``world`` data-parallel processes and its device."""

    rank: int
    world: int
    device: torch.device

    @property
    def main(self) -> bool:
        return self.rank == 0


def setup_process(cfg: TrainConfig) -> Process:
    """The device, and the process group when launched by torchrun with WORLD_SIZE > 1 (nccl on CUDA,
    gloo on the CPU); each process takes the GPU of its LOCAL_RANK."""
    cuda = cfg.device == "cuda" or (cfg.device == "auto" and torch.cuda.is_available())
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        return Process(0, 1, torch.device("cuda" if cuda else "cpu"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if cuda:
        torch.cuda.set_device(local)
    if not dist.is_initialized():
        dist.init_process_group("nccl" if cuda else "gloo")
    return Process(dist.get_rank(), world, torch.device(f"cuda:{local}" if cuda else "cpu"))


def set_threads(n: int) -> None:
    """Torch's and numba's thread counts both to ``n``. Both run on one OpenMP runtime: after numba's
    parallel feature kernel (in make_batch) has run with more threads, torch's kernels run with that many
    too, and on a busy machine their spinning barriers made a step 5x slower."""
    import numba

    torch.set_num_threads(n)
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))


def autocast_for(cfg: TrainConfig, device: torch.device) -> tuple[contextlib.AbstractContextManager, bool]:
    """The autocast context of the forward pass, and whether fp16 needs a gradient scaler."""
    if device.type != "cuda" or cfg.amp == "off":
        return contextlib.nullcontext(), False
    dtype = torch.bfloat16 if cfg.amp == "bf16" else torch.float16
    return torch.autocast("cuda", dtype=dtype), cfg.amp == "fp16"


def start_log(path: Path, resume_step: int | None) -> None:
    """Write the header; on resume keep the rows up to the checkpoint (later ones are redone)."""
    kept = []
    if resume_step is not None and path.exists():
        with open(path, newline="") as f:
            kept = [row for row in csv.DictReader(f) if int(row["step"]) <= resume_step]
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, LOG_FIELDS, restval="")
        writer.writeheader()
        writer.writerows(kept)


def append_log(path: Path, row: dict) -> None:
    with open(path, "a", newline="") as f:
        csv.DictWriter(f, LOG_FIELDS).writerow(row)
    try:
        from train.plot import plot_logs

        plot_logs([path])
    except ImportError:  # matplotlib is optional: the CSV is the record
        pass


def train(cfg: TrainConfig, resume: bool = False) -> Path:
    """Run (or resume) pretraining; returns the exported ONNX model's path (the output folder when
    ``cfg.export`` is off)."""
    proc = setup_process(cfg)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    if cfg.threads:
        set_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    data = TeacherData(cfg.data, cfg.val_fraction)
    net = AllMovesNet(cfg.net, zero_embedding=cfg.zero_embedding).to(proc.device)
    graph = TrainGraph(net)
    model = graph
    if proc.world > 1:  # starts every rank from rank 0's weights
        ids = [proc.device.index] if proc.device.type == "cuda" else None
        model = nn.parallel.DistributedDataParallel(graph, device_ids=ids)
    optimizer = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    autocast, fp16 = autocast_for(cfg, proc.device)
    scaler = torch.amp.GradScaler(proc.device.type, enabled=fp16)
    step = 0
    ckpt = out / "checkpoint.pt"
    if resume and ckpt.exists():
        state = torch.load(ckpt, map_location=proc.device, weights_only=False)
        net.load_state_dict(state["net"])
        optimizer.load_state_dict(state["optimizer"])
        if state.get("scaler"):  # saved by an fp16 run
            scaler.load_state_dict(state["scaler"])
        step = state["step"]
    log_path = out / "log.csv"
    val_batches = []
    if proc.main:
        val_rows = data.val_index[np.random.default_rng(1).permutation(len(data.val_index))[: cfg.val_positions]]
        val_batches = [to_device(batch_tensors(data.gather(val_rows[i : i + 512]).batch()), proc.device)
                       for i in range(0, len(val_rows), 512)]
        start_log(log_path, step if resume else None)
    dataset = StepBatches(data.files, data.train_index, cfg.batch_size, cfg.seed, proc.rank, cfg.mirror)
    batches = step_batches(dataset, step, cfg.steps, cfg.workers, pin_memory=proc.device.type == "cuda")
    bar = tqdm(total=cfg.steps, initial=step, desc="pretrain", unit="step", disable=not (cfg.progress and proc.main))
    window = dict.fromkeys(("loss", "value_loss", "rank_loss", "anchor_loss", "eval_rows", "result_rows"), 0.0)
    counts = {"steps": 0, "positions": 0, "data_s": 0.0}
    t_window = time.perf_counter()
    while step < cfg.steps:
        t0 = time.perf_counter()
        b = to_device(next(batches), proc.device)
        counts["data_s"] += time.perf_counter() - t0
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, cfg)
        with autocast:
            out_losses = losses(model, b, cfg)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(out_losses["loss"]).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.clip)
        scaler.step(optimizer)
        scaler.update()
        step += 1
        for k in window:
            window[k] += out_losses[k].detach()  # summed on the device: no sync per step
        counts["steps"] += 1
        counts["positions"] += len(b["teacher"]) * proc.world
        bar.update(1)
        if proc.main and (step % cfg.checkpoint_every == 0 or step == cfg.steps):
            save_checkpoint(ckpt, {"net": net.state_dict(), "optimizer": optimizer.state_dict(),
                                   "scaler": scaler.state_dict(), "step": step, "world_size": proc.world,
                                   "config": dataclasses.asdict(cfg)})
        if proc.main and (step % cfg.eval_every == 0 or step == cfg.steps):
            elapsed = time.perf_counter() - t_window
            row = {"step": step, "lr": lr_at(step - 1, cfg),
                   **{k: float(v) / counts["steps"] for k, v in window.items()},
                   **validate(graph, val_batches, cfg, autocast), "positions_per_s": counts["positions"] / elapsed,
                   "data_wait_share": counts["data_s"] / elapsed}
            append_log(log_path, row)
            bar.set_postfix(agree=f"{row['agreement']:.3f}", vmse=f"{row['value_mse']:.4f}")
            window = dict.fromkeys(window, 0.0)
            counts = dict.fromkeys(counts, 0)
            t_window = time.perf_counter()
    bar.close()
    next(batches, None)  # the loader is exhausted: its workers shut down now
    if proc.world > 1:
        dist.barrier()  # every rank has finished before rank 0 exports and the group goes
        dist.destroy_process_group()
    if not (proc.main and cfg.export):
        return out
    return export_onnx(net.cpu(), out / "model.onnx", {"scale": cfg.scale, "steps": step, "loss": cfg.loss})


def export_checkpoint(checkpoint: str | os.PathLike, out: str | os.PathLike) -> Path:
    """Export a pretraining checkpoint's network to ONNX."""
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    cfg = state["config"]
    net = AllMovesNet(NetConfig(**cfg["net"]))
    net.load_state_dict(state["net"])
    return export_onnx(net, out, {"scale": cfg["scale"], "steps": state["step"], "loss": cfg.get("loss", "rank")})
