#!/usr/bin/env bash
# Device job, issue 25: the 768-point sweep (scripts/multi-gpu-sweep quad: 1, 2 and 4 GPUs)
# with the GPUs counted from the driver's files (the working tree) and by cuInit (the tree
# before 6f55738: its cli/tune_devices.py in a copy of the same build), alternating
# before/after twice on one warm machine; the count's GPU tests; what /proc lists.
# The "before" file is made here first (it travels untracked; it is not committed):
#   git show edca128:driver/reducetune/cli/tune_devices.py > scripts/device-jobs/before_tune_devices.py.txt
#   run(command="bash scripts/device-jobs/z_count_ab.sh", kind="nvidia-h200-x4",
#       carry=[".deps", ".whl"])
# Results: docs/results/h200x4_2026-11-27_z_visible_gpus.
source "$(dirname "$0")/z_common.sh"
[ -f scripts/device-jobs/before_tune_devices.py.txt ] ||
  { z_log "no scripts/device-jobs/before_tune_devices.py.txt (see the header)"; exit 1; }
z_setup new
before=$PWD/build/z-site-before
rm -rf "$before" && cp -r "$NEW_SITE" "$before"
cp scripts/device-jobs/before_tune_devices.py.txt "$before/reducetune/cli/tune_devices.py"
rm -f "$before/reducetune/evaluate/_visible_gpus.py"
python3 -m compileall -q "$before" > /dev/null 2>&1
{ ls -l /proc/driver/nvidia/gpus; cat /proc/driver/nvidia/gpus/*/information; ls -l /dev/nvidia*
  echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset}"
  PYTHONPATH=$NEW_SITE:/tmp/site python3 -c "from reducetune.evaluate._visible_gpus import visible_gpu_count as v; print('files count:', v())"
} > "$W/proc_gpus.txt" 2>&1
PYTHONPATH=$NEW_SITE:/tmp/site python3 -m pytest -q -p no:cacheprovider tests/python/test_gpu_count.py \
  tests/python/test_visible_gpus.py tests/python/test_device_worker_start.py > "$W/count_tests.log" 2>&1
z_log "count tests rc=$?"
for k in 1 2; do
  for tree in before after; do
    site=$NEW_SITE; [ $tree = before ] && site=$before
    z_log "sweep $tree $k"
    PYTHONPATH=$site:/tmp/site MGS_RT="python3 -m reducetune" MGS_ARGS="--race off" \
      timeout 240 scripts/multi-gpu-sweep "$W/${tree}_$k" quad > "$W/${tree}_$k.log" 2>&1
  done
done
{
  echo "# The 768-point sweep, GPUs counted by cuInit (before) and from the driver's files (after)"
  echo; echo "Device: $(tr '\n' ';' < "$W/gpus.txt"); date: $(date -u +%F\ %H:%M) UTC"; echo
  python3 scripts/device-jobs/z_summary.py scaling-header
  for r in before_1 after_1 before_2 after_2; do python3 scripts/device-jobs/z_summary.py scaling "$W/$r" "$r"; done
  for r in before_1 after_1 before_2 after_2; do
    echo; echo "## $r"; echo
    sed -n '/^## Where each/,/^## Scale-out: the model/p' "$W/$r/report.md" 2>/dev/null
  done
} > "$W/summary.md" 2>> "$W/job.log"
z_pack
