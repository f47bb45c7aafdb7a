#!/usr/bin/env bash
# Device job, issue 25: where a Python process's start goes on the GPU host, before any of
# reducetune runs. The one-GPU sweep's start waits 0.6-1.3 s on Optuna's import there (0.3 s
# here, on 2 cores), and each --devices worker pays its own; the question is what in that
# import is slow on a host of 32-64 cores. Each line is the median of 5 fresh processes:
#   python3 -c pass, with and without site; import numpy; import optuna.storages.journal (the
#   import import_ahead makes), each with the host's defaults and with OPENBLAS_NUM_THREADS=1
#   (numpy's OpenBLAS starts a thread pool of one thread a core at import); CUDA's start
#   (cuInit, the primary context of GPU 0) with one GPU visible and with all;
# then python -X importtime's 20 slowest cumulative imports of the Optuna import.
# Needs the carried wheels only (no build): run(command="bash scripts/device-jobs/
# z_import_probe.sh", carry=[".deps", ".whl"]). Writes $OUT/import_probe.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
if [ ! -d /tmp/site/optuna ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl
  python3 -m compileall -q -j 0 /tmp/site > /dev/null 2>&1  # as z_common.sh's z_setup
fi
export PYTHONPATH=/tmp/site

median_of_5() {  # LABEL COMMAND...: the median wall seconds of 5 runs of COMMAND
  local label=$1; shift
  python3 - "$label" "$@" <<'EOF'
import statistics, subprocess, sys, time
label, cmd = sys.argv[1], sys.argv[2:]
times = []
for _ in range(5):
    t = time.perf_counter()
    if subprocess.run(cmd, stderr=subprocess.DEVNULL).returncode:
        sys.exit(print(f"{label:<58} failed"))
    times.append(time.perf_counter() - t)
print(f"{label:<58} {statistics.median(times):7.3f} s  (min {min(times):.3f}, max {max(times):.3f})")
EOF
}

cuda_start='
import ctypes, time
t = time.perf_counter()
cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cu.cuCtxSetCurrent(ctx) == 0
'

{
  echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) x $(nvidia-smi -L | wc -l), $(nproc) cores, $(python3 --version); $(date -u '+%Y-%m-%d %H:%M UTC')"
  python3 -c "import numpy; print('numpy', numpy.__version__)"
  python3 -c "import optuna; print('optuna', optuna.__version__)"
  median_of_5 "python3 -c pass" python3 -c pass
  median_of_5 "python3 -S -c pass (no site)" python3 -S -c pass
  median_of_5 "import numpy" python3 -c "import numpy"
  median_of_5 "import numpy, OPENBLAS_NUM_THREADS=1" env OPENBLAS_NUM_THREADS=1 python3 -c "import numpy"
  median_of_5 "import optuna.storages.journal" python3 -c "import optuna.storages.journal"
  median_of_5 "import optuna.storages.journal, OPENBLAS_NUM_THREADS=1" \
    env OPENBLAS_NUM_THREADS=1 python3 -c "import optuna.storages.journal"
  median_of_5 "import tqdm.auto" python3 -c "import tqdm.auto"
  median_of_5 "CUDA start, GPU 0 visible" env CUDA_VISIBLE_DEVICES=0 python3 -c "$cuda_start"
  median_of_5 "CUDA start, all GPUs visible" python3 -c "$cuda_start"
  echo
  echo "# python3 -X importtime -c 'import optuna.storages.journal': the 20 slowest (cumulative us)"
  python3 -X importtime -c "import optuna.storages.journal" 2>&1 >/dev/null |
    awk -F'|' 'NR > 1 {print $2 "|" $3}' | sort -n | tail -20
  echo
  echo "# the same with OPENBLAS_NUM_THREADS=1"
  OPENBLAS_NUM_THREADS=1 python3 -X importtime -c "import optuna.storages.journal" 2>&1 >/dev/null |
    awk -F'|' 'NR > 1 {print $2 "|" $3}' | sort -n | tail -8
} > "$OUT/import_probe.txt" 2>&1
cat "$OUT/import_probe.txt"
