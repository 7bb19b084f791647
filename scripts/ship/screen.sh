#!/bin/bash
# A screen (docs/rl-results.md): CANDIDATE against REFERENCE at a fixed node count a move (800 unless NODES),
# GAMES games (100 unless GAMES) on random_openings(400, SEED), colours swapped, match seed SEED, records and
# match.json in OUT. Cheap beside a run: a node count makes every move the same whatever the CPU share, so the
# screen may use only what a run leaves idle (raise the run's group: echo -10 > /proc/RUN_PID/autogroup). A
# screen picks which generation plays a shipping match (ship.sh); it ships nothing, at no clock. Use a new SEED
# for each question, and the same SEED for generations of one run that are compared with each other.
#
# The rule for picking a shipping candidate: three sets, SEED=S1,S2,S3, all fixed before the first game; a pick
# goes to its shipping match only if it scores over half on each set and the three together's interval lies
# above 0. Sets disagree more than one set's interval says: at fixed nodes both engines are deterministic, so
# 100 games are 50 openings scored twice (lm4 g28 went +24, +63 and -96 on three sets, docs/rl-results.md).
# With a list, each set plays into OUT/random-SEED, and the sets are reported together at the end.
#
#   export MESSIAH_DATA=/path/to/shared/data     (messiah quantize calibrates on its data)
#   bash scripts/ship/screen.sh F CANDIDATE.onnx REFERENCE-int8.onnx SEED[,SEED...] OUT
#   F/messiah match-report --json OUT > summary.json            (one set; OUT/random-*/ for a list)
#
# CANDIDATE may be a run's float model (models/gNNNN.onnx): it is quantized next to OUT first, as the engine
# plays int8 on a CPU. JOBS (1 unless set) games at a time. OPENINGS=FILE plays FILE's lines (drawn by SEED)
# instead of random openings: a shipping match's other half is the shared set, openings from real games.
set -euo pipefail
if [ $# -ne 5 ]; then
  sed -n '2,21p' "$0" >&2
  exit 2
fi
F=$1 CANDIDATE=$2 REFERENCE=$3 SEED=$4 OUT=$5
NODES=${NODES:-800} GAMES=${GAMES:-100} JOBS=${JOBS:-1}
for f in "$F/messiah" "$F/messiah-usi" "$F/python" "$CANDIDATE" "$REFERENCE"; do
  [ -e "$f" ] || { echo "screen.sh: $f: not found" >&2; exit 2; }
done
[ ! -e "$OUT" ] || { echo "screen.sh: $OUT exists: give each screen its own folder" >&2; exit 2; }
mkdir -p "$(dirname "$OUT")"

case $CANDIDATE in
  *-int8.onnx) ;;
  *) int8=$(dirname "$OUT")/$(basename "$OUT")-$(basename "$CANDIDATE" .onnx)-int8.onnx
     "$F/messiah" quantize "$CANDIDATE" "$int8"
     CANDIDATE=$int8 ;;
esac
IFS=, read -ra SEEDS <<< "$SEED"
if [ ${#SEEDS[@]} -gt 1 ]; then
  for s in "${SEEDS[@]}"; do
    bash "$0" "$F" "$CANDIDATE" "$REFERENCE" "$s" "$OUT/random-$s"  # its match reports the set
  done
  echo "the ${#SEEDS[@]} sets together:"
  exec "$F/messiah" match-report "$OUT"/random-*/
fi
if [ -n "${OPENINGS:-}" ]; then
  openings=$OPENINGS
else
  openings=$(dirname "$OUT")/openings-random-$SEED.sfen
  "$F/python" -c 'import sys; from messiah.arena.match import random_openings
print("\n".join(random_openings(400, int(sys.argv[1]))))' "$SEED" > "$openings"
fi

"$F/messiah" match --engine "$F/messiah-usi" --opponent "$F/messiah-usi" \
  --option "ModelPath=$(realpath "$CANDIDATE")" --option "NodesLimit=$NODES" --option Threads=1 \
  --opponent-option "ModelPath=$(realpath "$REFERENCE")" --opponent-option "NodesLimit=$NODES" \
  --opponent-option Threads=1 --byoyomi 60000 --games "$GAMES" --jobs "$JOBS" --openings "$openings" \
  --seed "$SEED" --out "$OUT"
