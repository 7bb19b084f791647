"""Teacher data for training: data files of any format (:mod:`messiah.records` reads them) as one set of
records with a by-game validation split, and the gathering of rows from several files into a batch
(:mod:`messiah.train.batch`).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from messiah.records import CANDIDATES, HCPE, Records, count_games, game_index_path, read_records, split_by_game
from messiah.train.batch import Batch, teacher_rows
from messiah.train.config import VAL_FRACTION

VAL_SEED = 1  # the held-out positions validated: one fixed draw, the same at every validation of every run
VAL_BATCH = 512  # positions per validation batch


@dataclass
class Gathered:
    """Records gathered from several files, with their masks."""

    records: np.ndarray  # HCPE
    eval_known: np.ndarray  # bool per record
    result_known: np.ndarray  # bool per record
    lines: np.ndarray | None = None  # CANDIDATES per record (none where its file has none); None: no file has any

    def batch(self) -> Batch:
        return teacher_rows(self.records, self.eval_known, self.result_known, self.lines)


def gather(files: Sequence[Records], index: np.ndarray) -> Gathered:
    """Records, whether each carries an eval and a result, and the teacher's top lines where a file has them,
    for rows of a (file, record) index array."""
    out = Gathered(np.empty(len(index), HCPE), np.zeros(len(index), bool), np.zeros(len(index), bool))
    if any(records.lines is not None for records in files):
        out.lines = np.zeros(len(index), CANDIDATES)
    for f, records in enumerate(files):
        sel = index[:, 0] == f
        if sel.any():
            rows = index[sel, 1]
            out.records[sel] = records[rows]
            out.eval_known[sel] = records.eval_mask(rows)
            out.result_known[sel] = records.result_mask(rows)
            if out.lines is not None:
                out.lines[sel] = records.line_rows(rows)
    return out


class TeacherData:
    """Data files of any supported format (see :func:`read_records`) as one indexable set of hcpe
    records, with a by-game validation split per file. ``has_evals[f]`` says whether file f carries
    teacher evals (floodgate and KIF records do not: their eval is 0, and training uses their result).

    Where a file says where its games start (game records, a gensfen game index) the split is exact;
    where the games must be guessed from consecutive positions, a warning says so and how many games the
    validation part was found to hold (``val_games[f]``; None where known): a gap of 3+ plies between
    recorded positions or a shuffled file would make the guess split by position."""

    def __init__(self, paths: Sequence[str | os.PathLike], val_fraction: float = VAL_FRACTION):
        self.files = [read_records(p) for p in paths]
        self.has_evals = [f.has_evals for f in self.files]
        self.val_games: list[int | None] = []
        train, val = [], []
        for f, records in enumerate(self.files):
            tr, va = split_by_game(records, val_fraction, records.game_starts)
            train.append(np.stack([np.full(len(tr), f), tr], axis=1))
            val.append(np.stack([np.full(len(va), f), va], axis=1))
            known = records.game_starts is not None or not len(va)
            self.val_games.append(None if known else self._guessed(records, va))
        self.train_index = np.concatenate(train or [np.empty((0, 2))]).astype(np.int64).reshape(-1, 2)
        self.val_index = np.concatenate(val or [np.empty((0, 2))]).astype(np.int64).reshape(-1, 2)

    @staticmethod
    def _guessed(records: Records, val: np.ndarray) -> int:
        """Count the games of a validation part whose boundaries were guessed, and warn."""
        games = count_games(records[val], max_plies=2) if len(val) else 0
        mean = f", {len(val) / games:.1f} positions a game" if games else ""
        warnings.warn(f"{records.path}: no game index ({game_index_path(records.path).name}); games guessed from "
                      f"consecutive positions: the validation part holds {len(val):,} positions of {games:,} "
                      f"games{mean}", stacklevel=3)
        return games

    def gather(self, index: np.ndarray) -> Gathered:
        """Records and their masks for rows of a (file, record) index array."""
        return gather(self.files, index)

    def records(self, index: np.ndarray) -> np.ndarray:
        """Gather records for rows of a (file, record) index array."""
        return self.gather(index).records



def held_out(index: np.ndarray, positions: int) -> np.ndarray:
    """Up to ``positions`` rows of a held-out (file, record) index, drawn once with VAL_SEED: every validation of
    every run (pretraining's and the RL learner's) reads the same positions."""
    return index[np.random.default_rng(VAL_SEED).permutation(len(index))[:positions]]


def validation_batches(data: TeacherData, rows: np.ndarray) -> list[Batch]:
    """``rows`` of ``data`` (a TeacherData, or anything with its ``gather``) as batches of VAL_BATCH, the empty
    ones (no legal teacher move) left out."""
    batches = [data.gather(rows[i : i + VAL_BATCH]).batch() for i in range(0, len(rows), VAL_BATCH)]
    return [b for b in batches if len(b)]
