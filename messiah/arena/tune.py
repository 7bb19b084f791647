"""`messiah tune`: the engine's USI options tuned by matches against its current defaults (docs/method.md section 6).

Each trial draws a setting of the tuned options with Optuna's TPE sampler (it copes with the noisy,
multi-modal score surfaces that matches give), plays ``games`` colour-swapped games of messiah with that
setting against messiah with the defaults, and reports the score back. The study lives in an SQLite file,
so a run killed at any moment resumes where it was (the interrupted trial is marked failed and played
again) and can be watched with optuna-dashboard while it runs. Every trial is also a row of a CSV log.

Why Optuna and not shogiarena's SPSA: messiah already plays its matches through cshogi.cli (``messiah
match``), so a tuner only needs a well-kept optimiser with resumable storage; Optuna is that, small, pure
Python, on Python 3.10. shogiarena brings a whole tournament runner of its own (engine YAML files, a
dashboard, a compiled core, Python 3.11+, an API still changing between releases) for the same matches.
SPSA needs fewer games per step when the surface is smooth; TPE handles integer, log-scaled and
multi-modal parameters as they are. Measure both if tuning ever becomes the bottleneck.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from messiah.arena.match import MatchConfig, messiah_command, play_match
from messiah.arena.stats import summarize
from messiah.config import at_least, setting
from messiah.errors import UserError

STUDY = "messiah-tune"
NODES_BYOYOMI = 60_000  # with --nodes, the clock only has to stay out of the way of the node budget
BYOYOMI = 300  # ms per move of a study that names no clock


@dataclass(frozen=True)
class Param:
    """One tuned USI option: ``NAME:LOW:HIGH[:int|float][:log]``."""

    name: str
    low: float
    high: float
    integer: bool = True
    log: bool = False

    @classmethod
    def parse(cls, text: str) -> Param:
        parts = text.split(":")
        if len(parts) < 3:
            raise UserError(f"parameter {text!r}: expected NAME:LOW:HIGH[:int|float][:log]")
        flags = set(parts[3:])
        if flags - {"int", "float", "log"} or {"int", "float"} <= flags:
            raise UserError(f"parameter {text!r}: the flags are int or float, and log")
        try:
            low, high = float(parts[1]), float(parts[2])
        except ValueError:
            raise UserError(f"parameter {text!r}: LOW and HIGH must be numbers") from None
        if not low < high or ("log" in flags and low <= 0):
            raise UserError(f"parameter {text!r}: needs LOW < HIGH (and LOW > 0 on a log scale)")
        return cls(parts[0], low, high, "float" not in flags, "log" in flags)

    def suggest(self, trial) -> float | int:
        if self.integer:
            return trial.suggest_int(self.name, int(self.low), int(self.high), log=self.log)
        return trial.suggest_float(self.name, self.low, self.high, log=self.log)


@dataclass
class TuneConfig:
    """A tuning run. Times in ms: ``byoyomi``, or a main ``time`` (sudden death, Fischer with ``inc``, byoyomi
    after it if also given), which is what the time-management options need; ``nodes`` (a node budget per
    move for both sides) replaces the clock."""

    params: list[Param] = setting(flag="--param", parse=Param.parse, repeat=True,
                                  metavar="NAME:LOW:HIGH[:int|float][:log]")
    """a USI option to tune and its range; repeatable, e.g. PuctC:50:400 PuctTemperature:10:200:log"""
    trials: int = 30
    """finished trials the study should hold (a rerun resumes)"""
    games: int = 20
    """games per trial, in colour-swapped pairs"""
    byoyomi: int | None = None
    """ms per move for both sides (default: 300 when there is no --time or --nodes)"""
    time: int | None = None
    """main time in ms (sudden death, or Fischer with --inc): the clock that the time-management options
    TimeHorizon, TimeMinMovesToGo, TimeObvious, TimeUnstable act on"""
    inc: int | None = None
    """increment per move in ms"""
    nodes: int | None = None
    """a node budget per move for both sides instead of a clock"""
    jobs: int = 1
    """games played at once"""
    options: dict[str, str] = setting(factory=lambda: {"Threads": "1"}, flag="--option")
    """a USI option of both sides, e.g. Search=puct; repeatable"""
    out: str = "runs/tune"
    """directory for study.db, trials.csv, tune.png and the games"""
    seed: int = 0
    """the sampler's seed and the first trial's openings"""
    openings: str | None = "auto"
    """the trials' openings, as messiah match's --openings: a file of 'startpos moves ...' lines, 'random'
    (random openings drawn by each trial's seed), 'auto' (the shared set when it is there, else 'random') or
    'none'; a set the check match will not use keeps the study from fitting its settings to the check's
    openings"""

    def __post_init__(self) -> None:
        if self.nodes and (self.byoyomi or self.time or self.inc):
            raise UserError("--nodes replaces the clock; leave out --byoyomi, --time and --inc")
        if self.byoyomi is None and self.time is None and not self.nodes:
            self.byoyomi = BYOYOMI
        at_least(self, 1, "trials", "games", "jobs", "nodes")


def tune(cfg: TuneConfig) -> dict:
    """Run (or resume) the study until it holds ``cfg.trials`` finished trials; returns the best setting,
    its score and the USI setoption lines for it."""
    import optuna

    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name=STUDY, storage=f"sqlite:///{out / 'study.db'}", load_if_exists=True,
                                direction="maximize", sampler=optuna.samplers.TPESampler(seed=cfg.seed))
    for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        study.tell(trial.number, state=optuna.trial.TrialState.FAIL)  # killed mid-match: played again
    done = len(study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)))
    base = dict(cfg.options)
    if cfg.nodes:
        base["NodesLimit"] = str(cfg.nodes)
    log_path = out / "trials.csv"
    bar = tqdm(total=cfg.trials, initial=min(done, cfg.trials), desc="tune", unit="trial")
    while done < cfg.trials:
        trial = study.ask()
        values = {p.name: p.suggest(trial) for p in cfg.params}
        match = MatchConfig(opponent=messiah_command(), options={**base, **{k: str(v) for k, v in values.items()}},
                            opponent_options=base, games=cfg.games, jobs=cfg.jobs,
                            byoyomi=NODES_BYOYOMI if cfg.nodes else cfg.byoyomi,
                            time=None if cfg.nodes else cfg.time, inc=None if cfg.nodes else cfg.inc,
                            openings=cfg.openings, seed=cfg.seed + trial.number,
                            out=str(out / f"trial{trial.number:04d}"))
        _, games = play_match(match)
        s = summarize(games)
        for key in ("wins", "losses", "draws", "elo"):
            trial.set_user_attr(key, s[key])
        study.tell(trial, s["score"])
        _append_row(log_path, {"trial": trial.number, **values, "wins": s["wins"], "losses": s["losses"],
                               "draws": s["draws"], "score": s["score"], "elo": s["elo"]})
        done += 1
        bar.update(1)
        bar.set_postfix_str(f"best {100 * study.best_value:.0f}%")
    bar.close()
    best = study.best_trial
    result = {"trials": done, "best_trial": best.number, "best_score": best.value, "best": best.params,
              "best_w_l_d": [best.user_attrs.get(k) for k in ("wins", "losses", "draws")],
              "setoption": [f"setoption name {k} value {v}" for k, v in best.params.items()],
              "log": str(log_path), "study": str(out / "study.db")}
    try:
        result["png"] = str(plot_trials(study, cfg.params, out / "tune.png"))
    except ImportError:
        result["png"] = "matplotlib is not installed: no plot"
    return result


def _append_row(path: Path, row: dict) -> None:
    new = not path.exists()
    with open(path, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)


def plot_trials(study, params: list[Param], path: Path) -> Path:
    """The score of every finished trial against each tuned parameter, the best one marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    trials = [t for t in study.trials if t.value is not None]
    fig, axes = plt.subplots(1, len(params), figsize=(4.5 * len(params), 4), squeeze=False)
    for ax, p in zip(axes[0], params, strict=True):
        xs = [t.params[p.name] for t in trials if p.name in t.params]
        ys = [100 * t.value for t in trials if p.name in t.params]
        ax.scatter(xs, ys, s=18, alpha=0.7)
        best = study.best_trial
        ax.scatter([best.params[p.name]], [100 * best.value], color="red", s=60, label="best")
        ax.axhline(50, color="grey", ls="--")
        if p.log:
            ax.set_xscale("log")
        ax.set_xlabel(p.name)
        ax.set_ylabel("score against the defaults, %")
        ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path

