"""``messiah rl``: self-play reinforcement by DQN with Q(lambda), in generations (docs/method.md sections 3 and 8).

A generation g, as KataGo's synchronous loop (self-play, train, export, gate):

1. **self-play**: actors play ``games`` games with the current best model (``models/best.onnx``) and the
   driver appends each finished game to ``selfplay/gNNNN.selfplay`` (the format of messiah.records.selfplayfile; the
   actors of selfplay.py);
2. **learn**: ``steps`` learner steps on the newest ``window`` positions (learner.py), the learner
   continuing from where the last generation left it, whether or not its model was promoted;
3. **export** the candidate ``models/gNNNN.onnx``;
4. **gate**: the candidate plays the best at ``gate_nodes`` nodes a move through ``messiah match``
   (colours swapped, openings from the set); promoted by score or SPRT; Elo and interval logged;
   **verify** (every ``verify_every`` generations): the candidate plays the run's starting model, a fixed
   reference, so that the log's gains never chain on lucky gates;
5. the generation's figures (figures.py: :class:`Figures`, one field per column of the log) go to
   ``gens/gNNNN.json``; ``log.csv`` and ``log.png`` are rebuilt from them.

Every phase is resumable: ``state.json`` (:class:`RunState`) names the generation reached; self-play resumes from
the games in its file (the game index is exact, a half-written game is cut off), the learner from
``learner.pt`` (written every ``checkpoint_every`` steps with the target network), the candidate is
re-exported, a gate without its ``result.json`` is replayed. So a kill -9 loses at most the games being
played, the steps since the last checkpoint and an unfinished gate match; rerunning the same command goes on.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from messiah.config import run_changes
from messiah.environment import environment
from messiah.errors import DataError, UserError
from messiah.evaluator import default_model_path
from messiah.files import atomic_path, json_text, write_json
from messiah.paths import SHARED_DATA
from messiah.records.selfplayfile import (
    END_MATED,
    END_PROVEN_MATE,
    END_REPETITION,
    END_RESIGN,
    END_TRUNCATED,
    ENDINGS,
    SELFPLAY,
    TREE,
    append_game,
    prepare,
    read_selfplay_games,
    tree_file,
)
from messiah.train.pool import WorkerPool
from messiah.train.rl.config import (
    AGREEMENT_SET,
    DEFAULT_OPENINGS,
    RLConfig,
    load_config,
    parse_sprt,
    save_config,
)
from messiah.train.rl.figures import Figures, write_log
from messiah.train.rl.layout import RunLayout
from messiah.train.rl.selfplay import Actor, GameSpec, GameStats, actor_process

GATE_BYOYOMI = 60_000  # ms: a clock that never binds, so the node budget alone decides how long a move takes


def _copy_atomic(source: Path, path: Path) -> None:
    """``path`` becomes a copy of ``source`` at once (a kill leaves the old file or the new, never half of one)."""
    with atomic_path(path) as tmp:
        shutil.copyfile(source, tmp)


def _number(figures: dict, key: str) -> float:
    """A figure read back from a run's JSON, where a missing one and an Elo that is not finite (null, see
    :func:`messiah.files.json_text`) both read NaN: comparisons with it are false, so it decides nothing."""
    value = figures.get(key)
    return math.nan if value is None else value


def actor_count(cfg: RLConfig) -> int:
    return cfg.actors or os.cpu_count() or 1


# --------------------------------------------------------------------------- self-play

def game_specs(cfg: RLConfig, generation: int) -> list[GameSpec]:
    """The generation's games: each with an opening line drawn from the set and a seed, both functions of
    (seed, generation, game), so a resumed generation plays the same games."""
    lines = None
    if cfg.openings:
        lines = [x.strip() for x in Path(cfg.openings).read_text().splitlines() if x.strip() and not x.startswith("#")]
        if not lines:
            raise DataError(f"{cfg.openings}: no openings")
    rng = np.random.default_rng((cfg.seed, generation))
    picks = rng.integers(0, len(lines), cfg.games) if lines else [None] * cfg.games
    seeds = rng.integers(0, 2**63 - 1, cfg.games)
    return [GameSpec(i, generation, None if lines is None else lines[int(p)], int(s))
            for i, (p, s) in enumerate(zip(picks, seeds, strict=True))]


def selfplay(cfg: RLConfig, generation: int, model: Path) -> dict:
    """Play the generation's missing games into its file; the figures of all its games."""
    path = cfg.layout.selfplay(generation)
    path.parent.mkdir(parents=True, exist_ok=True)
    prepare(path)
    prepare(tree_file(path))
    records, _ = read_selfplay_games(path)
    done = set(np.unique(np.asarray(records["game"])).tolist()) if len(records) else set()
    todo = [s for s in game_specs(cfg, generation) if s.game not in done]
    stats_path = cfg.layout.stats(generation)
    _trim_stats(stats_path, done)
    start = time.perf_counter()
    if todo:
        bar = tqdm(total=cfg.games, initial=len(done), desc=f"g{generation} self-play", unit="game", file=sys.stderr,
                   disable=not cfg.progress)

        order = [s.game for s in todo]
        waiting: dict[int, tuple[bytes, GameStats]] = {}

        def write(game: int, rows: bytes, stats: GameStats) -> None:
            """Games go into the files in game order, whatever order the actors finish them in: the files,
            and so the learner's batches, are the same for any number of actors (a run replays to the bit on
            a machine with more or fewer cores). An actor that runs ahead waits here in memory; a kill
            loses those games and the resumed run plays them again."""
            waiting[game] = (rows, stats)
            while order and order[0] in waiting:
                commit(order[0], *waiting.pop(order.pop(0)))

        def commit(game: int, rows: bytes, stats: GameStats) -> None:
            data = np.frombuffer(rows, SELFPLAY)
            tree = (data["flags"] & TREE) > 0
            if len(data):
                append_game(path, data[~tree])  # the commit point: a kill before the tree rows loses only those
            if tree.any():
                append_game(tree_file(path), data[tree])
            with open(stats_path, "a") as f:  # after the game: a stats line never lacks its game
                f.write(json.dumps({"game": game, **asdict(stats)}) + "\n")
            bar.update(1)

        model = int8_copy(cfg, model) if cfg.actor_device == "cpu" else model
        if cfg.ray:
            _ray_actors(cfg, model, todo, write)
        else:
            _local_actors(cfg, model, todo, write)
        bar.close()
    return selfplay_figures(path, stats_path, time.perf_counter() - start, len(todo), cfg)


