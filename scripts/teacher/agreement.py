"""How often a USI engine's move is the move a strong program played (docs/rl-results.md, "Teachers measured"):
every 20th position of the floodgate test set (300 of 5,998), one search each, nothing else running on the core.
Prints the agreement with its 95% interval and the mean seconds a move. Gauges a teacher before its games are made.

    export MESSIAH_DATA=../shared/data
    taskset -c 0 python scripts/teacher/agreement.py /usr/games/fairy-stockfish depth 8 Threads=1
    taskset -c 0 python scripts/teacher/agreement.py /usr/games/gpsusi byoyomi 1000
    taskset -c 0 python scripts/teacher/agreement.py messiah-usi byoyomi 60000 NodesLimit=192
"""

import sys
import time

import cshogi
import numpy as np

from messiah.arena.client import UsiClient
from messiah.arena.stats import wilson
from messiah.paths import shared_file


def main(engine: str, limit: str, amount: str, *options: str) -> None:
    data = np.fromfile(shared_file("floodgate/test.hcpe"), cshogi.HuffmanCodedPosAndEval)[::20]
    client = UsiClient(engine, dict(option.split("=", 1) for option in options))
    board, hits, seconds = cshogi.Board(), 0, 0.0
    for record in data:
        board.set_hcp(record["hcp"])
        start = time.perf_counter()
        if limit == "depth":
            move, _ = client.search("sfen " + board.sfen(), [], int(amount), None)
        else:
            client.position(sfen="sfen " + board.sfen())
            move, _ = client.go(byoyomi=int(amount))
        seconds += time.perf_counter() - start
        hits += move == cshogi.move_to_usi(board.move_from_move16(int(record["bestMove16"])))
    client.close()
    share = hits / len(data)
    low, high = wilson(share, share * (1 - share), len(data))
    print(f"{engine} {limit} {amount} {' '.join(options)}: {hits}/{len(data)} = {share:.1%} "
          f"({low:.1%} .. {high:.1%}), {seconds / len(data):.3f} s a move")


if __name__ == "__main__":
    main(*sys.argv[1:])
