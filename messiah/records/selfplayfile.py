"""Self-play records on disk: one fixed-width file per generation (:data:`SELFPLAY`), memory
mapped, with an exact game index beside it (``NAME.games``: one uint32 length per game, in file order).

A game is appended with one write and an fsync, then its length goes into the index: the index is the commit
point. :func:`prepare` repairs what a kill -9 can leave (a partial record, a game written but not indexed, a
partial index entry) by cutting back to the last indexed game, so at most the game being written is lost and
the index always covers the file exactly.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import cshogi
import numpy as np

from messiah.errors import DataError
from messiah.records.formats import CHECKED_RECORDS, HCPE_FIELDS, check_hcpe, check_size
from messiah.records.gameindex import GAME_INDEX_DTYPE, append_game_index, game_index_path
from messiah.rules import MAX_LEGAL_MOVES

__all__ = ["END_TRUNCATED", "SELFPLAY", "append_game", "prepare", "read_selfplay",
           "read_selfplay_games", "tree_file"]

# Self-play records of ``messiah rl`` (this module writes them): fixed width, so a file is memory-mapped.
# They begin with the hcpe fields (``eval`` the root value in cp at the teacher scale, ``bestMove16`` the
# played move, 0 in a game's final unplayed position, ``gameResult`` 0 also for a truncated game), so every
# reader of hcpe data reads their positions; then what the learner needs. ``values`` holds the search's
# value of each legal move, in the order of messiah.moves.legal_move_indices (NaN past ``moves``).
SELFPLAY = np.dtype([("hcp", "u1", (32,)), ("eval", "<i2"), ("bestMove16", "<i2"), ("gameResult", "i1"),
                     ("dummy", "u1"), ("ply", "<u2"), ("game", "<u4"), ("generation", "<u2"), ("flags", "u1"),
                     ("end", "u1"), ("value", "<f4"), ("best", "<u2"), ("played", "<u2"), ("moves", "<u2"),
                     ("values", "<f2", (MAX_LEGAL_MOVES,))])

# flags
EXPLORATORY = 1  # the played move is not the search's choice (softmax or epsilon exploration)
FINAL = 2  # no move: the last position of a truncated game, kept so that its value can be bootstrapped
PROVEN = 4  # the root search proved a mate for the side to move: the row's value is exact (1)
TREE = 8  # not a game position: a node of a root move's subtree that the game did not play (TreeStrap rows)
FAST = 16  # searched with the fast budget (playout cap randomisation): the row trains its value only

# How a game ended (the ``end`` field of each of its rows)
END_MATED = 1  # the side to move had no legal move
END_PROVEN_MATE = 2  # the root's df-pn (or the tree's solver) proved a forced mate: the game stops, the result is exact
END_RESIGN = 3  # the side to move resigned below the threshold
END_REPETITION = 4  # sennichite (a draw) or perpetual check (the checking side loses)
END_DECLARATION = 5  # the side to move declared an entering-king win
END_TRUNCATED = 6  # stopped at the maximum ply: no result
ENDINGS = {END_MATED: "mated", END_PROVEN_MATE: "proven_mate", END_RESIGN: "resign", END_REPETITION: "repetition",
           END_DECLARATION: "declaration", END_TRUNCATED: "truncated"}


def tree_file(path: str | os.PathLike) -> Path:
    """The file beside a generation's game records that holds its tree rows (flag TREE), in the same format
    with its own game index. Kept apart so that the game files stay games: every hcpe reader, the book and
    the lambda-returns see only positions that were played."""
    return Path(path).with_suffix(".tree")


def prepare(path: str | os.PathLike) -> int:
    """Make ``path`` and its game index agree after any interruption, and return its record count. A partial
    record, records past the indexed games and a partial index entry are cut off, with a warning."""
    path = Path(path)
    index = game_index_path(path)
    if not path.exists():
        index.unlink(missing_ok=True)
        return 0
    whole = path.stat().st_size // SELFPLAY.itemsize
    lengths = np.zeros(0, np.int64)
    if index.exists():
        size = index.stat().st_size
        if size % GAME_INDEX_DTYPE.itemsize:
            warnings.warn(f"{index}: cutting off a partial entry (an interrupted write)", stacklevel=2)
            os.truncate(index, size - size % GAME_INDEX_DTYPE.itemsize)
        lengths = np.fromfile(index, GAME_INDEX_DTYPE).astype(np.int64)
    covered = np.cumsum(lengths)
    keep = int(np.searchsorted(covered, whole, side="right"))  # indexed games whose records are all there
    if keep < len(lengths):
        warnings.warn(f"{index}: {len(lengths) - keep} indexed game(s) past the end of the records: dropped",
                      stacklevel=2)
        os.truncate(index, keep * GAME_INDEX_DTYPE.itemsize)
    records = int(covered[keep - 1]) if keep else 0
    if path.stat().st_size != records * SELFPLAY.itemsize:
        warnings.warn(f"{path}: cutting back {path.stat().st_size - records * SELFPLAY.itemsize} bytes past the last "
                      "indexed game (a game interrupted while it was written)", stacklevel=2)
        os.truncate(path, records * SELFPLAY.itemsize)
    return records


def append_game(path: str | os.PathLike, rows: np.ndarray) -> None:
    """Append one game's records atomically: the data in one write, fsync, then its index entry."""
    data = np.ascontiguousarray(rows, SELFPLAY).tobytes()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    append_game_index(path, [len(rows)])


def read_selfplay_games(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """A prepared file's records (memory-mapped; empty when there are none) and each game's first record."""
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return np.zeros(0, SELFPLAY), np.zeros(0, np.int64)
    records = np.memmap(path, SELFPLAY, mode="r")
    lengths = np.fromfile(game_index_path(path), GAME_INDEX_DTYPE).astype(np.int64)
    if lengths.sum() != len(records):
        raise DataError(f"{path}: the game index covers {lengths.sum()} records of {len(records)} (prepare it first)")
    return records, np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)


def read_selfplay(path: str | os.PathLike) -> np.ndarray:
    """Memory-map a self-play record file (:data:`SELFPLAY`). ValueError naming the file when its size is not
    a whole number of records or its first record is not a position."""
    path = Path(path)
    check_size(path, SELFPLAY, "self-play")
    records = np.memmap(path, SELFPLAY, mode="r")
    try:
        check_hcpe(records[:CHECKED_RECORDS][HCPE_FIELDS])
        cshogi.Board().set_hcp(np.asarray(records["hcp"][0]))
    except (ValueError, RuntimeError) as e:
        raise DataError(f"{path}: {e}; not a self-play file?") from None
    return records
