"""How soon a search reports a mate: on mate problems, the time to the first result that states one (USI's
``score mate``), from the attacker's side (a win) and from the defender's after the solution's first move (a loss),
at a fixed time a move. Run it with a frozen install's Python to compare two versions of the search:

    F/python scripts/mate_times.py tests/data/mates/*.tsv $MESSIAH_DATA/mates/*.tsv --search puct --seconds 1

Prints one JSON object: per file and side, the problems, how many reported a mate within the time, and the median
and 90th percentile of the time to the first one (seconds; a problem without one counts as the full time).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import cshogi
import numpy as np

from messiah.evaluator import Evaluator
from messiah.search import Limits, make_searcher


def first_mate(searcher, board: cshogi.Board, seconds: float) -> float | None:
    """Seconds to the first progress report (or result) that states a mate, or None."""
    start = time.perf_counter()
    seen: list[float] = []

    def info(result) -> None:
        if result.mate is not None and not seen:
            seen.append(time.perf_counter() - start)

    searcher.new_game()
    result = searcher.search(board, Limits(movetime=seconds), info)
    if result.mate is not None and not seen:
        seen.append(time.perf_counter() - start)
    return seen[0] if seen else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="mate problems: sfen<TAB>length<TAB>solution")
    parser.add_argument("--search", default="puct")
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--every", type=int, default=1, help="every n-th problem of each file")
    args = parser.parse_args()
    searcher = make_searcher(args.search, Evaluator(threads=1, device="cpu"))
    searcher.info_every = 0.005  # progress reports this often, so that the first mate is timed to a few ms
    out = {}
    for path in args.files:
        rows = [line.split("\t") for line in path.read_text().splitlines() if line.strip()][:: args.every]
        for side in ("attacker", "defender"):
            times = []
            for sfen, _, solution in rows:
                board = cshogi.Board(sfen)
                if side == "defender":
                    board.push_usi(solution.split()[0])
                    if board.is_game_over():
                        continue
                found = first_mate(searcher, board, args.seconds)
                times.append(args.seconds if found is None else found)
            if not times:  # a mate in one leaves the defender no move to search
                continue
            t = np.array(times)
            out[f"{path} {side}"] = {
                "problems": len(t), "mate_reported": int((t < args.seconds).sum()),
                "median_s": round(float(np.median(t)), 4), "p90_s": round(float(np.percentile(t, 90)), 4)}
    print(json.dumps({"search": args.search, "seconds": args.seconds, "every": args.every, "files": out}, indent=1))


if __name__ == "__main__":
    main()
