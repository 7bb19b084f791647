r"""The committed summary of the Strength table that strength.sh played in a folder (docs/results/strength-*.json):
for each level its nodes a move and temperature (messiah.engine.strength), each rung as ``messiah match-report``
counts its records (W-L-D, Elo and its 95% interval, as black and as white, endings, forfeits), and where the level
stands on the ladder (messiah.arena.ladder.fifty_percent). Run it with the frozen install's Python:

    F/python scripts/ship/strength_summary.py --folder OUT [OUT ...] --machine "..." --engine "..." \
        > docs/results/NAME.json
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_summary import count, rung_name  # noqa: E402  (the same counting as a ladder's summary)

from messiah.arena.ladder import fifty_percent, rung_order  # noqa: E402
from messiah.engine.strength import Strength  # noqa: E402
from messiah.files import json_text  # noqa: E402


def level_of(folder: Path) -> int:
    return int(folder.name.split("-")[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for field in ("machine", "engine"):
        parser.add_argument(f"--{field}", required=True)
    parser.add_argument("--folder", nargs="+", default=["."],
                        help="the table's folders (strength.sh's OUT, one a part)")
    args = parser.parse_args()
    folders = [Path(f) for f in args.folder]
    order = rung_order()
    # A level may be played in several parts (one rung a session, say): its rungs are gathered from every folder,
    # and a rung played in more than one part is counted once over all of its games.
    by_level: dict[int, dict[str, list[Path]]] = {}  # level -> rung name -> its folders
    for level_folder in (f for folder in folders for f in folder.glob("level-*[0-9]")):
        for r in sorted(level_folder.glob("rung*")):
            if (r / "match.json").exists():
                by_level.setdefault(level_of(level_folder), {}).setdefault(rung_name(r), []).append(r)
    levels = []
    for number, rungs in sorted(by_level.items()):
        rows = sorted(({"rung": name, **count(parts)} for name, parts in rungs.items()),
                      key=lambda row: order[row["rung"]])
        level = Strength(number)
        levels.append({"level": level.level, "nodes": level.nodes, "temperature": level.temperature,
                       "stands": fifty_percent(rows), "rungs": rows})
    if not levels:
        parser.error(f"no level folders with games in {' '.join(map(str, folders))} (level-N/rungNN/match.json)")
    print(json_text({
        "what": "messiah's Strength levels against fairy-stockfish Skill Levels",
        "date": datetime.date.today().isoformat(),
        "machine": args.machine,
        "engine": args.engine,
        "clock": "byoyomi 1000 ms both, one thread each, 20 games a rung (colour-swapped pairs), one game at a time a "
                 "core",
        "openings": "random_openings(400, 7101), a seed per level (7100 + 10 * level)",
        "command": "bash scripts/ship/strength.sh F OUT; F/python scripts/ship/strength_summary.py (each rung's own "
                   "command is in its parts)",
        "plan": [line for f in folders if (f / "plan.txt").exists()
                 for line in (f / "plan.txt").read_text().splitlines()],
        "levels": levels,
    }, indent=1))  # strict JSON: the Elo of a rung won or lost in every game is null


if __name__ == "__main__":
    main()
