#!/usr/bin/env bash
# Device job (issue 14: the two missing parts of `experiment cascading`), on one H100 or one
# H200, run as
#   scripts/device-python -- bash scripts/device-jobs/cascading_rerun.sh
# with carry [".deps", ".whl"]. It resumes from the committed recording of this GPU's model
# (tests/data/recorded/experiments/h100_cascading.db.xz or h200_cascading.db.xz, chosen by the
# name nvidia-smi gives) and measures only what that recording lacks:
#   - the sweep's new points: the cascade family's elements_per_thread 512 ... 16384 with an
#     uncapped grid, down to one block, at 2^20, 2^24, 2^28, 2^30 x float32, int32, float64 x
#     block 128, 256, 1024 (grids another point already has are left out): 195 points;
#   - the passes comparison's host finish (int32 sum, n = 2^10 ... 2^30 step 2^4): 6 points;
#   so 201 new measurements (`experiment cascading --replay` on the old recording lists them).
#   The 455 recorded points are served from the file: the experiment counts a point measured
#   by another GPU of the same model (name, SMs, memory clock) in the same context as measured,
#   so a freshly lent GPU with another UUID resumes too. CUB and the streaming ceiling are
#   measured again on a GPU the file does not know (18 workloads + 1, about a second each).
#   If the machine's CUDA driver or toolkit differs from the recording's (13000 / 13000), no
#   old point matches its context: the run then measures from the smallest workloads up until
#   the time limit, and the report lists what is still missing (run the job again to go on).
# The old H100 run measured 455 points in ~65 s; the new points are slower (grids of a few
# blocks): about 1-2 minutes of measuring. The measuring stops starting points after 150 s;
# the whole job stays within about 4 minutes.
# One archive comes back ($OUT/cascading_rerun_<gpu>.tar; a device call returns at most 8
# files): <gpu>_cascading.db.xz + .json (the updated recording and its sidecar, to replace
# the committed ones), report/ (this GPU's recording beside the other GPU's committed one,
# rebuilt from the databases alone), the logs.
set -uo pipefail
OUT=${OUT:-/tmp/out}
W=/tmp/cascading_rerun
REC=tests/data/recorded/experiments
rm -rf "$W"; mkdir -p "$W"
export PATH=$PATH:/usr/local/cuda/bin
log() { echo "== $(date -u +%T) $*" | tee -a "$W/job.log" >&2; }

nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > "$W/gpus.txt" 2>&1
name=$(head -1 "$W/gpus.txt" | cut -d, -f1)
case "$name" in
  *H100*) gpu=h100; other=h200 ;;
  *H200*) gpu=h200; other=h100 ;;
  *) log "no committed cascading recording for '$name' (H100 or H200 expected)"; exit 1 ;;
esac
log "GPU '$name': resuming from $REC/${gpu}_cascading.db.xz"
python3 - "$REC/${gpu}_cascading.db.xz" "$W/${gpu}_cascading.db" <<'PY'
import lzma, shutil, sys
with lzma.open(sys.argv[1], "rb") as fin, open(sys.argv[2], "wb") as fout:
    shutil.copyfileobj(fin, fout, 1 << 20)
PY

log "measuring (the experiment prints how many points the recording already holds)"
timeout 200 reducetune experiment cascading --db "$W/${gpu}_cascading.db" --out "$W/run" \
  --time-limit 150s > "$W/cascading.log" 2>&1
rc=$?
log "cascading rc=$rc ($(grep -E 'already in|measured \(' "$W/cascading.log" | tr '\n' ' '))"

python3 -m reducetune.experiments._pack "$W/${gpu}_cascading.db" \
  "$W/pack/${gpu}_cascading.db.xz" >> "$W/job.log" 2>&1
log "packed rc=$?"
timeout 60 reducetune experiment cascading --replay "$W/pack/${gpu}_cascading.db.xz" \
  --replay "$REC/${other}_cascading.db.xz" --out "$W/report" > "$W/report.log" 2>&1
log "report rc=$?"
grep "Not in this database" "$W/report/report.md" >> "$W/job.log" 2>/dev/null

tar -C "$W" -cf "$OUT/cascading_rerun_${gpu}.tar" pack report job.log gpus.txt \
  cascading.log report.log
cp "$W/job.log" "$OUT/job.log"
