"""Profile numba's compiled code with Linux perf: the compiled functions get names in perf's report.

perf names JIT code only from a map file, /tmp/perf-PID.map ("START SIZE NAME" a line), which numba does not write.
This writes one for the functions linked into a dispatcher's compiled code (each function's address from its library;
its size up to the next one's), then runs the mate searches on middlegame positions long enough to sample:

    perf record -F 4000 -o perf.data python scripts/numba_perf_map.py [--ply 5] [--repeats 60]
    perf report -i perf.data --stdio --sort sym | head -40

Functions LLVM inlined into their callers count as the callers. Use ``write_perf_map`` on any other dispatcher after
its first call (the code exists only once compiled).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def write_perf_map(*dispatchers) -> int:
    """Write /tmp/perf-PID.map for every function compiled into ``dispatchers``; returns how many were named."""
    rows = []
    for dispatcher in dispatchers:
        for cres in dispatcher.overloads.values():
            library = cres.library
            for fn in library._final_module.functions:  # (numba's own attribute: the linked module)
                if fn.is_declaration:
                    continue
                address = library.get_pointer_to_function(fn.name)
                if address:
                    rows.append((address, fn.name))
    rows.sort()
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as out:
        for i, (address, name) in enumerate(rows):
            size = rows[i + 1][0] - address if i + 1 < len(rows) else 4096
            out.write(f"{address:x} {size:x} {name}\n")
    return len(rows)


def main() -> None:
    import test_playout_mate as positions  # (the tests' position sets; MESSIAH_DATA for the teacher positions)

    from messiah.playout import mate

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ply", type=int, default=5, help="mate search depth: 1 or an odd number (default 5)")
    parser.add_argument("--repeats", type=int, default=60, help="passes over the positions (default 60)")
    parser.add_argument("--positions", type=int, default=600, help="middlegame positions (default 600)")
    args = parser.parse_args()

    states, histories, rows = positions.bench_arrays(positions.middlegame_positions(args.positions))
    run = positions.search_all
    work = mate.MateWork.empty(max(args.ply, 3))
    run(states[:2], histories[:2], rows[:2], args.ply, work)  # compiled before the map is written
    print(f"{write_perf_map(run)} functions named in /tmp/perf-{os.getpid()}.map")
    start = time.perf_counter()
    for _ in range(args.repeats):
        run(states, histories, rows, args.ply, work)
    seconds = time.perf_counter() - start
    print(f"{len(states)} positions x {args.repeats}: {seconds * 1e6 / (len(states) * args.repeats):.2f} us a search")


if __name__ == "__main__":
    main()
