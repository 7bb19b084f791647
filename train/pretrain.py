"""Supervised pretraining of the all-moves network on teacher positions (docs/method.md section 3).

Per position, with z(s, a) = V(s) + A(s, a) the logit of Q (V = 0 unless the net is a dueling net),
A(s, a) = <h(s), E[a]> + b[a], t the teacher's move and target = (1-lam) sigmoid(eval/scale) + lam result:

    value   = (sigmoid(z(s, t)) - target)^2            only the teacher's move has a value target
    loss    = value + rank_weight * rank (+ anchor_weight * anchor), the ranking term by ``loss``:

    "value"    no ranking term (rank_loss is logged, not trained)
    "rank"     rank = cross-entropy of softmax(rank_scale * z(s, legal moves)) against t
    "margin"   rank = mean over the other legal moves a of max(0, margin - (z(s, t) - z(s, a)))
    "dueling"  as "rank", on a net with a value head V, plus anchor = A(s, t)^2: the teacher's move has
               advantage 0, so V(s) alone is the position's value and A only ranks moves

    (+ lines_weight * lines) where a file has the teacher's top lines beside it (gensfen --multipv): lines = the
    mean over the moves that begin a line of (sigmoid(z(s, a)) - sigmoid(eval(a) / scale))^2, so that the
    teacher's second, third, ... moves teach their Q too, not only the ranking below t

The ranking terms keep the other moves' Q below the teacher's. ``rank_scale`` is the cross-entropy's
inverse temperature: with a large one a small gap in Q already ranks the teacher move first, so the
ranking does not have to pull Q away from a calibrated win rate. ``zero_embedding`` starts the Magic Vec
at zero (every Q at 0.5) instead of random.

Rows without a teacher eval (floodgate, KIF, CSA without comments) aim the value at their game's
result instead, and rows with neither train only the ranking term (:func:`messiah.train.batch.value_target`); the log's
``eval_rows`` and ``result_rows`` say what share of the rows did which.

The loop is deliberately plain: batches built in worker processes (train/loader.py) go to a
:class:`train.trainer.Trainer` (AdamW, warm-up and cosine decay, clipping, autocast, checkpoints, ONNX);
an atomic checkpoint every ``checkpoint_every`` steps that ``--resume`` continues from exactly, a CSV
log and its PNG, ONNX at the end. Under ``torchrun`` (WORLD_SIZE > 1) it trains data-parallel: each
process draws its own batches of ``batch_size`` positions, and only rank 0 validates and writes.
"""

from __future__ import annotations

import csv
import time
import warnings
from functools import partial
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from tqdm import tqdm

from messiah.config import from_dict, run_changes
from messiah.errors import DataError, UserError
from messiah.models.net import AllMovesNet
from messiah.train.batch import move_values_loss, value_loss
from messiah.train.config import DUELING_HIDDEN, LOSSES, TrainConfig, checkpoint_path
from messiah.train.data import TeacherData, held_out, validation_batches
from messiah.train.loader import StepBatches, step_batches
from messiah.train.trainer import (
    Process,
    Trainer,
    initial_net,
    legal_logits,
    load_checkpoint,
    set_threads,
    setup_process,
    to_device,
)

__all__ = ["DUELING_HIDDEN", "LOSSES", "TrainConfig", "losses", "train"]

# The loss terms a step returns (the scalars of :func:`losses`), averaged over the steps since the last row
TERMS = ("loss", "value_loss", "rank_loss", "anchor_loss", "lines_loss", "eval_rows", "result_rows")
VALIDATION = ("agreement", "top3", "value_mse", "sign_accuracy", "val_rank_loss")  # Trainer.validate's figures
LOG_FIELDS = ["step", "lr", *TERMS, *VALIDATION, "positions_per_s", "data_wait_share"]


