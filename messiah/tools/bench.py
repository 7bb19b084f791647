"""`messiah bench`: speed figures of the board -> features -> network path on a fixed position set.

The position set is fixed so runs compare: every ``STRIDE``-th record of a teacher file, kept when it
is a middlegame (captures have happened: 2..12 pieces in hand) and the side to move has a legal move.

The all-moves vs per-child comparison is the method's claim in one number: scoring every legal move of
a position with one forward pass of the all-moves net, against scoring every child position with the
scalar twin (same backbone, all children in one batch). Both pay their whole pipeline: features, move
generation and the forward pass for the first; making each child, its features and the batched forward
pass for the second. The twin is exported from the same architecture as the model under test, with
random weights (speed does not depend on them); that needs torch.

Each bench is a ``messiah bench`` subcommand whose flags are its configuration's fields: ``evaluator`` (the
figures above), ``search`` (each search at a fixed time per position), ``latency`` (how late the engine
answers a byoyomi), ``clock`` (a game against itself under a real clock) and ``train``: positions per second
of the real training loop (train/pretrain.py) on teacher data, with the share of the step time spent waiting
for a batch, for each number of loader workers asked for, on the CPU and on CUDA when there is one. The
first ``TRAIN_WARMUP`` steps (worker start-up, first kernels) are not timed.
"""

from __future__ import annotations

import csv
import json
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import cshogi
import numpy as np

from messiah.config import at_least, setting
from messiah.errors import DataError, UserError
from messiah.evaluator import DEVICES, Evaluator, ScalarEvaluator, default_model_path
from messiah.features import SHAPE, board_planes, hcp_arrays, planes
from messiah.moves import NUM_MOVE_INDICES, legal_move_indices, pad_indices
from messiah.paths import SHARED_DATA
from messiah.position import board_from_sfen
from messiah.search import SEARCH_NAMES

DEFAULT_POSITIONS = SHARED_DATA / "teacher" / "teacher_s6.hcpe"
SHOWN_POSITIONS = "$MESSIAH_DATA/teacher/teacher_s6.hcpe"
STRIDE = 211  # a prime, so the sample does not lock onto a game-length pattern
MAX_POSITIONS = 200  # of which the search bench uses all, at --movetime each
TRAIN_WARMUP = 10  # training steps run before the timed ones


@dataclass
class EvaluatorBench:
    """the evaluator"""

    model: str | None = None
    """ONNX model (default: the shipped one)"""
    threads: int = 1
    """onnxruntime intra-op threads"""
    device: Literal[DEVICES] = "auto"
    """where the network runs, as the engine's Device option: auto (a GPU when usable), cuda, tensorrt, cpu"""
    positions: str = setting(str(DEFAULT_POSITIONS), shown=SHOWN_POSITIONS)
    """hcpe file the fixed position set is drawn from"""
    arch: str | None = None
    """bench a random-weight model of this shape instead, LAYERSxCHANNELS, e.g. 7x64 (needs torch)"""


@dataclass
class SearchBench(EvaluatorBench):
    """Each search on the position set, a fixed time per position."""

    movetime: int = 200
    """ms of search per position"""
    batch_size: list[int] = setting(factory=list)
    """the leaf batch sizes of ucb1 and puct to compare, e.g. 1 4 8 16 (default: the engine's BatchSize)"""
    options: dict[str, str] = setting(factory=dict, flag="--option")
    """a USI option of the engine the searches are built as, e.g. PuctC=50; repeatable"""

    def __post_init__(self) -> None:
        at_least(self, 1, "movetime")


@dataclass
class LatencyBench:
    """How far past its byoyomi the engine process answers, per search, with NetworkDelay2 0."""

    positions: str = setting(str(DEFAULT_POSITIONS), shown=SHOWN_POSITIONS)
    """hcpe file the fixed position set is drawn from"""
    byoyomi: int = 200
    """ms per move"""
    moves: int = 50
    """positions searched per search"""


@dataclass
class ClockBench:
    """One game of the engine against itself under a real clock."""

    engine: str = ""
    """the engine's command (empty: this installation's messiah-usi)"""
    time: int = 0
    """main time in ms (0: none)"""
    inc: int = 0
    """increment per move in ms"""
    byoyomi: int = 0
    """ms per move after the main time (0: none)"""
    plies: int = 50
    """plies to play (fewer when the game ends)"""
    options: dict[str, str] = setting(factory=dict, flag="--option")
    """a USI option of both sides; repeatable"""

    def __post_init__(self) -> None:
        if not (self.time or self.byoyomi):
            raise UserError("a clock needs --time or --byoyomi (or both)")


