"""Training batches built in worker processes, so the training step never waits for board decoding.

Batch ``k`` of process ``rank`` is a pure function of ``(seed, rank, k)``: its rows are drawn by a random
generator seeded with those three numbers. A run resumed at step k therefore replays exactly the batches
an uninterrupted run would have seen, whatever the number of workers, and each DDP rank sees its own.

A worker hands a batch over as one byte buffer (:func:`pack`): torch passes each tensor's shared memory
by a round trip to the worker that made it, and one round trip instead of six cut the training process's
wait per batch by about a third on a loaded 2-core machine.

Workers are started with ``forkserver`` (``spawn`` where there is none), not ``fork``: the feature
planes' numba kernels run on an OpenMP pool, and GNU OpenMP aborts a child forked from a process that
already used it. The records travel to the workers as file names when they are memory maps (``Records`` pickles so).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator, Sequence

import numpy as np
import torch

from messiah.records import Records
from messiah.train.batch import mirror
from messiah.train.data import gather

Packed = tuple[torch.Tensor, list[tuple[str, torch.dtype, tuple[int, ...], int, int]]]


def pack(batch: dict[str, torch.Tensor]) -> Packed:
    """The tensors of a batch in one uint8 buffer (each at an offset aligned to 8 bytes), and where."""
    parts, where, offset = [], [], 0
    for name, tensor in batch.items():
        raw = tensor.contiguous().view(torch.uint8).reshape(-1)
        pad = -raw.numel() % 8
        parts += [raw, raw.new_zeros(pad)]
        where.append((name, tensor.dtype, tuple(tensor.shape), offset, raw.numel()))
        offset += raw.numel() + pad
    return torch.cat(parts), where


def unpack(packed: Packed) -> dict[str, torch.Tensor]:
    """The batch of :func:`pack`, as views of its buffer (no copy)."""
    buffer, where = packed
    return {name: buffer[o : o + n].view(dtype).reshape(shape) for name, dtype, shape, o, n in where}


class StepBatches(torch.utils.data.Dataset):
    """Map-style dataset over steps: ``dataset[k]`` is training batch k of this rank, as CPU tensors."""

    def __init__(self, files: Sequence[Records], index: np.ndarray, batch_size: int, seed: int, rank: int = 0,
                 mirror: bool = False):
        self.files, self.index, self.batch_size, self.seed, self.rank = list(files), index, batch_size, seed, rank
        self.mirror = mirror  # mirror each position left-right with probability 1/2

    def _draw(self, step: int) -> tuple[np.ndarray, np.random.Generator]:
        """The rows of batch ``step`` and the generator that drew them, for the draws after: batch k is a
        function of (seed, rank, k) alone, so --resume continues exactly."""
        rng = np.random.default_rng((self.seed, self.rank, step))
        return self.index[rng.integers(0, len(self.index), self.batch_size)], rng

    def rows(self, step: int) -> np.ndarray:
        return self._draw(step)[0]

    def __getitem__(self, step: int) -> dict[str, torch.Tensor]:
        rows, rng = self._draw(step)
        batch = gather(self.files, rows).batch()
        if self.mirror:
            mirror(batch, rng.random(len(batch.teacher)) < 0.5)
        return batch.tensors()


class _PackedSteps(torch.utils.data.Dataset):
    """What the workers hand over: packed batches."""

    def __init__(self, steps: StepBatches):
        self.steps = steps

    def __getitem__(self, step: int) -> Packed:
        return pack(self.steps[step])


def _identity(packed: Packed) -> Packed:
    return packed


def _init_worker(worker_id: int) -> None:
    """One core per worker: numba's pool would otherwise take every core in every worker."""
    import numba

    numba.set_num_threads(1)


def _context() -> multiprocessing.context.BaseContext:
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(["messiah.train.loader"])  # workers fork from a server that imported it once
    return ctx


def step_batches(dataset: StepBatches, start: int, stop: int, workers: int = 0,
                 pin_memory: bool = False) -> Iterator[dict[str, torch.Tensor]]:
    """Batches ``start .. stop-1`` in order; built in ``workers`` processes (0: in this one)."""
    if workers == 0:
        return (dataset[k] for k in range(start, stop))
    loader = torch.utils.data.DataLoader(_PackedSteps(dataset), batch_size=None, sampler=range(start, stop),
                                         num_workers=workers, pin_memory=pin_memory, worker_init_fn=_init_worker,
                                         multiprocessing_context=_context(), collate_fn=_identity)
    return map(unpack, loader)
