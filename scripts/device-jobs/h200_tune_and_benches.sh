#!/usr/bin/env bash
# Device job (issues 12 and 13) on the H200 machine, run as
#   scripts/device-python -- bash scripts/device-jobs/h200_tune_and_benches.sh
# with carry [".deps", ".whl"]. One archive comes back ($OUT/h200_tune.tar.xz).
# The H200 is where a read-only kernel reaches 95 % of the theoretical peak
# (scripts/device-jobs/peak_probe.cu: 95.4 % with plain loads; the H100 stops at 93.9 %).
# 1. Tune the runtime benchmark's cases on this H200 (float32 sum/min/max, int32 sum, float64
#    sum, every other power of two 2^10..2^30), starting from the H100's database so that the
#    H100's bests are measured first (warm start), then a deeper float32 sum at 2^28 and 2^30.
# 2. `reducetune bench` float32 sum (issue 12: × CUB at every n, % of peak at 2^30).
# 3. The runtime benchmark (issue 13) against that database.
set -uo pipefail
OUT=${OUT:-/tmp/out}
W=/tmp/h200tune
mkdir -p "$W/runtime"
log() { echo "== $(date -u +%T) $*" >> "$W/job.log"; }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.memory --format=csv > "$W/gpu.txt"
DB=/tmp/h200_tune.db
python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
  docs/results/h100_2026-11-23_issue12_rerun/h100_tune.db.xz "$DB"
log "tune float32"
timeout 130 reducetune tune --db "$DB" --dtype float32 --op sum,min,max --sizes 2^10..2^30:2 \
  --time-limit 100s --json --quiet > "$W/tune_float32.json" 2> "$W/tune_float32.log"; log "rc=$?"
log "tune int32, float64 sum"
timeout 90 reducetune tune --db "$DB" --dtype int32,float64 --op sum --sizes 2^10..2^30:2 \
  --time-limit 60s --json --quiet > "$W/tune_int_f64.json" 2> "$W/tune_int_f64.log"; log "rc=$?"
log "deeper float32 sum 2^28 2^30"
timeout 70 reducetune tune --db "$DB" --dtype float32 --op sum --sizes 2^28 2^30 --max-evals 200 \
  --time-limit 45s --json --quiet > "$W/deep_2p30.json" 2> "$W/deep_2p30.log"; log "rc=$?"
log "bench"
timeout 100 reducetune bench --db "$DB" --dtype float32 --op sum --sizes 2^10..2^30:2 --json \
  > "$W/bench_float32_sum.json" 2> "$W/bench.log"; log "rc=$?"
log "runtime"
timeout 170 python3 -m reducetune.benchmarks.runtime --db "$DB" --samples 100 \
  --out "$W/runtime/h200_2026-11-23_runtime" > "$W/runtime.log" 2>&1; log "rc=$?"
python3 -c "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('VACUUM')" "$DB"
xz -9 -c "$DB" > "$W/h200_tune.db.xz"; log "done"
tar -C "$W" -cJf "$OUT/h200_tune.tar.xz" . ; cat "$W/job.log"
