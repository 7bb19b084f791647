"""The engine's resident memory as its tables fill (docs/benchmarks.md, "Memory"): PUCT at USI_Hash 256 searches the
bench's positions (teacher_s6's middlegames, as `messiah bench choices` takes them) one after another, 20,000 visits
each and no new game between them, so the evaluation cache keeps every answer it has room for. Prints per search the
process's RSS, the tree's bytes and the cache's entries and bytes, then the peak.

    MESSIAH_DATA=../shared/data taskset -c 0 python scripts/memory/rss.py 40
"""

import sys

from messiah.engine.engine import Engine
from messiah.search import Limits
from messiah.tools.bench import choice_positions


def rss_mb() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) // 1024 for line in f if line.startswith("VmRSS"))


with Engine.from_options({"USI_Hash": "256", "Search": "puct", "Threads": "1"}) as engine:
    searcher, peak = engine.searcher, 0
    print("start rss_mb", rss_mb(), flush=True)
    for i, board in enumerate(choice_positions(int(sys.argv[1]) if len(sys.argv) > 1 else 40)):
        searcher.search(board, Limits(nodes=20_000))
        peak = max(peak, rss_mb())
        cache = searcher.cache
        print(i + 1, "rss_mb", rss_mb(), "tree_mb", searcher.tree.bytes() // 2**20, "cache", len(cache.entries),
              getattr(cache, "bytes", 0) // 2**20, flush=True)
    print("peak rss_mb", peak)
