"""The training configurations' shared parts and pretraining's configuration: dataclasses with one docstring
per field (as CleanRL's ``Args``), from which the command line is built (:mod:`messiah.config`), so a default
lives in one place. No torch: ``messiah pretrain --help`` and ``messiah evaluate`` read it without the
training extra.

:class:`Training` is what :class:`train.trainer.Trainer` reads: the optimiser (:class:`Optim`), the loss
family's shared terms (:class:`Objective`) and the machine (:class:`Machine`). :class:`TrainConfig`
(pretraining) and :class:`train.rl.config.RLConfig` (the reinforcement loop) are both a ``Training``.

``--resume`` continues a run with the configuration saved in its checkpoint;
:func:`messiah.config.run_changes` names the fields of a command that would make it a different run (the
fields marked ``runtime`` may change).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from messiah.config import at_least, check_choices, setting, within
from messiah.errors import UserError
from messiah.models.config import NetConfig
from messiah.winrate import TEACHER_SCALE

LOSSES = ("value", "rank", "margin", "dueling")
DUELING_HIDDEN = 64  # the value head's width when ``loss="dueling"`` and the net config names none
VAL_FRACTION = 0.05  # the held-out tail of each teacher file, by game: pretraining's default, the RL learner's share


@dataclass
class Optim:
    """optimiser (AdamW)"""

    batch_size: int = 256
    """positions per step (and process)"""
    lr: float = 2e-3
    """AdamW's peak learning rate (reached at the end of the warm-up, then cosine decay to 0)"""
    weight_decay: float = 1e-4
    """AdamW's weight decay, on weight matrices and convolutions only"""
    warmup: int = 500
    """steps of linear learning-rate warm-up"""
    clip: float = 1.0
    """gradient norm clip"""


@dataclass
class Objective:
    """loss terms shared by pretraining and the reinforcement loop"""

    scale: float = TEACHER_SCALE
    """cp per logit of the teacher data's evals (fitted on the shared teacher data)"""
    rank_weight: float = 0.1
    """weight of the ranking term"""
    rank_scale: float = 10.0
    """inverse temperature of the ranking cross-entropy over the legal moves' logits"""
    mirror: bool = True
    """train on left-right mirrored positions too (half of each batch, at random)"""


@dataclass
class Machine:
    """where the learner runs (may change when a run is continued)"""

    device: Literal["auto", "cpu", "cuda"] = setting("auto", runtime=True)
    """auto: CUDA when there is one"""
    amp: Literal["bf16", "fp16", "off"] = setting("bf16", runtime=True)
    """autocast dtype on CUDA (fp16 with a gradient scaler); ignored on the CPU"""
    threads: int = setting(0, runtime=True)
    """torch's and numba's threads (0: their own choice)"""
    progress: bool = setting(True, runtime=True)
    """show progress bars on stderr"""


@dataclass
class Training(Machine, Objective, Optim):
    """What :class:`train.trainer.Trainer` reads; pretraining and the reinforcement loop add their own fields."""

    def __post_init__(self) -> None:
        check_choices(self)
        at_least(self, 1, "batch_size")
        at_least(self, 0, "warmup", "threads")


@dataclass
class TrainConfig(Training):
    """Everything that defines a pretraining run (the loss terms are explained in train/pretrain.py)."""

    data: list[str] = setting(factory=list, positional=True, paths=True)
    """data files: hcpe, psv/bin, CSA, KIF/KIFU, jsonl; rows without an eval train on their game's result (none
    with --resume: the run's own)"""
    out: str = setting("runs/pretrain", runtime=True)
    """output folder: checkpoint.pt, log.csv, log.png, model.onnx"""
    net: NetConfig = field(default_factory=NetConfig)
    """architecture"""
    loss: Literal["value", "rank", "margin", "dueling"] = "rank"
    """ranking term over the legal moves"""
    result_mix: float = 0.0
    """weight of the game result in the value target of rows with an eval"""
    margin: float = 0.1
    """--loss margin: the logit lead the teacher's move should keep over every other move"""
    anchor_weight: float = 1.0
    """--loss dueling: weight of A(s, teacher)^2"""
    lines_weight: float = 0.5
    """weight of the lines term, where a data file has the teacher's top lines beside it (NAME.multipv, gensfen
    --multipv): each line's move's Q against its eval's win rate (0: the lines unused; at equal labelling time four
    lines did not beat one in games, docs/pretraining.md section 9)"""
    init: str = "random"
    """the net to start from: 'random' (new weights of the --channels/--blocks/... architecture), 'default' (the
    shipped model: a warm start), an .onnx model, or a checkpoint.pt of messiah pretrain or messiah rl (with more
    --channels than the model's, widened with its play kept; the rest of the shape is the model's own)"""
    zero_embedding: bool = False
    """start the Magic Vec at zero (every Q at 0.5); --init random only"""
    steps: int = 20_000
    """optimizer steps"""
    val_fraction: float = VAL_FRACTION
    """held-out tail of each file, cut at a game boundary"""
    val_positions: int = setting(4096, runtime=True)
    """held-out positions validated every --eval-every steps"""
    eval_every: int = setting(1000, runtime=True)
    """steps between validations (a log.csv row and log.png)"""
    checkpoint_every: int = setting(500, runtime=True)
    """steps between checkpoints"""
    seed: int = 0
    """seed of the weights and of the batches"""
    workers: int = setting(0, runtime=True)
    """processes building batches (0: the training process, between steps)"""
    export: bool = setting(True, runtime=True)
    """write OUT/model.onnx at the end"""

    def __post_init__(self) -> None:
        super().__post_init__()
        at_least(self, 1, "steps", "val_positions", "eval_every", "checkpoint_every")
        at_least(self, 0, "workers", "lines_weight")
        within(self, 0.0, 1.0, "result_mix", "val_fraction")
        if self.zero_embedding and self.init != "random":
            raise UserError(f"--zero-embedding makes a new Magic Vec; --init {self.init} brings the model's own")
        if self.loss == "dueling" and not self.net.value_hidden:
            self.net = dataclasses.replace(self.net, value_hidden=DUELING_HIDDEN)


@dataclass
class ExportConfig:
    """``messiah export``: a training checkpoint's network as the ONNX model the engine plays with."""

    checkpoint: str = setting(positional=True)
    """a checkpoint.pt of messiah pretrain, or a learner.pt of messiah rl"""
    out: str = setting(positional=True)
    """the ONNX file to write"""


def checkpoint_path(out: str | os.PathLike) -> Path:
    return Path(out) / "checkpoint.pt"
