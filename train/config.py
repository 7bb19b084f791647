"""The training configuration: one dataclass with one docstring per field (as CleanRL's ``Args``), from
which the command line is built, so a default lives in one place. No torch: ``messiah pretrain --help``
and ``messiah evaluate`` read it without the training extra.

``--resume`` continues a run with the configuration saved in its checkpoint; :func:`run_changes` names
the fields of a command that would make it a different run (:data:`RUNTIME_FIELDS` may change).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import os
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from messiah.models.config import NetConfig
from messiah.winrate import TEACHER_SCALE

LOSSES = ("value", "rank", "margin", "dueling")
DUELING_HIDDEN = 64  # the value head's width when ``loss="dueling"`` and the net config names none


@dataclass
class TrainConfig:
    """Everything that defines a pretraining run (the loss terms are explained in train/pretrain.py)."""

    data: list[str] = field(default_factory=list)
    """data files: hcpe, psv/bin, CSA, KIF/KIFU, jsonl; rows without an eval train on their game's result"""
    out: str = "runs/pretrain"
    """output folder: checkpoint.pt, log.csv, log.png, model.onnx"""
    net: NetConfig = field(default_factory=NetConfig)
    """the architecture"""
    loss: Literal["value", "rank", "margin", "dueling"] = "rank"
    """ranking term over the legal moves"""
    scale: float = TEACHER_SCALE
    """cp per logit of the teacher's evals (the default is the shared teacher data's fitted scale)"""
    result_mix: float = 0.0
    """weight of the game result in the value target of rows with an eval"""
    rank_weight: float = 0.1
    """weight of the ranking term"""
    rank_scale: float = 10.0
    """inverse temperature of the ranking cross-entropy over the legal moves' logits"""
    margin: float = 0.1
    """--loss margin: the logit lead the teacher's move should keep over every other move"""
    anchor_weight: float = 1.0
    """--loss dueling: weight of A(s, teacher)^2"""
    zero_embedding: bool = False
    """start the Magic Vec at zero (every Q at 0.5)"""
    mirror: bool = True
    """train on left-right mirrored positions too (half of each batch, at random)"""
    steps: int = 20_000
    """optimizer steps"""
    batch_size: int = 256
    """positions per step and process"""
    lr: float = 2e-3
    """AdamW's peak learning rate"""
    weight_decay: float = 1e-4
    """AdamW's weight decay, on weight matrices and convolutions only"""
    warmup: int = 500
    """steps of linear learning-rate warm-up (then cosine decay to 0)"""
    clip: float = 1.0
    """gradient norm clip"""
    val_fraction: float = 0.05
    """held-out tail of each file, cut at a game boundary"""
    val_positions: int = 4096
    """held-out positions validated every --eval-every steps"""
    eval_every: int = 1000
    """steps between validations (a log.csv row and log.png)"""
    checkpoint_every: int = 500
    """steps between checkpoints"""
    seed: int = 0
    """seed of the weights and of the batches"""
    threads: int = 0
    """torch threads (0: torch's default)"""
    workers: int = 0
    """processes building batches (0: the training process, between steps)"""
    amp: Literal["bf16", "fp16", "off"] = "bf16"
    """autocast dtype on CUDA (fp16 with a gradient scaler); ignored on the CPU"""
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """auto: CUDA when there is one"""
    export: bool = True
    """write OUT/model.onnx at the end"""
    progress: bool = True
    """a progress bar on stderr"""

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise ValueError(f"loss {self.loss!r}: expected one of {', '.join(LOSSES)}")
        if self.amp not in ("bf16", "fp16", "off"):
            raise ValueError(f"amp {self.amp!r}: expected bf16, fp16 or off")
        if isinstance(self.net, dict):
            self.net = NetConfig(**self.net)
        if self.loss == "dueling" and not self.net.value_hidden:
            self.net = dataclasses.replace(self.net, value_hidden=DUELING_HIDDEN)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, saved: dict) -> TrainConfig:
        """A configuration saved by :meth:`to_dict` (fields it lacks keep their defaults)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in saved.items() if k in names})


# Fields that change how a run executes or reports, not what it learns: --resume may change them.
RUNTIME_FIELDS = frozenset({"out", "val_positions", "eval_every", "checkpoint_every", "threads", "workers", "amp",
                            "device", "export", "progress"})


def _identity(cfg: TrainConfig) -> dict:
    """What a run is: every field but the runtime ones, data files as absolute paths."""
    out = {k: v for k, v in cfg.to_dict().items() if k not in RUNTIME_FIELDS}
    out["data"] = [os.path.abspath(p) for p in cfg.data]
    return out


def run_changes(saved: TrainConfig, given: TrainConfig) -> list[str]:
    """The fields in which ``given`` is a different run than ``saved``, as 'name saved -> given'."""
    a, b = _identity(saved), _identity(given)
    changes = []
    for name in a:
        if a[name] != b[name]:
            if isinstance(a[name], dict):
                changes += [f"{k} {a[name][k]} -> {b[name][k]}" for k in a[name] if a[name][k] != b[name][k]]
            else:
                changes.append(f"{name} {a[name]} -> {b[name]}")
    return changes


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of a dataclass (the string literal that follows its annotation)."""
    body = ast.parse(inspect.getsource(cls)).body[0].body
    docs = {}
    for node, following in zip(body, body[1:], strict=False):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant) and isinstance(following.value.value, str)):
            docs[node.target.id] = " ".join(following.value.value.split())
    return docs


