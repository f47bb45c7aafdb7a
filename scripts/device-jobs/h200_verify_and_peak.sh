#!/usr/bin/env bash
# Device job prepared for the next session (issues 12, 13) on the H200 machine, run as
#   scripts/device-run --no-tests -- bash scripts/device-jobs/h200_verify_and_peak.sh
# with carry [".deps", ".whl"]. One archive back ($OUT/verify_peak.tar.xz):
# 1. the GPU tests after the last CPU-only refactors (cuda/reduction_steps used by the runner
#    and the runtime; the application pick read from exported tables): ctest -L gpu and
#    tests/python/test_reduce.py;
# 2. float32 sum at 2^30 tuned around the shape the peak probe found at 95.4 % of the
#    theoretical peak on an H200 (scripts/device-jobs/peak_probe.cu: 1024 threads, 16-byte
#    loads, 2 in flight, 8192 blocks = tunable bs_1024.u_2.v_4 ept_128.cap_0; its 48-point neighbourhood measured whole by the
#    grid strategy), in the H200
#    database of docs/results/h200_2026-11-23_tune_and_benches/, then `reducetune bench`
#    float32 sum over every size (the best under the protocol beside CUB, % of peak).
set -uo pipefail
OUT=${OUT:-/tmp/out}
W=/tmp/verify_peak
mkdir -p "$W"
log() { echo "== $(date -u +%T) $*" | tee -a "$W/job.log"; }
ctest --preset device -L gpu -j 2 --timeout 300 > "$W/ctest_gpu.log" 2>&1; log "ctest gpu rc=$?"
DB=/tmp/h200_tune.db
python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
  docs/results/h200_2026-11-23_tune_and_benches/h200_tune.db.xz "$DB"
scripts/device-python -- bash -c "
  timeout 60 python3 -m pytest -q -rs tests/python/test_reduce.py > $W/test_reduce.log 2>&1
  echo pytest rc=\$? >> $W/job.log
  timeout 170 reducetune tune --db $DB --dtype float32 --op sum --sizes 2^30 --strategy grid \
    --restrict block_size=512,1024 --restrict vec=4 --restrict unroll=1,2,4 \
    --restrict warp=shuffle --restrict block_strategy=warp_partials \
    --restrict finish=ticket,two_pass --restrict elements_per_thread=32,64,128,256 \
    --restrict grid_cap=0 --max-evals 48 --time-limit 150s --json --quiet \
    > $W/tune_2p30.json 2> $W/tune_2p30.log
  echo tune rc=\$? >> $W/job.log
  timeout 100 reducetune bench --db $DB --dtype float32 --op sum --sizes 2^10..2^30:2 --json \
    > $W/bench_float32_sum.json 2> $W/bench.log
  echo bench rc=\$? >> $W/job.log
" > "$W/device_python.log" 2>&1
tar -C "$W" -cJf "$OUT/verify_peak.tar.xz" . ; cat "$W/job.log"; tail -12 "$W/bench.log"
