"""A generation's figures and the run's log made of them: :class:`Figures` is the one home of log.csv's columns,
one field per column in the log's order, its docstring the column's meaning (as CleanRL's ``Args``).

The loop fills a generation's row phase by phase, writes it to ``gens/gNNNN.json`` and rebuilds ``log.csv`` and
``log.png`` from every generation's file (so a resumed run never duplicates a row). A figure the generation lacks
(no gate, no verification, nothing learned in a resumed generation) is left out of its file and its cell is empty;
a figure that is not finite is written as null (:func:`messiah.files.json_text`) and its cell is empty too.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from messiah.files import atomic_path, write_json
from messiah.train.rl.layout import RunLayout


def _json_only():
    """A figure kept in the generation's JSON file only, with no column in log.csv."""
    return field(default=None, metadata={"column": False})


@dataclass
class Figures:
    """One generation's figures: a row of log.csv (every field but the JSON-only ones, in this order)."""

    generation: int
    """the generation"""
    games: int | None = None
    """self-play games of the generation (those of an earlier invocation included)"""
    positions: int | None = None
    """self-play records of the generation"""
    tree_positions: int | None = None
    """TreeStrap rows of the generation (--tree-visits)"""
    selfplay_s: float | None = None
    """wall time of this invocation's self-play"""
    selfplay_positions_per_s: float | None = None
    """moves played a second in this invocation's self-play, all actors"""
    positions_per_s_per_actor: float | None = None
    """moves played a second in this invocation's self-play, per actor"""
    forward_share: float | None = None
    """share of the games' time spent in forward passes (the rest: tree, df-pn, move generation, Python)"""
    mean_plies: float | None = None
    """moves played per game after the opening"""
    truncated_share: float | None = None
    """share of games truncated at --max-ply"""
    resign_share: float | None = None
    """share of games resigned"""
    mate_share: float | None = None
    """share of games mated on the board or by a proven mate"""
    repetition_share: float | None = None
    """share of games ended by a repetition"""
    false_resign_rate: float | None = None
    """of the played-out games in which a side would have resigned (truncated ones left out), the share it did
    not lose"""
    resign_checked: int | None = None
    """how many played-out games had a side that would have resigned (truncated ones left out)"""
    exploratory_share: float | None = None
    """share of moves that were not the search's choice"""
    fast_share: float | None = None
    """share of moves searched with --fast-nodes"""
    black_win_share: float | None = None
    """share of games black won"""
    window: int | None = None
    """positions in the replay window"""
    tree_window: int | None = None
    """TreeStrap rows in the replay window"""
    learner_steps: int | None = None
    """learner steps this invocation"""
    learner_positions_per_s: float | None = None
    """positions a second through the learner"""
    learner_data_share: float | None = None
    """share of the learner's time spent building batches"""
    target_refresh_s: float | None = None
    """seconds spent recomputing the window's returns"""
    learn_s: float | None = None
    """seconds of the learning phase"""
    loss: float | None = None
    """mean loss over the generation's steps"""
    value_loss: float | None = None
    """mean value term over the generation's steps"""
    rank_loss: float | None = None
    """mean ranking term over the generation's steps"""
    dense_loss: float | None = None
    """mean dense term over the generation's steps"""
    target_mean: float | None = None
    """mean return of the window's positions"""
    teacher_agreement: float | None = None
    """agreement on --val-positions held-out teacher positions (the tail of each file): must not collapse"""
    teacher_value_mse: float | None = None
    """value MSE on the held-out teacher positions"""
    floodgate_agreement: float | None = None
    """agreement on the first --val-positions of $MESSIAH_DATA/floodgate/test.hcpe"""
    gate_games: int | None = None
    """games of the candidate's gating match"""
    gate_wins: int | None = None
    """the candidate's wins in its gating match"""
    gate_losses: int | None = None
    """the candidate's losses in its gating match"""
    gate_draws: int | None = None
    """draws of the gating match"""
    gate_score: float | None = None
    """the candidate's score in its gating match"""
    elo: float | None = None
    """the candidate's Elo against the best (messiah.arena.match.elo_interval)"""
    elo_low: float | None = None
    """the low end of its 95% interval"""
    elo_high: float | None = None
    """the high end of its 95% interval"""
    gate_s: float | None = None
    """seconds of the gating match"""
    promoted: int | None = None
    """1 when the candidate became the best model"""
    best_generation: int | None = None
    """the best model's generation after this one"""
    total_elo: float | None = None
    """the sum of the promoted candidates' gate Elo so far (written by :func:`write_log`; empty in a generation
    without a gate)"""
    verify_games: int | None = None
    """games of the verification against the starting model (empty in generations without one)"""
    verify_wins: int | None = None
    """the candidate's wins in its verification"""
    verify_losses: int | None = None
    """the candidate's losses in its verification"""
    verify_draws: int | None = None
    """draws of the verification"""
    verify_elo: float | None = None
    """the candidate's Elo against the starting model"""
    verify_elo_low: float | None = None
    """the low end of its 95% interval"""
    verify_elo_high: float | None = None
    """the high end of its 95% interval"""
    verify_s: float | None = None
    """seconds of the verification"""
    verified_generation: int | None = None
    """with --rollback: the best verified generation after this one's verification"""
    rolled_back_to: int | None = None
    """with --rollback: the generation the run went back to (empty when it went on)"""
    floodgate_value_mse: float | None = None
    """value MSE on the floodgate agreement positions"""
    generation_s: float | None = None
    """seconds of the whole generation"""
    endings: dict[str, int] | None = _json_only()
    """the games' endings by name, a count each"""
    sprt: str | None = _json_only()
    """the gate's SPRT decision ('continue' without one; ``promoted`` says what was decided)"""

    def update(self, figures: dict) -> None:
        """Set the fields named in ``figures`` (a phase's figures); ValueError for a name with no field."""
        unknown = set(figures) - set(NAMES)
        if unknown:
            raise ValueError(f"figures with no column in log.csv: {', '.join(sorted(unknown))} (add a field to "
                             "messiah.train.rl.figures.Figures)")
        for name, value in figures.items():
            setattr(self, name, value)

    def save(self, path: Path) -> None:
        """The generation's file: the figures it has (a missing one is no key, as in older runs' files)."""
        write_json(path, {k: v for k, v in dataclasses.asdict(self).items() if v is not None})

    @classmethod
    def load(cls, path: Path) -> Figures:
        """A generation's file, this version's or an older one (fewer figures, other key order); ValueError
        naming the file for a figure with no field."""
        saved = json.loads(path.read_text())
        row = cls(saved.pop("generation"))
        try:
            row.update(saved)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
        return row


NAMES = [f.name for f in dataclasses.fields(Figures)]
LOG_FIELDS = [f.name for f in dataclasses.fields(Figures) if f.metadata.get("column", True)]


def write_log(out: Path) -> Path:
    """log.csv from the generations' files, with the running ``total_elo``, and log.png."""
    layout = RunLayout(out)
    rows = [Figures.load(p) for p in layout.all_figures()]
    total = 0.0
    for row in rows:
        if row.gate_games is None:  # a generation without a gate (--no-gate) promotes no measured gain
            continue
        if row.promoted and row.elo is not None and math.isfinite(row.elo):
            total += row.elo
        row.total_elo = total
    path = layout.log
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(LOG_FIELDS)
        writer.writerows([getattr(row, name) for name in LOG_FIELDS] for row in rows)  # None: an empty cell
    try:
        from messiah.train.plot import plot_rl_log

        plot_rl_log(path)
    except ImportError:  # matplotlib is optional: the CSV is the record
        pass
    return path