@dataclass
class TrainBench:
    """Training throughput of the pretraining loop."""

    data: list[str] = setting(factory=lambda: [str(DEFAULT_POSITIONS)], shown=SHOWN_POSITIONS)
    """teacher data files"""
    steps: int = 40
    """timed training steps per setting"""
    workers: list[int] = setting(factory=lambda: [0, 1])
    """loader worker counts to compare"""
    threads: int = 1
    """torch threads"""
    batch_size: int = 256
    """positions per step"""
    arch: str = "7x32"
    """the net's shape, LAYERSxCHANNELS"""


@dataclass
class SelfPlayBench:
    """Self-play throughput of one actor (this process, onnxruntime on one thread): the games of a generation of
    ``messiah rl`` with the run's defaults, for each search batch."""

    model: str | None = None
    """ONNX model (default: the shipped one)"""
    games: int = 12
    """games per setting (the same openings and seeds for each)"""
    nodes: int = 64
    """visits a move (messiah rl --nodes)"""
    search_batch: list[int] = setting(factory=lambda: [1, 8])
    """search batch sizes to compare (messiah rl --search-batch)"""
    games_per_actor: int = 1
    """games at once in the actor (messiah rl --games-per-actor)"""
    seed: int = 0
    """seed of the openings drawn"""

    def __post_init__(self) -> None:
        at_least(self, 1, "games", "nodes", "games_per_actor")


@dataclass
class ChoicesBench:
    """The searches' choices at a fixed number of nodes, a new game for each position: what a change to a search's
    speed must keep. With --compare, the positions where an earlier run's choice (its --json file) differs."""

    model: str | None = None
    """ONNX model (default: the shipped one)"""
    nodes: int = 800
    """nodes a search"""
    positions: int = 200
    """positions: the bench's middlegames of teacher_s6, then teacher_s7's (random play's without the shared data)"""
    searches: list[str] = setting(factory=lambda: ["puct", "ucb1"])
    """the searches to run"""
    compare: str = ""
    """an earlier run's --json output to compare with"""
    options: dict[str, str] = setting(factory=dict, flag="--option")
    """a USI option of the engine the searches are built as; repeatable"""

    def __post_init__(self) -> None:
        at_least(self, 1, "nodes", "positions")


@dataclass
class PerftBench:
    """Perft by the playout core's board and by cshogi: the count of move sequences of --depth plies from a
    position, with each one's time (the core's after its compiled code is loaded)."""

    sfen: str = setting("startpos", positional=True)
    """the position: an sfen, or startpos"""
    depth: int = 5
    """plies"""

    def __post_init__(self) -> None:
        at_least(self, 1, "depth")


@dataclass
class PositionSet:
    boards: list[cshogi.Board]
    hcps: np.ndarray


def random_positions(limit: int = MAX_POSITIONS, seed: int = 0) -> PositionSet:
    """Middlegame positions of random play (20 to 80 plies, 2 to 12 pieces in hand), the same for a seed: the
    position set of a machine without the shared teacher data."""
    rng = np.random.default_rng(seed)
    boards, hcps = [], np.zeros(limit, cshogi.HuffmanCodedPos)
    while len(boards) < limit:
        board = cshogi.Board()
        for _ in range(int(rng.integers(20, 80))):
            legal = list(board.legal_moves)
            if not legal:
                break
            board.push(legal[int(rng.integers(len(legal)))])
        in_hand = sum(sum(side) for side in board.pieces_in_hand)
        if 2 <= in_hand <= 12 and not board.is_game_over():
            board.to_hcp(hcps[len(boards) : len(boards) + 1])
            boards.append(board)
    return PositionSet(boards, hcps["hcp"])


def position_set(path: str | Path = DEFAULT_POSITIONS, limit: int = MAX_POSITIONS) -> PositionSet:
    """Middlegame positions from an hcpe file; ValueError naming the file when it is not one. Without the
    shared data, the default file's place is taken by random play's positions (figures then compare only
    among themselves)."""
    if Path(path) == DEFAULT_POSITIONS and not DEFAULT_POSITIONS.exists():
        print(f"no {SHOWN_POSITIONS}: benching positions of random play instead", file=sys.stderr)
        return random_positions(limit)
    size = Path(path).stat().st_size
    if size == 0 or size % cshogi.HuffmanCodedPosAndEval.itemsize:
        raise DataError(f"{path}: {size} bytes is not a whole number of {cshogi.HuffmanCodedPosAndEval.itemsize}-byte "
                         "hcpe records")
    records = np.fromfile(path, cshogi.HuffmanCodedPosAndEval)
    boards, hcps = [], []
    for rec in records[::STRIDE]:
        board = cshogi.Board()
        try:  # cshogi raises on some garbage and decodes other garbage into impossible boards
            board.set_hcp(rec["hcp"])
            board_from_sfen(board.sfen())
        except (RuntimeError, ValueError):
            raise DataError(f"{path}: a record does not decode to a position: not an hcpe file?") from None
        in_hand = sum(sum(side) for side in board.pieces_in_hand)
        if 2 <= in_hand <= 12 and not board.is_game_over():
            boards.append(board)
            hcps.append(rec["hcp"])
        if len(boards) == limit:
            break
    return PositionSet(boards, np.array(hcps))


