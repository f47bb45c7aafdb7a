#!/usr/bin/env bash
# Device job (issue 26, items 5, 6 and 7): the axis runtime's GPU tests, then the axis benchmark
# (python -m reducetune.benchmarks.axis) with CUB's DeviceSegmentedReduce helper built by nvcc.
# Run as
#   AXIS_TOTALS=28 AXIS_DTYPES=float32,bfloat16 AXIS_TESTS=0 \
#     scripts/device-python -- bash scripts/device-jobs/axis_bench.sh
# with carry [".deps", ".whl"] (device-python builds and installs the package first), then the
# same with AXIS_TOTALS=24: the 64 shapes of the grid in two calls.
# Knobs (environment): AXIS_TOTALS (log2 totals, default "28,24": the larger first),
# AXIS_DTYPES (default float32; float32,bfloat16 for both), AXIS_TIME_LIMIT (seconds after
# which the benchmark starts no new shape, default 450: one device call of 600 s, the package's
# build and install included), AXIS_SAMPLES (default 30: the fewest calls per contender; the
# rounds go on until each close median's 95 % interval is within 1 %, 200 calls or 0.5 s),
# AXIS_PROTOCOL=0 (the chosen point not measured in the tuner's protocol), AXIS_ONLY (only these
# shapes, e.g. "rows:128 columns:524288": the benchmark's --only), AXIS_TRANSFER (another GPU's
# axis.json, a file in the working tree: its best point of each shape is timed beside this
# run's, issue 26 item 7), AXIS_TESTS=0 to skip the tests, AXIS_TEST_TIMEOUT and
# AXIS_BENCH_TIMEOUT (seconds, default 520), REDUCETUNE_COMMIT (the commit axis.md and axis.json
# name: the GPU machine's copy of the tree has no .git; pass $(git rev-parse --short HEAD)).
# Time: the tune screens its candidates (a few calls each; one far slower than the fastest gets
# one) and times only the close ones in rounds, and a far slower peer (CUB's segmented reduce
# over 2^27 rows of 2: 150-220 ms a call on an H100) gets 3 samples. 2026-11-26 (H200, before
# the adaptive rounds and the protocol column): 64 shapes at about 4 s a shape. Not yet
# measured: what the adaptive rounds (up to 0.5 s each, the tune's and the peers') and the
# tuner's protocol (a worker process that generates the shape's data and compiles the point)
# add; stderr's progress line gives the ETA after each shape, the JSON each shape's phase_s
# (tune_s, protocol_s, peers_setup_s, rounds_s). The benchmark writes its files into
# $OUT after every shape, so a call cut short keeps what it measured (axis.md lists the rest).
# Files in $OUT (6 or 7 with device-python's pip-install.log): axis_tests.log, axis_bench.log
# (device, build of the helper, progress), axis.json, axis.table.json, axis.md, axis.png.
set -uo pipefail
OUT=${OUT:-/tmp/out}
# AXIS_W: the folder of the segmented helper (x_session.sh benches: one per job run side by side)
W=${AXIS_W:-/tmp/axis_bench}
mkdir -p "$W" "$OUT"
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
transfer=()
[ -n "${AXIS_TRANSFER:-}" ] && transfer=(--transfer "$AXIS_TRANSFER")
[ "${AXIS_PROTOCOL:-1}" = 0 ] && transfer+=(--no-protocol)
# shellcheck disable=SC2206  # AXIS_ONLY is a list of KIND:R words
[ -n "${AXIS_ONLY:-}" ] && transfer+=(--only ${AXIS_ONLY})
timeout "${AXIS_BENCH_TIMEOUT:-520}" python3 -m reducetune.benchmarks.axis --out "$OUT/axis" \
  --segmented-lib "$W/libreducetune_segmented.so" --totals "${AXIS_TOTALS:-28,24}" \
  --dtypes "${AXIS_DTYPES:-float32}" "${transfer[@]}" \
  --time-limit "${AXIS_TIME_LIMIT:-450}" --samples "${AXIS_SAMPLES:-30}" >> "$log" 2>&1
echo "bench rc=$?" >> "$log"
tail -25 "$log"
