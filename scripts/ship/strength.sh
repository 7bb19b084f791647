#!/bin/bash
# The Strength levels' table (docs/strength.md, "The Strength levels"; issue 71): each level named against the
# fairy-stockfish rungs named with it, 20 games a rung (colour-swapped pairs) at byoyomi 1000, one thread each, on
# random 8-ply openings nothing was tuned or trained on (random_openings(400, 7101)), a seed of its own per level.
# The levels are shared out between the cores (CORES, default "0 1"), one game at a time a core, in the order given;
# a table played in parts (a core a session) is several OUT folders, which the summary reads together. Play it from a
# frozen install (F, the bin folder of a venv with messiah installed) with nothing else running on the two cores;
# then write the summary to commit with strength_summary.py.
#
#   export MESSIAH_DATA=/path/to/shared/data      (not needed by the games: for the engines' defaults)
#   bash scripts/ship/strength.sh F OUT [LEVEL=RUNG,RUNG ...]
#   F/python scripts/ship/strength_summary.py --folder OUT [OUT ...] --machine "..." --engine "..." > docs/results/NAME.json
#
# Without LEVEL=RUNGS the plan below is played: the rungs either side of where m4's levels stood (2026-11-25), a
# rung higher where m7 should stand above them. GAMES (environment) exists for a smoke test; a table keeps 20.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,15p' "$0" >&2
  exit 2
fi
F=$1 OUT=$2
shift 2
GAMES=${GAMES:-20}
PLAN=("$@")
if [ ${#PLAN[@]} -eq 0 ]; then
  PLAN=("1=Skill -20,Skill -10" "20=Skill 10,Skill 15" "3=Skill -20,Skill -10" "15=Skill 5,Skill 10"
        "5=Skill -10,Skill 0" "18=Skill 5,Skill 10" "8=Skill -10,Skill 0" "12=Skill 0,Skill 5" "10=Skill 0,Skill 5")
fi
for f in "$F/messiah" "$F/python"; do
  [ -e "$f" ] || { echo "strength.sh: $f: not found" >&2; exit 2; }
done
[ ! -e "$OUT" ] || { echo "strength.sh: $OUT exists: give each table its own folder" >&2; exit 2; }
mkdir -p "$OUT"
cd "$OUT"
"$F/python" -c 'from messiah.arena.match import random_openings
print("\n".join(random_openings(400, 7101)))' > random-openings-7101.sfen
printf '%s\n' "${PLAN[@]}" > plan.txt

# The plan's levels go round the cores of CORES (environment; default "0 1"), one after the other on each core.
read -r -a cores <<< "${CORES:-0 1}"
one_core() {
  local k=$1 i
  for ((i = k; i < ${#PLAN[@]}; i += ${#cores[@]})); do
    local level=${PLAN[$i]%%=*} rungs=${PLAN[$i]#*=}
    taskset -c "${cores[$k]}" "$F/messiah" ladder --rungs "$rungs" --games "$GAMES" --more 0 --byoyomi 1000 \
      --jobs 1 --option Threads=1 --option "Strength=$level" --openings random-openings-7101.sfen \
      --seed $((7100 + 10 * level)) --out "level-$level" > "level-$level.log" 2>&1
  done
}
pids=()
for k in "${!cores[@]}"; do
  one_core "$k" &
  pids+=($!)
done
echo "strength.sh: playing in $OUT on cores ${cores[*]} (pids ${pids[*]})"
wait "${pids[@]}"
echo "strength.sh: done; summary: $F/python scripts/ship/strength_summary.py --folder $OUT ..."
