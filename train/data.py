"""Teacher data: hcpe files memory-mapped, split by game, and turned into training batches.

A batch carries everything the loss needs and nothing else: feature planes, the legal moves' indices
(padded), where the teacher's move sits in that list, the teacher's eval and the game result from the
side to move's point of view.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cshogi
import numpy as np

from messiah.features import hcp_arrays, planes
from messiah.moves import legal_move_indices, move_indices, pad_indices

HCPE = cshogi.HuffmanCodedPosAndEval


def read_hcpe(path: str | os.PathLike) -> np.ndarray:
    """Memory-map an hcpe file. Raises ValueError naming the file when its size is not a whole number of
    38-byte records (truncated, or not hcpe)."""
    path = Path(path)
    size = path.stat().st_size
    if size == 0 or size % HCPE.itemsize:
        raise ValueError(f"{path}: {size} bytes is not a whole number of {HCPE.itemsize}-byte hcpe "
                         "records (truncated or not an hcpe file)")
    return np.memmap(path, HCPE, mode="r")


def split_by_game(records: np.ndarray, val_fraction: float) -> tuple[np.ndarray, np.ndarray]:
    """Indices of (train, validation): the validation part is the tail of the file, starting at a game
    boundary so that no game is on both sides. Positions of a game are consecutive; a new game starts
    where the result changes or the position does not follow from the previous one by one ply."""
    n = len(records)
    cut = int(n * (1 - val_fraction))
    board = cshogi.Board()
    hcp = np.empty(1, cshogi.HuffmanCodedPos)
    while 0 < cut < n:
        board.set_hcp(records["hcp"][cut - 1])
        move = board.move_from_move16(int(records["bestMove16"][cut - 1]))
        if records["gameResult"][cut] != records["gameResult"][cut - 1] or not board.is_legal(move):
            break
        board.push(move)
        board.to_hcp(hcp)
        if not np.array_equal(hcp["hcp"][0], records["hcp"][cut]):
            break  # the next record is not the teacher's move played: a new game (or a played move)
        cut += 1
    return np.arange(cut), np.arange(cut, n)


@dataclass
class Batch:
    features: np.ndarray  # (B, 36, 11, 9) float32
    legal: np.ndarray  # (B, M) int64 move indices, padded with 0
    legal_mask: np.ndarray  # (B, M) bool
    teacher: np.ndarray  # (B,) int64 position of the teacher move in ``legal``
    eval_cp: np.ndarray  # (B,) float32 teacher eval for the side to move
    result: np.ndarray  # (B,) float32 1 win / 0.5 draw / 0 loss for the side to move


def make_batch(records: np.ndarray) -> Batch:
    """Build a batch from hcpe records. Records whose teacher move is not legal are dropped."""
    arrays = hcp_arrays(records["hcp"])
    board = cshogi.Board()
    legal, keep, teacher = [], [], []
    for i, rec in enumerate(records):
        board.set_hcp(rec["hcp"])
        _, idx = legal_move_indices(board)
        t = move_indices(np.array([rec["bestMove16"]]), board.turn)[0]
        where = np.flatnonzero(idx == t)
        if len(where):
            keep.append(i)
            legal.append(idx)
            teacher.append(where[0])
    keep = np.array(keep, np.int64)
    padded, mask = pad_indices(legal)
    turns = arrays.turns[keep]
    game_result = records["gameResult"][keep]
    winner = np.where(game_result == cshogi.BLACK_WIN, cshogi.BLACK, cshogi.WHITE)
    result = np.where(game_result == cshogi.DRAW, 0.5, (winner == turns).astype(np.float32))
    sub = type(arrays)(arrays.pieces[keep], arrays.hands[keep], turns)
    return Batch(planes(sub), padded, mask, np.array(teacher, np.int64),
                 records["eval"][keep].astype(np.float32), result.astype(np.float32))


class TeacherData:
    """Several hcpe files as one indexable set, with a by-game validation split per file."""

    def __init__(self, paths: Sequence[str | os.PathLike], val_fraction: float = 0.05):
        self.files = [read_hcpe(p) for p in paths]
        self.train: list[tuple[int, int]] = []  # (file, record)
        self.val: list[tuple[int, int]] = []
        for f, records in enumerate(self.files):
            tr, va = split_by_game(records, val_fraction)
            self.train += [(f, int(i)) for i in tr]
            self.val += [(f, int(i)) for i in va]
        self.train_index = np.array(self.train, np.int64).reshape(-1, 2)
        self.val_index = np.array(self.val, np.int64).reshape(-1, 2)

    def records(self, index: np.ndarray) -> np.ndarray:
        """Gather records for rows of a (file, record) index array."""
        out = np.empty(len(index), HCPE)
        for f, records in enumerate(self.files):
            sel = index[:, 0] == f
            out[sel] = records[index[sel, 1]]
        return out
