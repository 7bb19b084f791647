"""Teacher data from any USI engine by self-play (``messiah gensfen``).

Each game starts from an opening: a few uniformly random legal moves at random plies within the first
24 (5 by default), or a line of an openings file (``startpos moves ...``). The engine plays every other
move at a fixed depth or node count. Every position from ply 16 on that the engine searched becomes an
hcpe record: the position, the engine's eval for the side to move in centipawns (mate +-30000), its best
move (cshogi move16) and, once the game is over, the game's result; with ``--multipv K`` (the engine's MultiPV
option) the first move and eval of each of its top K lines go beside it, a row a record, to ``OUT.multipv``
(:mod:`messiah.records.candidates`). A random move at ply 16 or later is
played after the engine has searched (and so recorded) its position, so a game's records are one ply
apart. Each game's length is appended to the game index beside the file (``OUT.games``, see
:func:`messiah.records.read_game_index`), so readers know the games exactly instead of guessing them.

Games end by checkmate, ``bestmove resign``, ``bestmove win`` (an entering-king declaration, a loss if
the position does not qualify), the first repetition (cshogi's ``is_draw``: a draw, or a win for the
side suffering perpetual check), adjudication (6 consecutive searched plies with |eval| >= 3000 for the
same side: that side wins) or a draw at ply 320. These are the rules of the shared teacher data.

A game is written only if the engine searched it: each search's report (the deepest depth and the most nodes its
info lines gave) is held against the depth or nodes asked, and a game with too many short searches
(:data:`SHORT_SHARE`) stops the run with an error naming the engine, the go line and what it reported, so an
engine that ignores the limit (a missing option, a book, a go it does not read) never leaves junk labels.

Workers are processes with an engine each. The parent appends each finished game to the output with one
write (its lines to ``OUT.multipv`` first), then fsync, then its length to the game index, so an interruption
loses at most the games in progress; a trailing partial record is cut off on the next start (and a game whose
length did not reach the index is added to it, lines beyond the records are cut off), and rerunning the same
command continues toward its target.
"""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
import os
import signal
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cshogi
import numpy as np
from tqdm import tqdm

from messiah.arena.client import SEARCH_SECONDS, EngineError, SearchReport, UsiClient, resolve_engine
from messiah.config import at_least, setting
from messiah.errors import DataError, UserError
from messiah.position import perpetual_check_winner
from messiah.records import (
    CANDIDATES,
    HCPE,
    append_game_index,
    candidate_row,
    candidates_path,
    check_hcpe,
    count_games,
    game_index_path,
    read_game_index,
    read_records,
)
from messiah.records.candidates import MOST_LINES
from messiah.records.formats import is_legal
from messiah.rules import DRAW_PLY
from messiah.train.pool import WorkerPool
from messiah.winrate import MAX_CP

DEFAULT_ENGINE = "/usr/games/fairy-stockfish"
OPENING_PLIES = 24  # random opening moves fall within these plies
RANDOM_MOVES = 5  # random moves a game, without an openings file
RECORD_FROM = 16  # the first ply whose position is recorded
ADJUDICATE_EVAL = 3000  # |eval| (cp) that wins for its side once ADJUDICATE_PLIES searched plies in a row reach it
ADJUDICATE_PLIES = 6
# The check of a game's searches. A search counts when it gave a move and a score that is not a mate, in a position
# with more than one legal move: an engine may stop at once, honestly, with a forced mate found or a single move to
# play. It is short when it reported fewer than NODES_SHARE of the nodes asked (engines check their node count
# every so often and report at or a little above it: 10,007 and 10,015 at 10,000 for fairy-stockfish and
# YaneuraOu), a depth below the one asked, or no count of what was asked. A game is refused when more than
# SHORT_SHARE of its counted searches are short: an engine that ignores the limit does so on every move (a junk
# answer reports depth 1 and 0 nodes), while an honest one falls short only where its tree runs out before the
# limit (at its deepest depth), which is rare: a quarter leaves room for one such search in four.
NODES_SHARE = 0.5
SHORT_SHARE = 0.25


