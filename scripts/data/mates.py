"""The shared data's mate problems (docs/data.md, "The mate problems") from tanuki-tsume-shogi's puzzle files: one
problem a line, ``sfen<TAB>mate length<TAB>solution in USI``, the attacker black and to move, the defender holding
every piece not on the board. Each solution is replayed with cshogi and must end in checkmate.

    git clone https://github.com/tokuhirom/tanuki-tsume-shogi
    for n in 1 3 5; do python scripts/data/mates.py tanuki-tsume-shogi/puzzles/$n.json > mate$n.tsv; done

From its commit 0948343 this writes mate1.tsv, mate3.tsv and mate5.tsv byte for byte as the shared data holds them
(228, 543 and 296 problems).
"""

import json
import sys

import cshogi

HAND = "RBGSNLP"  # the order an sfen writes a hand in
RANKS = "abcdefghi"


def sfen(position: dict) -> str:
    """The puzzle's position as an sfen: ``x`` is the file, ``y`` the rank, the attacker black."""
    rows = [[""] * 9 for _ in range(9)]
    for piece in position["pieces"]:
        kind = piece["type"]
        letter = kind[-1] if piece["owner"] == "attacker" else kind[-1].lower()
        rows[piece["y"] - 1][9 - piece["x"]] = kind[:-1] + letter
    board = []
    for row in rows:
        text, empty = "", 0
        for cell in row:
            if cell:
                text, empty = text + (str(empty) if empty else "") + cell, 0
            else:
                empty += 1
        board.append(text + (str(empty) if empty else ""))
    hands = position["hands"]
    hand = "".join((str(count) if count > 1 else "") + (kind if side == "attacker" else kind.lower())
                   for side in ("attacker", "defender") for kind in HAND if (count := hands[side][kind]))
    return f"{'/'.join(board)} b {hand or '-'} 1"


def usi(move: dict) -> str:
    """A solution move in USI: a drop names its piece, a board move its square of departure."""
    to = f"{move['to'][0]}{RANKS[move['to'][1] - 1]}"
    if move.get("drop"):
        return f"{move['drop']}*{to}"
    return f"{move['from'][0]}{RANKS[move['from'][1] - 1]}{to}" + ("+" if move["promote"] else "")


def main(path: str) -> None:
    with open(path, encoding="utf-8") as f:
        puzzles = json.load(f)
    for puzzle in puzzles:
        position, moves = sfen(puzzle["initial"]), [usi(m) for m in puzzle["solution"]]
        board = cshogi.Board(position)
        for move in moves:
            board.push_usi(move)
        if not board.is_game_over():
            raise SystemExit(f"{path}: puzzle {puzzle['id']}: its solution does not end in checkmate")
        print(f"{position}\t{puzzle['mateLength']}\t{' '.join(moves)}")


if __name__ == "__main__":
    main(*sys.argv[1:])
