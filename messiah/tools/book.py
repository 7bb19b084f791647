"""`messiah book`: build an opening book from game records, deepen it by searching its moves with the engine
("think"), and show it at a position. The book is YaneuraOu's text format (messiah.engine.openingbook), which
``BookFile`` reads.

A book built from records counts how often each move was played in each position of the first ``--plies``
plies; a move played fewer than ``--min-count`` times is one game's choice, not a book line, and is left out.
Values and depths stay 0 until ``think`` searches each book move's position with the engine and writes the
move's value (cp for the side to move) and the search's depth.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cshogi
import numpy as np
from tqdm import tqdm

from messiah.config import at_least, setting
from messiah.engine.engine import Engine, EngineChoice
from messiah.engine.openingbook import Book, BookMove, read_book
from messiah.errors import DataError
from messiah.tools.analyze import read_position

HIRATE = cshogi.Board().sfen().rsplit(" ", 1)[0]
RECORD_SUFFIXES = (".csa", ".kif", ".kifu")


@dataclass
class BookBuildConfig:
    """``messiah book build``: a book from game records."""

    records: list[str] = setting(factory=list, positional=True)
    """hcpe (floodgate), self-play records, CSA or KIF files, or folders of CSA/KIF records"""
    out: str = "book.db"
    """the book to write (YaneuraOu's YANEURAOU-DB2016 text format)"""
    plies: int = 24
    """book positions up to this game ply"""
    min_count: int = 2
    """leave out moves played fewer times than this"""

    def __post_init__(self) -> None:
        if not self.records:
            raise DataError("give the game records to build the book from")
        at_least(self, 1, "plies", "min_count")


@dataclass
class BookThinkConfig(EngineChoice):
    """``messiah book think``: every book move's position searched by the engine, its value and depth written."""

    book: str = setting("", positional=True)
    """the book to deepen"""
    out: str = ""
    """where to write the deepened book (default: over the book)"""
    nodes: int = 2000
    """nodes of search per book move"""
    plies: int = 16
    """search the book's positions up to this ply"""

    def __post_init__(self) -> None:
        at_least(self, 1, "nodes", "plies")


@dataclass
class BookShowConfig:
    """``messiah book show``: a book's moves at a position."""

    book: str = setting("", positional=True)
    """the book"""
    position: list[str] = setting(factory=lambda: ["startpos"], positional=True)
    """an sfen, or 'startpos moves ...' (default: the start position)"""


def _files(paths: list[str]) -> list[Path]:
    out = []
    for path in map(Path, paths):
        if path.is_dir():
            out += sorted(p for p in path.rglob("*") if p.suffix.lower() in RECORD_SUFFIXES)
        elif path.exists():
            out.append(path)
        else:
            raise DataError(f"{path}: no such file or folder")
    return out


def _games(path: Path) -> list[tuple[np.ndarray, int]]:
    """The games of a data file as (hcpe rows, ply of the first row): games from the start position, whose
    plies are known (self-play records carry theirs). Games that start elsewhere without a ply are skipped."""
    from messiah.records import read_records

    records = read_records(path)
    rows = records[slice(None)]
    plies = None
    if path.suffix == ".selfplay":
        from messiah.records.selfplayfile import read_selfplay

        plies = np.asarray(read_selfplay(path)["ply"])
    starts = records.game_starts
    if starts is None:  # a new game wherever the previous row's move does not lead to this row's position
        board, starts, previous = cshogi.Board(), [0], None
        for i in range(len(rows)):
            board.set_hcp(np.asarray(rows["hcp"][i]))
            key = board.zobrist_hash()
            if i and key != previous:
                starts.append(i)
            move = board.move_from_move16(int(rows["bestMove16"][i]) & 0xFFFF)
            previous = None
            if move and board.is_legal(move):
                board.push(move)
                previous = board.zobrist_hash()
    bounds = [*list(starts), len(rows)]
    games, board = [], cshogi.Board()
    for a, b in zip(bounds, bounds[1:], strict=False):
        if a == b:
            continue
        board.set_hcp(np.asarray(rows["hcp"][a]))
        if plies is not None:
            games.append((rows[a:b], int(plies[a]) or 1))
        elif board.sfen().rsplit(" ", 1)[0] == HIRATE:
            games.append((rows[a:b], 1))
    return games


def build_book(cfg: BookBuildConfig) -> dict:
    """Count the moves of the records' positions up to ``cfg.plies`` into a book and write it."""
    book, board = Book(), cshogi.Board()
    games = skipped = 0
    for path in tqdm(_files(cfg.records), unit="file", desc="book", leave=False):
        for rows, first_ply in _games(path):
            games += 1
            for k, row in enumerate(rows):
                ply = first_ply + k
                if ply > cfg.plies:
                    break
                board.set_hcp(np.asarray(row["hcp"]))
                move = board.move_from_move16(int(row["bestMove16"]) & 0xFFFF)
                if not move or not board.is_legal(move):
                    skipped += 1
                    break  # the game's last position, or a row that is no move of it
                book.add(" ".join([*board.sfen().split()[:3], str(ply)]), BookMove(cshogi.move_to_usi(move)))
    before = sum(len(m) for m in book.positions.values())
    book.positions = {s: kept for s, moves in book.positions.items()
                      if (kept := [m for m in moves if m.count >= cfg.min_count])}
    if not book.positions:
        raise DataError(_nothing_to_write(cfg, games, before))
    _fill_ponder(book)
    path = book.write(cfg.out)
    return {"book": str(path), "games": games, "positions": len(book),
            "moves": sum(len(m) for m in book.positions.values()), "moves_left_out": before - sum(
                len(m) for m in book.positions.values())}


def _nothing_to_write(cfg: BookBuildConfig, games: int, moves: int) -> str:
    """Why a book would be empty, said instead of writing it (a BookFile with no position plays no book move)."""
    read = f"{games} game{'' if games == 1 else 's'} read"
    if not games:
        why = "the records hold no game from the start position (a game that starts elsewhere has no known ply)"
    elif not moves:
        why = f"no legal move in the first {cfg.plies} plies of the {read}"
    else:
        why = (f"no move was played {cfg.min_count} times or more in its position in the first {cfg.plies} plies of "
               f"the {read} ({moves} were played fewer times); lower --min-count or give more games")
    return f"the book would be empty, so {cfg.out} is not written: {why}"


def _fill_ponder(book: Book) -> None:
    """Each book move's ponder: the most played reply in the position it leads to, where the book has it."""
    board = cshogi.Board()
    for sfen, moves in book.positions.items():
        for move in moves:
            board.set_sfen(sfen)
            board.push_usi(move.move)
            replies = book.lookup(board.sfen())
            if replies:
                move.ponder = max(replies, key=lambda m: m.count).move


def think_book(cfg: BookThinkConfig) -> dict:
    """Search the position after every book move up to ``cfg.plies`` and write the move's value and depth."""
    book = read_book(cfg.book)
    engine = Engine.from_options(cfg.engine_options())
    board = cshogi.Board()
    todo = [(s, m) for s, moves in book.positions.items() if int(s.split()[3]) <= cfg.plies for m in moves]
    for sfen, move in tqdm(todo, unit="move", desc="think"):
        board.set_sfen(sfen)
        board.push_usi(move.move)
        engine.searcher.new_game()
        result = engine.search(board, nodes=cfg.nodes)
        move.value = engine.scale.to_cp(1.0 - result.winrate) if result.mate is None else \
            (-1 if result.mate > 0 else 1) * engine.scale.to_cp(1.0)
        move.depth = result.depth + 1
    path = book.write(cfg.out or cfg.book)
    return {"book": str(path), "moves_searched": len(todo), "nodes": cfg.nodes}


def show_book(cfg: BookShowConfig) -> list[dict]:
    """The book's moves at the position, most played first, with their share of the games."""
    board = read_position(" ".join(cfg.position))
    moves = sorted(read_book(cfg.book).lookup(board.sfen()), key=lambda m: (-m.count, -m.value))
    total = max(1, sum(m.count for m in moves))
    return [{"move": m.move, "ponder": m.ponder, "value": m.value, "depth": m.depth, "count": m.count,
             "share": round(m.count / total, 4)} for m in moves]
