"""`messiah evaluate`: how often a model's best move is the teacher's, on any data file the readers of
:mod:`train.data` open (hcpe, psv, CSA, KIF, jsonl), with ONNX Runtime only (no torch)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from messiah.config import at_least
from messiah.errors import DataError
from messiah.evaluator import Evaluator
from messiah.winrate import TEACHER_SCALE, zero_sum

CHUNK = 256


@dataclass
class EvaluateConfig:
    """``messiah evaluate``: a model on a data file."""

    data: str
    """hcpe, psv/bin, CSA, KIF/KIFU or jsonl (sfen, bestmove, eval) file"""
    model: str | None = None
    """ONNX model (default: the shipped one)"""
    limit: int = 0
    """evaluate the first N positions only (0: all)"""
    threads: int = 0
    """onnxruntime threads (0: onnxruntime's own choice)"""
    scale: float = TEACHER_SCALE
    """cp per logit of the data's evals (fitted on the shared teacher data, as pretraining's)"""

    def __post_init__(self) -> None:
        at_least(self, 0, "limit", "threads")


def evaluate_file(model: str | None, path: str, limit: int = EvaluateConfig.limit,
                  threads: int = EvaluateConfig.threads, scale: float = EvaluateConfig.scale) -> dict:
    """agreement, top3, value_mse and n over the records of ``path`` (the first ``limit`` when nonzero).

    n counts the positions whose teacher move is legal (records without one, such as a psv record with
    move 0, are skipped, as training skips them). value_mse compares the position's value, max Q, with
    sigmoid(eval / scale) over the positions that carry an eval, and is None when none does."""
    curve = zero_sum(scale)  # the training targets' curve
    from messiah.records import decode, read_records

    records = read_records(path)
    total = min(limit, len(records)) if limit else len(records)
    evaluator = Evaluator(model, threads=threads)
    hits = top3 = n = with_eval = 0
    squared = 0.0
    for start in tqdm(range(0, total, CHUNK), desc="evaluate", unit="chunk", leave=False):
        chunk = records[start : min(start + CHUNK, total)]
        known = records.eval_mask(slice(start, start + len(chunk)))
        d = decode(chunk)  # one decoding per record: the positions, their legal moves, the teacher's move
        if not len(d.keep):
            continue
        teacher = [idx[t] for (_, idx), t in zip(d.legal, d.teacher, strict=True)]
        scored = evaluator.score_arrays(d.arrays, d.legal)
        for scores, t, rec, has_eval in zip(scored, teacher, chunk[d.keep], known[d.keep], strict=True):
            ranked = scores.indices[np.argsort(-scores.q)[:3]]
            hits += int(ranked[0] == t)
            top3 += int(t in ranked)
            n += 1
            if has_eval:
                target = curve.to_winrate(float(rec["eval"]))
                squared += (scores.value() - target) ** 2
                with_eval += 1
    if n == 0:
        raise DataError(f"{path}: no position with a legal teacher move")
    return {"agreement": hits / n, "top3": top3 / n, "value_mse": squared / with_eval if with_eval else None,
            "n": n}
