"""The file formats of shogi data, each read as cshogi ``HuffmanCodedPosAndEval`` (hcpe) records: ``hcp`` the
position, ``eval`` the teacher's score in centipawns for the side to move (0 when the data has none),
``bestMove16`` the teacher's or the played move (cshogi move16) and ``gameResult`` 0 draw / 1 black won / 2
white won. hcpe files are memory-mapped; YaneuraOu PackedSfenValue (psv) files are memory-mapped too and
converted row by row when gathered (:class:`messiah.records.datafile.Records`), because they can be larger than
memory; game records (CSA, KIF, jsonl) are small and read whole, through cshogi's parsers.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cshogi
import cshogi.CSA
import cshogi.KIF
import numpy as np

from messiah.errors import DataError
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


def result_for_side_to_move(game_result: np.ndarray, turn: np.ndarray) -> np.ndarray:
    """hcpe gameResult -> 1 win / 0.5 draw / 0 loss (float32) for the side to move ``turn``: the inverse of
    :func:`absolute_result`, what the value targets are made of."""
    winner = np.where(game_result == cshogi.BLACK_WIN, cshogi.BLACK, cshogi.WHITE)
    return np.where(game_result == cshogi.DRAW, 0.5, (winner == turn).astype(np.float32)).astype(np.float32)


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


