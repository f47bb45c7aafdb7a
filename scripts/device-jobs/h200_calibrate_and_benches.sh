#!/usr/bin/env bash
# Device job (issues 12 and 13) on the H200 machine, in two calls (each under 10 minutes):
#   scripts/device-python -- bash scripts/device-jobs/h200_calibrate_and_benches.sh prepare
#   scripts/device-python -- bash scripts/device-jobs/h200_calibrate_and_benches.sh bench
# with carry [".deps", ".whl"] (and ".calibrated" for the second: the first call's database).
# prepare: the calibrate tests (tests/python/test_calibrate.py, GPU included); from the H200
#   database of docs/results/h200_2026-11-23_tune_and_benches/, float32 sum at 2^30 around the
#   point that reached 96.3 % of the theoretical peak on 2026-11-24 (bs_1024.u_4.v_4 ept_64),
#   a deeper tune where the tuned best trailed CUB (float32 sum and max at 2^12, 2^18, 2^28),
#   then `reducetune calibrate` of the runtime benchmark's cases; the database comes back.
# deepen: the large sizes of the other cases and 2^24 tuned deeper, calibrated again.
# bench: `reducetune bench` float32 sum and the runtime benchmark against that database;
# recalibrate-bench: every size calibrated again first, on the GPU that runs the benchmarks.
# h100 (on the H100 machine, one call, carry .deps and .whl): from the H100 database of
#   docs/results/h100_2026-11-23_issue12_rerun/, float32 sum at 2^30 around the H200's 96.3 %
#   point, every case calibrated, then bench and the runtime benchmark; h100-deeper: that
#   database tuned deeper where the protocol trailed CUB, calibrated, the runtime benchmark.
set -uo pipefail
OUT=${OUT:-/tmp/out}
W=/tmp/h200cal
mkdir -p "$W/runtime"
log() { echo "== $(date -u +%T) $*" | tee -a "$W/job.log"; }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.memory --format=csv > "$W/gpu.txt"
RUNTIME="$W/runtime/$(grep -q H100 "$W/gpu.txt" && echo h100 || echo h200)_$(date -u +%F)_runtime"
DB=/tmp/h200_calibrated.db
# calibrate_cases NAME SIZES: the runtime benchmark's cases calibrated, then the database
# vacuumed and packed into $W/h200_calibrated.db.xz
calibrate_cases() {
  for pair in "float32 sum,min,max" "int32,float64 sum"; do
    set -- "$1" "$2" $pair
    timeout 90 reducetune calibrate --db "$DB" --dtype "$3" --op "$4" --sizes "$2" \
      --json > "$W/$1_$3.json" 2> "$W/$1_$3.log"
    log "$1 $3 rc=$?"
  done
  python3 -c "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('VACUUM')" "$DB"
  xz -6 -c "$DB" > "$W/h200_calibrated.db.xz"
}
# float32 sum at 2^30 around bs_1024.u_4.v_4 ept_64 (96.3 % of the peak on H200s)
tune_2p30() {
  timeout 80 reducetune tune --db "$DB" --dtype float32 --op sum --sizes 2^30 --strategy grid \
    --restrict block_size=1024 --restrict vec=4 --restrict unroll=2,4 --restrict warp=shuffle \
    --restrict block_strategy=warp_partials --restrict finish=ticket,two_pass \
    --restrict elements_per_thread=32,64,128 --restrict grid_cap=0 --max-evals 12 \
    --time-limit 60s --json --quiet > "$W/tune_2p30.json" 2> "$W/tune_2p30.log"
  log "tune 2^30 rc=$?"
}
benches() {
  timeout 110 reducetune bench --db "$DB" --dtype float32 --op sum --sizes 2^10..2^30:2 --json \
    > "$W/bench_float32_sum.json" 2> "$W/bench.log"; log "bench rc=$?"
  timeout 240 python3 -m reducetune.benchmarks.runtime --db "$DB" --samples 100 \
    --out "$RUNTIME" > "$W/runtime.log" 2>&1; log "runtime rc=$?"
}
unxz() { python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" "$@"; }
case "${1:-}" in
prepare)
  unxz docs/results/h200_2026-11-23_tune_and_benches/h200_tune.db.xz "$DB"
  timeout 120 python3 -m pytest -q -rs tests/python/test_calibrate.py > "$W/test_calibrate.log" 2>&1
  log "test_calibrate rc=$?"
  tune_2p30
  timeout 120 reducetune tune --db "$DB" --dtype float32 --op sum,max --sizes 2^12 2^18 2^28 \
    --time-limit 100s --json --quiet > "$W/tune_deeper.json" 2> "$W/tune_deeper.log"
  log "tune deeper rc=$?"
  timeout 150 reducetune calibrate --db "$DB" --dtype float32 --op sum,min,max --sizes 2^10..2^30:2 \
    --json > "$W/calibrate_float32.json" 2> "$W/calibrate_float32.log"
  log "calibrate float32 rc=$?"
  timeout 100 reducetune calibrate --db "$DB" --dtype int32,float64 --op sum --sizes 2^10..2^30:2 \
    --json > "$W/calibrate_int_f64.json" 2> "$W/calibrate_int_f64.log"
  log "calibrate int32 float64 rc=$?"
  python3 -c "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('VACUUM')" "$DB"
  xz -6 -c "$DB" > "$W/h200_calibrated.db.xz"; log "done"
  tar -C "$W" -cJf "$OUT/prepare.tar.xz" . ;;
