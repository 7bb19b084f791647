"""ONNX export: the engine loads these files with onnxruntime and never imports torch.

All-moves graph: inputs ``features`` float32 (B, 36, 11, 9) and ``moves`` int64 (B, M) move indices
(pad with any index and ignore the padded outputs); output ``q`` float32 (B, M), win rates for the side
to move. The Magic Vec is stored only for :func:`messiah.moves.possible_indices` (3,813 of 14,256 rows),
reached through an index -> row map; impossible indices read a zero row (Q = sigmoid(0), or sigmoid(V(s))
for a dueling net, whose value head V is added to every move's logit inside the graph).

Scalar graph: input ``features``; output ``value`` float32 (B,), the side to move's win rate.

The file's metadata records what the evaluator checks before it runs anything: the graph kind, the
feature version and the architecture.
"""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path

import torch
from torch import nn

from messiah.features import FEATURE_VERSION, SHAPE
from messiah.models.net import AllMovesNet, ScalarNet
from messiah.models.onnxfile import save_model

OPSET = 18


class _AllMovesGraph(nn.Module):
    """Batch-1 friendly: gathers only the requested rows (M x 300) instead of the whole table."""

    def __init__(self, net: AllMovesNet):
        super().__init__()
        self.backbone = net.backbone
        table, bias = net.table()
        self.register_buffer("row_of", net.row_of)
        self.register_buffer("table", table.detach())
        self.register_buffer("bias", bias.detach())
        self.value = net.value  # the dueling value head, or None

    def forward(self, features: torch.Tensor, moves: torch.Tensor) -> torch.Tensor:
        h = self.backbone(features)
        rows = self.row_of[moves]
        logits = torch.matmul(self.table[rows], h.unsqueeze(-1)).squeeze(-1) + self.bias[rows]
        if self.value is not None:
            logits = logits + self.value(h)  # (B, 1): V(s) on every move
        return torch.sigmoid(logits)


class _ScalarGraph(nn.Module):
    def __init__(self, net: ScalarNet):
        super().__init__()
        self.net = net

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.net(features))


def export_onnx(net: AllMovesNet | ScalarNet, path: str | os.PathLike, metadata: dict | None = None) -> Path:
    """Write ``net`` (on the CPU) as a single-file ONNX model (atomically) and return its path. The net is
    exported in eval mode and left in the mode it was in."""
    was_training = net.training
    net.eval()
    try:
        return _export(net, path, metadata)
    finally:
        net.train(was_training)


def _export(net: AllMovesNet | ScalarNet, path: str | os.PathLike, metadata: dict | None) -> Path:
    features = torch.zeros(2, *SHAPE)
    batch = torch.export.Dim("batch")
    if isinstance(net, AllMovesNet):
        graph, args, kind = _AllMovesGraph(net).eval(), (features, torch.zeros(2, 5, dtype=torch.long)), "all_moves"
        names, outputs = ["features", "moves"], ["q"]
        shapes = {"features": {0: batch}, "moves": {0: batch, 1: torch.export.Dim("moves")}}
    else:
        graph, args, kind = _ScalarGraph(net).eval(), (features,), "scalar"
        names, outputs, shapes = ["features"], ["value"], {"features": {0: batch}}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    quiet = logging.getLogger("torch.onnx")
    level, quiet.level = quiet.level, logging.ERROR  # it lists every torchvision op it cannot find
    try:
        with warnings.catch_warnings(), torch.no_grad():
            # torch's own deprecation notices about its internals, not about this call
            warnings.filterwarnings("ignore", message=".*treespec.*", category=FutureWarning)
            warnings.filterwarnings("ignore", message="# The axis name", category=UserWarning)
            program = torch.onnx.export(graph, args, input_names=names, output_names=outputs, dynamic_shapes=shapes,
                                        opset_version=OPSET, dynamo=True, external_data=False, verbose=False)
    finally:
        quiet.level = level
    model = program.model_proto
    props = {"messiah.kind": kind, "messiah.feature_version": str(FEATURE_VERSION),
             "messiah.config": net.config.to_json(), **{f"messiah.{k}": str(v) for k, v in (metadata or {}).items()}}
    return save_model(model, path, props)
