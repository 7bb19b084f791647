"""Make the small data set in tests/data/ that the tests run on, from the shared data (``$MESSIAH_DATA`` or
../shared/data) and the shipped model. Run it from the repository root; it writes the same files each time:

    python tests/make_fixtures.py

What it writes, and from what (tests/data/README.md says the same for a reader of that folder):

- ``teacher.hcpe`` and its game index ``teacher.hcpe.games``: whole games of fairy-stockfish teacher data,
  ``TEACHER_GAMES_PER_FILE`` evenly spaced games of each teacher file, so every file (every seed) is in it.
- ``games.hcpe`` and ``games.hcpe.games``: whole games from the start position, played by messiah itself
  (the shipped model's engine at ``SELFPLAY_NODES`` nodes a move, from random 8-ply openings), with the moves
  played and the results but no evals (eval 0), as game records are: what a book is built from, what a CSA
  or KIF record holds. (The floodgate games of the shared data are GPL-3.0; these stand in for them.)
- ``formats/``: the same teacher positions as hcpe and as YaneuraOu PackedSfenValue, the latter packed by
  cshogi (``Board.to_psfen``, ``move16_to_psv``), not by messiah; and the first game of ``games.hcpe``
  written by cshogi's CSA and KIF exporters.
- ``openings.sfen``: random 8-ply openings from the start position (``messiah match``'s own kind).
- ``mates/mate{1,3,5}.tsv``: the first ``MATES_PER_FILE`` problems of each shared file (tanuki-tsume-shogi, MIT).
"""

from __future__ import annotations

import shutil
import sys
from datetime import datetime
from pathlib import Path

import cshogi
import cshogi.CSA
import cshogi.KIF
import numpy as np

from messiah.arena.match import random_openings
from messiah.engine.engine import Engine
from messiah.paths import shared_file
from messiah.position import perpetual_check_winner
from messiah.records import append_game_index, game_index_path

OUT = Path(__file__).resolve().parent / "data"
TEACHER_FILES = [f"teacher/teacher_s{n}.hcpe" for n in range(1, 11)]
TEACHER_GAMES_PER_FILE = 4
SELFPLAY_GAMES = 6
SELFPLAY_NODES = 48
SELFPLAY_MAX_PLIES = 200  # a game still going is left without a result (gameResult 0) and cut here
PSV_STRIDE = 47  # every 47th teacher position goes into the PackedSfenValue pair
OPENINGS, OPENINGS_SEED = 200, 2024
MATES_PER_FILE = {"mate1.tsv": 20, "mate3.tsv": 20, "mate5.tsv": 10}


def game_slices(index: np.ndarray) -> list[slice]:
    ends = np.cumsum(index)
    return [slice(int(end - length), int(end)) for end, length in zip(ends, index, strict=True)]


def teacher() -> np.ndarray:
    records, lengths = [], []
    for name in TEACHER_FILES:
        path = shared_file(name)
        data = np.fromfile(path, cshogi.HuffmanCodedPosAndEval)
        games = game_slices(np.fromfile(f"{path}.games", "<u4"))
        for g in np.linspace(0, len(games) - 1, TEACHER_GAMES_PER_FILE).round().astype(int):
            records.append(data[games[g]])
            lengths.append(len(records[-1]))
    write_with_index(OUT / "teacher.hcpe", np.concatenate(records), lengths)
    return np.concatenate(records)


def write_with_index(path: Path, records: np.ndarray, lengths: list[int]) -> None:
    assert sum(lengths) == len(records)
    records.tofile(path)
    game_index_path(path).unlink(missing_ok=True)
    append_game_index(path, lengths)


