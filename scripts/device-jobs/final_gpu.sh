#!/usr/bin/env bash
# Device job after the refactor of issues 23/24 and the axis family (issue 26): the Python
# runtime's GPU tests, then the C++ GPU tests. Run as
#   scripts/device-python -- scripts/device-jobs/final_gpu.sh     (carry [".deps", ".whl"])
# Logs come back in $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}
{ nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader; date -u +%FT%TZ; } \
  > "$OUT/device.txt"
timeout 240 python3 -m pytest tests/python/test_reduce_graphs.py tests/python/test_reduce.py \
  tests/python/test_calibrate.py -v -rs -p no:cacheprovider > "$OUT/pytest_gpu.log" 2>&1
echo "pytest rc=$?" >> "$OUT/device.txt"
extra=()
find / \( -path /proc -o -path "$PWD" \) -prune -o -name 'Catch2Config.cmake' -print 2>/dev/null |
  grep -q . || extra+=(-DRT_CATCH2_V2_INCLUDE="$PWD/.deps/catch2v2/include")
cmake --preset device "${extra[@]}" > "$OUT/configure.log" 2>&1
targets=(gpu_test_variants gpu_test_axis gpu_test_determinism gpu_test_host_finish gpu_test_baselines)
cmake --build --preset device -j 16 --target "${targets[@]}" > "$OUT/build.log" 2>&1 ||
  { tail -30 "$OUT/build.log"; exit 1; }
for t in "${targets[@]}"; do
  timeout 150 "build/device/tests/$t" > "$OUT/$t.log" 2>&1
  echo "$t rc=$?" >> "$OUT/device.txt"
done
cat "$OUT/device.txt"; tail -3 "$OUT/pytest_gpu.log"
