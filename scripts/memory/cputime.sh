#!/bin/bash
# CPU seconds of the same fixed-node searches (messiah bench choices: 200 positions, puct and ucb1 at 800 nodes) by two
# installs, alternating, two runs each, on one core; docs/benchmarks.md, "Memory".
#   BEFORE=/path/to/old/venv/bin AFTER=/path/to/new/venv/bin bash scripts/memory/cputime.sh   # needs $MESSIAH_DATA
for i in 1 2; do
  for who in before after; do
    bin=$BEFORE; [ $who = after ] && bin=$AFTER
    /usr/bin/time -f "$who %U user %S sys %e wall" taskset -c ${CORE:-0} "$bin/messiah" bench choices --nodes 800 \
      --json > /dev/null
  done
done
