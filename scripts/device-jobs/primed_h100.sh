#!/usr/bin/env bash
# Device job (issue 26): the axis benchmark's four runs in primed rounds (e6b864f) and the C++
# GPU tests not rerun since 42cf825, on the H100, in calls of one warm machine; every run judged
# by scripts/axis-targets, all of $OUT in one tar file (the device tool returns 8 files a call).
# Carry [".deps", ".whl"] (move .deps/pg.tar.xz, .deps/pg-a, .deps/pg-b, .deps/e304aed,
# .deps/usr/share and the psycopg2 wheel aside first).
# A call names its steps, run in order on GPU 0 (kind nvidia-h100-x1: a call for nvidia-h100-x2
# came twice as a host of two H200s):
#   build          the working tree's package and the four C++ tests (about 100 s;
#                  REDUCETUNE_COMMIT=<commit> names the commit in every axis.md)
#   T:DTYPE[@S]    the axis benchmark of 2^T elements of DTYPE, starting no new shape after S
#                  seconds (default 300); stopped 40 s after that
#   cxx            gpu_test_axis_staged, _tuned, _finish and gpu_test_evaluate_axis (about 300 s)
#   probe          the primed probe of bfloat16 rows (2097152, 128) (scripts/device-jobs/
#                  axis_wave_probe.py PROBE_SET=rows128)
# e.g. REDUCETUNE_COMMIT=abc1234 bash scripts/device-jobs/primed_h100.sh build 28:bfloat16@420
#      bash scripts/device-jobs/primed_h100.sh 28:float32@300 24:bfloat16@200
#      bash scripts/device-jobs/primed_h100.sh 24:float32@200 cxx probe
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}
work=/tmp/primed && mkdir -p "$work"
tests="gpu_test_axis_staged gpu_test_axis_tuned gpu_test_axis_finish gpu_test_evaluate_axis"
site=$PWD/build/z-site-new:/tmp/site
[ $# -gt 0 ] || { echo "usage: primed_h100.sh build|T:DTYPE[@S]|cxx|probe ..."; exit 2; }
for step in "$@"; do
  echo "== $step $(date -u +%T)" >> "$work/steps.log"
  case "$step" in
    build)
      OUT=$work X_TREES=new X_CXX_TESTS="$tests" X_CXX_RUN=0 \
        bash scripts/device-jobs/x_session.sh build > "$work/build.log" 2>&1 ;;
    [0-9]*:*)
      spec=${step%@*} limit=300; [ "$spec" != "$step" ] && limit=${step#*@}
      OUT=$work X_BENCHES="$spec" AXIS_TIME_LIMIT=$limit AXIS_BENCH_TIMEOUT=$((limit + 40)) \
        bash scripts/device-jobs/x_session.sh benches > "$work/bench_${spec/:/_}.log" 2>&1 ;;
    cxx)
      OUT=$work X_SPREAD="0:${tests// /,}" X_SPREAD_PY="" \
        bash scripts/device-jobs/x_session.sh spread > "$work/cxx.log" 2>&1 ;;
    probe)
      CUDA_VISIBLE_DEVICES=0 PROBE_SET=rows128 PROBE_PRIMED=1 PYTHONPATH=$site \
        timeout 200 python3 scripts/device-jobs/axis_wave_probe.py --out "$work/rows128_probe.md" \
        > "$work/rows128_probe.log" 2>&1 ;;
    *) echo "unknown step $step: build, T:DTYPE[@S], cxx or probe"; exit 2 ;;
  esac
  echo "== $step rc=$? $(date -u +%T)" >> "$work/steps.log"
done
PYTHONPATH=$site python3 scripts/axis-targets "$work"/bench_*/axis.json > "$work/targets.txt" 2>&1
cat "$work/steps.log" "$work/targets.txt"; tail -3 "$work"/*.log
tar -C "$work" -cJf "$OUT/primed.tar.xz" .
