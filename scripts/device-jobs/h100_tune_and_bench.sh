#!/usr/bin/env bash
# Device job (issues 12 and 13), run on the H100 machine as
#   scripts/device-python -- scripts/device-jobs/h100_tune_and_bench.sh
# with carry [".deps", ".whl"]. Each step has its own time limit so that what was done comes
# back in $OUT even when a later step runs long.
set -uo pipefail
OUT=${OUT:-/tmp/out}
DB=/tmp/h100.db
step() { local limit=$1; shift; echo "== $(date -u +%T) $*" >&2; timeout "$limit" "$@"; echo "rc=$?" >&2; }
# 1. The README's main command (issue 12: every size of every (dtype, op) answered).
step 400 reducetune tune --db $DB --dtype float32,float64,int32,int64 --op sum,min,max \
  --sizes 2^10..2^30:2 --time-limit 6m --json > $OUT/main_tune.json 2> $OUT/main_tune.log
# 2. Deeper float32 sum at the sizes where the 6-minute run measured one point.
step 100 reducetune tune --db $DB --dtype float32 --op sum --sizes 2^26 2^28 2^30 \
  --max-evals 200 --time-limit 60s --json > $OUT/deep_tune.json 2> $OUT/deep_tune.log
# 3. The benchmark of issue 12: tuned bests beside CUB, float32 sum, one run.
step 120 reducetune bench --db $DB --dtype float32 --op sum --sizes 2^10..2^30:2 --json \
  > $OUT/bench_float32_sum.json 2> $OUT/bench.log
# 4. What the runtime call (the next device job) dispatches from, and the database itself.
step 30 reducetune export json --db $DB -o $OUT/h100_table.json
step 60 reducetune best --db $DB --dtype float32 --op sum --n 1073741824 --json > $OUT/best_2p30.json
step 90 xz -T0 -9 -c $DB > $OUT/h100_tune.db.xz
ls -la $OUT >&2
