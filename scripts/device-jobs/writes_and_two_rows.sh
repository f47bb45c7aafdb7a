#!/usr/bin/env bash
# Device job (issue 26), one H200: what the output's write stream costs the short rows, and the
# fair trial of two rows a group step. Carry [".deps", ".whl"].
#   REDUCETUNE_COMMIT=<commit> bash scripts/device-jobs/writes_and_two_rows.sh
# 1. builds the package (x_session.sh build, the working tree only, no C++ tests);
# 2. two template copies: /tmp/nowrite (store_tree.py: no output stored, a diagnostic) and
#    /tmp/tr4 (tworow_tree.py: two contiguous rows a group step, 4 vectors a lane ahead, the
#    group and warp grid halved); axis_bits.py compares tr4's bits with the tree as it is;
# 3. axis_wave_probe.py in primed rounds, one process per (set, tree): bfloat16 rows of 128
#    (rows128) and float32 rows of 2, 16 and 128 (writes), each under the tree as it is, tr4 and
#    nowrite. Compare ratios to the streaming kernel within one file, never times across files.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi -L > "$OUT/device.txt"
X_TREES=new X_CXX_TESTS="" OUT=/tmp/build_out bash scripts/device-jobs/x_session.sh build \
  > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
export PYTHONPATH=$PWD/build/z-site-new:/tmp/site CUDA_VISIBLE_DEVICES=0
python3 scripts/device-jobs/store_tree.py /tmp/nowrite
python3 scripts/device-jobs/tworow_tree.py /tmp/tr4 4
python3 scripts/device-jobs/axis_bits.py save /tmp/bits.pt
REDUCETUNE_TEMPLATE_DIR=/tmp/tr4 python3 scripts/device-jobs/axis_bits.py compare /tmp/bits.pt \
  > "$OUT/bits_tr4.txt" 2>&1
tail -3 "$OUT/bits_tr4.txt"
for run in rows128:none rows128:tr4 rows128:nowrite writes:none writes:nowrite writes:tr4; do
  set_=${run%%:*} tree=${run##*:}
  dir=""; [ "$tree" != none ] && dir=/tmp/$tree
  check=0; [ "$tree" = nowrite ] && check=1
  echo "== $run $(date -u +%T)"
  REDUCETUNE_TEMPLATE_DIR=$dir PROBE_SET=$set_ PROBE_PRIMED=1 PROBE_NO_CHECK=$check \
    python3 scripts/device-jobs/axis_wave_probe.py --out "$OUT/${set_}_$tree.md" > /dev/null \
    2> "$OUT/${set_}_$tree.err" || tail -5 "$OUT/${set_}_$tree.err"
  cat "$OUT/${set_}_$tree.md"
done
