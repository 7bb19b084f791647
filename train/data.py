"""Teacher data: hcpe, psv, CSA, KIF and jsonl files read as hcpe records, split by game, and turned into
training batches.

Every reader yields cshogi ``HuffmanCodedPosAndEval`` (hcpe) records: ``hcp`` the position, ``eval`` the
teacher's score in centipawns for the side to move (0 when the data has none), ``bestMove16`` the teacher's
or the played move (cshogi move16) and ``gameResult`` 0 draw / 1 black won / 2 white won. hcpe files are
memory-mapped; YaneuraOu PackedSfenValue (psv) files are memory-mapped too and converted row by row when
gathered (``Records``), because they can be larger than memory; game records are small and read whole.

A batch carries everything the loss needs and nothing else: feature planes, the legal moves' indices
(padded), where the teacher's move sits in that list, the teacher's eval and the game result from the
side to move's point of view.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import cshogi
import cshogi.CSA
import cshogi.KIF
import numpy as np

from messiah.errors import DataError
from messiah.features import PositionArrays, mirror_planes, planes
from messiah.moves import legal_move_indices, mirror_indices, move_indices, pad_indices
from messiah.winrate import MAX_CP  # mate scores, as in the shared teacher data; every eval is clipped to +-MAX_CP

HCPE = cshogi.HuffmanCodedPosAndEval
PSV = cshogi.PackedSfenValue

HCPE_SUFFIXES = (".hcpe",)
PSV_SUFFIXES = (".psv", ".bin")
CSA_SUFFIXES = (".csa",)
KIF_SUFFIXES = (".kif", ".kifu")
JSONL_SUFFIXES = (".jsonl",)
SELFPLAY_SUFFIXES = (".selfplay",)
# Opening a file checks this many leading records (a foreign file fails at once; a huge one is not read
# whole); rows gathered later are checked as they are converted.
CHECKED_RECORDS = 65536
SUFFIXES = HCPE_SUFFIXES + PSV_SUFFIXES + CSA_SUFFIXES + KIF_SUFFIXES + JSONL_SUFFIXES + SELFPLAY_SUFFIXES

HCPE_FIELDS = ["hcp", "eval", "bestMove16", "gameResult", "dummy"]


def check_size(path: Path, dtype: np.dtype, kind: str) -> None:
    """Raise ValueError naming the file unless it holds a whole, non-zero number of ``dtype`` records."""
    size = path.stat().st_size
    if size == 0 or size % dtype.itemsize:
        raise DataError(f"{path}: {size} bytes is not a whole number of {dtype.itemsize}-byte {kind} "
                         f"records (truncated or not a {kind} file)")


def kings_off_board(packed: np.ndarray) -> np.ndarray:
    """Rows of (N, 32) hcp or packed-sfen bytes whose king squares are past the board. Both formats begin
    with the side to move (1 bit) and the two kings' squares (7 bits each), and cshogi's set_hcp and
    set_psfen place the kings there unchecked: a square past 80 crashes the process instead of raising.
    So data that may be damaged or foreign is checked with this before it is decoded."""
    head = packed[:, 0].astype(np.uint16) | (packed[:, 1].astype(np.uint16) << 8)
    return np.flatnonzero((((head >> 1) & 0x7F) > 80) | (((head >> 8) & 0x7F) > 80))


def _check_rows(packed: np.ndarray, results: np.ndarray, allowed: range, kind: str,
                rows: Sequence[int] | None) -> None:
    """ValueError naming the first record (its number in ``rows`` when given) with a king off the board
    or a result outside ``allowed``."""
    kings = kings_off_board(packed.reshape(-1, 32))
    results = results.astype(np.int16)
    wrong = np.flatnonzero((results < allowed.start) | (results >= allowed.stop))
    if len(kings) or len(wrong):
        i = int(min(kings[:1].tolist() + wrong[:1].tolist()))
        what = "a king off the board" if i in kings[:1] else f"result {results[i]}"
        raise DataError(f"record {rows[i] if rows is not None else i} is not a valid {kind} record ({what})")


def check_hcpe(records: np.ndarray, rows: Sequence[int] | None = None) -> None:
    """ValueError naming the first record that cshogi cannot safely decode (a king off the board) or whose
    gameResult is not 0/1/2. Vectorised: cheap enough for every gathered batch."""
    _check_rows(np.asarray(records["hcp"]), np.asarray(records["gameResult"]), range(0, 3), "hcpe", rows)


def _check_psv(records: np.ndarray, rows: Sequence[int] | None = None) -> None:
    """The same for psv records, whose game_result is -1/0/1."""
    _check_rows(np.asarray(records["sfen"]), np.asarray(records["game_result"]), range(-1, 2), "psv", rows)


def read_hcpe(path: str | os.PathLike) -> np.ndarray:
    """Memory-map an hcpe file. Raises ValueError naming the file when its size is not a whole number of
    38-byte records (truncated, or not hcpe), its first record is not a position or one of the first
    CHECKED_RECORDS fails :func:`check_hcpe`."""
    path = Path(path)
    check_size(path, HCPE, "hcpe")
    records = np.memmap(path, HCPE, mode="r")
    try:  # a foreign file whose size happens to fit
        check_hcpe(records[:CHECKED_RECORDS])
        cshogi.Board().set_hcp(np.asarray(records["hcp"][0]))
    except (ValueError, RuntimeError) as e:
        raise DataError(f"{path}: {e}; not an hcpe file?") from None
    return records


def read_psv(path: str | os.PathLike) -> np.ndarray:
    """Memory-map a YaneuraOu PackedSfenValue file (``.psv``/``.bin``, 40-byte records). Raises ValueError
    naming the file when the size does not fit, the first record is not a position, or a game_result among
    the first CHECKED_RECORDS is outside -1..1."""
    path = Path(path)
    check_size(path, PSV, "psv")
    records = np.memmap(path, PSV, mode="r")
    try:  # the head is checked cheaply, and the first record decoded
        _check_psv(records[:CHECKED_RECORDS])
        psv_to_hcpe(records[:1])
    except ValueError as e:
        raise DataError(f"{path}: {e}; not a psv file?") from None
    return records


def absolute_result(result_for_mover: np.ndarray, turn: np.ndarray) -> np.ndarray:
    """-1/0/1 results from the side to move's point of view -> hcpe gameResult (0 draw, 1 black won,
    2 white won)."""
    black_won = (result_for_mover == 1) == (turn == cshogi.BLACK)
    return np.where(result_for_mover == 0, cshogi.DRAW,
                    np.where(black_won, cshogi.BLACK_WIN, cshogi.WHITE_WIN)).astype(np.int8)


def psv_to_hcpe(records: np.ndarray, rows: Sequence[int] | None = None) -> np.ndarray:
    """Convert PackedSfenValue records to hcpe: the position re-encoded (set_psfen -> to_hcp), ``score``
    kept (both are for the side to move), the YaneuraOu move16 converted with cshogi.move16_from_psv, and
    game_result (-1/0/1 for the side to move) made absolute. ``rows`` are the records' numbers in their
    file, only used to name a bad record; ValueError when a record is not a position."""
    _check_psv(records, rows)
    out = np.zeros(len(records), HCPE)
    turns = np.empty(len(records), np.int8)
    board = cshogi.Board()
    sfens, moves, out_hcp = records["sfen"], records["move"], out["hcp"]
    for i in range(len(records)):
        try:
            board.set_psfen(np.asarray(sfens[i]))
        except RuntimeError as e:
            raise DataError(f"record {rows[i] if rows is not None else i} is not a packed sfen ({e})") from None
        board.to_hcp(out_hcp[i])
        turns[i] = board.turn
        out["bestMove16"][i] = cshogi.move16_from_psv(int(moves[i]))
    out["eval"] = records["score"]
    out["gameResult"] = absolute_result(np.asarray(records["game_result"]), turns)
    return out


def is_legal(board: cshogi.Board, move: int) -> bool:
    """Whether ``move`` is legal. board.is_legal() accepts impossible promotions, so ask the generator."""
    return move != 0 and move in set(board.legal_moves)


def _decode_text(path: Path, encodings: Sequence[str]) -> str:
    """The file's text in the first encoding that decodes it; ValueError naming the file otherwise."""
    data = path.read_bytes()
    for encoding in encodings:
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise DataError(f"{path}: not text in {' or '.join(encodings)}")


