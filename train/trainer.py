"""The learner shared by pretraining and the reinforcement loop: one optimisation step, validation,
checkpoints and ONNX export of an :class:`~models.net.AllMovesNet`, whatever produces its batches.

A batch is a dict of tensors (see :class:`train.data.Batch`); the loss function maps (model, batch) to a
dict with ``loss`` (what is minimised), any other scalar terms to log, and for validation ``z`` (B, M) the
legal moves' logits, ``target`` (B,) the value targets and ``has_target`` (B,) which rows have one.

The optimiser is AdamW with linear warm-up and cosine decay; weight decay applies to weight matrices and
convolutions only (biases, normalisation parameters and the Magic Vec's bias are left alone: decaying
them pulls the net toward a constant, not toward a simpler function). The Trainer reads a
:class:`train.config.Training` (pretraining's TrainConfig and the reinforcement loop's RLConfig both are
one), and the step at which the learning rate has decayed to 0, if the run has one. Checkpoints are
written atomically and record the run's configuration (with the architecture trained), which the run's
owner compares before it resumes (:func:`messiah.config.run_changes`).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from messiah.errors import DataError, UserError
from messiah.evaluator import default_model_path
from messiah.files import atomic_path
from messiah.models.config import NetConfig
from messiah.models.export import export_onnx
from messiah.models.from_onnx import net_from_onnx
from messiah.models.net import AllMovesNet
from messiah.models.widen import widen
from messiah.train.config import Optim, Training

LossFn = Callable[[nn.Module, dict[str, torch.Tensor]], dict[str, torch.Tensor]]


def set_threads(n: int) -> None:
    """Torch's and numba's thread counts both to ``n`` (the learners' ``--threads``). Both run on one OpenMP
    runtime: after numba's parallel feature kernel (a batch's planes, the target net's sweep) has run with more
    threads, torch's kernels run with that many too, and on a busy machine their spinning barriers made a step 5x
    slower."""
    import numba

    torch.set_num_threads(n)
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))


def initial_net(cfg: Training) -> AllMovesNet:
    """The net a run starts from (``cfg.init``): 'random' (new weights of ``cfg.net``, seeded by ``cfg.seed``,
    the Magic Vec at zero where ``cfg.zero_embedding`` says so), 'default' (the shipped model), an ONNX file, or
    a checkpoint of messiah pretrain or messiah rl. A model given with fewer channels than ``cfg.net`` asks for
    is widened to them, its play kept (:func:`messiah.models.widen.widen`); the rest of its shape is its own."""
    if cfg.init == "random":
        torch.manual_seed(cfg.seed)
        return AllMovesNet(cfg.net, zero_embedding=getattr(cfg, "zero_embedding", False))
    path = default_model_path() if cfg.init == "default" else Path(cfg.init)
    if not path.is_file():
        raise UserError(f"--init {cfg.init}: no such file (expected random, default, an .onnx model or a checkpoint)")
    if path.suffix == ".onnx":
        net = net_from_onnx(path)
    else:
        state = load_checkpoint(path)
        net = AllMovesNet(NetConfig(**state["config"]["net"]))
        net.load_state_dict(state["net"])
    if cfg.net.channels > net.config.channels:
        net = widen(net, cfg.net.channels, cfg.seed)
    return net


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


@dataclass
class Process:
    """Where this process trains: its rank among ``world`` data-parallel processes and its device."""

    rank: int
    world: int
    device: torch.device

    @property
    def main(self) -> bool:
        return self.rank == 0


def setup_process(device: str = "auto") -> Process:
    """The device, and the process group when launched by torchrun with WORLD_SIZE > 1 (nccl on CUDA,
    gloo on the CPU); each process takes the GPU of its LOCAL_RANK."""
    cuda = device == "cuda" or (device == "auto" and torch.cuda.is_available())
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        return Process(0, 1, torch.device("cuda" if cuda else "cpu"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if cuda:
        torch.cuda.set_device(local)
    if not dist.is_initialized():
        dist.init_process_group("nccl" if cuda else "gloo")
    return Process(dist.get_rank(), world, torch.device(f"cuda:{local}" if cuda else "cpu"))


def legal_logits(model: nn.Module, b: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """z(s, a) = V(s) + A(s, a), the Q logits of each row's legal moves (-1e4 in the padding: softmax and max
    never pick it), and the advantages A alone."""
    advantage, state = model(b["features"], b["legal"])
    return (advantage + state[:, None]).masked_fill(~b["legal_mask"], -1e4), advantage


def to_device(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def param_groups(net: nn.Module, weight_decay: float) -> list[dict]:
    """AdamW groups: weight matrices and convolution kernels (2+ dimensions, the Magic Vec included) decay;
    biases, normalisation scales and shifts and the Magic Vec's bias (1 dimension) do not."""
    params = list(net.parameters())
    return [{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]


def lr_at(step: int, optim: Optim, horizon: int | None = None) -> float:
    """Linear warm-up over ``optim.warmup`` steps, then cosine decay to 0 at step ``horizon``, or constant
    without one (a run with no fixed end)."""
    if step < optim.warmup:
        return optim.lr * (step + 1) / optim.warmup
    if horizon is None:
        return optim.lr
    progress = (step - optim.warmup) / max(1, horizon - optim.warmup)
    return optim.lr * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0)))