def losses(model: nn.Module, b: dict[str, torch.Tensor], cfg: TrainConfig) -> dict[str, torch.Tensor]:
    """The loss and its named parts for one batch: the shared value loss (train.batch.value_loss) and the
    ranking term of ``cfg.loss``; ``eval_rows`` and ``result_rows``, the shares of rows whose value aimed at an
    eval and at a result alone; and for validation ``z`` (B, M), ``target`` (B,) and ``has_target`` (B,)."""
    z, advantage = legal_logits(model, b)
    mask, teacher = b["legal_mask"], b["teacher"][:, None]
    value, target, has_eval, has_target = value_loss(z, b, cfg.scale, cfg.result_mix)
    if cfg.loss == "margin":
        z_teacher = z.gather(1, teacher).squeeze(1)
        others = mask.clone()
        others.scatter_(1, teacher, False)
        hinge = F.relu(cfg.margin - (z_teacher[:, None] - z)) * others
        rank = (hinge.sum(1) / others.sum(1).clamp(min=1)).mean()
    else:
        rank = F.cross_entropy(cfg.rank_scale * z, b["teacher"])
    anchor = advantage.gather(1, teacher).pow(2).mean() if cfg.loss == "dueling" else value.new_zeros(())
    lines = lines_loss(z, b, cfg.scale)
    loss = (value + (0.0 if cfg.loss == "value" else cfg.rank_weight) * rank + cfg.anchor_weight * anchor
            + cfg.lines_weight * lines)
    return {"loss": loss, "value_loss": value, "rank_loss": rank, "anchor_loss": anchor, "lines_loss": lines,
            "z": z, "target": target,
            "has_target": has_target, "eval_rows": has_eval.float().mean(),
            "result_rows": (has_target & ~has_eval).float().mean()}


def lines_loss(z: torch.Tensor, b: dict[str, torch.Tensor], scale: float) -> torch.Tensor:
    """The squared error of sigmoid(z) of each legal move that begins one of the teacher's top lines against that
    line's eval as a win rate, averaged over those moves (0 for a batch without lines)."""
    if "lines_cp" not in b:
        return z.new_zeros(())
    # messiah.winrate.zero_sum, on tensors (NaN, no line, stays NaN)
    return move_values_loss(z, torch.sigmoid(b["lines_cp"] / scale), b["legal_mask"])


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
    """Append a row, which must have every column and no other: a figure added or dropped fails here, not in a
    reader of the log."""
    if set(row) != set(LOG_FIELDS):
        raise ValueError(f"{path}: a log row without the columns {sorted(set(LOG_FIELDS) - set(row))} or with "
                         f"{sorted(set(row) - set(LOG_FIELDS))} that have none")
    with open(path, "a", newline="") as f:
        csv.DictWriter(f, LOG_FIELDS).writerow(row)
    try:
        from messiah.train.plot import plot_logs

        plot_logs([path])
    except ImportError:  # matplotlib is optional: the CSV is the record
        pass


def validation_set(data: TeacherData, cfg: TrainConfig, proc: Process) -> list[dict[str, torch.Tensor]]:
    """Up to ``val_positions`` held-out positions (a fixed draw), as device batches of 512. ValueError when
    none has a legal teacher move: the data is too small to hold a game out."""
    batches = [to_device(b.tensors(), proc.device)
               for b in validation_batches(data, held_out(data.val_index, cfg.val_positions))]
    if not batches:
        raise DataError(f"{', '.join(map(str, cfg.data))}: the held-out part (the last {cfg.val_fraction:.0%} of "
                         f"each file, from a game boundary) holds {len(data.val_index)} positions, none with a legal "
                         f"teacher move, out of {len(data.train_index) + len(data.val_index)}: too little data to "
                         "validate (give more games, or a larger val_fraction)")
    return batches