@dataclass
class _Game:
    sfen: str  # start position
    moves: list[int]  # cshogi moves
    result: int  # hcpe gameResult
    scores: list[int | None]  # black's-view score of the position before each move, None where absent
    result_known: bool  # False for a game that stopped without a result (CSA %CHUDAN or none, KIF none)


def _csa_scores(parser: cshogi.CSA.Parser) -> list[int | None]:
    """Black's-view scores of a CSA game's moves, None where a move has no "'** score" comment (the form
    cshogi.cli writes). The parser gives the numbers in ``scores`` (0 when absent) and the comment texts
    in ``comments`` (empty when absent)."""
    try:
        present = [bool(c) for c in parser.comments]
    except UnicodeDecodeError:  # cshogi decodes comments as ascii; a non-ascii one still has its score
        present = [s != 0 for s in parser.scores]
    return [s if p else None for s, p in zip(parser.scores, present, strict=True)]


_CSA_MOVE = re.compile(r"[+-](00|[1-9]{2})[1-9]{2}(FU|KY|KE|GI|KI|KA|HI|OU|TO|NY|NK|NG|UM|RY)(,.*)?")


def _csa_crash_reason(text: str) -> str | None:
    """Why cshogi's CSA parser (C++) would crash on ``text`` instead of raising, or None. It dereferences
    a missing board, a malformed move or a missing move: so every game (split at '/' lines, as the parser
    splits) must set up a whole board with both kings (PI, or all of P1..P9) and the side to move before
    its first move, move lines must have a move's shape, and a "'**" score comment must follow a move.
    This only looks at the lines' shapes; the parsing is cshogi's."""
    for number, game in enumerate(text.split("\n/\n"), 1):
        ranks: set[str] = set()
        board = turn = moved = False
        for line in game.split("\n"):
            if line.startswith("'**") and not moved:
                return f"game {number}: a score comment before the first move"
            if line.startswith("PI"):
                board = True
            elif line[:1] == "P" and line[1:2] and line[1:2] in "123456789":
                ranks.add(line[1])
                board = len(ranks) == 9 and "+OU" in game and "-OU" in game
            elif line in ("+", "-"):
                if not board:
                    return f"game {number}: the side to move before a whole board"
                turn = True
            elif line[:1] in ("+", "-"):
                if not _CSA_MOVE.fullmatch(line):
                    return f"game {number}: a malformed move line {line!r}"
                if not (board and turn):
                    return f"game {number}: a move before the board and the side to move"
                moved = True
    return None