def int8_copy(cfg: RLConfig, model: Path) -> Path:
    """The CPU actors' model: ``model``'s int8 copy beside it (``messiah quantize``: the same moves, twice the
    positions a second in the net), made once per model file and calibrated on the run's data files; the
    float model itself where there is no data to calibrate on."""
    from messiah.models.quantize import default_calibration_files, quantize_onnx

    copy = model.with_name(f"{model.stem}-int8.onnx")
    if copy.exists() and copy.stat().st_mtime >= model.stat().st_mtime:
        return copy
    files = [*cfg.strong, *cfg.teacher] or default_calibration_files()
    if not files:
        return model
    return quantize_onnx(model, copy, files)  # written atomically: a kill leaves no half copy


def _trim_stats(path: Path, done: set[int]) -> None:
    """Keep only the stats of games that are in the records (a kill can leave one without the other)."""
    if not path.exists():
        return
    lines = [x for x in path.read_text().splitlines() if x.strip()]
    kept, seen = [], set()
    for line in lines:
        try:
            game = json.loads(line)["game"]
        except (ValueError, KeyError):
            continue
        if game in done and game not in seen:
            kept.append(line)
            seen.add(game)
    with atomic_path(path) as tmp:
        tmp.write_text("".join(x + "\n" for x in kept))


