"""The reinforcement loop's configuration: one dataclass, one docstring per field (as CleanRL's ``Args``), from
which ``messiah rl``'s flags are built (:func:`messiah.config.add_arguments`). No torch. It is a
:class:`messiah.train.config.Training`, as pretraining's is: the optimiser, the shared loss terms and the
machine are the same fields with the same flags.

A run keeps its configuration in ``OUT/config.json``; rerunning the command continues the run and refuses
(naming the fields, :func:`messiah.config.run_changes`) a command that would make it a different run. The
fields marked ``runtime`` may change between invocations (how many generations, how many actors, where they
run, checkpoints, validation, progress bars).
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from messiah.arena import stats
from messiah.config import at_least, from_dict, setting, within
from messiah.errors import UserError
from messiah.files import write_json
from messiah.models.config import NetConfig
from messiah.paths import SHARED_DATA
from messiah.rules import DRAW_PLY
from messiah.search import SEARCH_NAMES
from messiah.train.config import Training
from messiah.train.rl.layout import RunLayout

DEFAULT_OPENINGS = SHARED_DATA / "openings" / "records2016_10818.sfen"
AGREEMENT_SET = SHARED_DATA / "floodgate" / "test.hcpe"


def default_openings() -> str:
    """The shared opening set where it is, else '' (the start position and random plies)."""
    return str(DEFAULT_OPENINGS) if DEFAULT_OPENINGS.is_file() else ""


def default_strong_files() -> list[str]:
    """The shared floodgate training games, where they exist."""
    path = SHARED_DATA / "floodgate" / "train.hcpe"
    return [str(path)] if path.exists() else []


def default_teacher_files() -> list[str]:
    """The shared teacher files (teacher_s1..s8.hcpe) that exist here, in order."""
    return [str(p) for p in sorted((SHARED_DATA / "teacher").glob("teacher_s*.hcpe"))]


@dataclass
class RLConfig(Training):
    """Everything that defines a self-play DQN/Q(lambda) run (loop.py explains the loop)."""

    out: str = setting("runs/rl", runtime=True)
    """output folder: config.json, state.json, selfplay/, models/, gates/, learner.pt, log.csv, log.png"""
    init: str = "default"
    """the first model: 'default' (the shipped ONNX), an .onnx file, a checkpoint.pt of messiah pretrain or
    messiah rl, or 'random' (a new net of the --channels/--blocks/... architecture)"""
    net: NetConfig = field(default_factory=NetConfig)
    """the architecture of --init random; with another --init, more --channels than the model's widen it with
    its play kept (models/widen.py), and the rest is the model's own"""
    generations: int = setting(10, runtime=True)
    """generations to reach (rerun with a larger number to go on)"""
    games: int = 128
    """self-play games per generation"""
    actors: int = setting(0, runtime=True)
    """actor processes playing self-play games (0: one per core)"""
    games_per_actor: int = setting(1, runtime=True)
    """games each actor plays at once in threads, their leaves batched into one forward pass (raise it on a GPU)"""
    actor_device: Literal["cpu", "auto", "cuda"] = setting("cpu", runtime=True)
    """where the actors' onnxruntime evaluator runs (on the CPU with each model's int8 copy, as the engine does)"""
    search: Literal[SEARCH_NAMES] = "puct"
    """the engine's Search option for the actors (the cheapest that beats 1-ply play at the node budget)"""
    nodes: int = 64
    """self-play budget per move: the root's visits, those kept from the previous move's tree included (ucb1,
    puct; alpha-beta's nodes). Visits, not time: results do not depend on the machine's load"""
    fast_nodes: int = 0
    """playout cap randomisation (KataGo's): the visits of a fast search, which a --fast-fraction share of the
    moves gets instead of --nodes (0: every move gets --nodes). A fast move is played as any other, but its row
    trains the value only: its search's choice and move values are too shallow to be ranking and dense targets,
    and it adds no TreeStrap rows. More games, and so more value targets, for the same visits; the deep searches
    still make every move target"""
    fast_fraction: float = 0.75
    """the share of moves searched with --fast-nodes, drawn move by move"""
    search_batch: int = 8
    """the engine's BatchSize for the actors: leaves per forward pass inside one search (ucb1/puct); 8, the
    engine's own, scores 1.9 times the positions a second of 1 on one CPU thread"""
    mate_nodes: int = 2000
    """the engine's MateNodes for the actors: df-pn nodes at the root of every self-play move (a forced mate
    found ends the game with an exact result)"""
    guard_nodes: int = 0
    """the engine's MateGuardNodes for the actors: df-pn nodes of the root's guard against a move that leaves the
    opponent a mate (0: off, as every run was made; the engine's 20,000 halves self-play's positions a second at
    --nodes 64, docs/benchmarks.md)"""
    openings: str = setting(factory=default_openings, shown="$MESSIAH_DATA/openings/records2016_10818.sfen")
    """opening file (USI positions, one a line); '' for the start position and --random-plies random moves (what is
    used where the shared set is absent)"""
    random_plies: int = 8
    """random legal moves from the start position when --openings is ''"""
    explore_plies: int = 16
    """plies after the opening on which the move is drawn from softmax(Q / tau) over the root's move values"""
    tau: float = 0.03
    """temperature of that softmax, in win-rate units"""
    epsilon: float = 0.02
    """after those plies: the chance of a uniformly random legal move"""
    root_noise: float = 0.0
    """share of PUCT's root prior replaced by Dirichlet noise at every self-play search (AlphaZero's 0.25; 0: none;
    search.mcts.RootNoise). UCB1 has no prior to mix it into"""
    resign: float = 0.02
    """a side resigns when its root value is below this at two moves in a row (0: never)"""
    resign_playout: float = 0.2
    """share of games that do not resign but play out, to measure the false-resign rate"""
    max_ply: int = DRAW_PLY
    """a game still going at this ply (opening plies included) is truncated: its last position bootstraps"""
    lam: float = 0.7
    """lambda of the lambda-returns"""
    gamma: float = 1.0
    """discount per ply, toward the draw value 0.5"""
    q_lambda: Literal["watkins", "peng"] = "watkins"
    """Watkins's Q(lambda) cuts the trace at exploratory moves; Peng's does not"""
    double_dqn: bool = False
    """bootstrap with Q_target(s, argmax_a Q_online(s, a)) instead of max_a Q_target(s, a)"""
    target_every: int = 0
    """learner steps between target-network refreshes (0: once per generation)"""
    window: int = 200_000
    """replay window: the newest positions trained on (whole games)"""
    steps: int = 200
    """learner steps per generation. Each self-play position is trained on about steps * batch_size * (1 -
    teacher_fraction) / (positions a generation) times in its life in the window (KataGo keeps this near 4;
    a game is about 80 positions)"""
    teacher: list[str] = setting(factory=default_teacher_files, paths=True,
                                 shown="$MESSIAH_DATA/teacher/teacher_s*.hcpe")
    """teacher data files mixed in so the net does not forget (hcpe or any format messiah pretrain reads)"""
    teacher_fraction: float = 0.25
    """share of each batch drawn from the teacher data"""
    strong: list[str] = setting(factory=default_strong_files, paths=True, shown="$MESSIAH_DATA/floodgate/train.hcpe")
    """records of strong programs' games (no evals: the played move is the ranking target, the game's result
    the value target), all trained on; the floodgate test set stays held out for the agreement figure"""
    strong_fraction: float = 0.0
    """share of each batch drawn from --strong, on top of --teacher-fraction: real strong moves hold the net's
    agreement with strong play, which self-play and a weak teacher erode"""
    loss: Literal["rank", "value"] = "rank"
    """the pretraining loss family: squared error on the played move's Q plus, with 'rank', the ranking
    cross-entropy toward the search's choice (teacher rows: the teacher's move)"""
    dense_weight: float = 0.5
    """weight of the squared error of every legal move's Q against the search's root value of that move"""
    tree_visits: int = 0
    """TreeStrap: a node below the root that the search visited at least this many times becomes a training
    row of its own (every move's search value as its dense targets, its most visited move as its ranking
    target), from the subtrees of the root moves not played: the played move's subtree is searched on as the
    next root, the others' would be thrown away (0: root rows only)"""
    tree_fraction: float = 0.2
    """share of each batch drawn from those tree rows (out of the self-play share), when there are any"""
    lr: float = 3e-4
    """AdamW's learning rate (constant after the warm-up: a run has no fixed end)"""
    warmup: int = 100
    """steps of linear learning-rate warm-up at the run's start"""
    checkpoint_every: int = setting(100, runtime=True)
    """learner steps between checkpoints (a kill loses at most these)"""
    val_positions: int = setting(2048, runtime=True)
    """held-out teacher positions (and as many of the floodgate agreement set) validated per generation"""
    gate: bool = True
    """play gating games (each candidate against the current best, promoted only if it wins); without them
    every candidate is promoted"""
    gate_games: int = 40
    """gating games (pairs of one opening with colours swapped)"""
    gate_nodes: int = 64
    """node budget per move in gating games (the engine's NodesLimit)"""
    gate_threshold: float = 0.55
    """score the candidate needs to be promoted (ignored with --gate-sprt)"""
    gate_sprt: str = ""
    """'ELO0,ELO1': decide promotion by an SPRT instead (stops early; H1 promotes; undecided at --gate-games:
    promoted if its score reaches --gate-threshold)"""
    gate_jobs: int = setting(0, runtime=True)
    """gating and verification games at once (0: as many as actors)"""
    verify_every: int = setting(0, runtime=True)
    """every this many generations, the candidate plays the run's starting model (models/g0000.onnx, a fixed
    reference) --verify-games games at --gate-nodes: the log's Elo against it, with its interval, says what
    the run has gained without chaining lucky gates (0: no verification)"""
    verify_games: int = setting(200, runtime=True)
    """games of each verification (pairs of one opening with colours swapped)"""
    rollback: bool = False
    """with --verify-every: a candidate verified clearly below the best verified generation (the top of its
    interval under that generation's Elo) sends the run back to that generation: the actors play with it and
    the learner goes on from its weights with a fresh optimiser and target net. A run without gates plays each
    candidate's games, so a drift feeds itself; this bounds it (the starting model counts as verified at 0)"""
    threads: int = setting(1, runtime=True)
    """the learner's torch and numba threads (0: their own choice)"""
    ray: str = setting("", runtime=True)
    """run the actors on Ray: 'auto' (a running cluster), an address, or 'local' (start one here)"""
    seed: int = 0
    """seed of openings, exploration, batches and a random init"""

    @property
    def layout(self) -> RunLayout:
        """Where the run's files are (its folder, --out)."""
        return RunLayout(Path(self.out))

    def __post_init__(self) -> None:
        super().__post_init__()
        at_least(self, 1, "generations", "games", "games_per_actor", "nodes", "search_batch", "max_ply", "steps",
                 "window", "checkpoint_every", "val_positions", "gate_games", "gate_nodes", "verify_games")
        within(self, 0, 1, "lam", "gamma", "teacher_fraction", "strong_fraction", "tree_fraction", "epsilon",
               "resign_playout", "fast_fraction")
        at_least(self, 0, "tree_visits", "fast_nodes", "guard_nodes")
        if self.fast_nodes >= self.nodes:
            raise UserError(f"--fast-nodes {self.fast_nodes} must be fewer than --nodes {self.nodes}")
        if self.teacher_fraction + self.strong_fraction + (self.tree_fraction if self.tree_visits else 0) > 1:
            raise UserError(f"--teacher-fraction {self.teacher_fraction}, --strong-fraction {self.strong_fraction}"
                            + (f" and --tree-fraction {self.tree_fraction}" if self.tree_visits else "")
                            + " add up to more than the whole batch")
        within(self, 0, 1, "root_noise")
        if self.root_noise and self.search != "puct":
            raise UserError(f"--root-noise mixes noise into PUCT's prior: --search {self.search} has none")
        if self.tau <= 0:
            raise UserError(f"--tau must be positive, not {self.tau}")
        if self.gate_sprt:
            parse_sprt(self.gate_sprt)
        if self.rollback and not self.verify_every:
            raise UserError("--rollback acts on the verifications: give --verify-every N as well")


