"""`messiah evaluate`: how often a model's best move is the teacher's, on hcpe data (ONNX, no torch)."""

from __future__ import annotations

import math

import cshogi
import numpy as np
from tqdm import tqdm

from messiah.evaluator import Evaluator
from messiah.features import hcp_arrays
from messiah.moves import legal_move_indices, move_indices

CHUNK = 256


def evaluate_file(model: str | None, path: str, limit: int = 0, threads: int = 0, scale: float = 875.0) -> dict:
    """agreement, top3, value_mse (None when the data has no evals) and n over the records of ``path``.

    value_mse compares the position's value, max Q, with sigmoid(eval / scale)."""
    from train.data import read_hcpe

    records = read_hcpe(path)
    if limit:
        records = records[:limit]
    evaluator = Evaluator(model, threads=threads)
    has_evals = bool(np.any(records["eval"] != 0))
    hits = top3 = n = 0
    squared = 0.0
    board = cshogi.Board()
    for start in tqdm(range(0, len(records), CHUNK), desc="evaluate", unit="chunk", leave=False):
        chunk = records[start : start + CHUNK]
        legal, teacher = [], []
        for rec in chunk:
            board.set_hcp(rec["hcp"])
            legal.append(legal_move_indices(board))
            teacher.append(move_indices(np.array([rec["bestMove16"]]), board.turn)[0])
        for scores, t, rec in zip(evaluator.score_arrays(hcp_arrays(chunk["hcp"]), legal), teacher, chunk,
                                  strict=True):
            if len(scores.q) == 0:
                continue
            order = np.argsort(-scores.q)
            ranked = scores.indices[order[:3]]
            hits += int(ranked[0] == t)
            top3 += int(t in ranked)
            target = 1 / (1 + math.exp(-float(rec["eval"]) / scale))
            squared += (scores.value() - target) ** 2
            n += 1
    if n == 0:
        raise ValueError(f"{path}: no position with a legal move")
    return {"agreement": hits / n, "top3": top3 / n, "value_mse": squared / n if has_evals else None, "n": n}