RATIO_ROUNDS = 5  # interleaved rounds whose medians make the all-moves against per-child ratios
BATCH_POSITIONS = 16384  # the batch feature figures convert the position set repeated up to about this many
BATCH_CHUNK = 1024  # positions a planes() call converts in the batch feature figures
CHEAP_CALLS = 20  # calls a timing round of the loops of a few microseconds a position (features, legal moves)
CALLS = 3  # calls a timing round of the other loops
FORWARD_BATCHES = (1, 8, 32, 128, 512)  # batch sizes of the forward-pass figures: a search's leaf batches, and a GPU's
FORWARD_POSITIONS = 2048  # positions each forward-pass figure runs through, in batches of its size

Loops = dict[str, Callable[[], None]]  # a figure's name -> one pass of its work over the position set


def _per_call(fn, repeat: int) -> float:
    """Seconds per call of ``fn``, best of three rounds of ``repeat`` calls (after a warm-up call)."""
    fn()
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - t) / repeat)
    return best


def _all_moves_loops(evaluator: Evaluator, boards: list[cshogi.Board], legal: list[tuple[np.ndarray, np.ndarray]]
                     ) -> Loops:
    """The all-moves path a step at a time, one position after another: its features (into one buffer), its legal
    moves' indices, the forward pass alone (features made beforehand) and the whole of :meth:`Evaluator.score`."""
    out = np.empty(SHAPE, np.float32)
    feats = np.stack([board_planes(b) for b in boards])[:, None]

    def features_all():
        for b in boards:
            board_planes(b, out)

    def legal_all():
        for b in boards:
            legal_move_indices(b)

    def forward_all():
        for f, (_, idx) in zip(feats, legal, strict=True):
            evaluator.run(f, idx[None])

    def score_all():
        for b in boards:
            evaluator.score(b)

    return {"features": features_all, "legal": legal_all, "forward": forward_all, "score": score_all}


def _batch_feature_loops(tiled: np.ndarray) -> Loops:
    """The features of the hcps ``tiled``, BATCH_CHUNK positions a call: from the hcps (decoding included) and
    from hcp arrays decoded beforehand."""
    arrays = hcp_arrays(tiled)
    buffer = np.empty((BATCH_CHUNK, *SHAPE), np.float32)

    def batch_planes():
        for i in range(0, len(tiled), BATCH_CHUNK):
            planes(type(arrays)(*(a[i : i + BATCH_CHUNK] for a in arrays)),
                   buffer[: min(BATCH_CHUNK, len(tiled) - i)])

    def batch_end_to_end():
        for i in range(0, len(tiled), BATCH_CHUNK):
            planes(hcp_arrays(tiled[i : i + BATCH_CHUNK]), buffer[: min(BATCH_CHUNK, len(tiled) - i)])

    return {"batch_from_arrays": batch_planes, "batch_end_to_end": batch_end_to_end}


def _per_child_loops(twin: ScalarEvaluator, boards: list[cshogi.Board], legal: list[tuple[np.ndarray, np.ndarray]],
                     n_moves: np.ndarray) -> Loops:
    """The per-child path over the same positions: every child made, its features and one batched pass of the
    scalar ``twin`` a position (the whole pipeline); the batched passes alone; one batch-1 pass a position."""
    child = np.empty((int(n_moves.max()), *SHAPE), np.float32)

    def children_all():
        for b, (moves, _) in zip(boards, legal, strict=True):
            for j, m in enumerate(moves):
                b.push(int(m))
                board_planes(b, child[j])
                b.pop()
            twin.values(child[: len(moves)])

    def twin_forward_all():
        for n in n_moves:
            twin.values(child[:n])

    def twin_one_all():
        for _ in boards:
            twin.values(child[:1])

    return {"children": children_all, "twin_forward": twin_forward_all, "twin_one": twin_one_all}


