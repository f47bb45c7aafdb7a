#!/usr/bin/env bash
# Device job (issue 26 item 1, the half types): the GPU tests that run float16 and bfloat16 on
# the tunable and axis families within issue 26's bound (gpu_test_half, gpu_test_half_axis,
# with the bfloat16 r = 2^24 ones cases). Builds with scripts/device-run (no full ctest), then
# writes one log, $OUT/half_gpu.log:
#   run(command="scripts/device-run --no-tests -- scripts/device-jobs/half_gpu.sh",
#       carry=[".deps"])
# A device command has 10 minutes, the build included: HALF_TESTS names other tests for a
# second call, e.g. the ones whose type loops now include the half types:
#   HALF_TESTS="gpu_test_axis gpu_test_variants gpu_test_determinism gpu_test_baselines"
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
log="$OUT/half_gpu.log"
{ nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader; date -u +%FT%TZ;
  git rev-parse HEAD 2>/dev/null; } > "$log"
status=0
for t in ${HALF_TESTS:-gpu_test_half gpu_test_half_axis}; do
  echo "== $t $(date -u +%T)" >> "$log"
  timeout 400 "build/device/tests/$t" --durations yes >> "$log" 2>&1
  rc=$?
  echo "== $t exit $rc" >> "$log"
  [ $rc -eq 0 ] || status=1
done
grep -E "^== |passed|failed|FAILED" "$log" | tail -40
exit $status
