"""ONNX back to PyTorch: an :class:`AllMovesNet` with the weights of an exported all-moves model, so that
training can start from a shipped model, which has no checkpoint.

The export folds each batch norm into its convolution, so :func:`net_from_onnx` loads the initializers as
convolutions followed by a batch norm that reproduces the folded bias exactly in eval mode, and whose scale
and shift are set from the activations' statistics on sample positions so that training mode (batch
statistics) computes nearly the same function from the first step.
"""

from __future__ import annotations

from pathlib import Path

import cshogi
import numpy as np
import torch
from torch import nn

from messiah.errors import DataError
from messiah.features import PositionArrays, planes
from messiah.models.config import NetConfig
from messiah.models.net import AllMovesNet

CALIBRATION_POSITIONS = 512  # sample positions that set the batch norms of a net loaded from ONNX
CALIBRATION_PLIES = 80  # random-play length of those positions


def calibration_positions(n: int = CALIBRATION_POSITIONS, seed: int = 0) -> np.ndarray:
    """Feature planes of ``n`` positions from random play (a spread of openings, middle and end games)."""
    rng = np.random.default_rng(seed)
    arrays = PositionArrays.empty(n)
    board = cshogi.Board()
    for i in range(n):
        board.reset()
        for _ in range(int(rng.integers(0, CALIBRATION_PLIES))):
            legal = list(board.legal_moves)
            if not legal:
                break
            board.push(legal[rng.integers(len(legal))])
            if board.is_game_over():
                break
        arrays.set(i, board)
    return planes(arrays)


def net_from_onnx(path: str | Path, calibrate: bool = True) -> AllMovesNet:
    """An AllMovesNet with the weights of a messiah all-moves ONNX model (architecture from its metadata).
    The export folds each batch norm into its convolution (weight W', bias b'): the conv gets W' and its
    batch norm becomes y -> (y - mu) / sqrt(var + eps) * sqrt(var + eps) + mu + b' with mu, var the
    activations' statistics on sample positions: exactly W'x + b' in eval mode, and nearly so in training
    mode, whose batch statistics are close to mu and var."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    meta = {p.key: p.value for p in model.metadata_props}
    if meta.get("messiah.kind") != "all_moves" or "messiah.config" not in meta:
        raise DataError(f"{path}: not a messiah all-moves ONNX model (no messiah.kind/messiah.config metadata)")
    net = AllMovesNet(NetConfig.from_json(meta["messiah.config"]))
    weights = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in model.graph.initializer}
    rows = len(net.embedding) + 1
    table = [w for w in weights.values() if w.dim() == 2 and tuple(w.shape) == (rows, net.config.embed_dim)]
    bias = [w for w in weights.values() if w.dim() == 1 and len(w) == rows and w.is_floating_point()]
    if len(table) != 1 or len(bias) != 1:
        raise DataError(f"{path}: cannot find the Magic Vec table ({rows} x {net.config.embed_dim}) and its bias")
    state = net.state_dict()
    with torch.no_grad():
        net.embedding.copy_(table[0][:-1])
        net.bias.copy_(bias[0][:-1])
        for name, module in net.named_modules():
            if isinstance(module, nn.Conv2d):
                module.weight.copy_(weights[f"{name}.weight"])
            elif isinstance(module, nn.BatchNorm2d):
                conv = name[: -len(".1")] + ".0"
                # An export leaves the folded bias out where it is all zeros (a net exported as initialised).
                folded = weights.get(f"{conv}.weight_bias", torch.zeros(module.num_features))
                module.weight.fill_(1.0)
                module.bias.copy_(folded)
                module.running_mean.zero_()
                module.running_var.fill_(1.0 - module.eps)
            elif isinstance(module, nn.Linear):
                module.weight.copy_(weights[f"{name}.weight"])
                module.bias.copy_(weights[f"{name}.bias"])
    missing = [k for k in state if k.startswith("value.") and f"{k}" not in weights]
    if missing:
        raise DataError(f"{path}: the dueling value head's weights are missing ({', '.join(missing)})")
    if calibrate:
        _calibrate_batch_norms(net, torch.from_numpy(calibration_positions()))
    return net.eval()


@torch.no_grad()
def _calibrate_batch_norms(net: AllMovesNet, features: torch.Tensor) -> None:
    """Give each identity-like batch norm the mean and variance of its input on ``features`` (see
    :func:`net_from_onnx`); eval-mode outputs do not change."""
    seen: dict[nn.BatchNorm2d, torch.Tensor] = {}
    hooks = [m.register_forward_hook(lambda m, x, y: seen.__setitem__(m, x[0]))
             for m in net.modules() if isinstance(m, nn.BatchNorm2d)]
    net.eval()
    net(features)
    for h in hooks:
        h.remove()
    for bn, x in seen.items():
        mu, var = x.mean((0, 2, 3)), x.var((0, 2, 3), unbiased=False)
        std = torch.sqrt(var + bn.eps)
        bn.bias.add_(mu)  # (y - mu) / std * std + mu + b'
        bn.weight.copy_(std)
        bn.running_mean.copy_(mu)
        bn.running_var.copy_(var)