def _per_child_figures(loops: Loops, n_moves: np.ndarray) -> dict:
    """All-moves against per-child, from the medians of RATIO_ROUNDS interleaved rounds, one of each figure a
    round: one-shot timings of the two sides taken minutes apart drifted with the machine's load (37-61x across
    runs)."""
    timed = {name: loops[name] for name in ("children", "score", "twin_forward", "forward", "twin_one")}
    times: dict[str, list[float]] = {name: [] for name in timed}
    for _ in range(RATIO_ROUNDS):
        for name, fn in timed.items():
            times[name].append(_per_call(fn, 1))
    median = {name: float(np.median(t)) for name, t in times.items()}
    return {
        "per_child_moves_scored_per_s": n_moves.sum() / median["children"],
        "all_moves_vs_per_child_ratio": median["children"] / median["score"],
        "forward_only_ratio": median["twin_forward"] / median["forward"],
        # one all-moves pass against one per-child (scalar) pass, both at batch 1: the extra cost of the
        # move head and the gather of the legal moves' embedding rows
        "all_moves_pass_vs_per_child_pass_batch1": median["forward"] / median["twin_one"],
        "ratio_rounds": RATIO_ROUNDS,
    }


def bench_core(evaluator: Evaluator, positions: PositionSet, twin: ScalarEvaluator | None) -> dict:
    """The speed of the all-moves path on ``positions``, a step at a time and whole (µs a position, moves scored a
    second), the features in batches (positions a second), and with a scalar ``twin`` the per-child comparison
    (:func:`_per_child_figures`; None: left out)."""
    boards = positions.boards
    k = len(boards)
    legal = [legal_move_indices(b) for b in boards]
    n_moves = np.array([len(m) for m, _ in legal])
    loops = _all_moves_loops(evaluator, boards, legal)
    tiled = np.tile(positions.hcps, (max(1, BATCH_POSITIONS // k), 1))
    loops |= _batch_feature_loops(tiled)
    t_score = _per_call(loops["score"], CALLS)
    result = {
        "positions": k,
        "mean_legal_moves": float(n_moves.mean()),
        "features_us_single": _per_call(loops["features"], CHEAP_CALLS) / k * 1e6,
        "legal_move_indices_us": _per_call(loops["legal"], CHEAP_CALLS) / k * 1e6,
        "features_pos_per_s_batch": len(tiled) / _per_call(loops["batch_end_to_end"], 1),
        "features_pos_per_s_batch_from_arrays": len(tiled) / _per_call(loops["batch_from_arrays"], CALLS),
        "forward_us_batch1": _per_call(loops["forward"], CALLS) / k * 1e6,
        "score_us_single": t_score / k * 1e6,
        "moves_scored_per_s": n_moves.sum() / t_score,
    }
    result["forward_per_s"] = forward_rates(evaluator, boards, legal)
    if twin is not None:
        result |= _per_child_figures(loops | _per_child_loops(twin, boards, legal, n_moves), n_moves)
    return result


def forward_rates(evaluator: Evaluator, boards: list[cshogi.Board], legal: list[tuple[np.ndarray, np.ndarray]],
                  batches: tuple[int, ...] = FORWARD_BATCHES) -> dict[str, float]:
    """Positions a second of the forward pass alone (:meth:`Evaluator.run`, features made beforehand) at each
    batch size, over ``boards`` repeated to about FORWARD_POSITIONS: where a GPU pays for itself."""
    feats = np.stack([board_planes(b) for b in boards])
    order = np.resize(np.arange(len(boards)), max(FORWARD_POSITIONS, max(batches)))
    rates = {}
    for batch in batches:
        calls = [(feats[rows], pad_indices([legal[i][1] for i in rows])[0])
                 for rows in np.array_split(order, len(order) // batch)]
        rates[f"batch{batch}"] = len(order) / _per_call(lambda c=calls: [evaluator.run(f, idx) for f, idx in c], 1)
    return rates


def scalar_twin(evaluator: Evaluator, directory: str, positions: PositionSet) -> ScalarEvaluator | None:
    """A scalar twin with the evaluator's architecture and precision, or None when torch is not installed. For an
    int8 model the twin is quantized as ``messiah quantize`` quantizes the model (its activations calibrated on
    ``positions``), so that the all-moves and per-child figures compare int8 with int8."""
    try:
        from messiah.models.export import export_onnx
        from messiah.models.net import NetConfig, ScalarNet
        from messiah.models.quantize import equal_batches, quantize_feeds
    except ImportError:
        return None
    config = NetConfig(**evaluator.config)
    path = export_onnx(ScalarNet(config), Path(directory) / "twin.onnx")
    if evaluator.metadata.get("messiah.precision") == "int8":
        x = planes(hcp_arrays(positions.hcps))
        path = quantize_feeds(path, Path(directory) / "twin-int8.onnx", "scalar",
                              lambda: [{"features": x[rows]} for rows in equal_batches(len(x))])
    threads = evaluator.session.get_session_options().intra_op_num_threads
    return ScalarEvaluator(path, threads=threads, device="cpu")


def random_model(arch: str, directory: str) -> Path:
    """An all-moves model with random weights for architecture "LAYERSxCHANNELS" (layers = 1 + 2*blocks),
    to measure speed without training it. Needs torch."""
    from messiah.models.export import export_onnx
    from messiah.models.net import AllMovesNet, NetConfig

    layers, channels = (int(x) for x in arch.lower().split("x"))
    if layers < 1 or layers % 2 == 0:
        raise UserError(f"--arch {arch}: layers must be odd (1 + 2 * residual blocks)")
    return export_onnx(AllMovesNet(NetConfig(channels=channels, blocks=(layers - 1) // 2)),
                       Path(directory) / "model.onnx")


def bench_search(evaluator: Evaluator, positions: PositionSet, movetime: float, names: list[str],
                 batch_sizes: tuple[int, ...] | None = None, options: Mapping[str, str] | None = None) -> dict:
    """Each search, as the engine with ``options`` builds it (USI option name -> value), on every position
    for ``movetime`` seconds: evaluator calls per second, legal moves scored per second, the evaluator's share
    of the time, and those against the bare rates: one position scored at a time (features, legal moves and the
    pass), and the forward passes alone (Evaluator.run) at the search's batch size. The bandit searches run once
    per leaf batch size in
    ``batch_sizes`` (None: the engine's BatchSize; alpha-beta has none). MateNodes is 0: this measures the
    evaluator's path, not df-pn's. With Threads > 1 (root-parallel helper processes) positions evaluated and
    nodes count every process; forward passes, moves scored and the evaluator's share are the main one's."""
    from messiah.engine.engine import Engine, engine_settings
    from messiah.search import Limits

    bare = 1.0 / (_per_call(lambda: [evaluator.score(b) for b in positions.boards], 1) / len(positions.boards))
    out = {"movetime_ms": movetime * 1000, "bare_score_per_s": bare}
    legal = [legal_move_indices(b) for b in positions.boards]

    def bare_rate(batch: int) -> float:
        """Positions a second of the forward passes alone (Evaluator.run) at ``batch``, over the same positions:
        what a search could reach if its tree cost nothing."""
        key = f"forward_batch{batch}_per_s"
        if key not in out:
            out[key] = forward_rates(evaluator, positions.boards, legal, (batch,))[f"batch{batch}"]
        return out[key]

    sizes = batch_sizes or (engine_settings(options)["BatchSize"],)
    runs = [(name, b) for name in names for b in (sizes if name != "alphabeta" else (1,))]
    for name, batch in runs:
        chosen = {**(options or {}), "Search": name, "BatchSize": str(batch), "MateNodes": "0"}
        engine = Engine.from_options(chosen, evaluator)
        searcher = engine.searcher
        calls, seconds = evaluator.calls, evaluator.seconds
        nodes = evaluated = 0
        moves_scored = searcher.cache.moves_scored
        start = time.perf_counter()
        for board in positions.boards:
            searcher.new_game()
            result = searcher.search(board, Limits(movetime=movetime))
            nodes += result.nodes
            evaluated += result.evaluations  # helper processes' included (Threads > 1)
        wall = time.perf_counter() - start
        engine.close()
        out[name if batch == 1 and len(sizes) == 1 else f"{name} batch {batch}"] = {
            "positions_evaluated_per_s": evaluated / wall,
            "forward_passes_per_s": (evaluator.calls - calls) / wall,
            "moves_scored_per_s": (searcher.cache.moves_scored - moves_scored) / wall,
            "nodes_per_s": nodes / wall,
            "evaluator_share": (evaluator.seconds - seconds) / wall,
            "vs_bare_batch1": evaluated / wall / bare,
            f"vs_forward_batch{batch}": evaluated / wall / bare_rate(batch),
        }
    return out


STAND_IN_BATCHES = (8, 128)  # where the playout core's own rate is read (issue 70: 30,000 and 100,000 leaves/s)
BANDIT_SEARCHES = ("puct", "ucb1")


def stored_scores(path: str | Path | None) -> Evaluator:
    """The evaluator with its forward pass replaced by stored scores: each move index's Q drawn once (0.3 .. 0.7,
    a fixed seed) and looked up, so that a search's rate is what the search itself costs, the network aside."""
    table = np.random.default_rng(0).uniform(0.3, 0.7, NUM_MOVE_INDICES).astype(np.float32)
    return Evaluator(path, threads=1, device="cpu", forward=lambda features, indices: table[indices])


def bench_stand_in(path: str | Path | None, positions: PositionSet, movetime: float,
                   batches: tuple[int, ...] = STAND_IN_BATCHES, options: Mapping[str, str] | None = None) -> dict:
    """Leaves prepared and backed up a second by each bandit search with :func:`stored_scores` in place of the
    network, at each of ``batches``, ``movetime`` seconds a position: the headroom the search leaves a faster
    evaluator (a GPU)."""
    from messiah.engine.engine import Engine
    from messiah.search import Limits

    evaluator = stored_scores(path)
    out = {}
    for name in BANDIT_SEARCHES:
        for batch in batches:
            chosen = {**(options or {}), "Search": name, "BatchSize": str(batch), "MateNodes": "0", "Threads": "1"}
            with Engine.from_options(chosen, evaluator) as engine:
                evaluated = 0
                start = time.perf_counter()
                for board in positions.boards:
                    engine.searcher.new_game()
                    evaluated += engine.searcher.search(board, Limits(movetime=movetime)).evaluations
                out[f"{name} batch {batch}"] = {"leaves_per_s": evaluated / (time.perf_counter() - start)}
    return out


def bench_latency(cfg: LatencyBench, searches: tuple[str, ...] = SEARCH_NAMES) -> dict:
    """How far past its byoyomi this installation's engine process answers, as a GUI sees it (through the pipes,
    driven by messiah.arena.client.UsiClient), with NetworkDelay2 0: what the margin must cover. Per search, over
    ``cfg.moves`` positions."""
    from messiah.arena.client import UsiClient
    from messiah.arena.match import messiah_command

    positions, byoyomi_ms, moves = position_set(cfg.positions), cfg.byoyomi, cfg.moves
    out: dict = {"byoyomi_ms": byoyomi_ms, "moves_per_search": moves}
    for name in searches:
        usi = UsiClient(messiah_command(), {"Search": name, "NetworkDelay2": "0"})
        try:
            overshoot = []
            for board in positions.boards[:moves]:
                usi.position(sfen=board.sfen())
                start = time.perf_counter()
                usi.go(byoyomi=byoyomi_ms)
                overshoot.append((time.perf_counter() - start) * 1000 - byoyomi_ms)
        finally:
            usi.close()
        ms = np.array(overshoot)
        out[name] = {"median_ms": float(np.median(ms)), "p99_ms": float(np.percentile(ms, 99)),
                     "max_ms": float(ms.max()), "min_ms": float(ms.min())}
    return out


def bench_clock(cfg: ClockBench, opening: list[str] | None = None) -> dict:
    """One game of the engine against itself (two processes) under a real clock, kept as a GUI keeps it
    (cshogi.cli's rules: the increment credited before the move, byoyomi after the main time): the time
    each move took, the clock left at the end, and whether a flag fell. The game stops at ``cfg.plies`` or
    when it ends."""
    from messiah.arena.client import UsiClient
    from messiah.arena.match import messiah_command

    main, inc, byoyomi, plies = cfg.time, cfg.inc, cfg.byoyomi, cfg.plies
    clock = {"time": main, "inc": inc, "byoyomi": byoyomi}
    engine = cfg.engine or messiah_command()
    players = [UsiClient(engine, cfg.options), UsiClient(engine, cfg.options)]
    for usi in players:
        usi.usinewgame()
    board, moves = cshogi.Board(), list(opening or [])
    for move in moves:
        board.push_usi(move)
    left = [main, main]
    spent: list[float] = []
    flag = False
    try:
        while len(spent) < plies and not board.is_game_over():
            side = board.turn
            usi = players[side]
            usi.position(moves)
            start = time.perf_counter()
            best, _ = usi.go(btime=round(left[0]) if main else None, wtime=round(left[1]) if main else None,
                             byoyomi=byoyomi or None, binc=inc or None, winc=inc or None)
            ms = (time.perf_counter() - start) * 1000
            spent.append(ms)
            left[side] += inc - ms
            if left[side] < 0:
                flag = flag or -left[side] > byoyomi
                left[side] = 0
            if best in ("resign", "win"):
                break
            board.push_usi(best)
            moves.append(best)
    finally:
        for usi in players:
            usi.close()
    ms = np.array(spent)
    return {"clock": clock, "moves": len(spent), "mean_ms": float(ms.mean()), "min_ms": float(ms.min()),
            "max_ms": float(ms.max()), "total_s": [float(ms[side::2].sum() / 1000) for side in (0, 1)],
            "left_ms": [round(x) for x in left], "flag_fell": flag}


def _evaluator(cfg: EvaluatorBench, directory: str) -> Evaluator:
    return Evaluator(random_model(cfg.arch, directory) if cfg.arch else cfg.model, threads=cfg.threads,
                     device=cfg.device)


def bench_evaluator(cfg: EvaluatorBench) -> dict:
    """The figures of :func:`bench_core`, with the model, its architecture, threads and providers."""
    positions = position_set(cfg.positions)
    with tempfile.TemporaryDirectory() as tmp:
        evaluator = _evaluator(cfg, tmp)
        twin = scalar_twin(evaluator, tmp, positions)
        figures = bench_core(evaluator, positions, twin)
    figures |= {"model": evaluator.describe(), "path": str(evaluator.path), "architecture": evaluator.config,
                "threads": cfg.threads, "providers": evaluator.providers}
    if evaluator.device_note:
        figures["device_note"] = evaluator.device_note
    if twin is None:
        figures["note"] = "torch is not installed: the per-child comparison was skipped"
    else:  # the twin is quantized when the model is: the ratio compares like with like
        figures["twin_precision"] = twin.precision
    return figures


def bench_searches(cfg: SearchBench) -> dict:
    """:func:`bench_search` of every search at ``cfg.movetime`` ms per position."""
    positions = position_set(cfg.positions)
    with tempfile.TemporaryDirectory() as tmp:
        evaluator = _evaluator(cfg, tmp)
        figures = bench_search(evaluator, positions, cfg.movetime / 1000, list(SEARCH_NAMES),
                               tuple(cfg.batch_size) or None, {"Device": cfg.device, **cfg.options})
        stand_in = bench_stand_in(evaluator.path, positions, cfg.movetime / 1000, options=cfg.options)
    return {"search": figures, "stand-in evaluator": stand_in, "positions": len(positions.boards),
            "model": evaluator.describe(), "threads": cfg.threads, "providers": evaluator.providers}


CHOICE_FILES = (DEFAULT_POSITIONS, SHARED_DATA / "teacher" / "teacher_s7.hcpe")


def choice_positions(limit: int) -> list[cshogi.Board]:
    """:class:`ChoicesBench`'s positions: the bench's middlegames from each of CHOICE_FILES in turn."""
    if not all(path.exists() for path in CHOICE_FILES):
        print(f"no {SHOWN_POSITIONS}: positions of random play instead", file=sys.stderr)
        return random_positions(limit).boards
    boards: list[cshogi.Board] = []
    for path in CHOICE_FILES:
        boards += position_set(path, limit - len(boards)).boards
    return boards[:limit]


def bench_choices(cfg: ChoicesBench) -> dict:
    """Each search's move, line and win rate on every position at ``cfg.nodes`` nodes; with ``cfg.compare``, how
    many agree with that earlier run, position by position."""
    from messiah.engine.engine import Engine
    from messiah.search import Limits

    boards = choice_positions(cfg.positions)
    evaluator = Evaluator(cfg.model, threads=1)
    out: dict = {"nodes": cfg.nodes, "model": evaluator.describe(), "options": cfg.options}
    for name in cfg.searches:
        with Engine.from_options({**cfg.options, "Search": name}, evaluator) as engine:
            rows = []
            for board in boards:
                engine.searcher.new_game()
                result = engine.searcher.search(board, Limits(nodes=cfg.nodes))
                rows.append({"sfen": board.sfen(), "move": result.pv_usi[0] if result.pv else None,
                             "pv": result.pv_usi[:6], "winrate": result.winrate, "nodes": result.nodes})
        out[name] = rows
    if cfg.compare:
        earlier = json.loads(Path(cfg.compare).read_text())
        out["compared_with"] = cfg.compare
        for name in cfg.searches:
            pairs = list(zip(earlier.get(name, []), out[name], strict=False))
            if [a["sfen"] for a, _ in pairs] != [b["sfen"] for _, b in pairs]:
                raise UserError(f"{cfg.compare}: its {name} positions are not these")
            out[f"{name} agreement"] = {
                "positions": len(pairs),
                "same_move": sum(a["move"] == b["move"] for a, b in pairs),
                "same_line_and_winrate": sum(a["pv"] == b["pv"] and a["winrate"] == b["winrate"] for a, b in pairs),
                "different_moves": [a["sfen"] for a, b in pairs if a["move"] != b["move"]],
            }
    return out


def _cshogi_perft(board: cshogi.Board, depth: int) -> int:
    """Perft by cshogi's move generator, the last ply counted, not made (as the core's)."""
    if depth == 1:
        return len(board.legal_moves)
    total = 0
    for move in board.legal_moves:
        board.push(move)
        total += _cshogi_perft(board, depth - 1)
        board.pop()
    return total


def bench_perft(cfg: PerftBench) -> dict:
    """Perft from ``cfg.sfen`` to ``cfg.depth`` plies by the playout core and by cshogi, timed; the counts must
    agree (the known start-position counts: 30, 900, 25,470, 719,731, 19,861,490)."""
    from messiah.playout import board as core
    from messiah.playout import movegen as core_moves

    board = cshogi.Board() if cfg.sfen == "startpos" else board_from_sfen(cfg.sfen)
    state = core.from_board(board)
    start = time.perf_counter()
    core_moves.perft(state, 1)
    load = time.perf_counter() - start
    start = time.perf_counter()
    mine = int(core_moves.perft(state, cfg.depth))
    core_seconds = time.perf_counter() - start
    start = time.perf_counter()
    theirs = _cshogi_perft(board, cfg.depth)
    cshogi_seconds = time.perf_counter() - start
    return {"sfen": board.sfen(), "depth": cfg.depth, "core": mine, "cshogi": theirs, "equal": mine == theirs,
            "core_seconds": core_seconds, "cshogi_seconds": cshogi_seconds,
            "core_positions_per_s": mine / max(core_seconds, 1e-9), "core_load_seconds": load}


def bench_train(cfg: TrainBench, devices: tuple[str, ...] | None = None) -> dict:
    """Training throughput of the pretraining loop: for each device (the CPU, and CUDA when there is one)
    and each worker count, ``cfg.steps`` timed steps after ``TRAIN_WARMUP`` untimed ones. Needs torch."""
    import torch

    from messiah.models.net import NetConfig
    from messiah.train.pretrain import TrainConfig, train

    layers, channels = (int(x) for x in cfg.arch.lower().split("x"))
    net = NetConfig(channels=channels, blocks=(layers - 1) // 2)
    devices = devices or (("cpu", "cuda") if torch.cuda.is_available() else ("cpu",))
    steps, batch_size = cfg.steps, cfg.batch_size
    out = {"architecture": net.describe(), "batch_size": batch_size, "steps": steps, "threads": cfg.threads}
    for device in devices:
        for n in cfg.workers:
            with tempfile.TemporaryDirectory() as tmp:
                run = TrainConfig(data=list(cfg.data), out=tmp, net=net, steps=TRAIN_WARMUP + steps,
                                  batch_size=batch_size, warmup=1, val_positions=64, eval_every=TRAIN_WARMUP,
                                  checkpoint_every=10**9, threads=cfg.threads, workers=n, device=device,
                                  export=False, progress=False)
                train(run)
                with open(Path(tmp) / "log.csv", newline="") as f:
                    rows = [r for r in csv.DictReader(f) if int(r["step"]) > TRAIN_WARMUP]
            positions_per_s = len(rows) / sum(1 / float(r["positions_per_s"]) for r in rows)  # over equal windows
            out[f"{device}, workers={n}"] = {
                "positions_per_s": positions_per_s,
                "steps_per_s": positions_per_s / batch_size,
                "data_wait_percent": 100 * sum(float(r["data_wait_share"]) for r in rows) / len(rows),
            }
    return out


def bench_selfplay(cfg: SelfPlayBench) -> dict:
    """Positions (moves played) a second of one actor, the share of its time in forward passes and the positions
    each pass scored, per search batch: ``messiah rl``'s self-play at its defaults otherwise."""
    from dataclasses import replace

    from messiah.train.rl.config import RLConfig
    from messiah.train.rl.loop import game_specs
    from messiah.train.rl.selfplay import Actor

    out: dict = {"games": cfg.games, "nodes": cfg.nodes, "games_per_actor": cfg.games_per_actor}
    for batch in cfg.search_batch:
        run = replace(RLConfig(), games=cfg.games, nodes=cfg.nodes, search_batch=batch,
                      games_per_actor=cfg.games_per_actor, seed=cfg.seed, progress=False)
        actor = Actor(cfg.model or str(default_model_path()), run)
        start = time.perf_counter()
        played = actor.play(game_specs(run, 1))
        seconds = time.perf_counter() - start
        plies = sum(stats.plies for _, _, stats in played)
        forward = sum(stats.forward_seconds for _, _, stats in played) / cfg.games_per_actor
        out[f"search_batch={batch}"] = {
            "positions_per_s": plies / seconds,
            "forward_share": forward / seconds,
            "leaves_per_forward": actor.evaluator.positions / max(1, actor.evaluator.calls),
            "positions": plies,
        }
    out["model"] = actor.evaluator.describe()
    return out
