"""Device probe (issue 25): where the 0.22 us goes at float32 n = 4096.

After six minutes on an H200 (docs/results/h200_2026-11-26_z_priors_six_minutes) float32 sum,
min and max at 2^12 stayed under 0.98 x CUB: their best points took 5.952 us whatever their
block, vec or finish, CUB's float32 sum 5.728 us, int32's best (warp_redux) 5.664-5.696 us.
This probe asks which part of the call differs, in two ways:

1. Timing in the tuner's protocol (``_core.evaluate`` / ``_core.evaluate_cub``, the tuner's
   options), in one process, contenders alternated over ROUNDS rounds: CUB, float32 points
   of several shapes (one block of 256 x 16, of 1024 x 4, several blocks, tree vs warp
   partials, the ticket finish vs two passes), int32's best; the median of the rounds'
   medians per contender.
2. Nsight Compute of CUB's call and of the float32 best's call, each in its own process:
   every kernel's duration, cycles, instructions, registers and launch shape (the
   sampler's gate and flush kernels are listed too; the reduction's kernels are named).

    python3 scripts/device-jobs/small_n_probe.py --out OUT/small_n.json [--rounds 15] [--no-ncu]
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from reducetune import _core
from reducetune._space import Space
from reducetune.evaluate.base import data_of, problem_of, workload
from reducetune.tuning.config import TuneConfig

N = 4096
# (name, dtype, op, variant label, launch label): the six-minute run's bests and neighbours
POINTS = (
    ("f32 best (bs256 v4 warp_partials ticket, 1 block x 16)", "float32", "sum",
     "tunable.float32.sum.bs_256.u_4.v_4.warp_shuffle.blk_warp_partials.fin_ticket",
     "ept_16.cap_1"),
    ("f32 bs256 v4 tree ticket", "float32", "sum",
     "tunable.float32.sum.bs_256.u_4.v_4.warp_shuffle.blk_tree.fin_ticket", "ept_16.cap_1"),
    ("f32 bs1024 v4 warp_partials, 1 block x 4", "float32", "sum",
     "tunable.float32.sum.bs_1024.u_1.v_4.warp_shuffle.blk_warp_partials.fin_ticket",
     "ept_4.cap_1"),
    ("f32 bs128 v4 warp_partials, 2 blocks x 16", "float32", "sum",
     "tunable.float32.sum.bs_128.u_4.v_4.warp_shuffle.blk_warp_partials.fin_ticket",
     "ept_16.cap_2"),
    ("f32 bs256 v4 two_pass, 4 blocks x 4", "float32", "sum",
     "tunable.float32.sum.bs_256.u_1.v_4.warp_shuffle.blk_warp_partials.fin_two_pass",
     "ept_4.cap_4"),
    ("i32 best (warp_redux)", "int32", "sum",
     "tunable.int32.sum.bs_512.u_4.v_4.warp_redux.blk_warp_partials.fin_ticket", "ept_64.cap_4"),
)
NCU_METRICS = ("gpu__time_duration.sum", "sm__cycles_elapsed.max", "smsp__inst_executed.sum",
               "launch__grid_size", "launch__block_size", "launch__registers_per_thread",
               "launch__shared_mem_per_block_static", "dram__bytes_read.sum")
OPTIONS = TuneConfig(dtype="float32", op="sum").sampling()  # the tune's own stopping rule


def point_of(dtype: str, op: str, variant: str, launch: str) -> dict[str, Any] | None:
    """The labelled point as _core.evaluate takes it, None where this space refuses it."""
    space = Space("tunable", dtype, op, _core.device_limits(0))
    try:
        p = space.parse(variant, launch)
    except Exception as e:  # a label the space no longer parses: said, the rest goes on
        print(f"skipped {variant} {launch}: {e}", file=sys.stderr)
        return None
    return None if space.check(p) else p.to_dict()


def one(kind: str, dtype: str, op: str, point: dict | None, options: dict) -> dict[str, Any]:
    w = workload(dtype, op, N)
    if kind == "cub":
        return _core.evaluate_cub(w, 0, options)
    return _core.evaluate(point, problem_of(w), data_of(w), 0, options)


def timings(rounds: int) -> dict[str, Any]:
    """Each contender's medians over the rounds, alternated (CUB first in each round)."""
    todo = [("CUB float32 sum", "cub", "float32", "sum", None),
            ("CUB int32 sum", "cub", "int32", "sum", None)]
    for name, dtype, op, variant, launch in POINTS:
        p = point_of(dtype, op, variant, launch)
        if p is not None:
            todo.append((name, "point", dtype, op, p))
    got: dict[str, list[float]] = {t[0]: [] for t in todo}
    status: dict[str, str] = {}
    for _ in range(rounds):
        for name, kind, dtype, op, p in todo:
            r = one(kind, dtype, op, p, OPTIONS)
            status[name] = str(r.get("status", "ok"))
            if r.get("median_s"):
                got[name].append(float(r["median_s"]))
    return {name: {"median_us": statistics.median(v) * 1e6 if v else None,
                   "min_us": min(v) * 1e6 if v else None, "rounds": len(v),
                   "status": status.get(name)} for name, v in got.items()}


def child(which: str) -> int:
    """One call under ncu: CUB's float32 sum, or the float32 best point, one sample."""
    opts = {"hot": False, "graph": False, "min_samples": 1, "max_samples": 1,
            "max_noise": 0.5, "time_cap_s": 1e-3}
    _, dtype, op, variant, launch = POINTS[0]
    p = None if which == "cub" else point_of(dtype, op, variant, launch)
    r = one("cub" if which == "cub" else "point", dtype, op, p, opts)
    print(json.dumps({"which": which, "status": r.get("status")}), file=sys.stderr)
    return 0


def profile(which: str) -> dict[str, Any]:
    cmd = ["ncu", "--csv", "--page", "raw", "--clock-control", "none", "--cache-control", "all",
           "--metrics", ",".join(NCU_METRICS), sys.executable, __file__, "--child", which]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return {"command": shlex.join(cmd), "rc": done.returncode, "csv": done.stdout,
            "stderr_tail": done.stderr[-2000:]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--child", choices=("cub", "point"))
    ap.add_argument("--no-ncu", action="store_true", help="the timings only")
    a = ap.parse_args()
    if a.child:
        return child(a.child)
    doc = {"device": _core.query_device(0).get("name"), "n": N, "options": OPTIONS,
           "timings": timings(a.rounds)}
    for name, t in doc["timings"].items():
        print(f"{name:55s} median {t['median_us']} us  min {t['min_us']}  ({t['status']})")
    doc["ncu"] = {} if a.no_ncu else {w: profile(w) for w in ("cub", "point")}
    for w, r in doc["ncu"].items():
        print(f"--- ncu {w} rc={r['rc']}\n{r['csv']}\n{r['stderr_tail'][-600:]}")
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
