#!/usr/bin/env bash
# Device job (issue 26): the split whole-row tiles' block-wide count of groups (every one of a
# group's UNROLL 16-byte loads issued before its first add) against the tree without it, in
# axis_wave_probe.py, the two trees alternating (base, new, base, new), each process's ratios
# to the streaming kernel compared, never its absolute times. Run after x_session.sh build on
# the working tree that has the change. PROBE_DIFF, a path from the tree's root (default
# lead.diff), is the change, reversed here into /tmp/ktb for the base tree; at a commit that
# has it, docs/results/h200_2026-11-27_tile_groups/groups.diff.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}
site="$PWD/build/z-site-new:/tmp/site"
diff=$PWD/${PROBE_DIFF:-lead.diff}
rm -rf /tmp/ktb && mkdir -p /tmp/ktb && cp -r kernel_templates /tmp/ktb/
(cd /tmp/ktb && patch -R -p1 < "$diff") > "$OUT/patch.log" 2>&1 || { cat "$OUT/patch.log"; exit 1; }
for i in 1 2; do
  for tree in base new; do
    dir=$PWD/kernel_templates
    [ "$tree" = base ] && dir=/tmp/ktb/kernel_templates
    REDUCETUNE_TEMPLATE_DIR=$dir PROBE_SHAPES=${PROBE_SHAPES:-2} PYTHONPATH=$site timeout 200 \
      python3 scripts/device-jobs/axis_wave_probe.py --out "$OUT/probe_${tree}_$i.md" \
      > "$OUT/probe_${tree}_$i.log" 2>&1
    echo "$tree $i rc=$?"
  done
done
