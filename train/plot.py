"""Learning curves of a training log: ``python -m train.plot runs/x/log.csv`` writes runs/x/log.png.

Four panels against the step: the training losses with the validation ranking loss, validation
agreement and top-3, validation sign accuracy and value MSE (right axis), and throughput with the share
of step time spent waiting for data (right). Several logs on one figure compare runs (the first log names
the output unless ``--out`` is given); ``--table`` prints the last validation figures of each as a markdown table.
:func:`plot_rl_log` draws a self-play run's log.csv (one row a generation) the same way.
"""

from __future__ import annotations

import argparse
import csv
import os
from pathlib import Path

from messiah.files import atomic_path

STYLES = ("-", "--", "-.", ":")


def read_log(path: str | os.PathLike) -> dict[str, list[float]]:
    """A log.csv as columns of floats (empty cells, as in older logs' missing columns, are skipped)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    columns: dict[str, list[float]] = {}
    for row in rows:
        for key, value in row.items():
            if value not in ("", None):
                columns.setdefault(key, []).append(float(value))
    return columns


def plot_logs(paths: list[str | os.PathLike], out: str | os.PathLike | None = None) -> Path:
    """Draw the curves of one or more log.csv files into a PNG and return its path. One log: a colour per
    metric. Several: a colour per run (named by its folder) and a line style per metric."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out) if out else Path(paths[0]).with_suffix(".png")
    many = len(paths) > 1
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    # rank_loss beside val_rank_loss shows overfitting; anchor_loss (dueling only) stays in the CSV
    panels = [(axes[0, 0], ("loss", "value_loss", "rank_loss", "val_rank_loss"), "losses", True),
              (axes[0, 1], ("agreement", "top3"), "validation", False),
              (axes[1, 0], ("sign_accuracy", "value_mse"), "validation", False),
              (axes[1, 1], ("positions_per_s", "data_wait_share"), "speed", False)]
    right = {"value_mse": axes[1, 0].twinx(), "data_wait_share": axes[1, 1].twinx()}  # second y axes
    for i, path in enumerate(paths):
        log = read_log(path)
        for ax, keys, _, logy in panels:
            for j, key in enumerate(keys):
                if key not in log:
                    continue
                target = right.get(key, ax)
                style = {"color": f"C{i}", "linestyle": STYLES[j]} if many else {"color": f"C{j}"}
                label = Path(path).parent.name if many and j == 0 else None if many else key
                target.plot(log["step"][-len(log[key]):], log[key], label=label, **style)
            ax.set_yscale("log" if logy else "linear")
    for axis in right.values():
        axis.set_ylim(0, None)
    for ax, keys, what, _ in panels:
        styles = f" ({', '.join(f'{k} {s}' for k, s in zip(keys, STYLES, strict=False))})" if many else ""
        ax.set_title(f"{what}: {', '.join(keys)}" if not many else f"{what}{styles}", fontsize=9)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    if many:
        axes[0, 1].legend(fontsize=6, loc="center right")  # between the agreement and top-3 bands
    else:
        for ax in (*axes.flat, *right.values()):
            ax.legend(fontsize=7, loc="center right" if ax in right.values() else "upper left")
    fig.tight_layout()
    with atomic_path(out, ".tmp.png") as tmp:  # a viewer never sees half a file
        fig.savefig(tmp, dpi=90)
    plt.close(fig)
    return out


TABLE_COLUMNS = ("agreement", "top3", "value_mse", "sign_accuracy", "val_rank_loss")


