"""How many tree nodes USI_Hash holds (docs/benchmarks.md, "Memory"): PUCT, the engine's defaults, from an opening
and from an endgame with pieces in hand, searched in steps of 5,000 visits on the same root (the tree is kept) until
the tree is full or 150,000 visits. Prints per step the visits, the tree's nodes, edges, hashfull and the seconds so
far, then a JSON summary.

    taskset -c 0 python scripts/memory/capacity.py 256
"""

import json
import sys
import time

import cshogi

from messiah.engine.engine import Engine
from messiah.search import Limits

SFENS = ["ln1g3nl/1r1s1kg2/p2ppsbpp/2p2pp2/1p7/2PP5/PPBSPPPPP/2G1K2R1/LN3GSNL b - 19",
         "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 80"]
STEP, MOST = 5_000, 150_000

hash_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 256
out = []
for sfen in SFENS:
    with Engine.from_options({"USI_Hash": str(hash_mb), "Search": "puct", "Threads": "1"}) as engine:
        searcher, board = engine.searcher, cshogi.Board(sfen)
        start, visits, full = time.perf_counter(), 0, None
        while visits < MOST and full is None:
            searcher.search(board, Limits(nodes=STEP))
            visits += STEP
            seconds = round(time.perf_counter() - start, 1)
            tree = searcher.tree
            print(sfen[:20], visits, tree.nodes, int(tree.used[1]), searcher.hashfull(), seconds, flush=True)
            if not tree.room(searcher.batch_size, searcher.batch_size * 600):
                full = {"visits": visits, "nodes": tree.nodes, "edges": int(tree.used[1]), "seconds": seconds}
        out.append({"sfen": sfen, "usi_hash_mb": hash_mb, "tree_budget_bytes": searcher.tree.max_bytes, "full": full})
print(json.dumps(out))
