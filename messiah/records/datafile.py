"""A data file of any supported format as one indexable array of hcpe records (:class:`Records`), and the split
of records into games: exact where a file says where its games start (its format, or the game index beside it:
:mod:`messiah.records.gameindex`), guessed from consecutive positions where it does not.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import cshogi
import cshogi.CSA
import cshogi.KIF
import numpy as np

from messiah.errors import DataError
from messiah.records.candidates import CANDIDATES, read_candidates
from messiah.records.formats import (
    CSA_SUFFIXES,
    HCPE_FIELDS,
    HCPE_SUFFIXES,
    JSONL_SUFFIXES,
    KIF_SUFFIXES,
    PSV_SUFFIXES,
    SELFPLAY_SUFFIXES,
    SUFFIXES,
    check_hcpe,
    psv_to_hcpe,
    read_games,
    read_hcpe,
    read_jsonl,
    read_psv,
)
from messiah.records.gameindex import read_game_index
from messiah.records.selfplayfile import END_TRUNCATED, read_selfplay


class Records:
    """One data file of any supported format seen as hcpe records: ``len()``, and indexing by an int, a
    slice or an index array returns an hcpe array (psv rows are converted as they are gathered).

    ``has_evals``: whether the file carries teacher evals at all; ``eval_known`` and ``result_known``
    (per record, or None when the answer is the same for every record: hcpe and psv always have a
    result); ``game_starts``: the first record of each game where the format or a game index beside the
    file says so (game records, jsonl, gensfen's ``.games``), None where games must be guessed."""

    def __init__(self, path: Path, data: np.ndarray, *, psv: bool = False, game_starts: np.ndarray | None = None,
                 eval_known: np.ndarray | None = None, result_known: np.ndarray | None = None):
        self.path = path
        self.data = data
        self.psv = psv
        self.game_starts = game_starts
        self.eval_known = eval_known
        self.result_known = result_known

    def __len__(self) -> int:
        return len(self.data)

    def __getstate__(self) -> dict:
        """Pickle a memory map as what reopens it, and its games as the game index beside it (a memory map's
        games come only from there), so sending Records to a worker process (the training loader does)
        copies neither."""
        state = dict(self.__dict__)
        state.pop("lines", None)  # (a memory map of its own, opened again where it is asked)
        if isinstance(self.data, np.memmap):
            state["data"] = ("memmap", self.data.filename, self.data.dtype, self.data.offset, self.data.shape)
            if self.game_starts is not None:
                state["game_starts"] = "game index"
        return state

    def __setstate__(self, state: dict) -> None:
        if isinstance(state["data"], tuple):
            _, filename, dtype, offset, shape = state["data"]
            state["data"] = np.memmap(filename, dtype, mode="r", offset=offset, shape=shape)
        if isinstance(state["game_starts"], str):
            state["game_starts"] = read_game_index(state["path"], len(state["data"]))
        self.__dict__ = state

    def __getitem__(self, index: int | slice | np.ndarray) -> np.ndarray:
        if isinstance(index, int | np.integer):
            return self[np.array([index])][0]
        rows = range(len(self))[index] if isinstance(index, slice) else np.asarray(index)
        try:
            if self.psv:
                return psv_to_hcpe(self.data[index], rows)
            records = self.data[index]
            if isinstance(self.data, np.memmap):  # a file may be damaged past its checked head
                check_hcpe(records, rows)
            return records
        except ValueError as e:
            raise DataError(f"{self.path}: {e}") from None

    @cached_property
    def has_evals(self) -> bool:
        """Any nonzero eval in the file (read in chunks: teacher data answers in the first one)."""
        if self.eval_known is not None:
            return bool(self.eval_known.any())
        field = self.data["score" if self.psv else "eval"]
        return any(np.any(field[i : i + 65536] != 0) for i in range(0, len(field), 65536))

    @cached_property
    def lines(self) -> np.ndarray | None:
        """The teacher's top lines of each record, where a file of them lies beside this one (``NAME.multipv``,
        :mod:`messiah.records.candidates`); None where none does."""
        return read_candidates(self.path, len(self))

    def line_rows(self, index: np.ndarray) -> np.ndarray:
        """The lines of the records at ``index`` (CANDIDATES rows; no lines where the file has none)."""
        return np.zeros(len(index), CANDIDATES) if self.lines is None else np.asarray(self.lines[index])

    def eval_mask(self, index: np.ndarray | slice) -> np.ndarray:
        """Which of the records at ``index`` carry an eval."""
        if self.eval_known is not None:
            return self.eval_known[index]
        return np.full(len(range(len(self))[index]) if isinstance(index, slice) else len(index), self.has_evals)

    def result_mask(self, index: np.ndarray | slice) -> np.ndarray:
        """Which of the records at ``index`` carry their game's result."""
        if self.result_known is not None:
            return self.result_known[index]
        return np.ones(len(range(len(self))[index]) if isinstance(index, slice) else len(index), bool)


def read_records(path: str | os.PathLike) -> Records:
    """Open any supported data file by its extension: .hcpe, .psv/.bin (YaneuraOu PackedSfenValue), .csa,
    .kif/.kifu, .jsonl. ValueError naming the file for an unknown extension or a bad file."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in HCPE_SUFFIXES + PSV_SUFFIXES:
        psv = suffix in PSV_SUFFIXES
        data = read_psv(path) if psv else read_hcpe(path)
        return Records(path, data, psv=psv, game_starts=read_game_index(path, len(data)))
    if suffix in SELFPLAY_SUFFIXES:
        data = read_selfplay(path)
        return Records(path, data[HCPE_FIELDS], game_starts=read_game_index(path, len(data)),
                       result_known=np.asarray(data["end"] != END_TRUNCATED))
    if suffix in CSA_SUFFIXES + KIF_SUFFIXES + JSONL_SUFFIXES:
        games = read_jsonl(path) if suffix in JSONL_SUFFIXES else read_games(path)
        return Records(path, games.records, game_starts=games.game_starts, eval_known=games.eval_known,
                       result_known=games.result_known)
    raise DataError(f"{path}: unknown data format {suffix!r} (expected one of {', '.join(SUFFIXES)})")


def follows(prev: np.ndarray, nxt: np.ndarray, max_plies: int = 2) -> bool:
    """Whether hcpe record ``nxt`` can come after ``prev`` in the same game: the same result, and the same
    position (several moves recorded for one position) or one reached in 1..max_plies legal moves. Two
    plies cover an unrecorded ply (a random opening move the teacher did not search); the teacher's own
    move is tried first, as it is almost always the one played."""
    if prev["gameResult"] != nxt["gameResult"]:
        return False
    board = cshogi.Board()
    board.set_hcp(np.asarray(prev["hcp"]))
    target = cshogi.Board()
    target.set_hcp(np.asarray(nxt["hcp"]))
    key = target.zobrist_hash()
    if board.zobrist_hash() == key:
        return True
    teacher = board.move_from_move16(int(prev["bestMove16"]) & 0xFFFF)
    legal = list(board.legal_moves)
    if teacher in legal:
        legal.remove(teacher)
        legal.insert(0, teacher)
    for depth in range(1, max_plies + 1):
        if _reaches(board, key, legal, depth):
            return True
    return False


def _reaches(board: cshogi.Board, key: int, moves: Sequence[int], depth: int) -> bool:
    """Whether some line of exactly ``depth`` legal moves (starting with one of ``moves``) reaches ``key``."""
    for move in moves:
        board.push(move)
        found = board.zobrist_hash() == key if depth == 1 else _reaches(board, key, list(board.legal_moves), depth - 1)
        board.pop()
        if found:
            return True
    return False


def split_by_game(records: np.ndarray | Records, val_fraction: float,
                  game_starts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Indices of (train, validation): the validation part is the tail of the file, starting at a game
    boundary so that no game is on both sides. ``game_starts`` are known game boundaries; without them
    positions of a game are taken to be consecutive and a new game starts where :func:`follows` fails
    (a guess: :class:`TeacherData` warns and says how many games it found)."""
    n = len(records)
    cut = int(n * (1 - val_fraction))
    if game_starts is not None:
        later = game_starts[game_starts >= cut]
        cut = int(later[0]) if len(later) else n
    else:
        while 0 < cut < n:
            pair = records[cut - 1 : cut + 1]
            if not follows(pair[0], pair[1]):
                break
            cut += 1
    return np.arange(cut), np.arange(cut, n)


def count_games(records: np.ndarray | Records, max_plies: int = 1, chunk: int = 4096) -> int:
    """Number of games in consecutive-game data: 1 + the places where :func:`follows` fails. One ply suffices
    for files :mod:`train.gensfen` writes (it records every ply from its first recorded one)."""
    games = 0
    prev = None
    for start in range(0, len(records), chunk):
        for rec in records[start : start + chunk]:
            if prev is None or not follows(prev, rec, max_plies):
                games += 1
            prev = rec
    return games