def _parse_games(path: Path) -> list[_Game]:
    """Games of a CSA (one or several, '/'-separated) or KIF/KIFU file, through cshogi's parsers."""
    suffix = path.suffix.lower()
    if suffix in CSA_SUFFIXES:
        text = _decode_text(path, ("utf-8-sig", "cp932")).replace("\r\n", "\n")
        if (reason := _csa_crash_reason(text)) is not None:
            raise DataError(f"{path}: not a CSA record: {reason}")
        try:
            parsed = cshogi.CSA.Parser.parse_str(text)
        except (ValueError, RuntimeError) as e:
            raise DataError(f"{path}: not a CSA record: {e}") from None
        return [_Game(p.sfen, list(p.moves), int(p.win), _csa_scores(p), p.endgame not in ("", "%CHUDAN"))
                for p in parsed if p.sfen]
    text = _decode_text(path, ("utf-8-sig",) if suffix == ".kifu" else ("utf-8-sig", "cp932"))
    try:
        p = cshogi.KIF.Parser.parse_str(text)
    except Exception as e:  # the KIF parser raises KeyError, ValueError, IndexError, ParserException...
        raise DataError(f"{path}: not a KIF record: {type(e).__name__}: {e}") from None
    result = cshogi.DRAW if p.win is None else int(p.win)
    return [_Game(p.sfen, list(p.moves), result, [None] * len(p.moves), p.win is not None)]


@dataclass
class GameRecords:
    """Positions of game records as hcpe, with what hcpe cannot say: where games start and which
    records carry an eval and a result."""

    records: np.ndarray  # HCPE
    game_starts: np.ndarray  # int64 index of each game's first record
    eval_known: np.ndarray  # bool per record
    result_known: np.ndarray  # bool per record: False for a game that stopped without a result


