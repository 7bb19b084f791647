"""Where messiah walked into a mate: in each CSA record of a match folder, messiah's first move that left the opponent a
forced mate cshogi's df-pn finds in NODES nodes (search.base.mate_after: the question of the root's guard,
MateGuardNodes; docs/search.md), and how many of the legal moves there left none. One line a game that has such a
move: the record's number, the ply, the move played, the moves that left no mate, of the legal moves, and the
position before the move.

    python scripts/walked_into_mate.py FOLDER [--nodes 20000] [--engine messiah]

A record's name says who had black: ``NNNN_BLACK+WHITE+...csa``, as `messiah match` and `ladder` write it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cshogi
import cshogi.CSA

from messiah.search.base import mate_after


def first_walk(record: Path, engine: str, nodes: int) -> tuple[int, int, int, int, str] | None:
    """(ply, move, moves leaving no mate, legal moves, sfen before) of the engine's first move in ``record`` that left
    a mate, or None."""
    engine_black = record.name.split("_", 1)[1].startswith(engine)
    kif = cshogi.CSA.Parser.parse_file(str(record))[0]
    board = cshogi.Board(kif.sfen)
    for ply, move in enumerate(kif.moves, 1):
        if (board.turn == cshogi.BLACK) == engine_black and mate_after(board, move, nodes) is not None:
            legal = list(board.legal_moves)
            safe = sum(mate_after(board, m, nodes) is None for m in legal)
            return ply, move, safe, len(legal), board.sfen()
        board.push(move)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--engine", default="messiah", help="the engine's name in the records' file names")
    args = parser.parse_args()
    records = sorted(args.folder.glob("*.csa"))
    walks = avoidable = 0
    for record in records:
        walk = first_walk(record, args.engine, args.nodes)
        if walk is None:
            continue
        ply, move, safe, legal, sfen = walk
        walks += 1
        avoidable += safe > 0
        print(record.name.split("_")[0], ply, cshogi.move_to_usi(move), safe, legal, sfen)
    print(f"# {len(records)} records, {walks} with a move that left a mate, {avoidable} of them with a move that left"
          " none")


if __name__ == "__main__":
    main()
