"""The networks: an all-moves Q network (docs/method.md section 1) and its scalar-value twin.

Both share :class:`Backbone`: a 3x3 convolution stem, residual blocks of two 3x3 convolutions, and a
head (1x1 convolution, flatten, linear) giving a vector per position. The all-moves net reads that vector
as h(s) in R^300 and scores a move a by ``Q(s, a) = sigmoid(<h(s), E[a]> + b[a])`` with the Magic Vec
E (14,256 x 300) and a per-move bias b; the twin maps it to one number per position, so the two cost
the same per forward pass and differ only in how many passes scoring a position's moves takes.

With ``value_hidden > 0`` the all-moves net is a dueling net: ``Q(s, a) = sigmoid(V(s) + A(s, a))`` with
a small value head V (an MLP on h) and the advantage ``A(s, a) = <h(s), E[a]> + b[a]``. The output
contract is unchanged (one Q per move); only training treats V and A apart (see train/pretrain.py).
"""

from __future__ import annotations

import torch
from torch import nn

from messiah.features import NUM_CHANNELS
from messiah.models.config import NetConfig
from messiah.moves import NUM_MOVE_INDICES, possible_indices

__all__ = ["AllMovesNet", "Backbone", "NetConfig", "ScalarNet"]


def _conv_bn(cin: int, cout: int, k: int = 3) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, k, padding=k // 2, bias=False), nn.BatchNorm2d(cout))


class ResidualBlock(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.a = _conv_bn(channels, channels)
        self.b = _conv_bn(channels, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.b(torch.relu(self.a(x))))


class Backbone(nn.Module):
    """Feature planes (B, 36, 11, 9) -> a vector (B, embed_dim) per position."""

    def __init__(self, config: NetConfig):
        super().__init__()
        self.stem = _conv_bn(NUM_CHANNELS, config.channels)
        self.blocks = nn.Sequential(*(ResidualBlock(config.channels) for _ in range(config.blocks)))
        self.head = _conv_bn(config.channels, config.head_channels, k=1)
        self.fc = nn.Linear(config.head_channels * 11 * 9, config.embed_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks(torch.relu(self.stem(x)))
        return self.fc(torch.relu(self.head(x)).flatten(1))


class AllMovesNet(nn.Module):
    """h(s) from the backbone, Q(s, a) from the Magic Vec. Training works on logits (pre-sigmoid).

    The Magic Vec is indexed by the 14,256 move indices but stores rows only for the 3,813 move shapes
    any piece can make (:func:`messiah.moves.possible_indices`); the other indices read a fixed zero row.
    Scoring a batch's legal moves is one dense product with that table and a gather: far faster on a
    CPU than gathering a (B, M, 300) tensor of embeddings.
    """

    def __init__(self, config: NetConfig | None = None, zero_embedding: bool = False):
        super().__init__()
        self.config = config = config or NetConfig()
        self.backbone = Backbone(config)
        rows = torch.from_numpy(possible_indices())
        row_of = torch.full((NUM_MOVE_INDICES,), len(rows), dtype=torch.long)
        row_of[rows] = torch.arange(len(rows))
        self.register_buffer("row_of", row_of)
        self.embedding = nn.Parameter(torch.randn(len(rows), config.embed_dim) * config.embed_dim**-0.5)
        self.bias = nn.Parameter(torch.zeros(len(rows)))
        if zero_embedding:
            nn.init.zeros_(self.embedding)
        self.value: nn.Sequential | None = None
        if config.value_hidden:
            self.value = nn.Sequential(nn.Linear(config.embed_dim, config.value_hidden), nn.ReLU(),
                                       nn.Linear(config.value_hidden, 1))
            nn.init.zeros_(self.value[2].weight)  # V starts at 0: the dueling net starts as the plain one
            nn.init.zeros_(self.value[2].bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """h(s): (B, embed_dim)."""
        return self.backbone(x)

    def table(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The Magic Vec and bias with the zero row for impossible indices appended: (R+1, D), (R+1,)."""
        zero = self.embedding.new_zeros(1, self.embedding.shape[1])
        return torch.cat([self.embedding, zero]), torch.cat([self.bias, self.bias.new_zeros(1)])

    def advantage_logits(self, h: torch.Tensor, moves: torch.Tensor) -> torch.Tensor:
        """``<h, E[a]> + b[a]`` for move indices ``moves`` of shape (B,) or (B, M) -> the same shape."""
        table, bias = self.table()
        rows = self.row_of[moves]
        if moves.dim() == 1:
            return (h * table[rows]).sum(-1) + bias[rows]
        return (h @ table.T + bias).gather(1, rows)

    def state_logit(self, h: torch.Tensor) -> torch.Tensor:
        """V(s): (B,), the dueling value head's logit; zeros without one."""
        if self.value is None:
            return h.new_zeros(h.shape[0])
        return self.value(h).squeeze(-1)

    def move_logits(self, h: torch.Tensor, moves: torch.Tensor) -> torch.Tensor:
        """Logits of Q, ``V(s) + A(s, a)``, for move indices ``moves`` of shape (B,) or (B, M) -> the same shape."""
        z = self.advantage_logits(h, moves)
        if self.value is None:
            return z
        v = self.state_logit(h)
        return z + (v if moves.dim() == 1 else v[:, None])


class ScalarNet(nn.Module):
    """The twin: same backbone, one win rate per position (for the side to move). Only for measuring
    what the all-moves design buys: scoring N moves with it takes N child positions."""

    def __init__(self, config: NetConfig | None = None):
        super().__init__()
        self.config = config = config or NetConfig()
        self.backbone = Backbone(config)
        self.value = nn.Linear(config.embed_dim, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logit of the side to move's win rate: (B,)."""
        return self.value(torch.relu(self.backbone(x))).squeeze(-1)