def read_games(path: str | os.PathLike) -> GameRecords:
    """Every position of every game of a CSA or KIF file, with the move played from it and the game's
    result; evals from CSA '** score' comments where present (0 otherwise). A game with no result (or
    an interrupted one) is marked ``result_known`` False (its gameResult says draw), unless its last
    position is checkmate: then the mover won.

    Raises ValueError naming the file (and game and move) for a file with no game, an unreadable file or
    an illegal move."""
    path = Path(path)
    games = _parse_games(path)
    if not any(g.moves for g in games):
        raise DataError(f"{path}: no game with moves (empty, or not a {path.suffix} record)")
    hcps, evals, moves16, results, known, starts, results_known = [], [], [], [], [], [], []
    hcp = np.empty(1, cshogi.HuffmanCodedPos)
    for number, game in enumerate(games, 1):
        if not game.moves:
            continue
        try:
            board = cshogi.Board(game.sfen)
        except RuntimeError as e:
            raise DataError(f"{path}: game {number}: bad start position {game.sfen!r} ({e})") from None
        starts.append(len(hcps))
        for ply, (move, score) in enumerate(zip(game.moves, game.scores, strict=True), 1):
            if not is_legal(board, move):
                raise DataError(f"{path}: game {number}, move {ply} is missing or illegal in {board.sfen()}")
            board.to_hcp(hcp)
            hcps.append(hcp["hcp"][0].copy())
            sign = 1 if board.turn == cshogi.BLACK else -1
            evals.append(0 if score is None else int(np.clip(sign * score, -MAX_CP, MAX_CP)))
            known.append(score is not None)
            moves16.append(cshogi.move16(move))
            board.push(move)
        result, result_known = game.result, game.result_known
        if result == cshogi.DRAW and board.is_game_over():  # mated: the side that just moved won
            result = cshogi.WHITE_WIN if board.turn == cshogi.BLACK else cshogi.BLACK_WIN
            result_known = True
        results_known += [result_known] * (len(hcps) - len(results))
        results += [result] * (len(hcps) - len(results))
    out = np.zeros(len(hcps), HCPE)
    out["hcp"] = np.array(hcps)
    out["eval"] = evals
    out["bestMove16"] = np.array(moves16, np.uint16).view(np.int16)
    out["gameResult"] = results
    return GameRecords(out, np.array(starts, np.int64), np.array(known, bool), np.array(results_known, bool))


def read_game_records(path: str | os.PathLike) -> np.ndarray:
    """:func:`read_games`' records alone: an in-memory hcpe array."""
    return read_games(path).records


def read_jsonl(path: str | os.PathLike) -> GameRecords:
    """Positions from a jsonl file, one JSON object a line with ``sfen`` and ``bestmove`` (USI) keys and
    an optional ``eval`` (centipawns for the side to move); blank lines are skipped. Every record is its
    own game, with no result (``result_known`` False). ValueError naming the file and line for a line that is not JSON,
    lacks a key, has a malformed sfen or a bestmove that is not legal there."""
    path = Path(path)
    text = _decode_text(path, ("utf-8-sig",))
    hcps, evals, moves16, known = [], [], [], []
    hcp = np.empty(1, cshogi.HuffmanCodedPos)
    check = cshogi.Board()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            item = json.loads(line)
            sfen, usi = item["sfen"], item["bestmove"]
            value = item.get("eval")
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as e:
            raise DataError(f"{where}: not a JSON object with 'sfen' and 'bestmove' ({e})") from None
        if not isinstance(sfen, str) or not isinstance(usi, str):
            raise DataError(f"{where}: 'sfen' and 'bestmove' must be strings")
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise DataError(f"{where}: 'eval' must be a number, not {value!r}")
        try:  # the constructor turns cshogi's C++ errors into RuntimeError (set_sfen aborts the process)
            board = cshogi.Board(sfen)
        except RuntimeError:
            board = None
        if board is not None and board.is_ok() and board.sfen().split()[:3] == sfen.split()[:3]:
            board.to_hcp(hcp)
            check.set_hcp(hcp["hcp"][0])  # cshogi pads short ranks and accepts 19 pawns: only a round trip tells
            if check.sfen().split()[:3] != sfen.split()[:3]:
                board = None
        else:
            board = None
        if board is None:
            raise DataError(f"{where}: malformed sfen {sfen!r}")
        move = board.move_from_usi(usi)
        if not is_legal(board, move):
            raise DataError(f"{where}: bestmove {usi!r} is not a legal move in {sfen}")
        hcps.append(hcp["hcp"][0].copy())
        evals.append(0 if value is None else int(np.clip(round(value), -MAX_CP, MAX_CP)))
        known.append(value is not None)
        moves16.append(cshogi.move16(move))
    if not hcps:
        raise DataError(f"{path}: no positions")
    out = np.zeros(len(hcps), HCPE)
    out["hcp"] = np.array(hcps)
    out["eval"] = evals
    out["bestMove16"] = np.array(moves16, np.uint16).view(np.int16)
    return GameRecords(out, np.arange(len(out)), np.array(known, bool), np.zeros(len(out), bool))


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


