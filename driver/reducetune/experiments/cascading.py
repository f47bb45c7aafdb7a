"""``reducetune experiment cascading``: algorithm cascading (Brent's theorem) measured.

1. GB/s against the elements each thread reduces sequentially, for several n, element types
   and block sizes. The sweep takes every ``elements_per_thread`` of the tunable family with
   an uncapped grid, then every ``grid_cap`` (at the largest elements_per_thread): with a
   capped grid the grid-stride loop makes each thread reduce n / (grid x block) elements, far
   more than the parameter. That effective value is the x axis. Beyond tunable's largest value
   (256), the cascade family's ``elements_per_thread`` 512 ... 16384, uncapped, shrink the
   grid down to one block, so that every size reaches 4096 elements per thread and more
   (where n / block allows): at 2^20 and 2^24 a grid cap cannot (it never goes below one block
   per SM). The cascade family exists for this experiment (kernel_templates/cascade): it
   compiles the same kernel as tunable's ``good`` preset; tunable keeps its range, since for
   tuning a larger value only adds grids its caps already give, and widening it would change
   the template hash that keys every recorded measurement. Brent's O(log n) choice,
   Harris's 1024-4096 and the measured optimum are marked.
2. The other cascade: time against n for each way of combining the blocks' partials: the
   seeds' recursive host loop (multipass), nested launches (dynamic parallelism), two passes,
   a host finish (the same pass; the partials copied to the host and combined by the CPU,
   timed until the CPU has the result), one pass with a last-block ticket, one pass with
   atomics.

Every point goes into the results database first; the report is built from the database(s)
alone (``--replay A.db --replay B.db``: one section per device model, and a comparison). A
recording made before a row existed replays too: the report lists what it lacks.

    reducetune experiment cascading --out docs/research/cascading --time-limit 3m
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from reducetune._sizes import parse_sizes
from reducetune._space import DTYPES as ALL_DTYPES
from reducetune._space import Space
from reducetune.cli.args import integer_list, name_list, one_size, sizes_text
from reducetune.evaluate.base import workload
from reducetune.experiments._cascading_report import markdown, plot
from reducetune.experiments._xp_common import add_common, databases, study_config, write_report
from reducetune.experiments._xp_run import Job

__all__ = ["add_arguments", "run_from_args", "sweep_points", "passes_points",
           "collect", "PROTOCOLS"]

OP = "sum"
SIZES = [1 << 20, 1 << 24, 1 << 28, 1 << 30]
# The sweep's chosen subsets, not lists of every type or block size (those are the core's
# DTYPES and the tunable family's block_size values; a test checks these are subsets of them).
DTYPES = ["float32", "int32", "float64"]
BLOCK_SIZES = [128, 256, 1024]
PASSES_SIZES = [1 << k for k in range(10, 31, 4)]
PASSES_DTYPE = "int32"  # atomics are exact for integers: every protocol is deterministic
# Nested launches above this n by default: one child launch per parent block of a grid of
# millions, each waiting in the device runtime's launch pool; up to the point timeout of a
# run's few minutes for one point (--nested-max raises it).
NESTED_MAX = 1 << 26
# (label, family, parameters): the ways to combine the blocks' partials, in the plot's order
PROTOCOLS = [
    ("multipass (host loop, seeds harris5_shfl)", "seeds",
     {"kernel": "harris5_shfl", "block_size": 256}),
    ("two passes (tunable)", "tunable", {"finish": "two_pass", "grid_cap": 4}),
    ("host finish (cascade: partials copied to the host, CPU combine)", "cascade",
     {"finish": "host", "grid_cap": 4}),
    ("one pass, last-block ticket (tunable)", "tunable", {"finish": "ticket", "grid_cap": 4}),
    ("one pass, atomics (tunable)", "tunable", {"finish": "atomic", "grid_cap": 4}),
    ("nested launches (dynamic parallelism)", "nested", {"kernel": "gpuRecursiveReduceFixed",
                                                         "block_size": 256}),
]


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p, "cascading", sample_time=0.05, max_samples=50, timeout=60)
    p.add_argument("--sizes", nargs="+", type=sizes_text, default=None,
                   help="sizes of the sweep (default 2^20 2^24 2^28 2^30)")
    p.add_argument("--dtypes", default=",".join(DTYPES), help="element types of the sweep")
    p.add_argument("--block-sizes", default=",".join(map(str, BLOCK_SIZES)),
                   help="block sizes of the sweep (default 128,256,1024)")
    p.add_argument("--passes-sizes", nargs="+", type=sizes_text, default=None,
                   help="sizes of the passes comparison (default 2^10..2^30:4); 'none' skips it")
    p.add_argument("--nested-max", type=sizes_text, default=None, metavar="N",
                   help="largest n of the nested launches in the passes comparison "
                        "(default 2^26)")
    p.add_argument("--quick", action="store_true",
                   help="float32 and int32 only, block size 256 only: about half the time")


def _space(family: str, dtype: str, limits: Any) -> Any:
    return Space(family, dtype, OP, limits)


def _launches(space: Any) -> tuple[list[int], list[int]]:
    choices = space.choices()
    return (sorted(int(v) for v in choices["elements_per_thread"]),
            sorted((int(v) for v in choices["grid_cap"] if int(v) > 0), reverse=True))


def sweep_points(dtype: str, n: int, block_sizes: list[int], limits: Any
                 ) -> list[tuple[Any, int, float]]:
    """(point, grid, elements per thread) of the sweep at one size, at each block size: the
    tunable family's base preset with every elements_per_thread uncapped, then every grid_cap
    at its largest, then the cascade family's (the same kernel: cascade.family.json) larger
    elements_per_thread uncapped; a point whose grid another already has is left out (it would
    measure the same launch). Both families share the grid expression (Point.grid asks the
    C++ space for it)."""
    tunable, cascade = _space("tunable", dtype, limits), _space("cascade", dtype, limits)
    epts, caps = _launches(tunable)
    wide = [e for e in _launches(cascade)[0] if e > epts[-1]]
    plan = [(tunable, e, 0) for e in epts] + [(tunable, epts[-1], c) for c in caps] \
        + [(cascade, e, 0) for e in wide]
    base = {id(sp): dict(sp.base("good").params) for sp in (tunable, cascade)}
    out = []
    for bs in block_sizes:
        seen = set()
        for space, ept, cap in plan:
            p = space.point({**base[id(space)], "block_size": bs, "elements_per_thread": ept,
                             "grid_cap": cap})
            grid = p.grid(n)
            if grid in seen:
                continue
            seen.add(grid)
            if not space.check(p):
                out.append((p, grid, n / (grid * bs)))
    return out


def passes_points(limits: Any) -> list[tuple[str, Any]]:
    """(protocol label, point) of the passes comparison."""
    out = []
    for label, family, params in PROTOCOLS:
        space = _space(family, PASSES_DTYPE, limits)
        base = dict(space.base("good").params) if family in ("tunable", "cascade") else {}
        out.append((label, space.point({**base, **params})))
    return out


def _options(args: argparse.Namespace) -> dict[str, Any]:
    dtypes = name_list(args.dtypes, ALL_DTYPES, "--dtypes")
    block_sizes = integer_list(args.block_sizes, 32, 1024, "--block-sizes")
    if args.quick:
        dtypes = [d for d in dtypes if d != "float64"]
        block_sizes = [256]
    sizes = parse_sizes(args.sizes) if args.sizes else SIZES
    passes = [] if args.passes_sizes == ["none"] else (
        parse_sizes(args.passes_sizes) if args.passes_sizes else PASSES_SIZES)
    nested_max = NESTED_MAX if args.nested_max is None else one_size(args.nested_max,
                                                                      "--nested-max")
    return {"sizes": sizes, "dtypes": dtypes, "block_sizes": block_sizes,
            "passes_sizes": passes, "nested_max": nested_max}


def plan(opts: dict[str, Any], limits: Any) -> list[Any]:
    """Every job, the passes comparison's nested launches last in each workload (the slowest:
    a timeout there restarts the worker after the rest is measured)."""
    jobs = [Job(p, n) for n in opts["sizes"] for d in opts["dtypes"]
            for p, _, _ in sweep_points(d, n, opts["block_sizes"], limits)]
    pts = passes_points(limits)
    jobs += [Job(p, n) for n in opts["passes_sizes"] for _, p in pts if p.family != "nested"]
    jobs += [Job(p, n) for n in opts["passes_sizes"] for _, p in pts
             if p.family == "nested" and n <= opts.get("nested_max", NESTED_MAX)]
    return jobs


def _measure(args: argparse.Namespace, opts: dict[str, Any]) -> Any:
    def measure(runner: Any) -> None:
        jobs = plan(opts, runner.evaluator.limits)
        runner.ceiling()
        counts = runner.run(jobs, study_config(args, opts), first_in_workload=runner.cub)
        print(f"cascading: {counts.measured} measured ({counts.failed} failed), "
              f"{counts.known} from the database, {counts.left} left", file=sys.stderr)
    return measure


def _point_cell(view: Any, p: Any, n: int) -> dict[str, Any] | None:
    r = view.row(p, n)
    if r is None:
        return None
    return {"id": r["id"], "status": r["status"], "reason": r["reason"],
            "median_s": r["median_s"], "gbps": r["gbps"], "samples": len(r["samples_s"]),
            "rel_stddev": r["rel_stddev"], "launches": view.launches(r),
            "date": r["created_at"][:10], "variant": p.variant_label, "launch": p.launch_label}


def collect(view: Any, opts: dict[str, Any]) -> dict[str, Any]:
    """The report's numbers for one device, read from its database."""
    limits = view.evaluator.limits
    ceiling = view.evaluator.ceiling_bytes_per_s()
    out: dict[str, Any] = {"device": view.name, "source": view.source, "sm_count":
                           limits.sm_count, "ceiling_gbps": ceiling / 1e9 if ceiling else None,
                           "sweep": [], "passes": [], "measured_by": view.commands,
                           "gpus": view.gpus, "runs": view.runs}
    missing: dict[str, Any] = {"sweep": [], "passes": []}
    for dtype in opts["dtypes"]:
        for n in opts["sizes"]:
            cub = view.evaluator.cub(workload(dtype, OP, n))
            points = []
            for p, grid, eff in sweep_points(dtype, n, opts["block_sizes"], limits):
                cell = _point_cell(view, p, n)
                if cell is None:
                    missing["sweep"].append({"dtype": dtype, "n": n, "family": p.family,
                                             "variant": p.variant_label,
                                             "launch": p.launch_label, "effective": eff})
                    continue
                points.append({**cell, "family": p.family, "block_size": p.params["block_size"],
                               "grid": grid, "elements_per_thread": p.params["elements_per_thread"],
                               "grid_cap": p.params["grid_cap"], "effective": eff})
            out["sweep"].append({"dtype": dtype, "n": n, "points": points,
                                 "cub_gbps": cub["gbps"] if cub else None,
                                 **_marks(n, points, limits.sm_count)})
    for label, p in passes_points(limits):
        cells = [{"n": n, **c} for n in opts["passes_sizes"]
                 if (c := _point_cell(view, p, n)) is not None]
        out["passes"].append({"protocol": label, "variant": p.variant_label,
                              "launch": p.launch_label, "family": p.family,
                              "finish": p.params.get("finish"), "cells": cells})
        planned = [n for n in opts["passes_sizes"]
                   if p.family != "nested" or n <= opts.get("nested_max", NESTED_MAX)]
        lacks = [n for n in planned if n not in {c["n"] for c in cells}]
        if lacks:
            missing["passes"].append({"protocol": label, "n": lacks})
    out["missing"] = missing
    return out


