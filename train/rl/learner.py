"""The learner: Q(lambda) targets over a replay window of self-play records, trained with the pretraining
loss family through :class:`messiah.train.trainer.Trainer`, with a target network and teacher rows mixed in.

Per step a batch of ``batch_size`` rows: a ``teacher_fraction`` share from the teacher data (their value
target is the teacher's eval as a win rate, their ranking target the teacher's move, as in pretraining), a
``strong_fraction`` share from strong programs' games (the played move and the game's result), the rest from
the newest ``window`` self-play positions (whole games). A self-play row's loss:

    value  (sigmoid(z(s, a_played)) - G_lambda)^2      the lambda-return of targets.py
    rank   cross-entropy of softmax(rank_scale * z(s, legal)) against the search's choice (``loss="rank"``); a fast
           search's row (``--fast-nodes``) has no rank nor dense term
    dense  mean over the legal moves of (sigmoid(z(s, a)) - root value of a)^2, weight ``dense_weight``: one
           search values every root move, so every move gets a target almost for free (docs/method.md section 8)

The lambda-returns of the whole window are computed whenever the target network changes (per generation,
or every ``target_every`` steps): V(s) = max_a Q_target(s, a) of every window position in one sweep (or,
with double DQN, Q_target at the online net's argmax), then the backward recursion per game.

A model to start from may be an ONNX file (the shipped default has no checkpoint), loaded for training by
:func:`messiah.models.from_onnx.net_from_onnx`.
"""

from __future__ import annotations

import copy
import math
import time
from functools import partial
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from messiah.errors import UserError
from messiah.features import planes
from messiah.models.from_onnx import net_from_onnx
from messiah.models.net import AllMovesNet
from messiah.moves import pad_indices
from messiah.records import read_records
from messiah.records.decode import positions
from messiah.records.selfplayfile import FINAL, SELFPLAY, read_selfplay_games, tree_file
from messiah.train.batch import NO_RANK, Batch, concat, mirror, move_values_loss, selfplay_rows, value_loss
from messiah.train.config import VAL_FRACTION
from messiah.train.data import TeacherData, gather, held_out, validation_batches
from messiah.train.rl.config import AGREEMENT_SET, RLConfig
from messiah.train.rl.layout import RunLayout
from messiah.train.rl.targets import window_targets
from messiah.train.trainer import Trainer, legal_logits, load_checkpoint, set_threads, setup_process, to_device

SWEEP = 1024  # positions per forward pass when computing target values


# --------------------------------------------------------------------------- batches and losses

def teacher_batch(data: TeacherData, rows: np.ndarray) -> Batch:
    """Teacher rows: the value target on the teacher's move (its eval as a win rate, or the game's result where
    there is no eval), the ranking target the teacher's move, no dense values."""
    return data.gather(rows).batch()


def tensors(batch: Batch, device: torch.device) -> dict[str, torch.Tensor]:
    return to_device(batch.tensors(), device)


def rl_losses(model: nn.Module, b: dict[str, torch.Tensor], cfg: RLConfig) -> dict[str, torch.Tensor]:
    """The loss and its parts (see the module docstring): the shared value loss (train.batch.value_loss), the
    ranking term and the dense term; for validation also ``z``, ``target``, ``has_target``."""
    z, _ = legal_logits(model, b)
    mask = b["legal_mask"]
    value, target, _, has_target = value_loss(z, b, cfg.scale)
    ranked = (b["teacher"] != NO_RANK).sum().clamp(min=1)
    rank = F.cross_entropy(cfg.rank_scale * z, b["teacher"], ignore_index=NO_RANK, reduction="sum") / ranked
    if "dense" in b:
        dense = move_values_loss(z, b["dense"], mask)
    else:  # teacher rows alone (validation)
        dense = value.new_zeros(())
    loss = value + (cfg.rank_weight * rank if cfg.loss == "rank" else 0.0) + cfg.dense_weight * dense
    return {"loss": loss, "value_loss": value, "rank_loss": rank, "dense_loss": dense, "z": z, "target": target,
            "has_target": has_target}


# --------------------------------------------------------------------------- the replay window

