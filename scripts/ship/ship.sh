#!/bin/bash
# A shipping match as issue 32 defines it (docs/rl-results.md has every one played): CANDIDATE against REFERENCE,
# both int8 models on the same frozen install, byoyomi 1000, Threads 1 each, colours swapped, one game at a time a
# core. Half the games on random 8-ply openings from the start position (random_openings(400, SEED), core 0), half
# on the shared set (match seed SEED + 1, core 1), each half its own match folder. The stop rule is fixed before
# the first game: GAMES_RANDOM and GAMES_SHARED games, or earlier when the SPRT over every part in this folder
# accepts either hypothesis (checked every CHECK seconds; no decision before 10 pairs). The SPRT's bounds are SPRT
# (environment; default 0,100, a new model's +100).
#
# A change of code is matched the same way, each side from its own frozen install: REFERENCE_F (environment) is
# the reference's bin folder (default F), and a model given as - is the install's own shipped one.
#
# A match cut short (a session's end) goes on as a new part: the same folder, new seeds, PART 2, 3, ...; the
# report counts every random-* and records-* folder here as one match, and every kept-*.json: the summary of a
# part whose records went with their machine (a summary.json copied to kept-PART.json; F from 95bcd22 on). At
# every check the match so far is written to summary.json, so a part cut short leaves its summary. Play it from a
# frozen install (F, the bin folder of a venv with messiah installed, not a tree being edited) with nothing else
# running on the two cores.
#
#   export MESSIAH_DATA=/path/to/shared/data
#   bash scripts/ship/ship.sh F CANDIDATE-int8.onnx REFERENCE-int8.onnx SEED PART GAMES_RANDOM GAMES_SHARED
#   SPRT=0,20 REFERENCE_F=BEFORE/bin bash scripts/ship/ship.sh AFTER/bin - - SEED PART GAMES_RANDOM GAMES_SHARED
#   F/messiah match-report --sprt=0,100 random-*/ records-*/ kept-*.json     (the report; kept-* if any)
#   F/python scripts/ship/summary.py --sprt=0,100 --match ... --status ... --machine ... --engine ...   (to commit)
#
# BYOYOMI and CHECK (environment) exist for a smoke test of this script; a shipping match keeps 1000 and 600.
set -euo pipefail
if [ $# -ne 7 ]; then
  sed -n '2,23p' "$0" >&2
  exit 2
fi
F=$1 CANDIDATE=$2 REFERENCE=$3 SEED=$4 PART=$5 GAMES_RANDOM=$6 GAMES_SHARED=$7
BYOYOMI=${BYOYOMI:-1000} CHECK=${CHECK:-600} SPRT=${SPRT:-0,100} REFERENCE_F=${REFERENCE_F:-$F}
: "${MESSIAH_DATA:?set MESSIAH_DATA to the shared data folder (its openings/records2016_10818.sfen is the shared set)}"
SHARED=$MESSIAH_DATA/openings/records2016_10818.sfen
for f in "$F/messiah" "$F/messiah-usi" "$F/python" "$REFERENCE_F/messiah-usi" "$SHARED"; do
  [ -e "$f" ] || { echo "ship.sh: $f: not found" >&2; exit 2; }
done
for f in "$CANDIDATE" "$REFERENCE"; do
  [ "$f" = - ] || [ -e "$f" ] || { echo "ship.sh: $f: not found" >&2; exit 2; }
done
for d in "random-$PART" "records-$PART"; do
  [ ! -e "$d" ] || { echo "ship.sh: $d exists: give each part its own PART number and seeds" >&2; exit 2; }
done

"$F/python" -c 'import sys; from messiah.arena.match import random_openings
print("\n".join(random_openings(400, int(sys.argv[1]))))' "$SEED" > "openings-random-$SEED.sfen"

both=(--engine "$F/messiah-usi" --opponent "$REFERENCE_F/messiah-usi" --option Threads=1 --opponent-option Threads=1
      --byoyomi "$BYOYOMI" --jobs 1)
[ "$CANDIDATE" = - ] || both+=(--option "ModelPath=$CANDIDATE")  # (-: the install's own model)
[ "$REFERENCE" = - ] || both+=(--opponent-option "ModelPath=$REFERENCE")
# each half in its own session, so that the stop rule can end it with its engines (kill -- -PGID)
setsid taskset -c 0 "$F/messiah" match "${both[@]}" --games "$GAMES_RANDOM" --openings "openings-random-$SEED.sfen" \
  --seed "$SEED" --out "random-$PART" > "random-$PART.log" 2>&1 &
random=$!
setsid taskset -c 1 "$F/messiah" match "${both[@]}" --games "$GAMES_SHARED" --openings "$SHARED" \
  --seed "$((SEED + 1))" --out "records-$PART" > "records-$PART.log" 2>&1 &
shared=$!
echo "ship.sh: part $PART playing (random-$PART pid $random, records-$PART pid $shared); stop rule: $GAMES_RANDOM" \
     "+ $GAMES_SHARED games or the SPRT ($SPRT)"

shopt -s nullglob
parts() { echo random-*/ records-*/ kept-*.json; }
decision() {  # summary.json of every part here, and its SPRT's decision: continue, H0 accepted or H1 accepted
  # (--sprt=, not --sprt: bounds that start with a minus would read as a flag)
  # shellcheck disable=SC2046
  "$F/messiah" match-report --json --sprt="$SPRT" $(parts) > summary.json.new 2>/dev/null &&
    mv summary.json.new summary.json &&
    "$F/python" -c 'import json; print(json.load(open("summary.json"))["sprt"]["decision"])' 2>/dev/null ||
    echo continue
}

while kill -0 "$random" 2>/dev/null || kill -0 "$shared" 2>/dev/null; do
  for _ in $(seq "$CHECK"); do
    kill -0 "$random" 2>/dev/null || kill -0 "$shared" 2>/dev/null || break
    sleep 1
  done
  d=$(decision)
  echo "ship.sh: $(date -u +%H:%M) SPRT: $d"
  if [ "$d" != continue ]; then
    kill -- -"$random" -"$shared" 2>/dev/null || true
    break
  fi
done
wait || true
decision > /dev/null
# shellcheck disable=SC2046
"$F/messiah" match-report --sprt="$SPRT" $(parts)