GAME_INDEX_SUFFIX = ".games"
GAME_INDEX_DTYPE = np.dtype("<u4")


def game_index_path(path: str | os.PathLike) -> Path:
    """Where the game index of a data file lies: beside it, ``NAME.games``."""
    path = Path(path)
    return path.with_name(path.name + GAME_INDEX_SUFFIX)


def append_game_index(path: str | os.PathLike, lengths: Sequence[int]) -> None:
    """Append games of these lengths (records each) to the game index of data file ``path``. A writer
    that knows its games (gensfen, the RL records) calls it after each whole game it appends."""
    with open(game_index_path(path), "ab") as f:
        f.write(np.asarray(lengths, GAME_INDEX_DTYPE).tobytes())
        f.flush()
        os.fsync(f.fileno())


def read_game_index(path: str | os.PathLike, records: int) -> np.ndarray | None:
    """The first record of each game of data file ``path`` (``records`` long), from its game index: a
    little-endian uint32 per game, its number of records, in file order. None, with a warning, when the
    index does not cover the file exactly (it is then of no use); None, silently, when there is none."""
    index = game_index_path(path)
    if not index.exists():
        return None
    size = index.stat().st_size
    lengths = np.fromfile(index, GAME_INDEX_DTYPE, count=size // GAME_INDEX_DTYPE.itemsize).astype(np.int64)
    if size % GAME_INDEX_DTYPE.itemsize or lengths.sum() != records or (lengths == 0).any():
        warnings.warn(f"{index}: covers {lengths.sum():,} records in {len(lengths):,} games, the file holds "
                      f"{records:,}: ignored, games are guessed", stacklevel=2)
        return None
    return np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)


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
        from messiah.train.rl.records import END_TRUNCATED, read_selfplay  # the format's owner, above this module

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


@dataclass
class Decoded:
    """hcpe records decoded once: the positions whose teacher move is legal, as arrays, with their legal
    moves and where the teacher's move sits among them."""

    keep: np.ndarray  # (N,) int64 rows of the records kept (teacher move legal)
    arrays: PositionArrays  # the kept positions
    legal: list[tuple[np.ndarray, np.ndarray]]  # per kept position: legal moves (uint32) and their indices
    teacher: np.ndarray  # (N,) int64 position of the teacher move in its legal list


def decode(records: np.ndarray) -> Decoded:
    """One cshogi decoding per record gives the planes' arrays, the legal moves and the teacher's move.
    Records whose teacher move is not legal are dropped; ValueError naming a record that is not a
    position."""
    arrays = PositionArrays.empty(len(records))
    board = cshogi.Board()
    hcps, moves16 = records["hcp"], records["bestMove16"]
    legal, keep, teacher = [], [], []
    for i in range(len(records)):
        try:
            board.set_hcp(np.asarray(hcps[i]))
        except RuntimeError as e:
            raise DataError(f"record {i} is not a valid HuffmanCodedPos: {e}") from None
        moves, idx = legal_move_indices(board)
        where = np.flatnonzero(idx == move_indices(np.array([moves16[i]]), board.turn)[0])
        if len(where):
            arrays.set(len(keep), board)
            keep.append(i)
            legal.append((moves, idx))
            teacher.append(where[0])
    n = len(keep)
    return Decoded(np.array(keep, np.int64), PositionArrays(arrays.pieces[:n], arrays.hands[:n], arrays.turns[:n]),
                   legal, np.array(teacher, np.int64))


@dataclass
class Batch:
    features: np.ndarray  # (B, 36, 11, 9) float32
    legal: np.ndarray  # (B, M) int64 move indices, padded with 0
    legal_mask: np.ndarray  # (B, M) bool
    teacher: np.ndarray  # (B,) int64 position of the teacher move in ``legal``
    eval_cp: np.ndarray  # (B,) float32 teacher eval for the side to move
    result: np.ndarray  # (B,) float32 1 win / 0.5 draw / 0 loss for the side to move
    eval_known: np.ndarray  # (B,) bool: the row has a teacher eval (else eval_cp is 0 and means nothing)
    result_known: np.ndarray  # (B,) bool: the row has its game's result (else result means nothing)


