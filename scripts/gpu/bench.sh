#!/bin/bash
# Issue 33's GPU figures in one run on a lent GPU machine (16 cores, no network): the evaluator's forward pass
# by batch on the GPU and on the CPU, the bandit searches at BatchSize 8/32/128 and Threads 1/2/4/8, then the
# fastest GPU setting against the CPU default in a match until DEADLINE_S (MATCH="4 32": only the match, at Threads 4,
# BatchSize 32). Results go to $OUT.
# The machine has no onnxruntime-gpu and no cshogi: .gpu/ carries them (scripts/gpu/README.md says how it is made).
# At most 8 files come back from $OUT: gpu.txt, evaluator.jsonl, search.jsonl, match.json, match.log (+ the caller's log).
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
START=$(date +%s)
DEADLINE_S=${DEADLINE_S:-560}
MOVETIME=${MOVETIME:-60}
left() { echo $(( DEADLINE_S - ($(date +%s) - START) )); }
log() { echo "[$(( $(date +%s) - START ))s] $*"; }

if [ -z "${LOCAL:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/cshogi-*.whl || exit 1
  python3 -c "import tarfile; tarfile.open('.gpu/ort.tar.xz').extractall('/tmp/site')" || exit 1
  export PYTHONPATH=/tmp/site:$PWD
  for p in search models train; do ln -sfn ../$p messiah/$p; done
  NV=$(python3 -c "import nvidia, os; print(os.path.dirname(list(nvidia.__path__)[0]))")/nvidia
  export LD_LIBRARY_PATH=$(find "$NV" -name 'lib*.so*' -printf '%h\n' | sort -u | paste -sd:):/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
  mkdir -p /tmp/bin
  printf '#!/bin/sh\nexec python3 -c "import sys; from messiah.cli import main; sys.argv[0]=\\"messiah\\"; sys.exit(main())" "$@"\n' > /tmp/bin/messiah
  printf '#!/bin/sh\nexec python3 -c "import sys; from messiah.engine.usi import main; sys.exit(main())" "$@"\n' > /tmp/bin/messiah-usi
  chmod +x /tmp/bin/*; export PATH=/tmp/bin:$PATH
fi
USI=$(command -v messiah-usi)
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv | tee "$OUT/gpu.txt"
log "sanity: the engine on CUDA"
python3 - <<'PY' 2>&1 | tee -a "$OUT/gpu.txt" || exit 1
import importlib.metadata, os, sys, onnxruntime as ort, cshogi, numpy
from messiah.engine.engine import Engine
from messiah.search import Limits
print("onnxruntime", ort.__version__, ort.get_available_providers(), "numpy", numpy.__version__, "cshogi", importlib.metadata.version("cshogi"))
e = Engine.from_options({"Device": "cuda", "MateNodes": "0"})
print("model", e.evaluator.describe(), "| note:", e.evaluator.device_note)
r = e.searcher.search(cshogi.Board(), Limits(nodes=400))
print("search: nodes", r.nodes, "evaluations", r.evaluations)
e.close()
if e.evaluator.provider != os.environ.get("WANT", "CUDA"):  # WANT=CPU tries the script on a CPU
    sys.exit("CUDA is not used: stop")
PY
[ "${PIPESTATUS[0]}" = 0 ] || { log "sanity failed"; exit 1; }

if [ -n "${MATCH:-}" ]; then  # MATCH="THREADS BATCH": straight to the match with that CUDA setting
  read BEST_T BEST_B <<< "$MATCH"
else
log "evaluator: forward pass by batch"
E="$OUT/evaluator.jsonl"; : > "$E"
for args in "--device cuda" "--device cpu" "--device cpu --model messiah/data/default.onnx"; do
  messiah bench evaluator --json --positions .gpu/pos200.hcpe $args | python3 -c "import json,sys; print(json.dumps(json.load(sys.stdin)))" >> "$E"
done
log "cuDNN's convolution algorithm search: the first call at each new batch size, and the steady rate"
python3 - <<'PY' 2>&1 | tee -a "$OUT/gpu.txt"
import time, numpy as np, onnxruntime as ort
from messiah.features import SHAPE
x = np.random.default_rng(0).random((128, *SHAPE), dtype=np.float32)
idx = np.zeros((128, 80), np.int64)
for mode in ("EXHAUSTIVE", "HEURISTIC", "DEFAULT"):
    quiet = ort.SessionOptions()
    quiet.log_severity_level = 3  # not a warning a call ("Conv running in Fallback mode")
    s = ort.InferenceSession("messiah/data/default.onnx", quiet, providers=[("CUDAExecutionProvider", {"cudnn_conv_algo_search": mode}), "CPUExecutionProvider"])
    t = time.perf_counter()
    for b in range(1, 129):
        s.run(None, {"features": x[:b], "moves": idx[:b]})
    first = time.perf_counter() - t
    rates = {}
    for b in (8, 32, 128):
        t = time.perf_counter()
        for _ in range(200):
            s.run(None, {"features": x[:b], "moves": idx[:b]})
        rates[b] = round(200 * b / (time.perf_counter() - t))
    print(f"{mode:10} first calls at batch 1..128: {first:.2f} s; then positions/s {rates}")
PY

log "searches"
S="$OUT/search.jsonl"; : > "$S"
for t in 1; do  # the CPU default (int8, BatchSize 8)
  messiah bench search --json --positions .gpu/pos48.hcpe --movetime "$MOVETIME" --device cpu --option Threads=$t \
    | python3 -c "import json,sys; d=json.load(sys.stdin); d.update(device='cpu', threads=$t); print(json.dumps(d))" >> "$S"
  log "cpu threads $t done"
done
for t in 1 2 4 8; do
  messiah bench search --json --positions .gpu/pos48.hcpe --movetime "$MOVETIME" --device cuda --batch-size 8 32 128 \
    --option Threads=$t \
    | python3 -c "import json,sys; d=json.load(sys.stdin); d.update(device='cuda', threads=$t); print(json.dumps(d))" >> "$S"
  log "cuda threads $t done"
done
python3 - "$S" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    for name, f in d["search"].items():
        if isinstance(f, dict):
            bare = [v for k, v in f.items() if k.startswith("vs_forward")]
            print(f"{d['device']:4} T{d['threads']} {name:16} {f['positions_evaluated_per_s']:9.0f} eval/s "
                  f"{f['nodes_per_s']:8.0f} nodes/s  vs bare batch {bare[0]:.2f}")
PY
# the fastest PUCT setting on CUDA at Threads 4 or fewer, so that three games at a time each have their cores
read BEST_T BEST_B < <(python3 - "$S" <<'PY'
import json, sys
best = max(((d["search"][k]["positions_evaluated_per_s"], d["threads"], int(k.split()[-1]))
            for d in map(json.loads, open(sys.argv[1])) if d["device"] == "cuda"
            for k in d["search"] if k.startswith("puct batch") and d["threads"] <= 4))
print(best[1], best[2])
PY
)
fi
JOBS=$(( 16 / (BEST_T + 1) )); [ "$JOBS" -gt 6 ] && JOBS=6
log "match: CUDA puct Threads $BEST_T BatchSize $BEST_B against the CPU default, $JOBS at a time, $(left) s left"
timeout $(( $(left) - 20 )) messiah match --engine "$USI" --option Device=cuda --option Threads=$BEST_T \
  --option BatchSize=$BEST_B --opponent "$USI" --opponent-option Device=cpu --byoyomi 500 --games 200 \
  --jobs $JOBS --openings .gpu/open.sfen --seed 12121 --out /tmp/match > "$OUT/match.log" 2>&1
messiah match-report --json /tmp/match > "$OUT/match.json" 2>&1; messiah match-report /tmp/match 2>&1 | tail -15
log "done"