deepen)
  # after the first runtime run (2026-11-24 20:48): the large sizes of the other cases tuned
  # around float32 sum's 96.3 % point (their bests there came from 60-100 s tunes), a deeper
  # tune at 2^24 (float32 max trailed CUB's lone call there), then calibrate again
  unxz .calibrated/h200_calibrated.db.xz "$DB"
  near="--strategy grid --restrict block_size=512,1024 --restrict unroll=2,4 --restrict warp=shuffle
    --restrict block_strategy=warp_partials --restrict finish=ticket --restrict grid_cap=0
    --restrict elements_per_thread=32,64,128 --max-evals 12 --json --quiet"
  timeout 150 reducetune tune --db "$DB" --dtype float32 --op sum,min,max --sizes 2^26 2^28 2^30 \
    $near --restrict vec=4 --time-limit 130s > "$W/tune_near_f32.json" 2> "$W/tune_near_f32.log"
  log "tune near float32 rc=$?"
  timeout 70 reducetune tune --db "$DB" --dtype int32 --op sum --sizes 2^26 2^28 2^30 \
    $near --restrict vec=4 --time-limit 55s > "$W/tune_near_i32.json" 2> "$W/tune_near_i32.log"
  log "tune near int32 rc=$?"
  timeout 90 reducetune tune --db "$DB" --dtype float64 --op sum --sizes 2^26 2^28 2^30 \
    $near --restrict vec=2 --time-limit 55s > "$W/tune_near_f64.json" 2> "$W/tune_near_f64.log"
  log "tune near float64 rc=$?"
  timeout 50 reducetune tune --db "$DB" --dtype float32 --op min,max --sizes 2^24 \
    --time-limit 35s --json --quiet > "$W/tune_2p24.json" 2> "$W/tune_2p24.log"
  log "tune 2^24 rc=$?"
  calibrate_cases calibrate 2^24..2^30:2; log "done"
  tar -C "$W" -cJf "$OUT/deepen.tar.xz" . ;;
bench|recalibrate-bench)
  unxz .calibrated/h200_calibrated.db.xz "$DB"
  if [ "$1" = recalibrate-bench ]; then # every size again in one run (a calibration replaces
    # the size's earlier times, schema 5), on the GPU that then runs the benchmarks
    timeout 120 python3 -m pytest -q -rs tests/python/test_calibrate.py > "$W/test_calibrate.log" 2>&1
    log "test_calibrate rc=$?"
    calibrate_cases recalibrate 2^10..2^30:2
  fi
  benches
  tar -C "$W" -cJf "$OUT/bench.tar.xz" . ;;
h100)
  unxz docs/results/h100_2026-11-23_issue12_rerun/h100_tune.db.xz "$DB"
  tune_2p30
  calibrate_cases calibrate 2^10..2^30:2
  benches
  tar -C "$W" -cJf "$OUT/h100.tar.xz" . ;;
h100-deeper)
  # the H100 database of docs/results/h100_2026-11-24_calibrate/ tuned deeper where the
  # runtime benchmark's protocol column trailed CUB (2^12-2^24 of its cases; float32 min at
  # 2^28 had one point), calibrated again, the runtime benchmark again
  unxz docs/results/h100_2026-11-24_calibrate/h100_calibrated.db.xz "$DB"
  timeout 120 reducetune tune --db "$DB" --dtype float32 --op sum,min,max --sizes 2^12..2^24:2 \
    --time-limit 80s --json --quiet > "$W/tune_f32.json" 2> "$W/tune_f32.log"; log "tune f32 rc=$?"
  timeout 45 reducetune tune --db "$DB" --dtype int32 --op sum --sizes 2^16..2^24:2 \
    --time-limit 20s --json --quiet > "$W/tune_i32.json" 2> "$W/tune_i32.log"; log "tune i32 rc=$?"
  timeout 45 reducetune tune --db "$DB" --dtype float32 --op min --sizes 2^28 \
    --time-limit 20s --json --quiet > "$W/tune_min_2p28.json" 2> "$W/tune_min_2p28.log"
  log "tune min 2^28 rc=$?"
  calibrate_cases calibrate 2^10..2^30:2
  timeout 200 python3 -m reducetune.benchmarks.runtime --db "$DB" --samples 100 \
    --out "$RUNTIME" > "$W/runtime.log" 2>&1; log "runtime rc=$?"
  tar -C "$W" -cJf "$OUT/h100.tar.xz" . ;;
*) echo "usage: $0 prepare|deepen|bench|recalibrate-bench|h100|h100-deeper" >&2; exit 2 ;;
esac
cat "$W/job.log"
