#!/usr/bin/env bash
# Device job (issues 13, 14, 15) on the two-GPU H200 machine, run as
#   scripts/device-python -- scripts/device-jobs/h200x2_research_runtime_multigpu.sh
# with carry [".deps", ".whl"]. Phase A uses the two GPUs apart (the seeds' tables on GPU 0;
# the cascading sweep, then the runtime benchmark, on GPU 1); phase B the two together (the
# grid sweep on one GPU, then on both), then the runtime's GPU tests (two GPUs: the
# multi-device test runs). Everything comes back as one archive ($OUT/results.tar.xz): a
# device call returns at most 8 files.
set -uo pipefail
OUT=${OUT:-/tmp/out}
W=/tmp/results
mkdir -p "$W"
# The runtime dispatches from the H100's database of the README main command (same compute
# capability: the reducer takes it for the H200), ranked for applications (launches counted).
H100_DB=/tmp/h100_tune.db
python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
  docs/results/h100_2026-11-23_issue12_rerun/h100_tune.db.xz "$H100_DB"
export PATH=$PATH:/usr/local/cuda/bin
log() { echo "== $(date -u +%T) $*" >> "$W/job.log"; }
nvidia-smi -L > "$W/gpus.txt" 2>&1
log "phase A"
( log "harris"; CUDA_VISIBLE_DEVICES=0 timeout 250 reducetune experiment harris \
    --out "$W/harris" --time-limit 190s --ncu > "$W/harris.log" 2>&1; log "harris rc=$?" ) &
( log "cascading"; CUDA_VISIBLE_DEVICES=1 timeout 120 reducetune experiment cascading \
    --out "$W/cascading" --time-limit 90s > "$W/cascading.log" 2>&1; log "cascading rc=$?"
  CUDA_VISIBLE_DEVICES=1 timeout 150 python3 -m reducetune.benchmarks.runtime --db "$H100_DB" \
    --samples 100 --out "$W/runtime/h200_2026-11-23_runtime" > "$W/runtime.log" 2>&1
  log "runtime rc=$?" ) &
wait
log "phase B"
timeout 170 scripts/multi-gpu-sweep "$W/multi_gpu" > "$W/multi_gpu.log" 2>&1; log "sweep rc=$?"
timeout 45 python3 -m pytest -q -rs tests/python/test_reduce.py > "$W/test_reduce.log" 2>&1
log "tests rc=$?"
grep -v "ignored in cleanup" "$W/harris.log" > "$W/harris.short.log"; rm -f "$W/harris.log"
tar -C "$W" -cJf "$OUT/results.tar.xz" . && cp "$W/job.log" "$OUT/job.log"
