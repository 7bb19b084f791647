"""`messiah annotate`: the engine's view of every position of a game record.

For each position of a KIF or CSA record (read with cshogi's parsers) the search gives the side to
move's win rate and best move, and the one forward pass that scores all legal moves gives the played
move's Q and its rank among them. A move loses what the mover's searched win rate falls from its turn to its
next turn, the opponent's reply between (the last move: to the position after it); above a threshold it is a
mistake. Both values are searched with the same side to move, so a search's swing between odd and even plies
cancels, and a mistake shows once its refutation is on the board. Checked against fairy-stockfish at depth 12
on five games messiah lost (docs/annotate.md): this agreed with it better than the position right after the
move, and better than counting the engine's own choice as no loss, which hid most of messiah's own mistakes.
The analysis is written back as a KIF with a comment under each move (a GUI shows it beside the move),
drawn as a win-rate graph, and summed up per side (agreement with the engine, mean loss, mistakes).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import cshogi
import numpy as np
from cshogi import CSA, KIF
from tqdm import tqdm

from messiah.config import at_least, setting
from messiah.engine.engine import Engine, EngineChoice, overrides
from messiah.errors import DataError, UserError
from messiah.evaluator import Evaluator
from messiah.winrate import MESSIAH

MARKS = ("▲", "△")  # black, white: the KIF symbols (the shogi ☗☖ are not in KIF's Shift_JIS)
# cshogi's CSA end-of-game codes that KIF.Exporter.end can write.
KIF_ENDINGS = {"%TORYO": "resign", "%SENNICHITE": "sennichite", "%KACHI": "win", "%JISHOGI": "draw",
               "%+ILLEGAL_ACTION": "illegal_win", "%-ILLEGAL_ACTION": "illegal_win", "%ILLEGAL_MOVE": "illegal_lose"}


@dataclass
class AnnotateConfig(EngineChoice):
    """``messiah annotate``: every position of a game searched, every move noted."""

    record: str = setting("", positional=True)
    """a game record: .kif (Shift_JIS or UTF-8), .kifu or .csa"""
    movetime: int = 1000
    """milliseconds of search per position"""
    nodes: int | None = None
    """nodes of search per position, instead of --movetime"""
    threshold: float = 0.1
    """win rate a move must lose to be a mistake"""
    out: str | None = None
    """write the game with a comment under each move to this KIF (.kif or .kifu)"""
    png: str | None = None
    """write a win-rate graph of the game, mistakes marked, to this PNG (needs matplotlib)"""
    quiet: bool = False
    """show no progress bar"""

    def __post_init__(self) -> None:
        at_least(self, 1, "movetime", "nodes", "threads")
        at_least(self, 0, "threshold")


@dataclass
class Record:
    """A game: its starting position, its moves (cshogi ints), the players' names, how it ended and when it
    started (None: the record does not say)."""

    sfen: str
    moves: list[int]
    names: list[str]
    endgame: str = ""
    start: datetime | None = None


# How CSA's $START_TIME and KIF's 開始日時 write a date (CSA 3.0, and what GUIs write), longest first.
DATE_FORMATS = ("%Y/%m/%d %H:%M:%S", "%Y/%m/%d %H:%M", "%Y/%m/%d")


def _start_time(text: str | None) -> datetime | None:
    """A record's start time, None when it has none or none that reads as a date."""
    for form in DATE_FORMATS:
        try:
            return datetime.strptime((text or "").strip(), form)
        except ValueError:
            continue
    return None


def read_record(path: str | os.PathLike) -> Record:
    """The game in a .kif/.kifu or .csa file, its moves checked to be legal.

    Raises FileNotFoundError, or ValueError naming the file and what is wrong with it.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"no such file: {path}")
    suffix = path.suffix.lower()
    try:
        if suffix == ".csa":
            games = CSA.Parser.parse_file(str(path))
            if not games:
                raise DataError("no game in it")
            game = games[0]
            start = _start_time(game.var_info.get("START_TIME"))
        elif suffix in (".kif", ".kifu"):
            try:
                game = KIF.Parser.parse_file(str(path))
            except UnicodeDecodeError:  # a .kif should be Shift_JIS, but many tools write UTF-8
                game = KIF.Parser.parse_str(path.read_text(encoding="utf-8"))
            start = game.starttime
        else:
            raise DataError("expected a .kif, .kifu or .csa game record")
    except (ValueError, KIF.ParserException, UnicodeDecodeError, KeyError, IndexError) as e:
        raise DataError(f"{path}: {e}") from None
    board = cshogi.Board(game.sfen)
    for ply, move in enumerate(game.moves, 1):
        if not move or move not in set(board.legal_moves):
            hint = (" (cshogi's KIF reader starts from the 手合割, not from a board diagram: use the game's CSA)"
                    if ply == 1 and suffix != ".csa" else "")
            raise DataError(f"{path}: move {ply} is not a legal move{hint}")
        board.push(move)
    if not game.moves:
        raise DataError(f"{path}: no moves in it")
    names = [name or default for name, default in zip(game.names, ("black", "white"), strict=True)]
    return Record(game.sfen, list(game.moves), names, game.endgame or "", start)


@dataclass
class MoveNote:
    """The engine's view of one move of the game (``ply`` counts from 1)."""

    ply: int
    turn: int
    move: int
    winrate: float  # the mover's searched win rate before the move
    best: int
    pv: list[int]
    q: float  # the played move's Q (the mover's win rate after it, one forward pass)
    rank: int  # 1 for the move with the highest Q
    legal: int
    loss: float = 0.0  # win rate lost from the mover's turn to its next (negative: it did better than expected)
    mistake: bool = False