def _marks(n: int, points: list[dict[str, Any]], sm_count: int) -> dict[str, Any]:
    """The measured optimum, the point nearest Brent's log2(n) elements per thread (at the
    optimum's block size), the best point within Harris's 1024-4096, and where the grid
    shrinks below one block per SM at the optimum's block size (``shrink``: the last point
    whose grid has at least sm_count blocks, the first with fewer, the widest measured)."""
    ok = [p for p in points if p["status"] == "ok"]
    if not ok:
        return {"optimum": None, "brent": None, "harris": None, "brent_target": math.log2(n),
                "shrink": None}
    best = max(ok, key=lambda p: (p["gbps"], -p["effective"]))
    same_bs = sorted((p for p in ok if p["block_size"] == best["block_size"]),
                     key=lambda p: p["effective"])
    target = math.log2(n)
    brent = min(same_bs, key=lambda p: (abs(math.log2(p["effective"] / target)), -p["gbps"]))
    band = [p for p in ok if 1024 <= p["effective"] <= 4096]
    harris = max(band, key=lambda p: p["gbps"]) if band else None
    full = [p for p in same_bs if p["grid"] >= sm_count]
    short = [p for p in same_bs if p["grid"] < sm_count]
    shrink = {"block_size": best["block_size"], "sm_count": sm_count,
              "last_full": full[-1] if full else None, "first_short": short[0] if short else None,
              "widest": same_bs[-1]}
    return {"optimum": best, "brent": brent, "harris": harris, "brent_target": target,
            "shrink": shrink}


def run_from_args(args: argparse.Namespace) -> int:
    opts = _options(args)
    paths = databases(args, "cascading", _measure(args, opts))
    return write_report(Path(args.out), paths, lambda v: collect(v, opts), {"options": opts},
                        plot, markdown)