class Window:
    """The newest ``size`` self-play positions, whole games, from the generation files given (oldest first),
    with their lambda-returns once :meth:`compute_targets` has run; and the TreeStrap rows of those
    generations (:attr:`tree`, records.tree_file), which have no return."""

    def __init__(self, files: list[Path], size: int):
        self.parts: list[tuple[np.ndarray, np.ndarray]] = []  # (records, game starts) per file, newest first
        trees = []
        total = 0
        for path in reversed(files):
            records, starts = read_selfplay_games(path)
            if not len(records):
                continue
            need = size - total
            if len(records) > need:  # the newest games of this file that fit, from a game start
                first = starts[starts >= len(records) - need]
                if not len(first):
                    break
                records, starts = records[int(first[0]):], starts[starts >= first[0]] - int(first[0])
            self.parts.append((records, starts))
            trees.append(read_selfplay_games(tree_file(path))[0])  # all of a generation's, also where its games are cut
            total += len(records)
            if total >= size:
                break
        self.parts.reverse()
        self.trees = [t for t in reversed(trees) if len(t)]  # memory-mapped, as the games
        self.tree_offsets = np.cumsum([0] + [len(t) for t in self.trees])
        self.offsets = np.cumsum([0] + [len(r) for r, _ in self.parts])
        self.targets = np.full(int(self.offsets[-1]), np.nan, np.float32)
        self.trainable = np.zeros(0, np.int64)

    def __len__(self) -> int:
        return int(self.offsets[-1])

    @property
    def tree_size(self) -> int:
        return int(self.tree_offsets[-1])

    def records(self, rows: np.ndarray) -> np.ndarray:
        """Records at window rows (any order)."""
        return _gather([records for records, _ in self.parts], self.offsets, rows)

    def tree_records(self, rows: np.ndarray) -> np.ndarray:
        """TreeStrap records at rows 0 .. tree_size - 1 (any order)."""
        return _gather(self.trees, self.tree_offsets, rows)

    def compute_targets(self, value_fn, cfg: RLConfig) -> None:
        """V of every position (``value_fn(records) -> values``), then the lambda-returns of every game."""
        for p, (records, starts) in enumerate(self.parts):
            values = np.concatenate([value_fn(records[i : i + SWEEP]) for i in range(0, len(records), SWEEP)])
            self.targets[self.offsets[p] : self.offsets[p + 1]] = window_targets(
                records, starts, values, cfg.lam, cfg.gamma, cfg.q_lambda == "watkins")
        flags = np.concatenate([np.asarray(r["flags"]) for r, _ in self.parts]) if self.parts else np.zeros(0)
        self.trainable = np.flatnonzero(((flags & FINAL) == 0) & np.isfinite(self.targets))