def _local_actors(cfg: RLConfig, model: Path, todo: list[GameSpec], write) -> None:
    """Actor processes (spawned: no fork of a process holding OpenMP or tqdm threads), one share of the games
    each; the driver writes each game as it arrives."""
    n = min(actor_count(cfg), math.ceil(len(todo) / cfg.games_per_actor))
    if n <= 1 and cfg.games_per_actor == 1 and os.environ.get("MESSIAH_RL_INPROCESS"):
        actor = Actor(str(model), cfg)  # tests: no process to start
        actor.play(todo, write)
        return
    finished = 0
    with WorkerPool(actor_process, [(str(model), cfg, todo[i::n]) for i in range(n)], RuntimeError,
                    "every actor has exited", "it") as pool:
        while finished < n:
            message = pool.next()
            if message is None:
                continue
            kind, game, rows, stats = message
            if kind == "error":
                raise RuntimeError(f"an actor failed:\n{game}")
            if kind == "done":
                finished += 1
                continue
            write(game, rows, stats)


def _ray_actors(cfg: RLConfig, model: Path, todo: list[GameSpec], write) -> None:
    """The same actors on Ray (``--ray``): the model travels through the object store once, each actor plays
    ``games_per_actor`` games per call, and at most one call per actor is in flight (a bounded queue: actors
    never outrun the driver into Ray's object store). The driver writes the games, so a cluster needs no
    shared disk."""
    import ray

    if not ray.is_initialized():
        local = cfg.ray == "local"
        ray.init(address=None if local else cfg.ray, num_cpus=actor_count(cfg) if local else None,
                 include_dashboard=False, log_to_driver=False, configure_logging=False)
    blob = ray.put(model.read_bytes())
    remote = ray.remote(num_cpus=1)(RayActor)
    n = min(actor_count(cfg), math.ceil(len(todo) / cfg.games_per_actor))
    actors = [remote.remote(blob, cfg) for _ in range(n)]
    chunks = [todo[i : i + cfg.games_per_actor] for i in range(0, len(todo), cfg.games_per_actor)]
    pending = {}
    try:
        for actor in actors:
            if chunks:
                pending[actor.play.remote(chunks.pop(0))] = actor
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            actor = pending.pop(ready[0])
            for game, rows, stats in ray.get(ready[0]):
                write(game, rows, stats)
            if chunks:
                pending[actor.play.remote(chunks.pop(0))] = actor
    finally:
        for actor in actors:
            ray.kill(actor)


class RayActor:
    """A Ray actor: writes the model it was sent to a private file and plays with it."""

    def __init__(self, model: bytes, cfg: RLConfig):
        import tempfile

        self.dir = tempfile.mkdtemp(prefix="messiah-rl-")
        path = Path(self.dir) / "model.onnx"
        path.write_bytes(model)
        self.actor = Actor(str(path), cfg)

    def play(self, specs: list[GameSpec]) -> list[tuple[int, bytes, GameStats]]:
        return self.actor.play(specs)


def selfplay_figures(path: Path, stats_path: Path, seconds: float, played: int, cfg: RLConfig) -> dict:
    """How the generation's games went (all of them, resumed ones included) and this invocation's speed."""
    stats = [json.loads(x) for x in stats_path.read_text().splitlines() if x.strip()] if stats_path.exists() else []
    records, _ = read_selfplay_games(path)
    n = max(len(stats), 1)
    ends = [s["end"] for s in stats]
    checked = [s for s in stats if s["would_resign"] >= 0 and s["end"] != END_TRUNCATED]
    false = sum(s["winner"] != 1 - s["would_resign"] for s in checked)
    fresh = stats[-played:] if played else []
    plies = sum(s["plies"] for s in fresh)
    all_plies = sum(s["plies"] for s in stats)
    search_s = sum(s["seconds"] for s in fresh)
    actors = max(1, min(actor_count(cfg), played))
    tree, _ = read_selfplay_games(tree_file(path))
    return {"games": len(stats), "positions": len(records), "tree_positions": len(tree),
            "selfplay_s": seconds if played else math.nan,
            "selfplay_positions_per_s": plies / seconds if played and seconds else math.nan,
            "positions_per_s_per_actor": plies / seconds / actors if played and seconds else math.nan,
            "forward_share": sum(s["forward_seconds"] for s in fresh) / search_s if search_s else math.nan,
            "mean_plies": all_plies / n,
            **{f"{name}_share": sum(e == code for e in ends) / n for code, name in
               ((END_TRUNCATED, "truncated"), (END_RESIGN, "resign"), (END_REPETITION, "repetition"))},
            "mate_share": sum(e in (END_MATED, END_PROVEN_MATE) for e in ends) / n,
            "false_resign_rate": false / len(checked) if checked else math.nan, "resign_checked": len(checked),
            "exploratory_share": sum(s["exploratory"] for s in stats) / max(1, all_plies),
            "fast_share": sum(s.get("fast", 0) for s in stats) / max(1, all_plies),
            "black_win_share": sum(s["winner"] == 0 for s in stats) / n,
            "endings": {ENDINGS[c]: ends.count(c) for c in sorted(set(ends))}}