def _fields(cls: type) -> list[tuple[str, type, object, str]]:
    """(name, type, default, doc) of each field, the nested NetConfig's fields in place of ``net``."""
    hints, docs = typing.get_type_hints(cls), field_docs(cls)
    out = []
    for f in dataclasses.fields(cls):
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        if dataclasses.is_dataclass(hints[f.name]):
            out += _fields(hints[f.name])
        else:
            out.append((f.name, hints[f.name], default, docs[f.name]))
    return out


def add_config_arguments(parser: argparse.ArgumentParser, cls: type = TrainConfig) -> None:
    """One flag per field of ``cls`` (and of its NetConfig): ``--name-with-dashes``, a boolean as a switch
    (``--no-name`` when it defaults to on), a Literal as choices, ``data`` as the positional file list.
    Flags that are not given stay out of the namespace (argparse.SUPPRESS), so that :func:`config_from_args`
    can tell what a command sets."""
    for name, kind, default, doc in _fields(cls):
        flag = "--" + name.replace("_", "-")
        if name == "data":
            parser.add_argument("data", nargs="*", default=argparse.SUPPRESS, help=f"{doc} (none with --resume)")
        elif kind is bool:
            if default:
                parser.add_argument("--no-" + name.replace("_", "-"), dest=name, action="store_false",
                                    default=argparse.SUPPRESS, help=f"turn off: {doc} (on by default)")
            else:
                parser.add_argument(flag, action="store_true", default=argparse.SUPPRESS,
                                    help=f"{doc} (off by default)")
        elif typing.get_origin(kind) is list:  # another file list than ``data``: a flag taking several values
            parser.add_argument(flag, nargs="*", type=typing.get_args(kind)[0], default=argparse.SUPPRESS,
                                metavar=name.upper(), help=f"{doc} (default: {' '.join(map(str, default)) or 'none'})")
        elif typing.get_origin(kind) is Literal:
            parser.add_argument(flag, choices=typing.get_args(kind), default=argparse.SUPPRESS,
                                help=f"{doc} (default: {default})")
        else:
            parser.add_argument(flag, type=kind, default=argparse.SUPPRESS, metavar=name.upper(),
                                help=f"{doc} (default: {default})")


def config_from_args(args: argparse.Namespace, base: TrainConfig | None = None) -> TrainConfig:
    """``base`` (default: the defaults) with the fields the command line set."""
    base = base or TrainConfig()
    given = vars(args)
    net_names = {f.name for f in dataclasses.fields(NetConfig)}
    net = dataclasses.replace(base.net, **{k: v for k, v in given.items() if k in net_names})
    top = {k: v for k, v in given.items() if k in {f.name for f in dataclasses.fields(TrainConfig)}}
    if "data" in top and not top["data"]:
        del top["data"]
    return TrainConfig(**{**dataclasses.asdict(base), **top, "net": net})


def checkpoint_path(out: str | os.PathLike) -> Path:
    return Path(out) / "checkpoint.pt"
