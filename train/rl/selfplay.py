"""Actors: self-play games through the engine's searcher (:func:`make_game_searcher`) with a node budget,
recorded as :data:`SELFPLAY` rows. No torch: an actor needs only the onnxruntime evaluator, the searches and
the engine that builds them.

Per move: the root search (``Limits(visits=nodes)``: the root's visits, those kept from the previous move's
tree included, as KataGo's playout cap; its df-pn at the root finds forced mates); the root's move
values (for UCB1/PUCT the tree's mean value of each root move, for alpha-beta the network's Q) become the
record's dense targets; the move is drawn from softmax(values / tau) for the first ``explore_plies`` plies
after the opening, then it is the search's choice except with probability epsilon a uniformly random legal
move. The record says which moves were exploratory (not the search's choice).

A game ends on the board (mate, repetition, declaration), by a proven mate at the root (the game stops with
the exact result), by resignation (a root value below ``resign`` at two moves in a row of one side; a share
of games plays on to measure how often that would have been wrong), or at ``max_ply``, where it is
truncated: its last position is recorded without a move, for the learner to bootstrap from.

Several games can run at once in threads of one actor (``games_per_actor``): their searches' leaves go to a
:class:`LeafBatcher`, which scores the waiting leaves of all games in one forward pass (a GPU's batch is
then full instead of one position).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import cshogi
import numpy as np

from messiah.engine.engine import Engine
from messiah.evaluator import Evaluator, softmax_weights
from messiah.moves import legal_move_indices
from messiah.position import perpetual_check_winner
from messiah.records.selfplayfile import (
    END_DECLARATION,
    END_MATED,
    END_PROVEN_MATE,
    END_REPETITION,
    END_RESIGN,
    END_TRUNCATED,
    EXPLORATORY,
    FAST,
    FINAL,
    PROVEN,
    SELFPLAY,
    TREE,
)
from messiah.rules import MAX_LEGAL_MOVES, REPETITION_PLIES, GameRules
from messiah.search import Limits, Searcher
from messiah.search.base import RULES, is_proven, terminal_value
from messiah.search.mcts import RootNoise
from messiah.train.rl.config import RLConfig
from messiah.winrate import zero_sum

RESIGN_STREAK = 2  # a side resigns after this many of its moves in a row below the threshold
FLUSH_WAIT = 0.002  # seconds a leaf waits for the other games' leaves before its batch is scored anyway
NO_SLOT = 0xFFFF  # ``best``/``played`` of a final row
# TreeStrap rows a move adds at most (the most visited nodes first): at 64 to 200 visits a move, the second and
# third root moves' subtrees hold a few nodes searched deeply enough to say more than the network alone.
TREE_ROWS_PER_MOVE = 2


@dataclass(frozen=True)
class GameSpec:
    """One game to play: its number in the generation, the opening line (or None: random plies), a seed."""

    game: int
    generation: int
    opening: str | None
    seed: int


@dataclass
class GameStats:
    """What a game cost and how it ended (for the log)."""

    plies: int = 0
    end: int = 0
    exploratory: int = 0
    would_resign: int = -1  # the side (0 black, 1 white) that would have resigned in a played-out game, else -1
    winner: int = -1  # 0 black, 1 white, -1 none (draw or truncated)
    seconds: float = 0.0
    forward_seconds: float = 0.0
    forwards: int = 0
    nodes: int = 0
    tree_rows: int = 0  # TreeStrap rows recorded beside the game's
    fast: int = 0  # moves searched with the fast budget (--fast-nodes)


class LeafBatcher:
    """Scores the leaves of several games' searches together. Each game's thread calls :meth:`run`; the
    call that completes a batch (every active game waiting) or times out runs one forward pass for all of
    them, outside the lock."""

    def __init__(self, evaluator: Evaluator, games: int):
        self.evaluator = evaluator
        self.active = games
        self.cond = threading.Condition()
        self.pending: list[list] = []

    def done(self) -> None:
        """A game has ended: one fewer to wait for."""
        with self.cond:
            self.active -= 1
            self.cond.notify_all()

    def run(self, features: np.ndarray, indices: np.ndarray) -> np.ndarray:
        request = {"features": features, "indices": indices, "q": None, "error": None, "taken": False}
        with self.cond:
            self.pending.append(request)
            while request["q"] is None and request["error"] is None:
                if not request["taken"] and len(self.pending) >= self.active:
                    self._flush()
                elif not self.cond.wait(FLUSH_WAIT) and not request["taken"]:
                    self._flush()  # the others are busy searching: score what is waiting
        if request["error"] is not None:
            raise request["error"]
        return request["q"]

    def game_evaluator(self) -> Evaluator:
        """An evaluator for one game's thread: the shared evaluator's model, its forward passes through this
        batcher, its own counters."""
        return Evaluator(model=self.evaluator.model, forward=self.run)

    def _flush(self) -> None:
        """Score the waiting leaves (called holding the lock; runs the forward pass without it)."""
        batch, self.pending = self.pending, []
        for r in batch:
            r["taken"] = True
        self.cond.release()
        try:
            self._score(batch)
        except Exception as e:  # every waiting game sees the failure, none waits for ever
            for r in batch:
                r["error"] = e
        finally:
            self.cond.acquire()
            self.cond.notify_all()

    def _score(self, batch: list[dict]) -> None:
        width = max(r["indices"].shape[1] for r in batch)
        features = np.concatenate([r["features"] for r in batch])
        indices = np.concatenate([np.pad(r["indices"], ((0, 0), (0, width - r["indices"].shape[1]))) for r in batch])
        q = self.evaluator.run(features, indices)
        row = 0
        for r in batch:
            n = len(r["features"])
            r["q"] = q[row : row + n, : r["indices"].shape[1]]
            row += n


def engine_options(cfg: RLConfig) -> dict[str, str]:
    """The USI options of the engine the actors play: the run's Search, BatchSize, MateNodes and MateGuardNodes;
    the rest are the engine's defaults."""
    return {"Search": cfg.search, "BatchSize": str(cfg.search_batch), "MateNodes": str(cfg.mate_nodes),
            "MateGuardNodes": str(cfg.guard_nodes)}