@dataclass(frozen=True)
class Opening:
    position: str  # 'startpos' or 'sfen ...'
    moves: tuple[str, ...]  # USI moves, checked legal


def load_openings(path: str | os.PathLike) -> list[Opening]:
    """Openings from a file of USI positions, one a line (``startpos moves ...`` or ``sfen ... moves ...``;
    blank lines and lines starting with # are skipped). ValueError naming the file and line for a line
    cshogi cannot read or an illegal move."""
    path = Path(path)
    openings = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        board = cshogi.Board()
        try:
            board.set_position(line)
        except RuntimeError as e:
            raise DataError(f"{path}:{number}: not a USI position ({e})") from None
        moves = board.history
        for _ in moves:  # back to the start, to check each move (set_position accepts bad promotions)
            board.pop()
        start = board.sfen()
        for i, move in enumerate(moves, 1):
            if not is_legal(board, move):
                raise DataError(f"{path}:{number}: move {i} ({cshogi.move_to_usi(move)}) is illegal")
            board.push(move)
        position = "startpos" if start == cshogi.STARTING_SFEN else f"sfen {start}"
        openings.append(Opening(position, tuple(cshogi.move_to_usi(m) for m in moves)))
    if not openings:
        raise DataError(f"{path}: no openings")
    return openings


@dataclass
class GensfenConfig:
    """A gensfen run: the engine, how it searches, how much to generate (counting what OUT already holds)."""

    out: str
    """hcpe file to append whole games to"""
    engine: str = DEFAULT_ENGINE
    """the engine's executable (no arguments)"""
    options: dict[str, str] = setting(factory=dict, flag="--option")
    """a USI option; repeatable"""
    depth: int | None = None
    """search depth per move (give this or --nodes)"""
    nodes: int | None = None
    """nodes per move (give this or --depth)"""
    workers: int = 1
    """processes, one engine each"""
    positions: int | None = None
    """stop when the file holds N positions (with neither this nor --games: run until interrupted)"""
    games: int | None = None
    """stop when the file holds N games"""
    openings: str | None = None
    """file of 'startpos moves ...' lines to start games from"""
    random_moves: int | None = None
    """random moves within the first 24 plies (default: 5, or 0 with --openings)"""
    seed: int | None = None
    """random openings' seed (default: a new one each run)"""
    multipv: int = 1
    """lines the engine reports of each search (its MultiPV option); from 2, each recorded position's top lines,
    their first moves and evals, go to OUT.multipv beside OUT (training's lines term); at most 8"""
    search_seconds: float = SEARCH_SECONDS
    """seconds one search may take before the engine counts as hung: it is killed and the run stops"""

    def __post_init__(self) -> None:
        if (self.depth is None) == (self.nodes is None):
            raise UserError("give exactly one of --depth and --nodes")
        if self.positions is not None and self.games is not None:
            raise UserError("give at most one of --positions and --games")
        at_least(self, 1, "depth", "nodes", "workers", "positions", "games", "search_seconds", "multipv")
        if self.multipv > MOST_LINES:
            raise UserError(f"--multipv {self.multipv}: OUT.multipv holds {MOST_LINES} lines a position at most")
        at_least(self, 0, "random_moves")


Ending = tuple[int | None, str]  # the winner (cshogi.BLACK or cshogi.WHITE, None for a draw) and how the game ended


@dataclass
class _Adjudication:
    """The count of consecutive searched plies whose eval is at least ``eval`` cp for the same side: ``plies`` of
    them in a row win the game for that side."""

    eval: int
    plies: int
    side: int = cshogi.BLACK
    streak: int = 0

    def winner(self, turn: int, score: int) -> int | None:
        """Count a searched ply's ``score`` (cp for ``turn``, the side to move): the side it wins the game for, or
        None."""
        side = turn if score > 0 else cshogi.opponent(turn)
        if abs(score) < self.eval:
            self.streak = 0
        else:
            self.streak = self.streak + 1 if side == self.side else 1
            self.side = side
        return self.side if self.streak >= self.plies else None