@dataclass
class GameAnalysis:
    record: Record
    notes: list[MoveNote]
    final: float  # the searched win rate of the side to move in the last position
    threshold: float
    final_turn: int = field(default=cshogi.BLACK)

    def black_winrates(self) -> np.ndarray:
        """Black's win rate in each position, from the start (ply 0) to the end."""
        side = [n.winrate if n.turn == cshogi.BLACK else 1 - n.winrate for n in self.notes]
        side.append(self.final if self.final_turn == cshogi.BLACK else 1 - self.final)
        return np.array(side)

    def summary(self) -> list[dict]:
        """Per side: moves, agreement with the engine's best move, mean win-rate loss (gains count as 0)
        and mistakes."""
        rows = []
        for color in (cshogi.BLACK, cshogi.WHITE):
            notes = [n for n in self.notes if n.turn == color]
            rows.append({
                "side": "black" if color == cshogi.BLACK else "white",
                "player": self.record.names[color],
                "moves": len(notes),
                "agreement": float(np.mean([n.move == n.best for n in notes])) if notes else 0.0,
                "mean_loss": float(np.mean([max(n.loss, 0.0) for n in notes])) if notes else 0.0,
                "mistakes": sum(n.mistake for n in notes),
            })
        return rows


def annotate_record(record: Record, evaluator: Evaluator, search: str | None = None, movetime: int | None = None,
                    nodes: int | None = None, threshold: float = 0.1, progress: bool = True,
                    options: Mapping[str, str] | None = None) -> GameAnalysis:
    """Search every position of ``record`` (movetime in milliseconds, or nodes) and note every move. The
    search is the engine's with ``options`` (USI option name -> value, as setoption takes it; ``search``
    stands for Search, and ``options`` win over it)."""
    engine = Engine.from_options(overrides(options, Search=search), evaluator)
    searcher = engine.searcher
    board = cshogi.Board(record.sfen)
    notes: list[MoveNote] = []
    limits = {"movetime": movetime, "nodes": nodes}
    bar = tqdm(total=len(record.moves) + 1, desc="annotate", unit="position", disable=not progress, file=sys.stderr)
    for ply, move in enumerate(record.moves, 1):
        result = engine.search(board, **limits)
        scores = searcher.cache.get(board)
        q = float(scores.q[list(scores.moves).index(move)])
        notes.append(MoveNote(ply, board.turn, move, result.winrate, result.bestmove, result.pv, q,
                              int(np.sum(scores.q > q)) + 1, len(scores.moves)))
        board.push(move)
        bar.update()
    final = engine.search(board, **limits).winrate
    bar.update()
    bar.close()
    turns = [n.winrate for n in notes] + [final]  # the side to move's win rate in every position
    for t, note in enumerate(notes):
        later = turns[t + 2] if t + 2 < len(turns) else 1 - turns[t + 1]  # its next turn, else after the move
        note.loss = note.winrate - later
        note.mistake = note.loss > threshold
    return GameAnalysis(record, notes, final, threshold, board.turn)


def _kif_moves(board: cshogi.Board, moves: list[int]) -> str:
    words = []
    board = board.copy()
    for move in moves:
        if move not in set(board.legal_moves):
            break
        words.append(MARKS[board.turn] + KIF.move_to_kif(move, board.peek()))
        board.push(move)
    return " ".join(words)


