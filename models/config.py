"""The network's architecture as plain data (no torch): what a checkpoint, an ONNX file's metadata and
the command line (through :mod:`train.config`) record."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass


@dataclass(frozen=True)
class NetConfig:
    """Architecture. Depth in 3x3 convolutions is ``1 + 2 * blocks``."""

    channels: int = 32
    """channels of the residual tower"""
    blocks: int = 3
    """residual blocks of two 3x3 convolutions each"""
    head_channels: int = 16
    """channels of the 1x1 convolution before the fully connected layer"""
    embed_dim: int = 300
    """length of h(s) and of each Magic Vec row"""
    value_hidden: int = 0
    """> 0: a dueling net, Q = sigmoid(V(s) + A(s, a)) with V an MLP of this width on h(s) (--loss dueling: 64)"""

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @staticmethod
    def from_json(text: str) -> NetConfig:
        return NetConfig(**json.loads(text))

    def describe(self) -> str:
        return f"{1 + 2 * self.blocks}x{self.channels}"
