#!/bin/bash
# A model's ladder as issue 32 reads it (docs/strength.md has every one played): the engine against fairy-stockfish
# Skill 15 (20 games a set) and Skill 10 and gpsshogi (10 a set) at byoyomi 1000, one thread each, colours swapped,
# on m5's ladder openings and seeds (m5, m6 and m7 played these), so that each new model's rows compare with the
# last ones' on the same openings and colours: random_openings(400, 7701) on core 0 and the shared set on core 1,
# one game at a time a core, then each set's ladder and both merged. Play it from a frozen install (F, the bin
# folder of a venv with messiah installed, not a tree being edited) with nothing else running on the two cores:
# about 70 minutes. OPTIONS are messiah's USI options (ModelPath=FILE for a model that is not the default).
#
#   export MESSIAH_DATA=/path/to/shared/data
#   bash scripts/ship/ladder.sh F OUT [NAME=VALUE ...]
#   F/python scripts/ship/ladder_summary.py --folder OUT --ladder ... --machine ... --engine ...
#     (the summary to commit)
#
# GAMES_S15, GAMES_OTHER and BYOYOMI (environment) exist for a smoke test of this script; a ladder keeps 20, 10, 1000.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,14p' "$0" >&2
  exit 2
fi
F=$1 OUT=$2
shift 2
GAMES_S15=${GAMES_S15:-20} GAMES_OTHER=${GAMES_OTHER:-10} BYOYOMI=${BYOYOMI:-1000}
: "${MESSIAH_DATA:?set MESSIAH_DATA to the shared data folder (its openings/records2016_10818.sfen is the shared set)}"
SHARED=$MESSIAH_DATA/openings/records2016_10818.sfen
for f in "$F/messiah" "$F/messiah-usi" "$F/python" "$SHARED"; do
  [ -e "$f" ] || { echo "ladder.sh: $f: not found" >&2; exit 2; }
done
[ ! -e "$OUT" ] || { echo "ladder.sh: $OUT exists: give each ladder its own folder" >&2; exit 2; }
mkdir -p "$OUT"
cd "$OUT"
"$F/python" -c 'from messiah.arena.match import random_openings
print("\n".join(random_openings(400, 7701)))' > random-openings-7701.sfen

options=(--option Threads=1)
for o in "$@"; do options+=(--option "$o"); done
common=(--more 0 --byoyomi "$BYOYOMI" --jobs 1 "${options[@]}")
# SET OPENINGS CORE SEED_S15 SEED_OTHER: one set's two ladders, one after the other on one core
one_set() {
  taskset -c "$3" "$F/messiah" ladder --rungs 'Skill 15' --games "$GAMES_S15" "${common[@]}" --openings "$2" \
    --seed "$4" --out "$1-s15" > "$1-s15.log" 2>&1
  taskset -c "$3" "$F/messiah" ladder --rungs 'gpsshogi,Skill 10' --games "$GAMES_OTHER" "${common[@]}" \
    --openings "$2" --seed "$5" --out "$1-gps-s10" > "$1-gps-s10.log" 2>&1
  "$F/messiah" ladder --games 0 --merge "$1-s15" --merge "$1-gps-s10" --out "$1" > "$1.log" 2>&1
}
one_set random random-openings-7701.sfen 0 71 81 &
random=$!
one_set records "$SHARED" 1 81 91 &
records=$!
echo "ladder.sh: playing in $OUT (random pid $random, records pid $records)"
rc=0
wait "$random" || rc=$?
wait "$records" || rc=$?
[ "$rc" -eq 0 ] || { echo "ladder.sh: a set's ladder failed (rc $rc): see its logs in $OUT" >&2; exit "$rc"; }
"$F/messiah" ladder --games 0 --merge random --merge records --out both
