"""A wider tower that computes the same function: how a run adds capacity without losing a trained model.

Self-play stalled at m6 with 32 channels (docs/rl-results.md). To ask whether width is the limit, a wider net
pretrained from scratch would have to climb the whole way again; :func:`widen` instead gives ``net`` more channels
in its residual tower and keeps its output exactly (Net2WiderNet, Chen, Goodfellow and Shlens 2016, in its
zero-outgoing form): every new channel reads all the channels below it through fresh random weights, and nothing
reads a new channel yet (its outgoing weights are zero). Training then starts from the old model's play, and the
zero weights get gradients at once, because the new channels' activations are not zero.
"""

from __future__ import annotations

import dataclasses

import torch

from messiah.models.net import AllMovesNet


def widen(net: AllMovesNet, channels: int, seed: int = 0) -> AllMovesNet:
    """A copy of ``net`` with ``channels`` channels in its stem and residual blocks, equal to ``net`` in eval mode.

    Each tensor of the wider net's fresh initialisation (seeded) keeps its random rows for the new output channels;
    the old outputs get the old weights, and zeros where they would read a new input channel. Batch norms keep
    their old statistics and a new channel's start as PyTorch's defaults."""
    old = net.config.channels
    if channels < old:
        raise ValueError(f"cannot widen a {old}-channel net to {channels} channels")
    with torch.random.fork_rng():  # seeded without moving the caller's generator
        torch.manual_seed(seed)
        wide = AllMovesNet(dataclasses.replace(net.config, channels=channels))
    state = wide.state_dict()
    with torch.no_grad():
        for name, w in net.state_dict().items():
            target = state[name]
            if target.shape == w.shape:
                target.copy_(w)
                continue
            if w.dim() > 1:  # a convolution (out, in, k, k): the old outputs read no new input channel
                target[: w.shape[0]].zero_()
            target[tuple(slice(0, n) for n in w.shape)].copy_(w)
    wide.load_state_dict(state)
    return wide
