"""One training batch for both learners, and the value target and loss they share.

A row is a position with its legal moves and what it is trained towards. Teacher rows (pretraining, and the
teacher and strong-game shares of self-play's batches) carry the teacher's move, its eval and the game's
result; self-play rows carry the search's best move, the move played, its lambda-return (``target``) and the
search's value of every legal move (``dense``); teacher rows whose file has the teacher's top lines beside it
(``NAME.multipv``) carry each line's eval on its move (``lines_cp``). A field that no row of a batch has is None, and
:func:`concat` fills it for the rows that lack it. Pretraining's and self-play's losses are this module's value
loss plus their own extra terms (a ranking term; pretraining's lines term; self-play's dense term).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
import torch

from messiah.features import mirror_planes, planes
from messiah.moves import mirror_indices, move_indices, pad_indices
from messiah.records.decode import decode, positions
from messiah.records.formats import result_for_side_to_move
from messiah.records.selfplayfile import FAST

NO_RESULT = 0.5  # the result field of a row whose result is unknown (it means nothing there)
NO_RANK = -100  # the ranking slot of a row without a ranking target (torch's ignore_index): a fast search's row


@dataclass
class Batch:
    features: np.ndarray  # (B, 36, 11, 9) float32
    legal: np.ndarray  # (B, M) int64 move indices, padded with 0
    legal_mask: np.ndarray  # (B, M) bool
    teacher: np.ndarray  # (B,) int64 the ranking target's slot in ``legal``: the teacher's move, the search's best
    # (NO_RANK: none)
    eval_cp: np.ndarray  # (B,) float32 teacher eval for the side to move (0 where unknown)
    eval_known: np.ndarray  # (B,) bool: the row has a teacher eval
    result: np.ndarray  # (B,) float32 1 win / 0.5 draw / 0 loss for the side to move (NO_RESULT where unknown)
    result_known: np.ndarray  # (B,) bool: the row has its game's result
    played: np.ndarray | None = None  # (B,) int64 the slot whose value is trained (None: ``teacher``)
    target: np.ndarray | None = None  # (B,) float32 a value target of the row's own, NaN where none (self-play)
    dense: np.ndarray | None = None  # (B, M) float32 the search's value of each legal move, NaN where none
    lines_cp: np.ndarray | None = None  # (B, M) float32 the teacher's eval (cp) of each legal move that begins one
    # of its top lines (MultiPV), NaN elsewhere

    def __len__(self) -> int:
        return len(self.teacher)

    def tensors(self) -> dict[str, torch.Tensor]:
        """The batch's arrays as CPU tensors sharing their memory (no copy); fields that are None left out."""
        return {f.name: torch.from_numpy(np.ascontiguousarray(value)) for f in fields(self)
                if (value := getattr(self, f.name)) is not None}


def teacher_rows(records: np.ndarray, eval_known: np.ndarray | None = None,
                 result_known: np.ndarray | None = None, lines: np.ndarray | None = None) -> Batch:
    """A batch of hcpe records and the masks of which carry an eval and a result (default: all), with their
    teacher's top lines where given (CANDIDATES rows, aligned with ``records``). Records whose teacher move is
    not legal are dropped."""
    d = decode(records)
    padded, mask = pad_indices([idx for _, idx in d.legal])
    result = result_for_side_to_move(records["gameResult"][d.keep], d.arrays.turns)
    eval_known = np.ones(len(records), bool) if eval_known is None else np.asarray(eval_known, bool)
    result_known = np.ones(len(records), bool) if result_known is None else np.asarray(result_known, bool)
    lines_cp = None if lines is None else _lines_on_slots(lines[d.keep], padded, d.arrays.turns)
    return Batch(planes(d.arrays), padded, mask, d.teacher, records["eval"][d.keep].astype(np.float32),
                 eval_known[d.keep], result, result_known[d.keep], lines_cp=lines_cp)


def _lines_on_slots(lines: np.ndarray, legal: np.ndarray, turns: np.ndarray) -> np.ndarray:
    """Each row's lines (CANDIDATES) as evals on the slots of ``legal`` their moves take, NaN elsewhere (a line
    whose move is not legal there, from a damaged file, is left out)."""
    out = np.full(legal.shape, np.nan, np.float32)
    for i, row in enumerate(lines):
        given = row["move16"] != 0
        if not given.any():
            continue
        wanted = move_indices(row["move16"][given], int(turns[i]))
        for index, score in zip(wanted, row["eval"][given], strict=True):
            slot = np.flatnonzero(legal[i] == index)
            if len(slot) and np.isnan(out[i, slot[0]]):
                out[i, slot[0]] = score
    return out


