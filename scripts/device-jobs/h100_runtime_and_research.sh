#!/usr/bin/env bash
# Device job (issues 13 and 14), run on the H100 machine as
#   scripts/device-python -- scripts/device-jobs/h100_runtime_and_research.sh
# with carry [".deps", ".whl"]. The runtime dispatches from the table the previous job
# exported (docs/results/h100_2026-11-23_runtime/h100_table.json, from the README's main
# command on this GPU kind).
set -uo pipefail
OUT=${OUT:-/tmp/out}
TABLE=docs/results/h100_2026-11-23_runtime/h100_table.json
export PATH=$PATH:/usr/local/cuda/bin
step() { local limit=$1; shift; echo "== $(date -u +%T) $*" >&2; timeout "$limit" "$@"; echo "rc=$?" >&2; }
# 1. The runtime's GPU tests (reduce on CuPy and PyTorch, every dtype x op, determinism).
step 120 python3 -m pytest -q -rs tests/python/test_reduce.py > $OUT/test_reduce.log 2>&1
# 2. The runtime benchmark: both protocols, one run.
step 240 python3 -m reducetune.benchmarks.runtime --table $TABLE \
  --out $OUT/runtime/h100_2026-11-23_runtime > $OUT/runtime_bench.log 2>&1
# 3. Research experiments (issue 14); each resumes from its database if cut short.
step 150 reducetune experiment harris --out $OUT/harris --time-limit 80s --ncu \
  > $OUT/harris.log 2>&1
step 150 reducetune experiment cascading --out $OUT/cascading --time-limit 120s \
  > $OUT/cascading.log 2>&1
ls -laR $OUT >&2
