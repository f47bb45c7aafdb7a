#!/usr/bin/env bash
# Device job (issue 12) on the H200 machine, run as
#   scripts/device-python -- bash scripts/device-jobs/h200_rerecord_and_probe.sh
# with carry [".deps", ".whl"]. One archive comes back ($OUT/h200.tar.xz):
# 1. tests/data/recorded/h200_float32_sum_grid re-recorded under the current timing protocol
#    (graph replay, input rotation): the sidecar's command, with the Optuna studies in a
#    JournalStorage file during the sweep (about 6x less host time per point than the SQLite
#    study tables); the studies are copied into the database afterwards (optuna.copy_study,
#    on the CPU machine), so the file holds them as the H100 recording does.
# 2. scripts/device-jobs/peak_probe.cu on this GPU: the 95 % question on the H200.
W=/tmp/h200
. "$(dirname "$0")/job_prologue.sh"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.memory --format=csv > "$W/gpu.txt"
if [ -z "${SKIP_PROBE:-}" ]; then log "probe"
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/peak_probe scripts/device-jobs/peak_probe.cu > "$W/probe.txt" 2>&1 \
  && timeout 90 /tmp/peak_probe >> "$W/probe.txt" 2>&1; log "probe rc=$?"; fi
log "sweep"
date -u +"%Y-%m-%dT%H:%M:%SZ" > "$W/sweep_started.txt"
timeout 420 reducetune tune --strategy grid --db /tmp/sweep.db --storage journal:/tmp/sweep.journal \
  --dtype float32 --op sum --sizes 2^16 2^24 --max-samples 30 --sample-time 0.02 \
  --restrict block_size=128,256,512,1024 --restrict warp=shuffle,volatile_sync \
  --restrict finish=two_pass,ticket --restrict elements_per_thread=4,16,64 \
  --restrict grid_cap=0,4 --time-limit 390s --json --quiet > "$W/sweep.json" 2> "$W/sweep.log"
log "sweep rc=$?"
date -u +"%Y-%m-%dT%H:%M:%SZ" > "$W/sweep_ended.txt"
python3 -c "import sqlite3; sqlite3.connect('/tmp/sweep.db').execute('VACUUM')"
xz -9 -c /tmp/sweep.db > "$W/h200_float32_sum_grid.db.xz"
xz -9 -c /tmp/sweep.journal > "$W/sweep.journal.xz"
tar -C "$W" -cJf "$OUT/h200.tar.xz" . ; cat "$W/job.log"; grep "^best" "$W/probe.txt"