def _gather(files: list[np.ndarray], offsets: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Rows of several record arrays seen as one (``offsets``: their cumulative lengths from 0)."""
    out = np.empty(len(rows), SELFPLAY)
    which = np.searchsorted(offsets, rows, side="right") - 1
    for p, records in enumerate(files):
        sel = which == p
        if sel.any():
            out[sel] = records[rows[sel] - offsets[p]]
    return out


# --------------------------------------------------------------------------- the learner

class Learner:
    """The online net (in a Trainer), the target net, the teacher data and the validation sets."""

    def __init__(self, cfg: RLConfig, net: AllMovesNet):
        self.cfg = cfg
        if cfg.threads:
            set_threads(cfg.threads)
        self.proc = setup_process(cfg.device)
        self.trainer = Trainer(net, cfg, partial(rl_losses, cfg=cfg), self.proc)  # no horizon: no fixed end
        self.target = copy.deepcopy(self.trainer.net).eval()
        self.target_step = 0
        self.path = cfg.layout.learner
        self.teacher = TeacherData(cfg.teacher, VAL_FRACTION) if cfg.teacher else None
        self.strong = TeacherData(cfg.strong, 0.0) if cfg.strong and cfg.strong_fraction else None
        self.val = self._validation_sets()

    def _validation_sets(self) -> dict[str, list[dict[str, torch.Tensor]]]:
        sets = {}
        if self.teacher is not None and len(self.teacher.val_index):
            sets["teacher"] = self._batches(self.teacher, held_out(self.teacher.val_index, self.cfg.val_positions))
        if AGREEMENT_SET.exists():  # positions of strong programs' games, all held out (nothing trains on them)
            files = [read_records(AGREEMENT_SET)]
            rows = np.stack([np.zeros(len(files[0]), np.int64), np.arange(len(files[0]))], axis=1)
            sets["floodgate"] = self._batches(_Files(files), rows[: self.cfg.val_positions])
        return sets

    def _batches(self, data: TeacherData, rows: np.ndarray) -> list[dict[str, torch.Tensor]]:
        return [tensors(b, self.proc.device) for b in validation_batches(data, rows)]

    @property
    def steps_done(self) -> int:
        return self.trainer.steps_done

    def save(self) -> None:
        self.trainer.save(self.path, target=self.target.state_dict(), target_step=self.target_step)

    def load(self) -> bool:
        """Continue from learner.pt when there is one; whether there was. (The run's config.json, not
        this file, says whether a command is this run: see loop.run.)"""
        if not self.path.exists():
            return False
        state = load_checkpoint(self.path, self.proc.device)
        self.trainer.restore(state)
        self.target.load_state_dict(state["target"])
        self.target_step = state["target_step"]
        return True

    @torch.no_grad()
    def values(self, records: np.ndarray) -> np.ndarray:
        """V(s) of each record's position for its side to move: max_a Q_target(s, a), or with double DQN
        Q_target(s, argmax_a Q_online(s, a))."""
        arrays, legal = positions(records)
        padded, mask = pad_indices([idx for _, idx in legal])
        x = torch.from_numpy(planes(arrays)).to(self.proc.device)
        moves = torch.from_numpy(padded).to(self.proc.device)
        mask_t = torch.from_numpy(mask).to(self.proc.device)

        def logits(net: AllMovesNet) -> torch.Tensor:
            h = net(x).float()
            return net.move_logits(h, moves).masked_fill(~mask_t, -1e4)

        z_target = logits(self.target)
        if self.cfg.double_dqn:
            online = self.trainer.net
            was = online.training
            online.eval()
            choice = logits(online).argmax(1, keepdim=True)
            online.train(was)
            z = z_target.gather(1, choice).squeeze(1)
        else:
            z = z_target.max(1).values
        v = torch.sigmoid(z).cpu().numpy()
        return np.where(mask.any(1), v, 0.0)  # no legal move: mated

    def target_due(self, until: int) -> bool:
        """The target network's refresh rule, its one home: with --target-every, due once the online net has
        taken that many steps since the copy; else due when the copy is older than the generation that ends at
        step ``until`` (so once a generation, at its start; a resumed generation keeps its saved copy)."""
        if self.cfg.target_every:
            return self.steps_done - self.target_step >= self.cfg.target_every
        return self.target_step < until - self.cfg.steps

    def learn(self, window: Window, until: int, bar=None) -> dict[str, float]:
        """A generation's steps up to ``until`` on ``window``: its returns first (by a refreshed target net where
        :meth:`target_due`, else by the saved one), then :meth:`train`; the figures."""
        start = time.perf_counter()
        if self.steps_done < until:
            if self.target_due(until):
                self.refresh_target(window)
            else:
                window.compute_targets(self.values, self.cfg)
        targets_s = time.perf_counter() - start
        figures = self.train(window, until, bar)
        figures["target_refresh_s"] += targets_s
        return figures

    def refresh_target(self, window: Window) -> float:
        """Copy the online net into the target net and recompute the window's returns; seconds taken."""
        start = time.perf_counter()
        self.target.load_state_dict(self.trainer.net.state_dict())
        self.target_step = self.steps_done
        window.compute_targets(self.values, self.cfg)
        return time.perf_counter() - start

    def batch(self, window: Window, step: int) -> dict[str, torch.Tensor]:
        """Training batch ``step``: a function of (seed, step) and the window, so a resumed run redraws it."""
        rng = np.random.default_rng((self.cfg.seed, step))
        shares = [(data, share) for data, share in ((self.teacher, self.cfg.teacher_fraction),
                                                    (self.strong, self.cfg.strong_fraction)) if data is not None]
        if not len(window.trainable):  # nothing played yet: the data files fill the batch, in their proportions
            total = sum(share for _, share in shares)
            shares = [(data, share / total if total else 1 / len(shares)) for data, share in shares]
        mix = [(data, round(self.cfg.batch_size * share)) for data, share in shares]
        parts = []
        n_selfplay = self.cfg.batch_size - sum(n for _, n in mix)
        n_tree = min(n_selfplay, round(self.cfg.batch_size * self.cfg.tree_fraction)) if window.tree_size else 0
        if n_selfplay > n_tree and len(window.trainable):
            rows = np.sort(window.trainable[rng.integers(0, len(window.trainable), n_selfplay - n_tree)])
            parts.append(selfplay_rows(window.records(rows), window.targets[rows]))
        if n_tree and len(window.trainable):
            rows = np.sort(rng.integers(0, window.tree_size, n_tree))
            parts.append(selfplay_rows(window.tree_records(rows), np.full(n_tree, np.nan, np.float32)))
        for data, n in mix:
            if n:
                rows = data.train_index[rng.integers(0, len(data.train_index), n)]
                parts.append(teacher_batch(data, rows))
        batch = concat(parts)
        if self.cfg.mirror:
            mirror(batch, rng.random(len(batch)) < 0.5)
        return tensors(batch, self.proc.device)

    def train(self, window: Window, until: int, bar=None) -> dict[str, float]:
        """Steps until ``steps_done == until`` (refreshing the target net where :meth:`target_due`, and
        checkpointing every ``checkpoint_every``); the mean loss terms and the throughput."""
        if not len(window.trainable) and self.teacher is None and self.strong is None:
            raise UserError("nothing to train on: no self-play positions and no teacher data")
        sums: dict[str, float] = {}
        steps = positions = 0
        data_s = target_s = 0.0
        start = time.perf_counter()
        while self.steps_done < until:
            if self.target_due(until):
                target_s += self.refresh_target(window)
            t0 = time.perf_counter()
            b = self.batch(window, self.steps_done)
            data_s += time.perf_counter() - t0
            terms = self.trainer.step(b)
            for k, v in terms.items():
                sums[k] = sums.get(k, 0.0) + float(v)
            steps += 1
            positions += len(b["features"])
            if self.steps_done % self.cfg.checkpoint_every == 0:
                self.save()
            if bar is not None:
                bar.update(1)
        self.save()
        elapsed = time.perf_counter() - start
        out = {k: v / max(steps, 1) for k, v in sums.items()}
        out.update(learner_steps=steps, learner_positions_per_s=positions / elapsed if steps else math.nan,
                   learner_data_share=data_s / elapsed if steps else math.nan, target_refresh_s=target_s)
        return out

    def validate(self) -> dict[str, float]:
        """Agreement and value MSE on the held-out teacher positions and the floodgate agreement set."""
        out = {}
        for name, batches in self.val.items():
            figures = self.trainer.validate(batches)
            out[f"{name}_agreement"] = figures["agreement"]
            out[f"{name}_value_mse"] = figures["value_mse"]
        return out

    def restart_from(self, model: Path) -> None:
        """Go on from ``model``'s weights (an earlier generation's export) with a fresh optimiser and the target
        net equal to it; the step count goes on. Saved at once, so a resumed run restarts from the same place."""
        self.trainer.net.load_state_dict(net_from_onnx(model).state_dict())
        self.trainer.optimizer.state.clear()
        self.target.load_state_dict(self.trainer.net.state_dict())
        self.target_step = self.steps_done
        self.save()

    def export(self, path: Path, generation: int) -> Path:
        return self.trainer.export(path, loss=self.cfg.loss, generation=generation, run="messiah rl")


class _Files:
    """Data files seen through :func:`messiah.train.data.gather`, as TeacherData offers them."""

    def __init__(self, files: list):
        self.files = files

    def gather(self, index: np.ndarray):
        return gather(self.files, index)


def selfplay_files(layout: RunLayout, upto: int) -> list[Path]:
    """The generation files 1..upto that exist, oldest first."""
    return [p for g in range(1, upto + 1) if (p := layout.selfplay(g)).exists()]