def elo_panel(ax, rows: list[dict[str, str]]) -> bool:
    """log.png's Elo panel from log.csv's rows: each gated candidate against the best and their sum over
    promotions, each verified candidate against the run's start, rollbacks; a generation without a figure has
    no point. A run that played no games (--no-gate, --verify-every 0) says so in the panel, which would
    otherwise be an empty frame. Returns whether any Elo was drawn."""
    import numpy as np

    def points(*keys: str) -> np.ndarray:  # (generation, *keys) of the rows that have every key
        return np.array([[float(r["generation"])] + [float(r[k]) for k in keys] for r in rows
                         if all(r.get(k) not in (None, "", "nan") for k in keys)]).reshape(-1, 1 + len(keys))

    def with_interval(p: np.ndarray, fmt: str, label: str) -> None:
        elo, low, high = (np.clip(p[:, k], -800, 800) for k in (1, 2, 3))
        ax.errorbar(p[:, 0], elo, yerr=[elo - low, high - elo], fmt=fmt, capsize=3, label=label)

    gated, total = points("elo", "elo_low", "elo_high"), points("total_elo")
    verified = points("verify_elo", "verify_elo_low", "verify_elo_high")
    if len(gated):
        with_interval(gated, "o", "candidate vs best")
    if len(total):
        ax.plot(total[:, 0], total[:, 1], marker="o", label="sum over promotions")
    if len(verified):
        with_interval(verified, "s", "candidate vs the start (fixed)")
    for k, g in enumerate(float(r["generation"]) for r in rows if r.get("rolled_back_to")):
        ax.axvline(g, color="tab:red", ls="--", lw=0.8, label=None if k else "rolled back")
    ax.axhline(0, color="grey", lw=0.5)
    ax.set_title("Elo (95% interval)")
    drawn = bool(len(gated) or len(total) or len(verified))
    if not drawn:
        ax.text(0.5, 0.5, "no games in this run\n(--no-gate, --verify-every 0):\nscreen its models with messiah match",
                ha="center", va="center", transform=ax.transAxes, color="grey")
    return drawn


def plot_rl_log(path: Path) -> Path:
    """log.png: Elo of each candidate against the best (95% interval) and the promoted models' sum; game
    length; the shares of games truncated and of false resignations; the losses; held-out agreement."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    log = read_log(path)
    gens = log.get("generation", [])
    fig, axes = plt.subplots(2, 3, figsize=(14, 7))

    def line(ax, key, label=None, **kw):
        if key in log and len(log[key]) == len(gens):
            ax.plot(gens, log[key], marker="o", label=label or key, **kw)

    with open(path, newline="") as f:  # the Elo panel: gates, verifications, rollbacks in some rows only
        rows = list(csv.DictReader(f))
    elo_panel(axes[0, 0], rows)
    line(axes[0, 1], "mean_plies", "mean game length (plies)")
    axes[0, 1].set_title("game length")
    for key in ("truncated_share", "false_resign_rate", "resign_share", "mate_share"):
        line(axes[0, 2], key)
    axes[0, 2].set_title("shares of games")
    for key in ("loss", "value_loss", "rank_loss", "dense_loss"):
        line(axes[1, 0], key)
    axes[1, 0].set_title("learner loss")
    for key in ("teacher_agreement", "floodgate_agreement"):
        line(axes[1, 1], key)
    axes[1, 1].set_title("held-out agreement")
    for key in ("selfplay_positions_per_s", "learner_positions_per_s"):
        line(axes[1, 2], key)
    axes[1, 2].set_title("throughput (positions/s)")
    for ax in axes.flat:
        ax.set_xlabel("generation")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:  # not for the zero line alone
            ax.legend(fontsize=7)
    fig.tight_layout()
    out = path.with_suffix(".png")
    with atomic_path(out, ".tmp.png") as tmp:
        fig.savefig(tmp, dpi=80)
    plt.close(fig)
    return out


def table(paths: list[str | os.PathLike]) -> str:
    """A markdown table of each log's last row: the run (its folder's name), the step and the validation
    figures, agreement and top-3 in percent."""
    lines = ["| run | step | " + " | ".join(TABLE_COLUMNS) + " |", "|---" * (2 + len(TABLE_COLUMNS)) + "|"]
    for path in paths:
        log = read_log(path)
        cells = ["-" if k not in log else f"{100 * log[k][-1]:.1f}%" if k in ("agreement", "top3")
                 else f"{log[k][-1]:.4f}" for k in TABLE_COLUMNS]
        lines.append(f"| {Path(path).parent.name} | {int(log['step'][-1])} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m train.plot", description=__doc__)
    parser.add_argument("logs", nargs="+", help="log.csv files")
    parser.add_argument("--out", help="PNG to write (default: next to the first log)")
    parser.add_argument("--table", action="store_true", help="also print a markdown table of the last rows")
    args = parser.parse_args(argv)
    print(plot_logs(args.logs, args.out))
    if args.table:
        print(table(args.logs))


if __name__ == "__main__":
    main()
