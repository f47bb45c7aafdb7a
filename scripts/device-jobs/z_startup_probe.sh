#!/usr/bin/env bash
# Device job, issue 25 (one GPU, a few minutes): where the one-GPU sweep's whole-command time
# goes outside its loop. scripts/multi-gpu-sweep's one-GPU sweep (default storage) twice, then
# once under cProfile; each tune --json's time.startup (tuning/timing.py) says when each step
# before the loop ended. Then, on the same build, the axis call's host-overhead probe and the
# axis call's GPU tests (issue 26), when Z_AXIS=1.
#   run(command="bash scripts/device-jobs/z_startup_probe.sh", carry=[".deps", ".whl"])
source "$(dirname "$0")/z_common.sh"
z_setup new
export PYTHONPATH=$NEW_SITE:/tmp/site MGS_RT="python3 -m reducetune" MGS_ARGS="--race off"
for k in 1 2; do
  timeout 120 scripts/multi-gpu-sweep "$W/single$k" single > "$W/single$k.log" 2>&1
  python3 - "$W/single$k" <<'PY' | tee -a "$W/summary.md"
import json, sys
from pathlib import Path
d = Path(sys.argv[1]); t = json.loads((d / "single.json").read_text())["time"]
whole = float((d / "single_s").read_text())
run = t["startup"].get("storage", 0.0)
print(f"{d.name}: whole {whole:.2f} s; startup {t['startup']}; loop {t['wall_s']:.2f} s "
      f"(first point {t['first_point_s']:.2f}, last {t['last_point_s']:.2f}); "
      f"after the loop {whole - run - t['wall_s']:.2f} s")
PY
done
rm -f /tmp/prof.db
timeout 120 python3 -m cProfile -o "$W/single.prof" -m reducetune tune --strategy grid \
  --dtype float32 --op sum --sizes 2^16 2^24 --max-samples 30 --sample-time 0.02 \
  --restrict block_size=256,1024 --restrict warp=shuffle --restrict finish=two_pass,ticket \
  --restrict elements_per_thread=4,16 --restrict grid_cap=0,4 --time-limit 75 --json --race off \
  --devices 0 --db /tmp/prof.db > "$W/prof.json" 2> "$W/prof.err"
python3 -c "import pstats,sys; pstats.Stats(sys.argv[1]).sort_stats('cumulative').print_stats(45)" \
  "$W/single.prof" > "$W/prof_cumulative.txt" 2>&1
if [ "${Z_AXIS:-0}" = 1 ]; then
  timeout 150 python3 scripts/device-jobs/axis_call_overhead.py > "$W/axis_call_overhead.log" 2>&1
  echo "axis_call_overhead rc=$?" >> "$W/summary.md"
  timeout 200 python3 -m pytest tests/python/test_axis_call_cache.py tests/python/test_reduce_eager_gpu.py \
    tests/python/test_reduce_axis.py -q -rs > "$W/axis_py_tests.log" 2>&1
  echo "axis python GPU tests rc=$? $(tail -1 "$W/axis_py_tests.log")" >> "$W/summary.md"
fi
z_pack