def _short(report: SearchReport, cfg: GensfenConfig) -> bool:
    """Whether a search fell short of the depth or nodes asked (see NODES_SHARE)."""
    if cfg.depth is not None:
        return report.depth is None or report.depth < cfg.depth
    return report.nodes is None or report.nodes < NODES_SHARE * cfg.nodes


class _TeacherGame:
    """A game in progress: the board, its moves as the engine is sent them, the positions recorded so far, the
    adjudication count, the searches counted for the check and the short ones among them, and once it is over, its
    :data:`Ending`."""

    def __init__(self, engine: UsiClient, cfg: GensfenConfig, opening: Opening | None, max_ply: int):
        self.engine, self.cfg, self.max_ply = engine, cfg, max_ply
        self.board = cshogi.Board()
        self.position = "startpos"
        self.usi_moves: list[str] = []
        if opening is not None:
            self.position = opening.position
            self.board.set_position(f"{opening.position} moves {' '.join(opening.moves)}")
            self.usi_moves = list(opening.moves)
        self.rows: list[tuple[np.ndarray, int, int]] = []  # a recorded position's hcp, eval and best move16
        self.lines: list[np.ndarray] = []  # and its lines (a CANDIDATES row: empty without --multipv)
        self.adjudication = _Adjudication(ADJUDICATE_EVAL, ADJUDICATE_PLIES)
        self.counted = 0  # searches counted for the check
        self.short: list[tuple[int, SearchReport]] = []  # the short ones' plies and reports
        self.ending: Ending | None = None
        self._hcp = np.empty(1, cshogi.HuffmanCodedPos)

    @property
    def ply(self) -> int:
        """The plies played, the opening's included."""
        return self.board.move_number - 1

    def over(self) -> bool:
        """Whether the game is over before a move: mate, or the draw at ``max_ply``."""
        if self.board.is_game_over():
            self.ending = cshogi.opponent(self.board.turn), "mate"
        elif self.ply >= self.max_ply:
            self.ending = None, "max_ply"
        return self.ending is not None

    def search(self) -> int | None:
        """The engine's move in the position, which is recorded with its eval from RECORD_FROM on; None when
        the engine resigned or declared a win (a loss when the position does not qualify), or its eval has
        adjudicated the game. EngineError for an illegal move."""
        board, turn = self.board, self.board.turn
        bestmove, score = self.engine.search(self.position, self.usi_moves, self.cfg.depth, self.cfg.nodes)
        if bestmove == "resign":
            self.ending = cshogi.opponent(turn), "resign"
            return None
        if bestmove == "win":
            self.ending = (turn if board.is_nyugyoku() else cshogi.opponent(turn)), "declaration"
            return None
        move = board.move_from_usi(bestmove)
        if not is_legal(board, move):
            raise EngineError(f"{self.engine.cmd} played the illegal move {bestmove!r} in {board.sfen()}")
        if score is None:
            self.adjudication.streak = 0
            return move
        score = int(np.clip(score, -MAX_CP, MAX_CP))
        if abs(score) < MAX_CP and len(board.legal_moves) > 1:  # mates and single moves may stop early
            self.counted += 1
            if _short(self.engine.report, self.cfg):
                self.short.append((self.ply, self.engine.report))
        if self.ply >= RECORD_FROM:
            board.to_hcp(self._hcp)
            self.rows.append((self._hcp["hcp"][0].copy(), score, cshogi.move16(move)))
            self.lines.append(self._line_row())
        winner = self.adjudication.winner(turn, score)
        if winner is not None:
            self.ending = winner, "adjudication"
            return None
        return move

    def _line_row(self) -> np.ndarray:
        """The engine's top lines of the search just made (--multipv) as a CANDIDATES row: a line whose first
        move is not legal here, or a second line of the same move, is left out."""
        if self.cfg.multipv < 2:
            return candidate_row([])
        kept, seen = [], set()
        for usi, score in self.engine.lines:
            move = self.board.move_from_usi(usi)  # (0 for what is not a move here)
            if move and is_legal(self.board, move) and move not in seen:
                seen.add(move)
                kept.append((cshogi.move16(move), score))
        return candidate_row(kept)

    def push(self, move: int) -> bool:
        """Play ``move``; whether it ended the game by repetition (cshogi's is_draw: a draw, or a win for the side
        suffering perpetual check)."""
        self.board.push(move)
        self.usi_moves.append(cshogi.move_to_usi(move))
        repetition = self.board.is_draw()
        if repetition == cshogi.REPETITION_DRAW:
            self.ending = None, "repetition"
        elif repetition in (cshogi.REPETITION_WIN, cshogi.REPETITION_LOSE):
            self.ending = perpetual_check_winner(self.board, repetition), "perpetual_check"
        return self.ending is not None

    def check_searches(self) -> None:
        """EngineError when more than SHORT_SHARE of the counted searches fell short: the game's labels were not
        searched, so it must not be written (a run that went on would write only such games)."""
        if not self.short or len(self.short) <= SHORT_SHARE * self.counted:
            return
        cfg, engine = self.cfg, self.engine
        wanted = (f"a depth below the {cfg.depth} asked" if cfg.depth is not None
                  else f"fewer than {NODES_SHARE:.0%} of the {cfg.nodes:,} nodes asked")
        ply, report = self.short[0]
        name = f" ({engine.name})" if getattr(engine, "name", None) else ""
        raise EngineError(
            f"{engine.cmd}{name} did not search: {len(self.short)} of the {self.counted} searches of a game (mates and "
            f"single moves aside) reported {wanted}; at ply {ply}, {report}. The game was not written. Check the "
            "engine's options (a node, depth or time limit of its own, a book) and that it searches to a go's nodes "
            "or depth")

    def records(self) -> np.ndarray:
        """The recorded positions as hcpe records, each with the game's result."""
        records = np.zeros(len(self.rows), HCPE)
        if self.rows:
            hcps, evals, moves = zip(*self.rows, strict=True)
            records["hcp"] = np.array(hcps)
            records["eval"] = evals
            records["bestMove16"] = np.array(moves, np.uint16).view(np.int16)
        winner = self.ending[0]
        records["gameResult"] = (cshogi.DRAW if winner is None
                                 else cshogi.BLACK_WIN if winner == cshogi.BLACK else cshogi.WHITE_WIN)
        return records

    def line_rows(self) -> np.ndarray:
        """The recorded positions' lines (CANDIDATES), aligned with :meth:`records`."""
        return np.array(self.lines, CANDIDATES).reshape(len(self.lines))