def make_batch(records: np.ndarray, eval_known: np.ndarray | None = None,
               result_known: np.ndarray | None = None) -> Batch:
    """Build a batch from hcpe records and the masks of which carry an eval and a result (default: all).
    Records whose teacher move is not legal are dropped."""
    d = decode(records)
    padded, mask = pad_indices([idx for _, idx in d.legal])
    game_result = records["gameResult"][d.keep]
    winner = np.where(game_result == cshogi.BLACK_WIN, cshogi.BLACK, cshogi.WHITE)
    result = np.where(game_result == cshogi.DRAW, 0.5, (winner == d.arrays.turns).astype(np.float32))
    eval_known = np.ones(len(records), bool) if eval_known is None else np.asarray(eval_known, bool)
    result_known = np.ones(len(records), bool) if result_known is None else np.asarray(result_known, bool)
    return Batch(planes(d.arrays), padded, mask, d.teacher, records["eval"][d.keep].astype(np.float32),
                 result.astype(np.float32), eval_known[d.keep], result_known[d.keep])


def mirror_batch(batch: Batch, rows: np.ndarray) -> None:
    """Replace the positions ``rows`` (a bool mask) of ``batch`` by their left-right mirror images, in
    place: the planes and the legal moves mirror; the teacher move keeps its slot, the evals and results
    stay (the rules are symmetric, so the mirrored position is worth the same)."""
    batch.features[rows] = mirror_planes(batch.features[rows])
    batch.legal[rows] = np.where(batch.legal_mask[rows], mirror_indices(batch.legal[rows]), 0)


@dataclass
class Gathered:
    """Records gathered from several files, with their masks."""

    records: np.ndarray  # HCPE
    eval_known: np.ndarray  # bool per record
    result_known: np.ndarray  # bool per record

    def batch(self) -> Batch:
        return make_batch(self.records, self.eval_known, self.result_known)


def gather(files: Sequence[Records], index: np.ndarray) -> Gathered:
    """Records, and whether each carries an eval and a result, for rows of a (file, record) index array."""
    out = Gathered(np.empty(len(index), HCPE), np.zeros(len(index), bool), np.zeros(len(index), bool))
    for f, records in enumerate(files):
        sel = index[:, 0] == f
        if sel.any():
            rows = index[sel, 1]
            out.records[sel] = records[rows]
            out.eval_known[sel] = records.eval_mask(rows)
            out.result_known[sel] = records.result_mask(rows)
    return out


class TeacherData:
    """Data files of any supported format (see :func:`read_records`) as one indexable set of hcpe
    records, with a by-game validation split per file. ``has_evals[f]`` says whether file f carries
    teacher evals (floodgate and KIF records do not: their eval is 0, and training uses their result).

    Where a file says where its games start (game records, a gensfen game index) the split is exact;
    where the games must be guessed from consecutive positions, a warning says so and how many games the
    validation part was found to hold (``val_games[f]``; None where known): a gap of 3+ plies between
    recorded positions or a shuffled file would make the guess split by position."""

    def __init__(self, paths: Sequence[str | os.PathLike], val_fraction: float = 0.05):
        self.files = [read_records(p) for p in paths]
        self.has_evals = [f.has_evals for f in self.files]
        self.val_games: list[int | None] = []
        train, val = [], []
        for f, records in enumerate(self.files):
            tr, va = split_by_game(records, val_fraction, records.game_starts)
            train.append(np.stack([np.full(len(tr), f), tr], axis=1))
            val.append(np.stack([np.full(len(va), f), va], axis=1))
            known = records.game_starts is not None or not len(va)
            self.val_games.append(None if known else self._guessed(records, va))
        self.train_index = np.concatenate(train or [np.empty((0, 2))]).astype(np.int64).reshape(-1, 2)
        self.val_index = np.concatenate(val or [np.empty((0, 2))]).astype(np.int64).reshape(-1, 2)

    @staticmethod
    def _guessed(records: Records, val: np.ndarray) -> int:
        """Count the games of a validation part whose boundaries were guessed, and warn."""
        games = count_games(records[val], max_plies=2) if len(val) else 0
        mean = f", {len(val) / games:.1f} positions a game" if games else ""
        warnings.warn(f"{records.path}: no game index ({game_index_path(records.path).name}); games guessed from "
                      f"consecutive positions: the validation part holds {len(val):,} positions of {games:,} "
                      f"games{mean}", stacklevel=3)
        return games

    def gather(self, index: np.ndarray) -> Gathered:
        """Records and their masks for rows of a (file, record) index array."""
        return gather(self.files, index)

    def records(self, index: np.ndarray) -> np.ndarray:
        """Gather records for rows of a (file, record) index array."""
        return self.gather(index).records
