"""The teacher's top lines beside a data file (``NAME.multipv``): for each record of the file, in its order, the
first move and the eval of each line the teacher engine reported with ``MultiPV`` (``messiah gensfen --multipv``).

A record holds one move; the all-moves net scores every legal move, so a teacher's eval of its second, third, ...
best move is a target for those moves too (pretraining's ``--lines-weight``). The layout, one row a record,
little-endian: MOST_LINES ``move16`` (uint16, cshogi's 16-bit moves, line 1 first; 0 where the engine gave fewer
lines), then MOST_LINES ``eval`` (int16, cp for the side to move, mates as +-MAX_CP: the hcpe eval's convention).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from messiah.errors import DataError

CANDIDATES_SUFFIX = ".multipv"
MOST_LINES = 8  # lines a row holds: a MultiPV beyond it is cut (the data a line brings falls with its rank)
CANDIDATES = np.dtype([("move16", "<u2", (MOST_LINES,)), ("eval", "<i2", (MOST_LINES,))])


def candidates_path(path: str | os.PathLike) -> Path:
    """Where the lines of data file ``path`` lie: beside it, ``NAME.multipv``."""
    path = Path(path)
    return path.with_name(path.name + CANDIDATES_SUFFIX)


def candidate_row(lines: Sequence[tuple[int, int]]) -> np.ndarray:
    """One row of the layout from a position's lines, best first: (move16, eval) pairs, cut at MOST_LINES."""
    row = np.zeros((), CANDIDATES)
    for j, (move16, score) in enumerate(lines[:MOST_LINES]):
        row["move16"][j] = move16
        row["eval"][j] = score
    return row


def read_candidates(path: str | os.PathLike, records: int) -> np.ndarray | None:
    """The lines of data file ``path`` (``records`` long) as a read-only memory map of CANDIDATES rows; None when
    it has none. DataError when the file of lines does not hold one row a record (a file cut short or another
    file's)."""
    lines = candidates_path(path)
    if not lines.exists():
        return None
    size = lines.stat().st_size
    if size != records * CANDIDATES.itemsize:
        raise DataError(f"{lines}: {size:,} bytes, where {records:,} records of {Path(path).name} need "
                        f"{records * CANDIDATES.itemsize:,} ({CANDIDATES.itemsize} a record); remove it to train "
                        "on the file's moves alone")
    if records == 0:
        return np.zeros(0, CANDIDATES)
    return np.memmap(lines, CANDIDATES, mode="r", shape=(records,))
