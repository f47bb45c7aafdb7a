#!/usr/bin/env bash
# Device job (issue 26): the axis benchmark's four runs in primed rounds (e6b864f) and the C++
# GPU tests not rerun since 42cf825, on a host of two GPUs (kind nvidia-h100-x2), in two calls
# of one warm machine; every run judged by scripts/axis-targets, all of $OUT in one tar file
# (the device tool returns 8 files a call). Carry [".deps", ".whl"] (move .deps/pg.tar.xz,
# .deps/pg-a, .deps/pg-b, .deps/e304aed, .deps/usr/share and the psycopg2 wheel aside first).
#   REDUCETUNE_COMMIT=<commit> bash scripts/device-jobs/primed_h100.sh one   build; 2^28 float32
#                                                    and bfloat16 at once (about 450 s)
#   bash scripts/device-jobs/primed_h100.sh two      2^24 both at once, then the four C++ GPU
#                                                    tests over both GPUs and the primed probe
#                                                    of bfloat16 rows (2097152, 128) (about 400 s)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}
work=/tmp/primed && mkdir -p "$work"
tests="gpu_test_axis_staged gpu_test_axis_tuned gpu_test_axis_finish gpu_test_evaluate_axis"
case "${1:?usage: primed_h100.sh one|two}" in
  one)
    OUT=$work X_TREES=new X_CXX_TESTS="$tests" X_CXX_RUN=0 \
      bash scripts/device-jobs/x_session.sh build > "$work/build.log" 2>&1
    OUT=$work X_BENCHES="28:bfloat16 28:float32" AXIS_TIME_LIMIT=380 AXIS_BENCH_TIMEOUT=450 \
      bash scripts/device-jobs/x_session.sh benches > "$work/benches_28.log" 2>&1 ;;
  two)
    OUT=$work X_BENCHES="24:bfloat16 24:float32" AXIS_TIME_LIMIT=300 AXIS_BENCH_TIMEOUT=360 \
      bash scripts/device-jobs/x_session.sh benches > "$work/benches_24.log" 2>&1
    lanes="0:gpu_test_axis_staged,gpu_test_axis_tuned 1:gpu_test_axis_finish,gpu_test_evaluate_axis"
    OUT=$work X_SPREAD=$lanes X_SPREAD_PY="" bash scripts/device-jobs/x_session.sh spread \
      > "$work/spread.log" 2>&1
    site=$PWD/build/z-site-new:/tmp/site
    CUDA_VISIBLE_DEVICES=0 PROBE_SET=rows128 PROBE_PRIMED=1 PYTHONPATH=$site \
      timeout 200 python3 scripts/device-jobs/axis_wave_probe.py --out "$work/rows128_probe.md" \
      > "$work/rows128_probe.log" 2>&1 ;;
  *) echo "unknown phase: one or two"; exit 2 ;;
esac
PYTHONPATH=$PWD/build/z-site-new:/tmp/site python3 scripts/axis-targets "$work"/bench_*/axis.json \
  > "$work/targets.txt" 2>&1
cat "$work/targets.txt"; tail -3 "$work"/*.log
tar -C "$work" -cJf "$OUT/primed_$1.tar.xz" .
