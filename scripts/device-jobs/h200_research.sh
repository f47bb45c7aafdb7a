#!/usr/bin/env bash
# Device job (issue 14, and the runtime's GPU tests again) on the H200 machine, run as
#   scripts/device-python -- scripts/device-jobs/h200_research.sh
# with carry [".deps", ".whl"]: the cascading sweep (the second GPU of the comparison), the
# seeds' tables with Nsight Compute, the runtime tests. One archive comes back
# ($OUT/results.tar.xz): a device call returns at most 8 files.
W=/tmp/results
. "$(dirname "$0")/job_prologue.sh"
nvidia-smi -L > "$W/gpus.txt" 2>&1
log "cascading"
timeout 120 reducetune experiment cascading --out "$W/cascading" --time-limit 90s \
  > "$W/cascading.log" 2>&1; log "cascading rc=$?"
log "harris"
timeout 250 reducetune experiment harris --out "$W/harris" --time-limit 190s --ncu \
  > "$W/harris.log" 2>&1; log "harris rc=$?"
timeout 45 python3 -m pytest -q -rs tests/python/test_reduce.py > "$W/test_reduce.log" 2>&1
log "tests rc=$?"
grep -v "ignored in cleanup" "$W/harris.log" > "$W/harris.short.log"; rm -f "$W/harris.log"
tar -C "$W" -cJf "$OUT/results.tar.xz" . ; cp "$W/job.log" "$OUT/job.log"