def _random_plies(first: int, count: int, rng: np.random.Generator) -> set[int]:
    """The plies of a game's random moves: ``count`` distinct plies from ``first`` to OPENING_PLIES (all of them
    when there are fewer)."""
    candidates = np.arange(first, OPENING_PLIES)
    return set(rng.choice(candidates, min(count, len(candidates)), replace=False).tolist())


def play_teacher_game(engine: UsiClient, cfg: GensfenConfig, rng: np.random.Generator, opening: Opening | None = None,
                      stopped: Callable[[], bool] = lambda: False,
                      max_ply: int = DRAW_PLY) -> tuple[np.ndarray, str, np.ndarray] | None:
    """Play one self-play game: its hcpe records (all with the game's result), how it ended, and the records'
    lines (CANDIDATES, empty rows without ``cfg.multipv``); None when
    ``stopped()`` turned true before the end. A random move before RECORD_FROM is played without a search;
    from there on the engine searches (and so records) the position first. EngineError for a game whose searches
    fell short (:meth:`_TeacherGame.check_searches`)."""
    game = _TeacherGame(engine, cfg, opening, max_ply)
    random_plies = _random_plies(game.ply, cfg.random_moves, rng)
    engine.usinewgame()
    while True:
        if stopped():
            return None
        if game.over():
            break
        ply = game.ply
        random_here = ply in random_plies
        if random_here and ply < RECORD_FROM:
            game.adjudication.streak = 0
        else:
            move = game.search()
            if move is None:  # the engine resigned or declared a win, or its eval adjudicated the game
                break
        if random_here:
            move = int(rng.choice(list(game.board.legal_moves)))
        if game.push(move):
            break
    game.check_searches()
    return game.records(), game.ending[1], game.line_rows()


