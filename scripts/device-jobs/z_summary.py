#!/usr/bin/env python3
"""Numbers of issue 25's device jobs from `reducetune tune --json` documents (the tuner's own
report: each unit's best deterministic point against CUB measured in the same run, x_cub).

    z_summary.py points RUN.json            points measured (every unit, every worker)
    z_summary.py header                     the rows' header
    z_summary.py units RUN.json [LABEL]     one markdown row: units at >= 0.98 and >= 1.0 x CUB,
                                            the lowest and where, float32 sum 2^30 % of peak
    z_summary.py time-header                the time rows' header
    z_summary.py time RUN.json [LABEL]      one markdown row: where measuring went (its "time":
                                            tuning/timing.py, measuring_parts), summed over
                                            the workers; "-" where the run reported no parts
    z_summary.py scaling-header             the scaling rows' header
    z_summary.py scaling DIR [LABEL]        one markdown row of scripts/multi-gpu-sweep's
                                            OUTDIR: each run's wall, points per second and ratio
                                            to one GPU beside Amdahl's bound, the one-GPU fixed
                                            part and per-point cost, the points each target
                                            needs (its bound.json: experiments/_scale_bound.py)

A document is one workload's ({"sizes": [...]}), several ({"runs": [...]}), or a --devices
run's ({"workers": [...]}, each worker one of those).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _units(doc: dict[str, Any], dtype: str = "", op: str = "") -> list[dict[str, Any]]:
    """Every (dtype, op, n) entry of the document, tagged with its dtype and op."""
    if "workers" in doc:
        return [u for w in doc["workers"] for u in _units(w, dtype, op)]
    if "runs" in doc:
        return [u for r in doc["runs"] for u in _units(r, r.get("dtype", ""), r.get("op", ""))]
    return [{**s, "dtype": doc.get("dtype", dtype), "op": doc.get("op", op)}
            for s in doc.get("sizes", [])]


def points(doc: dict[str, Any]) -> int:
    return sum(int(u.get("evaluated") or 0) for u in _units(doc))


def _best_per_unit(doc: dict[str, Any]) -> dict[tuple[str, str, int], dict[str, Any]]:
    """One entry per unit: with several workers, the one whose best is fastest."""
    out: dict[tuple[str, str, int], dict[str, Any]] = {}
    for u in _units(doc):
        key = (u["dtype"], u["op"], int(u["n"]))
        if key not in out or (u.get("x_cub") or 0) > (out[key].get("x_cub") or 0):
            out[key] = u
    return out


def units_row(doc: dict[str, Any], label: str) -> str:
    best = _best_per_unit(doc)
    ratios = {k: u.get("x_cub") for k, u in best.items()}
    known = {k: r for k, r in ratios.items() if r is not None}
    low = min(known.items(), key=lambda kv: kv[1]) if known else None
    f32 = best.get(("float32", "sum", 1 << 30), {}).get("best") or {}
    pct = f32.get("pct_of_peak")
    return (f"| {label} | {len(best)} | {sum(r >= 0.98 for r in known.values())} | "
            f"{sum(r >= 1.0 for r in known.values())} | "
            + (f"{low[1]:.3f} ({low[0][0]} {low[0][1]} 2^{low[0][2].bit_length() - 1})"
               if low else "-")
            + f" | {'-' if pct is None else f'{pct:.1f}'} | {points(doc)} |")


HEADER = ("| run | units | >= 0.98 x CUB | >= 1.0 x CUB | lowest x CUB | float32 sum 2^30 "
          "% of peak | points measured |\n|---|---|---|---|---|---|---|")


PARTS = ("compile_s", "prepare_s", "sampling_s", "verify_s", "other_s")
TIME_HEADER = ("| run | evaluations | measuring s | ms per evaluation | compile s | prepare s | "
               "sampling s | verify s | other s |\n|---|---|---|---|---|---|---|---|---|")


def _times(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The document's breakdowns: its own "time", or each worker's."""
    if "workers" in doc:
        return [t for w in doc["workers"] for t in _times(w)]
    return [doc["time"]] if isinstance(doc.get("time"), dict) else []


def time_row(doc: dict[str, Any], label: str) -> str:
    """Measuring and its parts, seconds summed over the workers."""
    times = _times(doc)
    measuring = sum(float(t["phases"]["measuring"]) for t in times)
    parts = [t.get("measuring_parts") for t in times]
    if not times or not all(parts):
        return f"| {label} | - | {measuring:.1f} | - |" + " - |" * len(PARTS)
    evaluations = sum(int(p["evaluations"]) for p in parts)
    per = 1000 * measuring / evaluations if evaluations else 0.0
    return (f"| {label} | {evaluations} | {measuring:.1f} | {per:.1f} | "
            + " | ".join(f"{sum(float(p[k]) for p in parts):.1f}" for k in PARTS) + " |")


SCALING_HEADER = ("| run | points | one-GPU wall s | two-GPU wall s | points/s one | points/s two "
                  "| two / one | bound | four-GPU wall s | points/s four | four / one | bound | "
                  "fixed s | ms a point | points for 1.8 x on two | points for 3.4 x on four |\n"
                  + "|---" * 16 + "|")


def _cell(x: Any, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def scaling_row(out: Path, label: str) -> str:
    """One row of a multi-gpu-sweep OUTDIR from its bound.json (the report's numbers, none
    computed again here); '-' for what it lacks (a sweep that failed, no four-GPU run)."""
    path = out / "bound.json"
    nums = json.loads(path.read_text()) if path.exists() else None
    if not nums:
        return f"| {label} |" + " - |" * (SCALING_HEADER.split("\n")[0].count("|") - 2)
    runs, f = nums["runs"], nums["fixed"]
    cells = [str(runs["1"]["points"])]
    for g in ("1", "2"):
        cells.append(_cell(runs.get(g, {}).get("wall_s"), ".1f"))
    cells += [_cell(runs.get(g, {}).get("points_per_s"), ".1f") for g in ("1", "2")]
    for g in ("2", "4"):
        r = runs.get(g, {})
        if g == "4":
            cells += [_cell(r.get("wall_s"), ".1f"), _cell(r.get("points_per_s"), ".1f")]
        cells += [_cell(r.get("x_one"), ".2f"), _cell(r.get("bound"), ".2f")]
    cells += [f"{f['fixed_s']:.1f}", f"{f['per_point_s'] * 1e3:.2f}"]
    cells += [_cell(t["points"], "d") for t in nums["targets"]]
    return f"| {label} | " + " | ".join(cells) + " |"


def main(argv: list[str]) -> int:
    if argv[0] in ("header", "time-header", "scaling-header"):
        print({"header": HEADER, "time-header": TIME_HEADER,
               "scaling-header": SCALING_HEADER}[argv[0]])
        return 0
    if argv[0] == "scaling":
        print(scaling_row(Path(argv[1]), argv[2] if argv[2:] else argv[1]))
        return 0
    with open(argv[1]) as f:
        doc = json.load(f)
    label = argv[2] if argv[2:] else argv[1]
    if argv[0] == "points":
        print(points(doc))
    else:
        print(time_row(doc, label) if argv[0] == "time" else units_row(doc, label))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