def resumed_state(cfg: TrainConfig, ckpt: Path) -> dict:
    """The checkpoint a resumed run goes on from; UserError when there is none, or when ``cfg`` is another run."""
    if not ckpt.exists():
        raise UserError(f"{ckpt}: no checkpoint to resume from (start the run without --resume)")
    saved = load_checkpoint(ckpt)
    changes = run_changes(from_dict(TrainConfig, saved["config"]), cfg)
    if changes:
        raise UserError(f"{ckpt}: resuming would change the run ({'; '.join(changes)}): resume with the run's "
                        "own settings, or start a new run in another --out")
    return saved


def train(cfg: TrainConfig, resume: bool = False) -> Path:
    """Run (or resume: ValueError when OUT has no checkpoint of this same run) pretraining; returns the
    exported ONNX model's path (the output folder when ``cfg.export`` is off)."""
    if cfg.steps <= cfg.warmup:
        warnings.warn(f"steps {cfg.steps} end inside the warm-up of {cfg.warmup} steps: the learning rate never "
                      f"reaches lr {cfg.lr:g} and never decays (lower warmup)", stacklevel=2)
    out = Path(cfg.out)
    ckpt = checkpoint_path(out)
    saved = resumed_state(cfg, ckpt) if resume else None
    proc = setup_process(cfg.device)
    out.mkdir(parents=True, exist_ok=True)
    if cfg.threads:
        set_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    data = TeacherData(cfg.data, cfg.val_fraction)
    # A resumed run's weights come from its checkpoint, in the architecture it saved; a new one's from --init.
    net = AllMovesNet(cfg.net) if saved is not None else initial_net(cfg)
    trainer = Trainer(net, cfg, partial(losses, cfg=cfg), proc, horizon=cfg.steps)
    if saved is not None:
        trainer.restore(saved)
    log_path = out / "log.csv"
    val_batches = validation_set(data, cfg, proc) if proc.main else []
    if proc.main:
        start_log(log_path, trainer.steps_done if resume else None)
    dataset = StepBatches(data.files, data.train_index, cfg.batch_size, cfg.seed, proc.rank, cfg.mirror)
    batches = step_batches(dataset, trainer.steps_done, cfg.steps, cfg.workers, pin_memory=proc.device.type == "cuda")
    bar = tqdm(total=cfg.steps, initial=trainer.steps_done, desc="pretrain", unit="step",
               disable=not (cfg.progress and proc.main))
    window, steps, positions, data_s, t_window = dict.fromkeys(TERMS, 0.0), 0, 0, 0.0, time.perf_counter()
    while trainer.steps_done < cfg.steps:
        t0 = time.perf_counter()
        b = to_device(next(batches), proc.device)
        data_s += time.perf_counter() - t0
        terms = trainer.step(b)
        for k in window:
            window[k] += terms[k]  # summed on the device: no sync per step
        steps, positions, step = steps + 1, positions + len(b["teacher"]) * proc.world, trainer.steps_done
        bar.update(1)
        if proc.main and (step % cfg.checkpoint_every == 0 or step == cfg.steps):
            trainer.save(ckpt)
        if proc.main and (step % cfg.eval_every == 0 or step == cfg.steps):
            elapsed = time.perf_counter() - t_window
            row = {"step": step, "lr": trainer.optimizer.param_groups[0]["lr"],
                   **{k: float(v) / steps for k, v in window.items()}, **trainer.validate(val_batches),
                   "positions_per_s": positions / elapsed, "data_wait_share": data_s / elapsed}
            append_log(log_path, row)
            bar.set_postfix(agree=f"{row['agreement']:.3f}", vmse=f"{row['value_mse']:.4f}")
            window, steps, positions, data_s, t_window = dict.fromkeys(TERMS, 0.0), 0, 0, 0.0, time.perf_counter()
    bar.close()
    next(batches, None)  # the loader is exhausted: its workers shut down now
    if proc.world > 1:
        dist.barrier()  # every rank has finished before rank 0 exports and the group goes
        dist.destroy_process_group()
    if not (proc.main and cfg.export):
        return out
    return trainer.export(out / "model.onnx", loss=cfg.loss)