def _worker(index: int, cfg: GensfenConfig, openings: list[Opening] | None, seed: np.random.SeedSequence,
            out: mp.Queue, stop: mp.Event) -> None:
    """A worker process: play games until told to stop, sending each as ('game', bytes, reason, lines' bytes). It
    takes its ``openings`` in turn (the parent deals each worker a shuffled share)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and sets ``stop``
    rng = np.random.default_rng(seed)
    engine = None
    try:
        engine = UsiClient(cfg.engine, cfg.options, cfg.search_seconds)
        played = 0
        while not stop.is_set():
            opening = openings[played % len(openings)] if openings else None
            game = play_teacher_game(engine, cfg, rng, opening, stop.is_set)
            played += 1
            if game is None:
                break
            out.put(("game", game[0].tobytes(), game[1], game[2].tobytes()))
    except Exception as e:  # reported to the parent, which stops the run with the message
        if not stop.is_set():
            out.put(("error", f"worker {index}: {type(e).__name__}: {e}", "", b""))
    finally:
        if engine is not None:
            engine.close()


def prepare_output(path: Path, multipv: int = 1) -> int:
    """Records already in ``path`` (0 when it does not exist). A trailing partial record, left by an
    interrupted write, is cut off with a warning; a file that is not hcpe is a ValueError, and is left
    untouched. Its lines (``multipv`` from 2) are brought to its records: lines beyond them (a game written
    there but not here) are cut off; a file with fewer lines than records, or lines where none are asked, is a
    DataError, so that no run mixes them."""
    whole = _prepare_records(path)
    lines = candidates_path(path)
    if multipv < 2:
        if lines.exists():
            raise DataError(f"{path}: {lines.name} beside it holds the engine's top lines: continue it with the "
                            "--multipv it was made with, or write another file")
        return whole
    have = lines.stat().st_size // CANDIDATES.itemsize if lines.exists() else 0
    if have < whole:
        raise DataError(f"{path}: holds {whole:,} positions and lines for {have:,}: --multipv continues only a "
                        "file it made; write another file")
    if lines.exists() and lines.stat().st_size != whole * CANDIDATES.itemsize:
        os.truncate(lines, whole * CANDIDATES.itemsize)
    return whole


def _prepare_records(path: Path) -> int:
    """prepare_output's part for the records themselves."""
    if not path.exists():
        return 0
    size = path.stat().st_size
    whole, partial = divmod(size, HCPE.itemsize)
    if whole:
        records = np.fromfile(path, HCPE, count=whole)
        try:
            check_hcpe(records)
            board = cshogi.Board()
            for row in (0, whole - 1):
                board.set_hcp(records["hcp"][row])
        except (ValueError, RuntimeError) as e:
            raise DataError(f"{path}: not an hcpe file ({e}); not appending to it") from None
    elif partial:
        raise DataError(f"{path}: {size} bytes, less than one hcpe record; not appending to it")
    if partial:
        warnings.warn(f"{path}: cutting off a partial record of {partial} bytes (an interrupted write)",
                      stacklevel=3)
        os.truncate(path, whole * HCPE.itemsize)
    _complete_game_index(path, whole)
    return whole


