r"""The committed summary of a ladder that ladder.sh played in a folder (docs/results/ladder-*.json): each rung on each
opening set (the rung folders of random-* and records-*) and on all sets together, as ``messiah match-report`` counts
their records (W-L-D, Elo and interval, as black and as white, mean length, endings, forfeits), with each set's
openings and seeds and the text fields a reader needs to trust them. Run it with the frozen install's Python:

    F/python scripts/ship/ladder_summary.py --folder OUT --ladder "..." --machine "..." --engine "..." \
        > docs/results/NAME.json

``--sets A B`` names other opening sets than ladder.sh's two: the rung folders of A-*, then of B-*, each a set,
for a ladder played by hand on sets of its own (a larger sample of one rung on new openings, one set a core).
"""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path

from messiah.arena.ladder import YANEURAOU, default_rungs
from messiah.arena.match import MatchReportConfig, match_report
from messiah.files import json_text

SETS = ("random", "records")
KEEP = ("games", "wins", "losses", "draws", "score", "elo", "elo_low", "elo_high", "black", "white", "mean_plies",
        "endings", "forfeits")


def rung_name(folder: Path) -> str:
    """The ladder's name of the opponent a rung folder played (its match.json), e.g. 'fairy-stockfish Skill 15'."""
    opponent = json.loads((folder / "match.json").read_text())["opponent"]
    options = opponent["options"]
    if "EvalDir" in options and "NodesLimit" in options:  # YaneuraOu's, wherever its binary was
        return f"{YANEURAOU} {options['NodesLimit']}"
    return next((r.name for r in default_rungs() if r.options == options), opponent["name"])


def count(folders: list[Path]) -> dict:
    """One rung's games in these folders, as match-report counts them, and each folder's openings and seed."""
    summary = match_report(MatchReportConfig(folders=[str(f) for f in folders]))[1]
    return {**{k: summary[k] for k in KEEP},
            "parts": [{"folder": p["folder"], "games": p["games"], "seed": p["match"]["seed"],
                       "openings": p["match"]["openings"], "command": p["match"]["command"]}
                      for p in summary["parts"]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for field in ("ladder", "machine", "engine"):
        parser.add_argument(f"--{field}", required=True)
    parser.add_argument("--folder", default=".", help="the ladder's folder (ladder.sh's OUT)")
    parser.add_argument("--sets", nargs="+", default=list(SETS),
                        help="the opening sets, each the rung folders of FOLDER/SET-*/rung* (default: %(default)s)")
    args = parser.parse_args()
    folder, sets = Path(args.folder), args.sets
    summary = {
        "ladder": args.ladder,
        "date": datetime.date.today().isoformat(),
        "machine": args.machine,
        "engine": args.engine,
        "command": "bash scripts/ship/ladder.sh F OUT [NAME=VALUE ...]; F/python scripts/ship/ladder_summary.py "
                   "(each rung's own command is in its parts)",
    }
    if clash := set(sets) & {*summary, "both"}:
        parser.error(f"a set may not be named {', '.join(sorted(clash))}: the summary has a field of that name")
    rungs: dict[str, dict[str, list[Path]]] = {s: {} for s in sets}  # set -> rung name -> its folders
    for s in sets:
        for rung in sorted(folder.glob(f"{s}-*/rung*")):
            if (rung / "match.json").exists():
                rungs[s].setdefault(rung_name(rung), []).append(rung)
        if not rungs[s]:
            parser.error(f"no rung folders in {folder}/{s}-*/ (a rung folder holds the match.json of its games)")
    names = sorted({name for s in sets for name in rungs[s]})
    summary.update({s: {name: count(rungs[s][name]) for name in names if name in rungs[s]} for s in sets})
    summary["both"] = {name: count([f for s in sets for f in rungs[s].get(name, [])]) for name in names}
    print(json_text(summary, indent=1))  # strict JSON: the Elo of a rung won or lost in every game is null


if __name__ == "__main__":
    main()