def make_game_searcher(cfg: RLConfig, evaluator: Evaluator) -> Searcher:
    """One game's searcher: the engine's (messiah.engine.engine) with :func:`engine_options`, on ``evaluator``."""
    return Engine.from_options(engine_options(cfg), evaluator).searcher


def root_values(searcher, board: cshogi.Board, n: int) -> np.ndarray:
    """The search's value of each legal move (legal_move_indices order) for the side to move: what the search
    kept for this position (UCB1's and PUCT's root, Searcher.move_values), else the network's Q (alpha-beta, or a
    move settled without a tree)."""
    values = searcher.move_values(board)
    if values is not None and len(values) == n:
        return values
    return searcher.cache.get(board).q.astype(np.float64)


def tree_rows(searcher, board: cshogi.Board, played: int, spec: GameSpec, cfg: RLConfig) -> list[np.ndarray]:
    """TreeStrap rows of this move's search (``cfg.tree_visits``): the positions below the root, outside the played
    move's subtree, that the search visited at least ``tree_visits`` times, at most TREE_ROWS_PER_MOVE of them,
    most visited first (Searcher.visited). Each is the position with its moves' values and the move a search from
    it would choose; no return (the game never reached it), so only the dense and ranking terms learn from it."""
    if not cfg.tree_visits:
        return []
    rows = []
    for node in searcher.visited(board, cfg.tree_visits, played)[:TREE_ROWS_PER_MOVE]:
        for move in node.line:
            board.push(move)
        row = _row(board, spec, node.values, node.value, cfg.scale)
        row["bestMove16"], row["best"], row["played"] = cshogi.move16(node.best_move), node.best, node.best
        row["flags"] = TREE
        rows.append(row)
        for _ in node.line:
            board.pop()
    return rows


def start_position(spec: GameSpec, cfg: RLConfig, rng: np.random.Generator) -> cshogi.Board:
    board = cshogi.Board()
    if spec.opening is not None:
        board.set_position(spec.opening)
        return board
    for _ in range(cfg.random_plies):
        legal = list(board.legal_moves)
        if not legal:
            break
        board.push(legal[rng.integers(len(legal))])
        if board.is_game_over():
            board.pop()
            break
    return board


def _row(board: cshogi.Board, spec: GameSpec, values: np.ndarray, value: float, scale: float) -> np.ndarray:
    row = np.zeros(1, SELFPLAY)[0]
    board.to_hcp(row["hcp"])
    row["ply"], row["game"], row["generation"] = board.move_number, spec.game, spec.generation
    row["value"], row["eval"] = value, zero_sum(scale).to_cp(value)  # cp at the teacher scale
    n = min(len(values), MAX_LEGAL_MOVES)
    row["moves"] = n
    row["values"][:] = np.nan
    row["values"][:n] = values[:n]
    return row


def final_row(searcher, board: cshogi.Board, spec: GameSpec, scale: float) -> np.ndarray:
    """A truncated game's last position, never searched: the network's move values and their max as its value,
    flagged FINAL, no move."""
    q = searcher.cache.get(board).q
    row = _row(board, spec, q, float(q.max()), scale)
    row["flags"], row["best"], row["played"] = FINAL, NO_SLOT, NO_SLOT
    return row


