#!/usr/bin/env bash
# Device job (issue 26), one H200: what the output's write stream costs the short rows, and the
# fair trial of two rows a group step. Carry [".deps", ".whl"]. On two GPUs the two probe sets
# run at once, one on each.
#   REDUCETUNE_COMMIT=<commit> bash scripts/device-jobs/writes_and_two_rows.sh
# 1. builds the package (x_session.sh build, the working tree only, no C++ tests);
# 2. two template copies: /tmp/nowrite (store_tree.py: no output stored, a diagnostic) and
#    /tmp/tr4 (tworow_tree.py: two contiguous rows a group step, 4 vectors a lane ahead, the
#    group and warp grid halved); axis_bits.py compares tr4's bits with the tree as it is;
# 3. axis_wave_probe.py in primed rounds, one process per (set, tree): bfloat16 rows of 128
#    (rows128) and float32 rows of 2, 16 and 128 (writes), each under the tree as it is, tr4 and
#    nowrite. Compare ratios to the streaming kernel within one file, never times across files.
# PROBE_TREES="none nc cs" times store_tree.py's other copies instead (tr4: tworow_tree.py's;
# df: deferred_tree.py's).
# First, mix_probe.cu's mixed read/write stream (PROBE_MIX_ONLY=1: that alone).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi -L > "$OUT/device.txt"
# 0. the mixed read/write stream of mix_probe.cu (no package needed): what any kernel reaches
#    writing 1/r of its input, at the float32 and bfloat16 totals of 2^28 elements
nvcc -O3 -arch=sm_90 -Iscripts/device-jobs -o /tmp/mix_probe scripts/device-jobs/mix_probe.cu &&
  for b in 30 29; do CUDA_VISIBLE_DEVICES=0 /tmp/mix_probe $b > "$OUT/mix_$b.md"; cat "$OUT/mix_$b.md"; done
[ "${PROBE_MIX_ONLY:-0}" = 1 ] && exit 0
X_TREES=new X_CXX_TESTS="" OUT=/tmp/build_out bash scripts/device-jobs/x_session.sh build \
  > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
export PYTHONPATH=$PWD/build/z-site-new:/tmp/site
read -r -a TREES <<< "${PROBE_TREES:-none tr4 nowrite}"
made_bits=0
for tree in "${TREES[@]}"; do
  case $tree in
    none) continue ;;
    tr4) python3 scripts/device-jobs/tworow_tree.py /tmp/tr4 4 ;;
    df) python3 scripts/device-jobs/deferred_tree.py /tmp/df 1024 ;;
    *) python3 scripts/device-jobs/store_tree.py "/tmp/$tree" "$tree"; continue ;;
  esac
  # a change that must keep the bits: compare them with the tree as it is
  [ $made_bits = 1 ] || CUDA_VISIBLE_DEVICES=0 python3 scripts/device-jobs/axis_bits.py save /tmp/bits.pt
  made_bits=1
  CUDA_VISIBLE_DEVICES=0 REDUCETUNE_TEMPLATE_DIR=/tmp/$tree \
    python3 scripts/device-jobs/axis_bits.py compare /tmp/bits.pt > "$OUT/bits_$tree.txt" 2>&1
  tail -3 "$OUT/bits_$tree.txt"
done
# one set per GPU where the host has two (each set's trees on one GPU: its ratios compare)
probe_set() { # SET GPU
  for tree in "${TREES[@]}"; do
    dir=""; [ "$tree" != none ] && dir=/tmp/$tree
    check=0; [ "$tree" = nowrite ] && check=1
    echo "== $1 $tree on GPU $2 $(date -u +%T)"
    CUDA_VISIBLE_DEVICES=$2 REDUCETUNE_TEMPLATE_DIR=$dir PROBE_SET=$1 PROBE_PRIMED=1 \
      PROBE_NO_CHECK=$check python3 scripts/device-jobs/axis_wave_probe.py \
      --out "$OUT/${1}_$tree.md" > /dev/null 2> "$OUT/${1}_$tree.err" || tail -5 "$OUT/${1}_$tree.err"
  done
}
gpus=$(nvidia-smi -L | wc -l)
probe_set rows128 0 > "$OUT/rows128.log" 2>&1 &
if [ "$gpus" -ge 2 ]; then probe_set writes 1 > "$OUT/writes.log" 2>&1; wait
else wait; probe_set writes 0 > "$OUT/writes.log" 2>&1; fi
cat "$OUT"/rows128.log "$OUT"/writes.log "$OUT"/*.md
tar -C "$OUT" -cJf "$OUT/probes.tar.xz" --exclude=probes.tar.xz . # more files than come back