def selfplay_rows(records: np.ndarray, targets: np.ndarray) -> Batch:
    """A batch of self-play records (rows with a move) and their lambda-returns (NaN: none, as for TreeStrap
    rows): the ranking target the search's best move, the value target on the move played, every legal move's
    searched value as the dense target. A fast search's row (flag FAST) has the value target only."""
    arrays, legal = positions(records)
    padded, mask = pad_indices([idx for _, idx in legal])
    fast = (np.asarray(records["flags"]) & FAST) != 0
    dense = np.asarray(records["values"][:, : padded.shape[1]], np.float32).copy()
    dense[~mask | fast[:, None]] = np.nan
    best = np.where(fast, NO_RANK, np.asarray(records["best"], np.int64))
    n = len(records)
    return Batch(planes(arrays), padded, mask, best, np.zeros(n, np.float32),
                 np.zeros(n, bool), np.full(n, NO_RESULT, np.float32), np.zeros(n, bool),
                 played=np.asarray(records["played"], np.int64), target=targets.astype(np.float32), dense=dense)


def concat(parts: Sequence[Batch]) -> Batch:
    """The rows of several batches in one, move lists padded to the widest; a field some parts lack is filled
    for their rows (``played``: their ranking slot; ``target``, ``dense`` and ``lines_cp``: NaN)."""
    parts = [p for p in parts if len(p)]
    width = max(p.legal.shape[1] for p in parts)

    def widened(array: np.ndarray, fill: object) -> np.ndarray:
        return np.pad(array, ((0, 0), (0, width - array.shape[1])), constant_values=fill)

    out = {"features": np.concatenate([p.features for p in parts]),
           "legal": np.concatenate([widened(p.legal, 0) for p in parts]),
           "legal_mask": np.concatenate([widened(p.legal_mask, False) for p in parts])}
    for name in ("teacher", "eval_cp", "eval_known", "result", "result_known"):
        out[name] = np.concatenate([getattr(p, name) for p in parts])
    if any(p.played is not None for p in parts):
        out["played"] = np.concatenate([p.teacher if p.played is None else p.played for p in parts])
    if any(p.target is not None for p in parts):
        out["target"] = np.concatenate([np.full(len(p), np.nan, np.float32) if p.target is None else p.target
                                        for p in parts])
    for name in ("dense", "lines_cp"):
        if any(getattr(p, name) is not None for p in parts):
            out[name] = np.concatenate([np.full((len(p), width), np.nan, np.float32) if getattr(p, name) is None
                                        else widened(getattr(p, name), np.nan) for p in parts])
    return Batch(**out)


def mirror(batch: Batch, rows: np.ndarray) -> None:
    """Replace the positions ``rows`` (a bool mask) of ``batch`` by their left-right mirror images, in place:
    the planes and the legal moves mirror; every per-move slot (the teacher's, the played move's, the dense
    values) keeps its place, and the evals and results stay (the rules are symmetric)."""
    batch.features[rows] = mirror_planes(batch.features[rows])
    batch.legal[rows] = np.where(batch.legal_mask[rows], mirror_indices(batch.legal[rows]), 0)


def value_target(b: dict[str, torch.Tensor], scale: float, result_mix: float = 0.0) -> tuple[torch.Tensor, ...]:
    """Each row's value target, and which rows have one: its own target where it has one (self-play's
    lambda-return); else with an eval, (1 - result_mix) sigmoid(eval / scale) + result_mix result (the eval
    alone when its result is unknown); else its game's result (floodgate, KIF, CSA without comments); a row
    with none trains no value. Returns (target, has_eval, has_target)."""
    has_eval, has_result = b["eval_known"], b["result_known"]
    from_eval = torch.sigmoid(b["eval_cp"] / scale)  # messiah.winrate.zero_sum, on tensors
    mixed = torch.where(has_result, (1 - result_mix) * from_eval + result_mix * b["result"], from_eval)
    target = torch.where(has_eval, mixed, b["result"])
    has_target = has_eval | has_result
    if "target" in b:
        own = torch.isfinite(b["target"])
        target, has_target = torch.where(own, b["target"], target), has_target | own
    return target, has_eval, has_target


def value_loss(z: torch.Tensor, b: dict[str, torch.Tensor], scale: float,
               result_mix: float = 0.0) -> tuple[torch.Tensor, ...]:
    """The squared error of sigmoid(z) of each row's trained move (``played``, else ``teacher``) against its
    value target, averaged over the rows that have one. Returns (loss, target, has_eval, has_target)."""
    slot = b.get("played", b["teacher"])
    z_slot = z.gather(1, slot[:, None]).squeeze(1)
    target, has_eval, has_target = value_target(b, scale, result_mix)
    weight = has_target.float()
    return ((torch.sigmoid(z_slot) - target) ** 2 * weight).sum() / weight.sum().clamp(min=1), target, has_eval, \
        has_target


def move_values_loss(z: torch.Tensor, values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The squared error of sigmoid(z) of each legal move (``mask``) against its win-rate target in ``values``
    (NaN: none), averaged over the moves that have one (0 where none has): self-play's dense term on the search's
    values, pretraining's lines term on the teacher's lines."""
    known = torch.isfinite(values) & mask
    return ((torch.sigmoid(z) - values.nan_to_num(0.5)) ** 2 * known).sum() / known.sum().clamp(min=1)


__all__ = ["NO_RANK", "NO_RESULT", "Batch", "concat", "mirror", "move_values_loss", "selfplay_rows", "teacher_rows",
           "value_loss", "value_target"]