# --------------------------------------------------------------------------- gating

def play_models(cfg: RLConfig, out: Path, candidate: Path, reference: Path, games: int, seed: int,
                sprt: tuple[float, float] | None = None) -> dict:
    """``games`` games of the candidate against the reference at ``gate_nodes`` nodes a move through messiah
    match (colours swapped over the run's openings), recorded in ``out``; messiah.arena.stats.summarize's
    figures and ``seconds``. ``out/result.json`` keeps them: a match without one was interrupted and is played
    again."""
    from messiah.arena.match import MatchConfig, messiah_command, play_match
    from messiah.arena.stats import summarize

    result = out / "result.json"
    if result.exists():
        return json.loads(result.read_text())
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    start = time.perf_counter()
    common = {"NodesLimit": str(cfg.gate_nodes), "Threads": "1", "Search": cfg.search}
    match = MatchConfig(opponent=messiah_command(), engine=messiah_command(),
                        options={**common, "ModelPath": str(candidate.resolve())},
                        opponent_options={**common, "ModelPath": str(reference.resolve())}, games=games,
                        jobs=cfg.gate_jobs or actor_count(cfg), byoyomi=GATE_BYOYOMI,
                        openings=match_openings(cfg, out, games, seed), seed=seed, out=str(out), sprt=sprt)
    _, played = play_match(match, progress=cfg.progress)
    figures = {**summarize(played, sprt), "seconds": time.perf_counter() - start}
    write_json(result, figures)
    return figures