def comment(note: MoveNote, board: cshogi.Board) -> list[str]:
    """The KIF comment lines for ``note``, ``board`` being the position before the move."""
    mark = MARKS[note.turn]
    cp = MESSIAH.to_cp(note.winrate)
    lines = [f"messiah: {mark} win rate {note.winrate:.1%} ({cp:+d} cp)  best {_kif_moves(board, [note.best])}  "
             f"pv {_kif_moves(board, note.pv[:8])}",
             f"played: Q {note.q:.1%}, rank {note.rank} of {note.legal}, win rate lost by the next turn "
             f"{note.loss:+.1%}"]
    if note.mistake:
        prefers = (f"messiah prefers {_kif_moves(board, [note.best])}" if note.move != note.best else
                   "messiah's own choice here: the reply that punished it was beyond its search")
        lines.insert(0, f"MISTAKE: {mark} lost {note.loss:.1%} of win rate by the next turn; {prefers}")
    return lines


def write_kif(analysis: GameAnalysis, path: str | os.PathLike) -> Path:
    """The game as KIF (cshogi's exporter; Shift_JIS for .kif, UTF-8 for .kifu), a comment under each move,
    dated by the record's start time (the exporter's now when the record has none)."""
    record = analysis.record
    board = cshogi.Board(record.sfen)
    exporter = KIF.Exporter(str(path))
    exporter.header(record.names, record.start, handicap=None if record.sfen == cshogi.STARTING_SFEN else board.copy())
    for note in analysis.notes:
        exporter.move(note.move)
        # KIF's comment lines start with '*' and follow the move they are about; the exporter has no call for them.
        exporter.kifu.write("".join(f"*{line}\n" for line in comment(note, board)))
        board.push(note.move)
    if record.endgame in KIF_ENDINGS:
        exporter.end(KIF_ENDINGS[record.endgame])
    exporter.close()
    return Path(path)


def require_plot() -> None:
    """A UserError naming the extra to install when :func:`plot` cannot draw: asked before a game's analysis
    (a minute and more) rather than after it."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UserError("the graph needs matplotlib: pip install 'messiah[plot]'") from None


def plot(analysis: GameAnalysis, path: str | os.PathLike) -> Path:
    """A PNG of black's win rate over the game, as GUIs draw it (white's is its mirror, so one curve says it
    all), shaded toward the side ahead, with each side's mistakes marked where the curve lands after them."""
    require_plot()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    black = analysis.black_winrates()
    plies = np.arange(len(black))
    names = analysis.record.names
    fig, ax = plt.subplots(figsize=(10, 4.5), dpi=100)
    ax.axhline(0.5, color="0.7", lw=0.8)
    ax.fill_between(plies, black, 0.5, where=black >= 0.5, color="0.3", alpha=0.15, lw=0, interpolate=True)
    ax.fill_between(plies, black, 0.5, where=black < 0.5, color="tab:red", alpha=0.12, lw=0, interpolate=True)
    ax.plot(plies, black, color="black", lw=1.8, label=f"black's win rate ({names[0]} against {names[1]})")
    for color, marker_colour in ((cshogi.BLACK, "black"), (cshogi.WHITE, "tab:red")):
        marks = [n for n in analysis.notes if n.mistake and n.turn == color]
        if not marks:
            continue
        x = [n.ply for n in marks]
        ax.scatter(x, black[x], s=70, marker="v" if color == cshogi.BLACK else "^", facecolor="none",
                   edgecolor=marker_colour, lw=1.5, zorder=3,
                   label=f"{'black' if color == cshogi.BLACK else 'white'} mistakes (> {analysis.threshold:.0%})")
        below = color == cshogi.BLACK  # black's mistakes push the curve down: label them below, white's above
        for i, n in enumerate(marks):  # labels alternately farther, so that neighbours do not overlap
            offset = (14 + 10 * (i % 2)) * (-1 if below else 1)
            ax.annotate(f"#{n.ply} {cshogi.move_to_usi(n.move)}", (n.ply, black[n.ply]), textcoords="offset points",
                        xytext=(0, offset), ha="center", fontsize=7, color=marker_colour)
    ax.set_xlim(0, max(len(black) - 1, 1))
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("ply")
    ax.set_ylabel("black's win rate (messiah's search)")
    ax.set_title(f"{names[0]} vs {names[1]}: {len(analysis.notes)} moves")
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


def summary_table(analysis: GameAnalysis) -> str:
    rows = analysis.summary()
    width = max(6, *(len(r["player"]) for r in rows))
    lines = [f"{'side':5s} {'player':{width}s} {'moves':>5s} {'agreement':>9s} {'mean loss':>9s} {'mistakes':>8s}"]
    for r in rows:
        lines.append(f"{r['side']:5s} {r['player']:{width}s} {r['moves']:5d} {r['agreement']:9.1%} "
                     f"{r['mean_loss']:9.1%} {r['mistakes']:8d}")
    return "\n".join(lines)