def selfplay() -> tuple[list[list[int]], list[int]]:
    """The engine's games, written with their game index: each game's moves and result (cshogi's gameResult)."""
    records, games, results = [], [], []
    with Engine.from_options({"USI_Hash": "64"}) as engine:
        for opening in random_openings(SELFPLAY_GAMES, seed=OPENINGS_SEED + 1):
            board, rows, result = cshogi.Board(), [], cshogi.DRAW
            for ply in range(SELFPLAY_MAX_PLIES):
                if board.is_game_over():
                    result = cshogi.WHITE_WIN if board.turn == cshogi.BLACK else cshogi.BLACK_WIN
                    break
                repetition = board.is_draw() if ply else cshogi.NOT_REPETITION
                if repetition in (cshogi.REPETITION_DRAW, cshogi.REPETITION_WIN, cshogi.REPETITION_LOSE):
                    winner = perpetual_check_winner(board, repetition)
                    if winner is not None:
                        result = cshogi.BLACK_WIN if winner == cshogi.BLACK else cshogi.WHITE_WIN
                    break
                opening_moves = opening.split()[2:]
                if ply < len(opening_moves):
                    move = board.move_from_usi(opening_moves[ply])
                else:
                    move = engine.search(board, nodes=SELFPLAY_NODES).bestmove
                rows.append((hcp(board), move))
                board.push(move)
            game = np.zeros(len(rows), cshogi.HuffmanCodedPosAndEval)
            for i, (packed, move) in enumerate(rows):
                game[i]["hcp"] = packed
                game[i]["bestMove16"] = cshogi.move16(move)
            game["gameResult"] = result
            records.append(game)
            games.append([move for _, move in rows])
            results.append(result)
    write_with_index(OUT / "games.hcpe", np.concatenate(records), [len(r) for r in records])
    return games, results


def hcp(board: cshogi.Board) -> np.ndarray:
    out = np.empty(1, cshogi.HuffmanCodedPos)
    board.to_hcp(out)
    return out[0]["hcp"]


def psv_pair(records: np.ndarray) -> None:
    """``sample.hcpe`` and ``sample.psv``: the same positions, scores, moves and results, packed by cshogi."""
    rows = records[::PSV_STRIDE]
    psv = np.zeros(len(rows), cshogi.PackedSfenValue)
    board = cshogi.Board()
    for i, rec in enumerate(rows):
        board.set_hcp(rec["hcp"])
        board.to_psfen(psv[i:i + 1]["sfen"])
        psv[i]["score"] = rec["eval"]
        psv[i]["move"] = cshogi.move16_to_psv(int(rec["bestMove16"]))
        won = {cshogi.BLACK_WIN: cshogi.BLACK, cshogi.WHITE_WIN: cshogi.WHITE}.get(int(rec["gameResult"]))
        psv[i]["game_result"] = 0 if won is None else (1 if won == board.turn else -1)
    rows.tofile(OUT / "formats" / "sample.hcpe")
    psv.tofile(OUT / "formats" / "sample.psv")


def game_records(moves: list[int], result: int) -> None:
    """The game as CSA and KIF, by cshogi's own exporters: a resignation after the last move when it was won."""
    csa = cshogi.CSA.Exporter(str(OUT / "formats" / "game.csa"))
    csa.info(cshogi.STARTING_SFEN, names=["messiah", "messiah"])
    kif = cshogi.KIF.Exporter(str(OUT / "formats" / "game.kif"))  # cp932, as KIF files are
    kif.header(["messiah", "messiah"], starttime=datetime(2026, 1, 1))
    for move in moves:
        csa.move(move)
        kif.move(move)
    csa.endgame("%TORYO" if result != cshogi.DRAW else "%CHUDAN")
    kif.end("resign" if result != cshogi.DRAW else "abort")
    csa.close()
    kif.close()


def mates() -> None:
    for name, count in MATES_PER_FILE.items():
        lines = shared_file(f"mates/{name}").read_text().splitlines()[:count]
        (OUT / "mates" / name).write_text("\n".join(lines) + "\n")


def main() -> int:
    for folder in ("formats", "mates"):
        shutil.rmtree(OUT / folder, ignore_errors=True)
        (OUT / folder).mkdir(parents=True)
    records = teacher()
    psv_pair(records)
    mates()
    (OUT / "openings.sfen").write_text("\n".join(random_openings(OPENINGS, seed=OPENINGS_SEED)) + "\n")
    games, results = selfplay()
    game_records(games[0], results[0])
    for path in sorted(OUT.rglob("*")):
        if path.is_file():
            print(f"{path.stat().st_size:>9,}  {path.relative_to(OUT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