class Resignation:
    """A side resigns when its root value is below ``cfg.resign`` at RESIGN_STREAK of its moves in a row (not with
    a proven win). A ``resign_playout`` share of games, drawn at their start, plays on instead and notes in the
    game's stats which side would have resigned first (the false-resign rate's sample)."""

    def __init__(self, cfg: RLConfig, rng: np.random.Generator):
        self.threshold = cfg.resign
        self.streak = [0, 0]
        self.playout = cfg.resign > 0 and rng.random() < cfg.resign_playout

    def resigns(self, turn: int, value: float, proven: bool, stats: GameStats) -> bool:
        self.streak[turn] = self.streak[turn] + 1 if self.threshold > 0 and value < self.threshold else 0
        if self.streak[turn] < RESIGN_STREAK or proven:
            return False
        if self.playout and stats.would_resign < 0:
            stats.would_resign = turn
        return not self.playout


class GameStopped(Exception):
    """A game left unfinished because its actor was told to stop: it is dropped, not recorded."""


def play_selfplay_game(searcher, spec: GameSpec, cfg: RLConfig, stop=None) -> tuple[np.ndarray, GameStats]:
    """Play one self-play game; its records (in order, then its TreeStrap rows, flagged TREE) and what it
    cost. Each move: the game's end by the rules (:func:`game_over`), the search, a proven loss or a
    resignation, the move to play (:func:`choose_slot`), the row. Raises :class:`GameStopped` before the
    next search once ``stop`` (an event) is set, so that a stopping run waits for one search, not a game."""
    rng = np.random.default_rng(spec.seed)
    board = start_position(spec, cfg, rng)
    searcher.new_game()
    if cfg.root_noise:  # drawn from the game's own generator: a game replays from its seed
        searcher.root_noise = RootNoise(cfg.root_noise, rng)
    evaluator = searcher.cache.evaluator
    seconds0, calls0 = evaluator.seconds, evaluator.calls
    start = time.perf_counter()
    stats, rows, tree, moved = GameStats(), [], [], 0
    resignation = Resignation(cfg, rng)
    winner: int | None = None  # 0 black, 1 white, None draw / truncated
    while True:
        turn = board.turn
        ended = game_over(board, moved, cfg, searcher.rules)
        if ended is not None:
            stats.end, winner = ended
            if stats.end == END_TRUNCATED:  # the final position, kept so that its value can be bootstrapped
                rows.append(final_row(searcher, board, spec, cfg.scale))
            break
        if stop is not None and stop.is_set():
            raise GameStopped(f"game {spec.game} stopped after {moved} moves")
        fast = cfg.fast_nodes > 0 and rng.random() < cfg.fast_fraction  # no draw when off: old runs replay
        result = searcher.search(board, Limits(visits=cfg.fast_nodes if fast else cfg.nodes))
        stats.nodes += result.nodes
        moves, _ = legal_move_indices(board)
        values = root_values(searcher, board, len(moves))
        best = int(np.flatnonzero(moves == result.bestmove)[0])
        if result.mate is not None and result.mate < 0:  # proven lost: nothing left to learn from playing it out
            stats.end, winner = END_PROVEN_MATE, 1 - turn
            break
        proven = result.mate is not None and result.mate > 0
        value = 1.0 if proven else min(1.0, max(0.0, result.winrate))
        if resignation.resigns(turn, value, proven, stats):
            stats.end, winner = END_RESIGN, 1 - turn
            break
        slot = choose_slot(values, best, proven, moved, cfg, rng)
        row = _row(board, spec, values, value, cfg.scale)
        row["bestMove16"], row["best"], row["played"] = cshogi.move16(int(moves[slot])), best, slot
        row["flags"] = (EXPLORATORY if slot != best else 0) | (PROVEN if proven else 0) | (FAST if fast else 0)
        stats.exploratory += slot != best
        stats.fast += fast
        rows.append(row)
        if not fast:
            tree += tree_rows(searcher, board, int(moves[slot]), spec, cfg)
        board.push(int(moves[slot]))
        moved += 1
        if proven:
            stats.end, winner = END_PROVEN_MATE, turn
            break
    out = game_records(rows, tree, stats.end, winner)
    stats.tree_rows = len(out) - len(rows)
    stats.plies, stats.winner = moved, -1 if winner is None else winner
    stats.seconds = time.perf_counter() - start
    stats.forward_seconds, stats.forwards = evaluator.seconds - seconds0, evaluator.calls - calls0
    return out, stats