# Recipes: named sets of field values, ``messiah rl --recipe NAME``. A recipe is as if its flags were given first: the
# flags given override it, and config.json keeps the values (not the name), so a rerun continues the run as any.
#
# m7: the settings of lm2, the run that made m7 (docs/rl-results.md): 240 games of 192 visits and 480 learner steps a
# generation, a million-position window, no gate, lambda 0.9, teacher rows 0.25, floodgate rows 0.1, TreeStrap rows
# at 8 visits taking 0.2 of the batch, openings of 8 random plies. Every run that made a shipped self-play model
# (rl-n64t: m4, m5a: m5, m6b: m6, lm1r then lm2: m7) had the teacher, floodgate and TreeStrap rows; those since m5 the
# games, steps, window, no gate and openings; m6's and m7's the visits. A recipe and not the defaults: the screens
# never decided the floodgate or TreeStrap rows against their absence on their own (t0b took the teacher's rows out
# too; TreeStrap's lead over a plain run, +48, was inside the noise), the budget is the 2-core CPU's and no
# default's, and the defaults stay the small run that a first command and the tests make. Left out: the machine
# (--actors, --device, --threads), the run's own (--out, --init, --seed, --generations), and the teacher files,
# which those runs named by their paths (teacher_s1, s2, s7 and s8 of the shared set): the recipe keeps every one.
RECIPES: dict[str, dict] = {
    "m7": {"games": 240, "steps": 480, "nodes": 192, "window": 1_000_000, "gate": False, "lam": 0.9,
           "teacher_fraction": 0.25, "strong_fraction": 0.1, "tree_visits": 8, "tree_fraction": 0.2, "openings": "",
           "random_plies": 8},
}


