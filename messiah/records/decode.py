"""hcpe records decoded once into the arrays the features and the move indices are made from: the batch
path of both learners and of ``messiah evaluate``."""

from __future__ import annotations

from dataclasses import dataclass

import cshogi
import numpy as np

from messiah.errors import DataError
from messiah.features import PositionArrays
from messiah.moves import legal_move_indices, move_indices


def positions(records: np.ndarray) -> tuple[PositionArrays, list[tuple[np.ndarray, np.ndarray]]]:
    """Every record's position as arrays, with its legal moves (uint32) and their indices, in
    legal_move_indices order; DataError naming a record that is not a position."""
    arrays = PositionArrays.empty(len(records))
    board = cshogi.Board()
    legal = []
    for i, hcp in enumerate(np.asarray(records["hcp"])):
        try:
            board.set_hcp(hcp)
        except RuntimeError as e:
            raise DataError(f"record {i} is not a valid HuffmanCodedPos: {e}") from None
        arrays.set(i, board)
        legal.append(legal_move_indices(board))
    return arrays, legal


@dataclass
class Decoded:
    """hcpe records decoded once: the positions whose teacher move is legal, as arrays, with their legal
    moves and where the teacher's move sits among them."""

    keep: np.ndarray  # (N,) int64 rows of the records kept (teacher move legal)
    arrays: PositionArrays  # the kept positions
    legal: list[tuple[np.ndarray, np.ndarray]]  # per kept position: legal moves (uint32) and their indices
    teacher: np.ndarray  # (N,) int64 position of the teacher move in its legal list


def decode(records: np.ndarray) -> Decoded:
    """The records' positions (:func:`positions`) with the teacher's move found among the legal ones. Records
    whose teacher move is not legal are dropped."""
    arrays, legal = positions(records)
    moves16 = records["bestMove16"]
    keep, teacher = [], []
    for i, (_, idx) in enumerate(legal):
        where = np.flatnonzero(idx == move_indices(np.array([moves16[i]]), int(arrays.turns[i]))[0])
        if len(where):
            keep.append(i)
            teacher.append(where[0])
    rows = np.array(keep, np.int64)
    return Decoded(rows, PositionArrays(arrays.pieces[rows], arrays.hands[rows], arrays.turns[rows]),
                   [legal[i] for i in keep], np.array(teacher, np.int64))
