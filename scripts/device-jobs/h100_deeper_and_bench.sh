#!/usr/bin/env bash
# Device job (issue 13) on the H100 machine, after scripts/device-python has built the package:
#   scripts/device-jobs/h100_deeper_and_bench.sh WORKDIR
# 1. The database of the README's main command on an H100
#    (docs/results/h100_2026-11-23_issue12_rerun/h100_tune.db.xz) tuned deeper, for TUNE_S
#    seconds in all, at the sizes where the first runtime benchmark's point lost to CUB under
#    the tuner's protocol (docs/results/h100_2026-11-23_runtime/: float32 sum 2^16 2^18,
#    float32 min 2^16 2^20 2^26 2^28, float32 max 2^24 2^26, int32 sum 2^20). Resuming: the
#    studies continue, nothing is measured twice.
# 2. The runtime benchmark against that database (contenders in rotating rounds, the result
#    pool for PyTorch), BENCH_S seconds at most.
# Writes WORKDIR/runtime/* and WORKDIR/h100_tune_deeper.db.xz.
set -uo pipefail
W=${1:?usage: h100_deeper_and_bench.sh WORKDIR}
mkdir -p "$W/runtime"
log() { echo "== $(date -u +%T) $*" >> "$W/job.log"; }
DB=/tmp/h100_tune.db
python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
  docs/results/h100_2026-11-23_issue12_rerun/h100_tune.db.xz "$DB"
t=${TUNE_S:-80}
log "deeper tune ${t}s"
timeout $((t + 30)) reducetune tune --db "$DB" --dtype float32 --op sum,min,max \
  --sizes 2^16 2^18 2^20 2^24 2^26 2^28 --time-limit "$((t * 3 / 4))s" --json --quiet \
  > "$W/deeper_float32.json" 2> "$W/deeper_float32.log"; log "rc=$?"
timeout $((t / 4 + 20)) reducetune tune --db "$DB" --dtype int32 --op sum --sizes 2^20 \
  --time-limit "$((t / 4))s" --json --quiet > "$W/deeper_int32.json" 2> "$W/deeper_int32.log"
log "rc=$?"
log "bench"
timeout "${BENCH_S:-170}" python3 -m reducetune.benchmarks.runtime --db "$DB" --samples 100 \
  --out "$W/runtime/h100_2026-11-23_runtime2" > "$W/runtime.log" 2>&1; log "bench rc=$?"
python3 -c "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('VACUUM')" "$DB"
xz -9 -c "$DB" > "$W/h100_tune_deeper.db.xz"; log "done"
