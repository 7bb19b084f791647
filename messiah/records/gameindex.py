"""The exact game index beside a data file (``NAME.games``): one little-endian uint32 per game, its number of
records, in file order. The writers that know their games (gensfen, the self-play records) append to it after
each whole game; every reader of a data file (:mod:`messiah.records.datafile`, the self-play records) reads it.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

GAME_INDEX_SUFFIX = ".games"
GAME_INDEX_DTYPE = np.dtype("<u4")


def game_index_path(path: str | os.PathLike) -> Path:
    """Where the game index of a data file lies: beside it, ``NAME.games``."""
    path = Path(path)
    return path.with_name(path.name + GAME_INDEX_SUFFIX)


def append_game_index(path: str | os.PathLike, lengths: Sequence[int]) -> None:
    """Append games of these lengths (records each) to the game index of data file ``path``. A writer
    that knows its games (gensfen, the RL records) calls it after each whole game it appends."""
    with open(game_index_path(path), "ab") as f:
        f.write(np.asarray(lengths, GAME_INDEX_DTYPE).tobytes())
        f.flush()
        os.fsync(f.fileno())


def read_game_index(path: str | os.PathLike, records: int) -> np.ndarray | None:
    """The first record of each game of data file ``path`` (``records`` long), from its game index: a
    little-endian uint32 per game, its number of records, in file order. None, with a warning, when the
    index does not cover the file exactly (it is then of no use); None, silently, when there is none."""
    index = game_index_path(path)
    if not index.exists():
        return None
    size = index.stat().st_size
    lengths = np.fromfile(index, GAME_INDEX_DTYPE, count=size // GAME_INDEX_DTYPE.itemsize).astype(np.int64)
    if size % GAME_INDEX_DTYPE.itemsize or lengths.sum() != records or (lengths == 0).any():
        warnings.warn(f"{index}: covers {lengths.sum():,} records in {len(lengths):,} games, the file holds "
                      f"{records:,}: ignored, games are guessed", stacklevel=2)
        return None
    return np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