def with_recipe(name: str, base: RLConfig | None = None) -> RLConfig:
    """``base`` (a run's saved configuration; else the defaults) with the recipe ``name``'s values."""
    return dataclasses.replace(base or RLConfig(), **RECIPES[name])


def recipe_flags(name: str) -> str:
    """The recipe ``name`` as the flags that give it, for the help."""
    def flag(key: str, value) -> str:
        dashed = key.replace("_", "-")
        if isinstance(value, bool):
            return f"--{dashed}" if value else f"--no-{dashed}"
        return f"--{dashed} {value}" if value != "" else f"--{dashed} ''"

    return " ".join(flag(key, value) for key, value in RECIPES[name].items())


# Levers measured, closed and deleted with their flags (CHANGELOG), each with the setting the code keeps: a saved run
# that set one otherwise is refused by name, never continued as another run.
CLOSED = {"bootstrap": "net"}


def load_config(out: str | os.PathLike) -> RLConfig | None:
    """The configuration a run saved in its folder, or None; UserError for a run that set a closed lever."""
    path = RunLayout(Path(out)).config
    if not path.exists():
        return None
    saved = json.loads(path.read_text())
    for name, kept in CLOSED.items():
        if saved.get(name, kept) != kept:
            raise UserError(f"{path}: the run has {name} {saved[name]!r}, a lever closed and deleted (CHANGELOG): "
                            "continue it with the messiah version that started it")
    return from_dict(RLConfig, saved)


def save_config(cfg: RLConfig) -> None:
    write_json(cfg.layout.config, dataclasses.asdict(cfg))


def parse_sprt(text: str) -> tuple[float, float]:
    """--gate-sprt's ELO0,ELO1 (messiah.arena.stats.parse_sprt, with the flag named in its error)."""
    try:
        return stats.parse_sprt(text)
    except ValueError as e:
        raise UserError(f"--gate-sprt: {e}") from None
