"""The committed summary of a shipping match that ship.sh played in a folder (docs/results/ship-*.json): the match by
opening set (random-* folders, records-* folders), both sets with the SPRT (0, 100, or --sprt), and each part, as
``messiah match-report`` counts them, with the text fields a reader needs to trust them (what was matched, the
machine, the status). Run it with the frozen install's Python, in the match's folder:

    F/python scripts/ship/summary.py --match "..." --status "..." --machine "..." --engine "..." \
        > docs/results/NAME.json

A kept-*.json (the summary of a part whose records went with a machine) counts in ``both`` only.
"""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path

from messiah.arena.match import MatchReportConfig, match_report
from messiah.arena.stats import parse_sprt
from messiah.files import json_text

SPRT = (0.0, 100.0)  # a new model's bounds; a change of code names its own (ship.sh's SPRT)


def report(items: list[str], sprt: tuple[float, float] | None = None) -> dict:
    return match_report(MatchReportConfig(folders=items, sprt=sprt))[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for field in ("match", "status", "machine", "engine"):
        parser.add_argument(f"--{field}", required=True)
    parser.add_argument("--folder", default=".", help="the match's folder (ship.sh's working folder)")
    parser.add_argument("--sprt", type=parse_sprt, default=SPRT, help="the SPRT's Elo bounds, as ship.sh's SPRT "
                        "(default: 0,100)")
    args = parser.parse_args()
    folder = Path(args.folder)
    random = sorted(str(p) for p in folder.glob("random-*") if p.is_dir())
    records = sorted(str(p) for p in folder.glob("records-*") if p.is_dir())
    kept = sorted(str(p) for p in folder.glob("kept-*.json"))
    both = report(random + records + kept, args.sprt)
    openings = {Path(part["folder"]).name: {**part["match"]["openings"], "seed": part["match"]["seed"]}
                for part in both["parts"] if "match" in part}  # random-N's file is random_openings(400, seed)
    summary = {
        "match": args.match,
        "date": datetime.date.today().isoformat(),
        "status": args.status,
        "machine": args.machine,
        "engine": args.engine,
        "openings": openings,
        "command": "bash scripts/ship/ship.sh F CANDIDATE REFERENCE SEED PART GAMES_RANDOM GAMES_SHARED per part "
                   "(each part's own command is in both.parts); F/python scripts/ship/summary.py",
        "by_openings": {"random": report(random), "records": report(records)} if random and records else {},
        "both": both,
        "by_part": {Path(item).name: report([item]) for item in random + records},
    }
    print(json_text(summary, indent=1))  # strict JSON: the Elo of a part won or lost in every game is null


if __name__ == "__main__":
    main()