def _complete_game_index(path: Path, records: int) -> None:
    """Bring the game index up to the file: a game written just before an interruption, whose length did
    not reach the index, is one whole game (the file grows by whole games). A file without an index (an
    older gensfen's) gets none: its games are guessed."""
    index = game_index_path(path)
    if not index.exists() and records:
        return
    covered = int(np.fromfile(index, np.uint32).sum()) if index.exists() else 0
    if covered < records:
        append_game_index(path, [records - covered])
    elif covered > records:
        warnings.warn(f"{index}: covers {covered:,} records, the file holds {records:,}; removing it (the games "
                      "will be guessed)", stacklevel=4)
        index.unlink()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def gensfen(cfg: GensfenConfig, progress: bool = True) -> dict:
    """Generate teacher data into ``cfg.out`` (hcpe, appended) until it holds ``cfg.positions`` records or
    ``cfg.games`` games (counting what is already there; with neither, until interrupted).

    Returns the counts: positions and games now in the file (games only when counted: with a games
    target, or a new file), what this run added, how its games ended, and its time."""
    positions, games, workers = cfg.positions, cfg.games, cfg.workers
    opening_list = load_openings(cfg.openings) if cfg.openings is not None else None
    random_moves = (0 if opening_list else RANDOM_MOVES) if cfg.random_moves is None else cfg.random_moves
    cfg = dataclasses.replace(cfg, engine=resolve_engine(cfg.engine), random_moves=random_moves)  # what workers play
    path = Path(cfg.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    have_positions = prepare_output(path, cfg.multipv)
    if cfg.multipv > 1:  # the engine's own option, whatever --option said of it
        cfg = dataclasses.replace(cfg, options={**cfg.options, "MultiPV": str(cfg.multipv)})
    if games is not None and have_positions:
        starts = read_game_index(path, have_positions)
        have_games = count_games(read_records(path)) if starts is None else len(starts)
    else:
        have_games = 0 if have_positions == 0 else None
    counts = {"positions": have_positions, "games": have_games, "new_positions": 0, "new_games": 0,
              "endings": Counter(), "seconds": 0.0}

    def done() -> bool:
        if positions is not None:
            return counts["positions"] >= positions
        return games is not None and counts["games"] >= games

    if done():
        counts["endings"] = {}
        return counts
    # A resumed run must not replay the games already written: the file's size enters the seed.
    entropy = np.random.SeedSequence().entropy if cfg.seed is None else cfg.seed
    seeds = np.random.SeedSequence([entropy, have_positions]).spawn(workers)
    # Each worker gets its own share of the openings, shuffled: with a deterministic engine and no random
    # moves an opening played twice is the same game twice.
    if opening_list is not None:
        order = np.random.default_rng(seeds[0].spawn(1)[0]).permutation(len(opening_list))
        shares = [[opening_list[j] for j in order[i::workers]] or opening_list for i in range(workers)]
    else:
        shares = [None] * workers
    target, unit = (positions, "pos") if positions is not None else (games, "game")
    start = time.perf_counter()
    bar = tqdm(total=target, initial=counts["positions"] if unit == "pos" else counts["games"] or 0,
               desc="gensfen", unit=unit, file=sys.stderr, disable=not progress, smoothing=0.1)
    try:
        with WorkerPool(_worker, [(i, cfg, shares[i], seeds[i]) for i in range(workers)], EngineError,
                        "every worker has exited", "gensfen") as pool:
            _collect(pool, path, counts, done, bar, unit, cfg.multipv > 1)
    except KeyboardInterrupt:
        print("gensfen: interrupted; every finished game is saved", file=sys.stderr)
    finally:
        bar.close()
    counts["seconds"] = time.perf_counter() - start
    counts["endings"] = dict(counts["endings"])
    return counts


def _collect(pool: WorkerPool, path: Path, counts: dict, done: Callable[[], bool], bar, unit: str,
             lines: bool) -> None:
    """Write the workers' games to ``path`` as they come, each in one write with its game index entry (the file
    only ever grows by whole games), their ``lines`` first where asked, until ``done()``."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    lines_fd = os.open(candidates_path(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if lines else None
    try:
        while not done():
            message = pool.next()
            if message is None:
                continue
            kind, payload, reason, line_rows = message
            if kind == "error":
                raise EngineError(payload)
            n = len(payload) // HCPE.itemsize
            if n == 0:
                continue  # a game over before its first recorded ply
            if lines_fd is not None:  # first: lines beyond the records are cut off at the next start
                _write_all(lines_fd, line_rows)
                os.fsync(lines_fd)
            _write_all(fd, payload)
            os.fsync(fd)
            append_game_index(path, [n])
            counts["positions"] += n
            counts["new_positions"] += n
            counts["new_games"] += 1
            if counts["games"] is not None:
                counts["games"] += 1
            counts["endings"][reason] += 1
            bar.update(n if unit == "pos" else 1)
    finally:
        os.close(fd)
        if lines_fd is not None:
            os.close(lines_fd)