def match_openings(cfg: RLConfig, out: Path, games: int, seed: int) -> str:
    """The openings of a gate or a verification: the run's opening file, or without one (``--openings ''``) as
    many openings of ``--random-plies`` random moves as the match has pairs, drawn from its seed and written to
    ``out/openings.sfen``. Never the bare start position: at a fixed node count both colourings of it replay the
    same two games, so every pair scores the same (a 100-game verification read 100-0 or 50-50)."""
    if cfg.openings:
        return cfg.openings
    from messiah.arena.match import write_random_openings

    return str(write_random_openings(out, (games + 1) // 2, seed, cfg.random_plies))


def gate(cfg: RLConfig, generation: int, candidate: Path, best: Path) -> dict:
    """The candidate against the best (gates/gNNNN); promoted by SPRT, else by score."""
    sprt = parse_sprt(cfg.gate_sprt) if cfg.gate_sprt else None
    s = play_models(cfg, cfg.layout.gate(generation), candidate, best, cfg.gate_games, cfg.seed * 1000 + generation,
                    sprt)
    decision = s["sprt"]["decision"] if sprt else "continue"
    promoted = decision == "H1 accepted" or (decision == "continue" and s["score"] >= cfg.gate_threshold)
    return {"gate_games": s["games"], "gate_wins": s["wins"], "gate_losses": s["losses"], "gate_draws": s["draws"],
            "gate_score": s["score"], "elo": _number(s, "elo"), "elo_low": _number(s, "elo_low"),
            "elo_high": _number(s, "elo_high"), "gate_s": s["seconds"], "promoted": int(promoted),
            "sprt": decision}


def rollback_target(verified: list, generation: int, figures: dict) -> tuple[list, int | None]:
    """After a verification: the best verified [generation, Elo] and the generation to go back to (None: go on).
    Back when the candidate's interval lies wholly below the best verified Elo; the candidate becomes the best
    verified one when its Elo is higher. An infinite Elo (every game won or lost) counts as its interval's
    finite end, so one lucky sweep does not make every later candidate look worse."""
    best_generation, best_elo = verified
    if figures["verify_elo_high"] < best_elo:
        return verified, best_generation
    elo = figures["verify_elo"] if math.isfinite(figures["verify_elo"]) else figures["verify_elo_low"]
    if elo > best_elo:
        return [generation, elo], None
    return verified, None


def verify(cfg: RLConfig, generation: int, candidate: Path) -> dict:
    """The candidate against the run's fixed reference, its starting model (verify/gNNNN): Elo with its
    interval. Other openings than the gates' (another seed)."""
    s = play_models(cfg, cfg.layout.verify(generation), candidate, cfg.layout.model(0), cfg.verify_games,
                    cfg.seed * 1000 + 500 + generation)
    return {f"verify_{k}": _number(s, k) for k in ("games", "wins", "losses", "draws", "elo", "elo_low",
                                                        "elo_high")} | {"verify_s": s["seconds"]}


# --------------------------------------------------------------------------- the loop

@dataclass
class RunState:
    """Where a run stands between generations (state.json): the generation to play next, the best model's
    generation, and with --rollback the best verified [generation, Elo]. Written after each generation, so a
    killed run repeats at most the generation it was in."""

    generation: int = 1
    best_generation: int = 0
    verified: list = field(default_factory=lambda: [0, 0.0])

    @classmethod
    def load(cls, layout: RunLayout) -> RunState:
        path = layout.state
        if not path.exists():
            return cls()
        saved = json.loads(path.read_text())
        return cls(saved["generation"], saved["best_generation"], saved.get("verified", [0, 0.0]))

    def save(self, layout: RunLayout) -> None:
        write_json(layout.state, asdict(self))


def _initial_model(cfg: RLConfig, learner_net_fn) -> Path:
    """models/g0000.onnx: the starting model (an ONNX init is copied byte for byte: generation 0 is exactly the
    model given)."""
    path = cfg.layout.model(0)
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    source = default_model_path() if cfg.init == "default" else Path(cfg.init)
    if cfg.init != "random" and source.suffix == ".onnx":
        _copy_atomic(source, path)
    else:
        from messiah.models.export import export_onnx

        export_onnx(learner_net_fn(), path, {"generation": 0, "run": "messiah rl"})
    return path


def missing_data(cfg: RLConfig) -> list[str]:
    """What the run will go without, one line each: an installed package finds the shared data only through
    $MESSIAH_DATA, and without it the defaults quietly drop the teacher and strong shares, the floodgate
    agreement figure and the shared openings, which makes another run than the same command here."""
    where = f"the shared data folder ({SHARED_DATA}; set MESSIAH_DATA)"
    lines = []
    if cfg.teacher_fraction and not cfg.teacher:
        lines.append(f"no teacher files in {where}: --teacher-fraction {cfg.teacher_fraction} has nothing to draw")
    if cfg.strong_fraction and not cfg.strong:
        lines.append(f"no strong games in {where}: --strong-fraction {cfg.strong_fraction} has nothing to draw")
    if not AGREEMENT_SET.exists():
        lines.append(f"no floodgate agreement figure: {AGREEMENT_SET.name} is not in {where}")
    if not cfg.openings and not DEFAULT_OPENINGS.exists():  # --openings '' with the set there is a choice
        lines.append(f"openings: the start position and {cfg.random_plies} random plies (no shared set in {where} "
                     "and no --openings)")
    return lines


def run(cfg: RLConfig) -> Path:
    """Run (or continue) the loop up to ``cfg.generations``; the best model's path. Each generation: self-play
    with the best model, learning on the window, the candidate judged (gate, verification), promoted or rolled
    back, its figures written."""
    layout = cfg.layout
    _start(cfg)
    from messiah.train.rl.learner import Learner
    from messiah.train.trainer import initial_net

    state = RunState.load(layout)
    net = None

    def net_fn():
        nonlocal net
        net = net or initial_net(cfg)
        return net

    _initial_model(cfg, net_fn)
    best = layout.best
    if not best.exists():
        shutil.copyfile(layout.model(state.best_generation), best)
    learner = None
    while state.generation <= cfg.generations:
        g = state.generation
        gen_start = time.perf_counter()
        figures = Figures(g)
        figures.update(selfplay(cfg, g, best))
        if learner is None:
            learner = Learner(cfg, net_fn())
            learner.load()
        figures.update(_learn(cfg, g, learner))
        candidate = layout.model(g)
        if not candidate.exists():  # written atomically after the last step; after a rollback it is not the learner's
            learner.export(candidate, g)
        figures.update(gate(cfg, g, candidate, best) if cfg.gate else {"promoted": 1})
        if cfg.verify_every and g % cfg.verify_every == 0:
            figures.update(verify(cfg, g, candidate))
        back = _promote_or_roll_back(cfg, state, g, candidate, best, figures)
        figures.best_generation = state.best_generation
        figures.generation_s = time.perf_counter() - gen_start
        layout.figures(g).parent.mkdir(exist_ok=True)
        figures.save(layout.figures(g))
        if back is not None:  # a kill before state.json replays this tail: both steps are idempotent
            _copy_atomic(layout.model(back), best)
            learner.restart_from(best)
        state.generation = g + 1
        state.save(layout)
        write_log(layout.root)
    if layout.all_figures():
        write_log(layout.root)  # also after a kill between a generation's end and its log
    return best


def _start(cfg: RLConfig) -> None:
    """The run's folder with its configuration; UserError when continuing would change the run; what the run
    goes without said on stderr."""
    layout = cfg.layout
    layout.root.mkdir(parents=True, exist_ok=True)
    saved = load_config(layout.root)
    if saved is not None:
        changes = run_changes(saved, cfg)
        if changes:
            raise UserError(f"{layout.root}: continuing would change the run ({'; '.join(changes)}): rerun with the "
                            "run's own settings (see its config.json), or start a new run in another --out")
    save_config(cfg)
    with open(layout.environment, "a") as f:  # a replay to the bit needs these versions
        f.write(json_text({"from_generation": RunState.load(layout).generation, **environment()}) + "\n")
    for line in missing_data(cfg):
        print(f"messiah rl: {line}", file=sys.stderr)


def _learn(cfg: RLConfig, generation: int, learner) -> dict:
    """Generation ``generation``'s learning (Learner.learn) on the window of the newest self-play; the figures."""
    from messiah.train.rl.learner import Window, selfplay_files

    learn_start = time.perf_counter()
    window = Window(selfplay_files(cfg.layout, generation), cfg.window)
    bar = tqdm(total=cfg.steps, initial=max(0, learner.steps_done - (generation - 1) * cfg.steps),
               desc=f"g{generation} learn", unit="step", file=sys.stderr, disable=not cfg.progress)
    figures = learner.learn(window, generation * cfg.steps, bar)
    bar.close()
    figures.update(window=len(window), tree_window=window.tree_size,
                   target_mean=float(np.nanmean(window.targets)) if len(window) else math.nan,
                   learn_s=time.perf_counter() - learn_start, **learner.validate())
    return figures


def _promote_or_roll_back(cfg: RLConfig, state: RunState, generation: int, candidate: Path, best: Path,
                          figures: Figures) -> int | None:
    """A promoted candidate becomes the best model; with --rollback, a verified candidate clearly below the
    best verified one sends the run back to that one: its generation (None: go on)."""
    if figures.promoted:
        _copy_atomic(candidate, best)
        state.best_generation = generation
    if not (cfg.rollback and figures.verify_elo is not None):
        return None
    state.verified, back = rollback_target(state.verified, generation, vars(figures))
    figures.verified_generation = state.verified[0]
    if back is not None:
        figures.rolled_back_to = state.best_generation = back
    return back
