#!/usr/bin/env bash
# Device job (issue 26 and what issue 23 moved): every GPU test of the axis family, the half
# types and the whole-array paths, and the short-row timing, in two calls of one warm machine
# (a call is at most 10 minutes; build/ is kept between them):
#   run(command="scripts/device-python -- bash scripts/device-jobs/x_gpu.sh python",
#       carry=[".deps", ".whl"])     the package built; the GPU Python tests; short rows timed
#   run(command="bash scripts/device-jobs/x_gpu.sh cpp", carry=[".deps", ".whl"])
#                                    the C++ GPU tests (build/device)
# Everything lands in $OUT/x_gpu.tar.xz (logs) and $OUT/summary.txt (one line per step).
# X_PYTESTS (test files) and X_CPP (gpu_test_* names) narrow a call to some tests; X_TIMING=0
# skips the short-row timing.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}
L=$PWD/build/x_gpu_logs
mkdir -p "$OUT" "$L"
S=$L/summary.txt
step() {  # NAME TIMEOUT COMMAND...: the command's log in $L/NAME.log, its exit in summary.txt
  local name=$1 t=$2; shift 2
  local t0=$SECONDS
  timeout "$t" "$@" > "$L/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s $(grep -E '(passed|failed|error)' "$L/$name.log" | tail -1)" | tee -a "$S"
  pack  # after every step: a call cut by its limit still brings back what ran
}
pack() { tar -C "$L" -cJf "$OUT/x_gpu.tar.xz" . && cp "$S" "$OUT/summary.txt"; }
{ nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader; date -u +%FT%TZ; } >> "$S"
case "${1:?usage: x_gpu.sh python|cpp}" in
  python)
    read -r -a pytests <<< "${X_PYTESTS:-tests/python/test_reduce_axis.py tests/python/test_reduce_axis_args.py \
      tests/python/test_axis_tuned.py tests/python/test_axis_tune_gpu.py \
      tests/python/test_axis_batch_invariant.py tests/python/test_axis_tune.py \
      tests/python/test_reduce.py tests/python/test_reduce_graphs.py \
      tests/python/test_gpu_fault_isolation.py tests/python/test_precompile.py}"
    step pytest_axis 330 python3 -m pytest -v -rs -p no:cacheprovider "${pytests[@]}"
    [ "${X_TIMING:-1}" = 0 ] || step short_rows 200 python3 scripts/device-jobs/axis_short_rows.py --samples 20 ;;
  cpp)
    extra=()
    find / \( -path /proc -o -path "$PWD" \) -prune -o -name 'Catch2Config.cmake' -print \
      2>/dev/null | grep -q . || extra+=(-DRT_CATCH2_V2_INCLUDE="$PWD/.deps/catch2v2/include")
    cmake --preset device "${extra[@]}" > "$L/configure.log" 2>&1
    mapfile -t targets < <(find tests/cpp -name 'gpu_test_*.cpp' -printf '%f\n' | sed 's/\.cpp$//' | sort)
    [ -z "${X_CPP:-}" ] || read -r -a targets <<< "$X_CPP"
    step build 300 cmake --build --preset device -j 16 --target "${targets[@]}"
    for t in "${targets[@]}"; do
      step "$t" 150 "build/device/tests/$t"
    done ;;
esac
pack