def autocast_for(amp: str, device: torch.device) -> tuple[contextlib.AbstractContextManager, bool]:
    """The autocast context of the forward pass, and whether fp16 needs a gradient scaler."""
    if device.type != "cuda" or amp == "off":
        return contextlib.nullcontext(), False
    dtype = torch.bfloat16 if amp == "bf16" else torch.float16
    return torch.autocast("cuda", dtype=dtype), amp == "fp16"


def load_checkpoint(path: str | os.PathLike, device: torch.device | str = "cpu") -> dict:
    """A checkpoint's state; ValueError naming the file when there is none or it is not a checkpoint. Loaded
    with ``weights_only``: tensors and plain data only, nothing a file could run."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no checkpoint there")
    try:
        state = torch.load(path, map_location=device, weights_only=True)
    except Exception as e:  # pickle, zip and torch errors alike: the file is not a checkpoint
        raise DataError(f"{path}: not a messiah checkpoint ({type(e).__name__}: {str(e).splitlines()[0]})") from None
    if not isinstance(state, dict) or not {"net", "config", "step"} <= state.keys():
        raise DataError(f"{path}: not a messiah checkpoint (no net, config and step)")
    return state


class Trainer:
    """Owns the net's optimiser state and step count; ``step(batch)`` trains, ``validate(batches)``
    measures, ``save``/``restore`` checkpoint, ``export`` writes the ONNX model the engine plays with.
    ``horizon``: the step at which the learning rate has decayed to 0 (None: constant after the warm-up)."""

    def __init__(self, net: AllMovesNet, cfg: Training, loss_fn: LossFn, proc: Process | None = None,
                 horizon: int | None = None):
        self.cfg, self.loss_fn, self.horizon = cfg, loss_fn, horizon
        self.proc = proc or Process(0, 1, torch.device("cpu"))
        # Train mode, whatever mode the net came in: a net loaded from ONNX comes in eval mode (models/from_onnx.py),
        # and trained so its batch norms would normalise by frozen statistics and never update them (issue 74: every
        # first generation of messiah rl trained so until a validate()). validate() and the learner's values() put
        # the mode back after their passes.
        self.net = net.to(self.proc.device).train()
        self.graph = TrainGraph(self.net)
        self.model: nn.Module = self.graph
        if self.proc.world > 1:  # starts every rank from rank 0's weights
            ids = [self.proc.device.index] if self.proc.device.type == "cuda" else None
            self.model = nn.parallel.DistributedDataParallel(self.graph, device_ids=ids)
        self.optimizer = torch.optim.AdamW(param_groups(self.net, cfg.weight_decay), lr=cfg.lr)
        self.autocast, fp16 = autocast_for(cfg.amp, self.proc.device)
        self.scaler = torch.amp.GradScaler(self.proc.device.type, enabled=fp16)
        self.steps_done = 0

    def step(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """One optimisation step on a batch already on the device; returns the loss terms (detached, on the
        device: reading them would synchronise)."""
        for group in self.optimizer.param_groups:
            group["lr"] = lr_at(self.steps_done, self.cfg, self.horizon)
        with self.autocast:
            out = self.loss_fn(self.model, batch)
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(out["loss"]).backward()
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.cfg.clip)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.steps_done += 1
        return {k: v.detach() for k, v in out.items() if v.dim() == 0}

    @torch.no_grad()
    def validate(self, batches: Iterable[dict[str, torch.Tensor]]) -> dict[str, float]:
        """agreement (the best Q is the teacher's move), top3, value_mse (max Q against the value target,
        over the rows with one), sign_accuracy (max Q > 0.5 against decisive known results) and
        val_rank_loss (the ranking cross-entropy at ``rank_scale``, whatever the loss: to see overfitting)."""
        self.graph.eval()
        sums = dict.fromkeys(("agreement", "top3", "value_mse", "targets", "sign_hits", "decisive", "rank", "n"), 0.0)
        for b in batches:
            with self.autocast:
                out = self.loss_fn(self.graph, b)
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
            sums["rank"] += F.cross_entropy(self.cfg.rank_scale * z, teacher, reduction="sum").item()
            sums["n"] += len(teacher)
        self.graph.train()
        n = max(sums["n"], 1)
        return {"agreement": sums["agreement"] / n, "top3": sums["top3"] / n,
                "value_mse": sums["value_mse"] / max(sums["targets"], 1),
                "sign_accuracy": sums["sign_hits"] / max(sums["decisive"], 1), "val_rank_loss": sums["rank"] / n}

    def save(self, path: str | os.PathLike, **extra: object) -> None:
        """An atomic checkpoint: a kill at any moment leaves the previous one intact. ``extra`` entries (the RL
        learner's target network) go into the same file, so that they are saved at the same step. ``config`` is
        the run's configuration with ``net`` the architecture trained (an RL run's own ``net`` is only the shape
        of a random init)."""
        path = Path(path)
        state = {**extra, "net": self.net.state_dict(), "optimizer": self.optimizer.state_dict(),
                 "scaler": self.scaler.state_dict(), "step": self.steps_done, "world_size": self.proc.world,
                 "config": {**dataclasses.asdict(self.cfg), "net": dataclasses.asdict(self.net.config)}}
        with atomic_path(path) as tmp:
            torch.save(state, tmp)

    def restore(self, state: dict) -> None:
        """Continue from a checkpoint (:func:`load_checkpoint`) of this run: weights, optimiser, scaler, step.
        ValueError when it was written by another number of data-parallel processes (each drew its own
        batches: the run would not go on as it was)."""
        if state.get("world_size", 1) != self.proc.world:
            raise UserError(f"resuming would change the run (world size {state.get('world_size', 1)} -> "
                             f"{self.proc.world}): resume with as many processes")
        self.net.load_state_dict(state["net"])
        self.optimizer.load_state_dict(state["optimizer"])
        if state.get("scaler"):  # saved by an fp16 run
            self.scaler.load_state_dict(state["scaler"])
        self.steps_done = state["step"]

    def export(self, path: str | os.PathLike, **metadata: object) -> Path:
        """The net as an ONNX model (exported from a CPU copy: the net stays on its device and in its mode), with
        the eval scale, the step and ``metadata`` (the loss, an RL generation)."""
        net = self.net if self.proc.device.type == "cpu" else copy.deepcopy(self.net).cpu()
        return export_onnx(net, path, {"scale": self.cfg.scale, "steps": self.steps_done, **metadata})


def export_checkpoint(checkpoint: str | os.PathLike, out: str | os.PathLike) -> Path:
    """Export a checkpoint's network (of messiah pretrain or messiah rl) to ONNX; ValueError naming the file
    when it is not a checkpoint."""
    state = load_checkpoint(checkpoint)
    cfg = state["config"]
    net = AllMovesNet(NetConfig(**cfg["net"]))
    net.load_state_dict(state["net"])
    return export_onnx(net, out, {"scale": cfg["scale"], "steps": state["step"], "loss": cfg["loss"]})
