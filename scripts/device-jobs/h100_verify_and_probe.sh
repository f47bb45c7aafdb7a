#!/usr/bin/env bash
# Device job, first call of session 4 (H100), run as
#   scripts/device-run --no-tests -- bash scripts/device-jobs/h100_verify_and_probe.sh
# with carry [".deps", ".whl"]. Three things in one call, one archive back ($OUT/verify.tar.xz):
# 1. the kernel-launch refactor (cuda/kernel_launch, used by the runner and the runtime) on a
#    GPU: the C++ GPU tests (every variant verified through the runner) and the Python
#    runtime tests (tests/python/test_reduce.py);
# 2. scripts/device-jobs/peak_probe.cu: how close a read-only sum gets to the theoretical
#    peak at 2^30, with and without load cache hints (issues 12 and 13, the 95 % target);
# 3. scripts/device-jobs/host_overhead.py against the H100 tuning database: the host time of
#    reduce(torch) piece by piece, with the result pool and without.
set -uo pipefail
OUT=${OUT:-/tmp/out}
W=/tmp/verify
mkdir -p "$W"
ctest --preset device -L gpu -j 2 --timeout 300 > "$W/ctest_gpu.log" 2>&1
echo "ctest gpu rc=$?" | tee -a "$W/summary.txt"
tail -5 "$W/ctest_gpu.log" >> "$W/summary.txt"
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/peak_probe scripts/device-jobs/peak_probe.cu > "$W/probe.log" 2>&1 \
  && timeout 120 /tmp/peak_probe >> "$W/probe.log" 2>&1
echo "probe rc=$?" | tee -a "$W/summary.txt"
grep "^best\|^#" "$W/probe.log" >> "$W/summary.txt"
DB=/tmp/h100_tune.db
python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
  docs/results/h100_2026-11-23_issue12_rerun/h100_tune.db.xz "$DB"
scripts/device-python -- bash -c "
  python3 -m pytest -q -rs tests/python/test_reduce.py > $W/pytest_reduce.log 2>&1; echo pytest rc=\$? >> $W/summary.txt
  tail -3 $W/pytest_reduce.log >> $W/summary.txt
  timeout 150 python3 scripts/device-jobs/host_overhead.py --db $DB > $W/host_overhead.txt 2>&1; echo overhead rc=\$? >> $W/summary.txt
" > "$W/device_python.log" 2>&1
tar -C "$W" -cJf "$OUT/verify.tar.xz" .
cat "$W/summary.txt"; tail -12 "$W/host_overhead.txt"
