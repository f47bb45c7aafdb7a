#!/usr/bin/env bash
# Device job (issue 26, items 5 and 6): the axis runtime's GPU tests, then the axis benchmark
# (python -m reducetune.benchmarks.axis) with CUB's DeviceSegmentedReduce helper built by nvcc.
# Run as
#   scripts/device-python -- bash scripts/device-jobs/axis_bench.sh
# with carry [".deps", ".whl"] (device-python builds and installs the package first).
# Knobs (environment): AXIS_TOTALS (log2 totals, default "28,24": the larger first),
# AXIS_DTYPES (default float32; float32,bfloat16 for both), AXIS_TIME_LIMIT (seconds after
# which the benchmark starts no new shape, default 1e9), AXIS_SAMPLES (default 30),
# AXIS_TESTS=0 to skip the tests, AXIS_TEST_TIMEOUT and AXIS_BENCH_TIMEOUT (seconds).
# Time: a shape takes 20-55 s on an H200 (the on-the-spot tune compiles about 20 points, and
# torch.compile compiles its peer), so the 16 shapes of one total and type take about 8 min:
# one device call of 600 s each, e.g. AXIS_TOTALS=28, then AXIS_TOTALS=24 AXIS_TESTS=0
# (docs/results/h200_2026-11-26_axis_first_look). The benchmark saves its files after every
# shape, so a call cut short keeps what it measured.
# Files in $OUT (6 with device-python's pip-install.log): axis_tests.log, axis_bench.log
# (device, build of the helper, progress), axis.json, axis.md, axis.png.
set -uo pipefail
OUT=${OUT:-/tmp/out}
W=/tmp/axis_bench
mkdir -p "$W"
log="$OUT/axis_bench.log"
{ nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.mem --format=csv,noheader
  date -u +%FT%TZ
  python3 -c "import torch, cupy; print('torch', torch.__version__, 'cupy', cupy.__version__)"
} > "$log" 2>&1
nvcc -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC tuner/tools/segmented_reduce.cu \
  -o "$W/libreducetune_segmented.so" >> "$log" 2>&1 || echo "segmented helper: build failed" >> "$log"
if [ "${AXIS_TESTS:-1}" != 0 ]; then
  timeout "${AXIS_TEST_TIMEOUT:-240}" python3 -m pytest tests/python/test_reduce_axis.py tests/python/test_reduce_axis_args.py \
    -v -rs -p no:cacheprovider -p no:xdist > "$OUT/axis_tests.log" 2>&1
  echo "tests rc=$?" >> "$log"; tail -3 "$OUT/axis_tests.log"
fi
timeout "${AXIS_BENCH_TIMEOUT:-3000}" python3 -m reducetune.benchmarks.axis --out "$W/axis" \
  --segmented-lib "$W/libreducetune_segmented.so" --totals "${AXIS_TOTALS:-28,24}" \
  --dtypes "${AXIS_DTYPES:-float32}" \
  --time-limit "${AXIS_TIME_LIMIT:-1e9}" --samples "${AXIS_SAMPLES:-30}" >> "$log" 2>&1
echo "bench rc=$?" >> "$log"
cp "$W"/axis.json "$W"/axis.md "$W"/axis.png "$OUT"/ 2>/dev/null
tail -25 "$log"