def game_over(board: cshogi.Board, moved: int, cfg: RLConfig,
              rules: GameRules = RULES) -> tuple[int, int | None] | None:
    """How the game ends before the side to move searches, as (END_*, winner: 0 black, 1 white, None for a draw
    or a truncation), or None. The search's own rules judge it (search.base.terminal_value): the game ends where
    the search would score the move just played as ending the line, one ply below its root, so mated, an
    entering-king declaration, or a repetition that the rules end (a plain one, a perpetual check; not one with
    other hands, which a root's move is searched on through); the opening's position (no move played yet) counts
    no repetition, its history being the opening's own. Then self-play's own rule: the maximum ply passed."""
    turn = board.turn
    value = terminal_value(board, 1 if moved else 0, rules)
    repetition = board.is_draw(REPETITION_PLIES) if value is not None and moved else cshogi.NOT_REPETITION
    if repetition in (cshogi.REPETITION_WIN, cshogi.REPETITION_LOSE):  # a perpetual check: proven as a mate is
        return END_REPETITION, perpetual_check_winner(board, repetition)
    if value is not None and is_proven(value):  # a forced result delivered now: the mover's mate or declaration
        return (END_DECLARATION, turn) if value > 1 else (END_MATED, 1 - turn)
    if value is not None:  # a plain repetition or the draw ply: the rules' draw
        return END_REPETITION, None
    if board.move_number > cfg.max_ply:
        return END_TRUNCATED, None
    return None


def choose_slot(values: np.ndarray, best: int, proven: bool, moved: int, cfg: RLConfig,
                rng: np.random.Generator) -> int:
    """The slot of the move to play: a proven win's move; in the first ``explore_plies`` plies a draw from
    softmax(values / tau); after them a uniformly random move with chance ``epsilon``; else the search's best."""
    if proven:
        return best
    if moved < cfg.explore_plies:
        p = softmax_weights(values, cfg.tau)
        return int(rng.choice(len(values), p=p / p.sum()))
    if rng.random() < cfg.epsilon:
        return int(rng.integers(len(values)))
    return best


def game_records(rows: list[np.ndarray], tree: list[np.ndarray], end: int, winner: int | None) -> np.ndarray:
    """A game's records: its rows in order with its ending and result, then its TreeStrap rows (flagged, the
    driver files them apart: records.selfplayfile.tree_file), which keep gameResult 0 (the game never reached them)."""
    out = np.array(rows, SELFPLAY) if rows else np.zeros(0, SELFPLAY)
    out["end"] = end
    out["gameResult"] = 0 if winner is None else (1 if winner == cshogi.BLACK else 2)
    if tree and len(out):
        tree_out = np.array(tree, SELFPLAY)
        tree_out["end"] = end
        out = np.concatenate([out, tree_out])
    return out


class Actor:
    """Plays games with one model: ``games_per_actor`` at once in threads whose leaves share forward passes."""

    def __init__(self, model: str, cfg: RLConfig):
        self.cfg = cfg
        self.evaluator = Evaluator(model, threads=1, device=cfg.actor_device)

    def play(self, specs: list[GameSpec], deliver=None, stop=None) -> list[tuple[int, bytes, GameStats]]:
        """Play ``specs`` (``games_per_actor`` at a time, until ``stop`` is set: the games under way then are
        dropped at their next move); each finished game goes to ``deliver(game, rows bytes, stats)`` as soon
        as it ends when given, and all are returned."""
        done: list[tuple[int, bytes, GameStats]] = []
        width = max(1, self.cfg.games_per_actor)
        for i in range(0, len(specs), width):
            if stop is not None and stop.is_set():
                break
            group = specs[i : i + width]
            batcher = LeafBatcher(self.evaluator, len(group)) if len(group) > 1 else None
            searchers = [make_game_searcher(self.cfg, batcher.game_evaluator() if batcher else self.evaluator)
                         for _ in group]
            if batcher:  # on a GPU, the shared passes at one size: all the games' leaves (Evaluator.set_batch)
                self.evaluator.set_batch(len(group) * self.cfg.search_batch)
            lock = threading.Lock()
            errors: list[BaseException] = []

            def one(searcher, spec: GameSpec, batcher=batcher, lock=lock, errors=errors) -> None:
                try:
                    rows, stats = play_selfplay_game(searcher, spec, self.cfg, stop)
                    with lock:
                        done.append((spec.game, rows.tobytes(), stats))
                        if deliver is not None:
                            deliver(*done[-1])
                except GameStopped:
                    pass
                except BaseException as e:  # raised again in the actor's own thread below
                    errors.append(e)
                finally:
                    if batcher is not None:
                        batcher.done()

            threads = [threading.Thread(target=one, args=(s, spec), daemon=True)
                       for s, spec in zip(searchers, group, strict=True)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if errors:
                raise errors[0]
        return done


def actor_process(model: str, cfg: RLConfig, specs: list[GameSpec], results, stop) -> None:
    """An actor process: plays its specs and puts ("game", number, rows, stats) on ``results`` per game, then
    ("done", ...); ("error", message) on failure."""
    import traceback

    try:
        actor = Actor(model, cfg)
        actor.play(specs, lambda game, rows, stats: results.put(("game", game, rows, stats)), stop)
        results.put(("done", None, None, None))
    except BaseException:
        results.put(("error", traceback.format_exc(), None, None))
