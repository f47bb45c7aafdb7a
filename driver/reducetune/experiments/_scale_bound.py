"""Amdahl's bound on the multi-GPU report's ratios (issue 25, target 2; experiments/multi_gpu.py).

A sweep's command has a fixed part that no number of GPUs divides (the process, CUDA's start,
the results file and the studies' storage, each worker's first point, the exit) and a
per-point part that the workers share. From the one-GPU run alone (its ``tune --json`` "time"
and its command's wall seconds, the script's ``single_s``):

- the per-point part ``span_s`` = ``last_point_s - first_point_s``: its points after the first,
  ``per_point_s`` = ``span_s / (points - 1)`` each;
- the fixed part ``fixed_s`` = the command's wall less ``span_s``, that is the command's wall
  less the loop's (``wall_s``: before the loop, the steps of ``startup``; after it, the JSON
  printed and the process's exit), plus ``first_point_s`` (the loop before its first
  measurement), plus ``wall_s - last_point_s`` (the loop after its last).

N GPUs can then make the command at most (F + P) / (F + P / N) as fast as one, and a sweep of
the same per-point cost reaches a ratio R on N GPUs (R < N) from
points = 1 + F (R - 1) / (p (1 - R / N)), assuming its per-point part divides by N. Each run's
own split (its wall less its first-to-last measurement span) says where a run fell short of
the bound: a larger fixed part, or points that did not divide by N.
"""

from __future__ import annotations

import math
from typing import Any

# Issue 25's targets: (GPUs, ratio of points per second to one GPU's over the whole command).
TARGETS = ((2, 1.8), (4, 3.4))


def fixed_part(t: dict[str, Any], command_s: float) -> dict[str, float] | None:
    """The one-GPU run's split (module docstring) from its ``tune --json`` "time" ``t`` and
    its command's wall ``command_s``; None where the breakdown lacks the points' times (a
    tune --json of before 2026-11-26) or has fewer than two points."""
    first, last, points = t.get("first_point_s"), t.get("last_point_s"), int(t["points"])
    if first is None or last is None or points < 2 or not command_s:
        return None
    span = float(last) - float(first)
    return {"command_s": command_s, "start_end_s": command_s - float(t["wall_s"]),
            "first_point_s": float(first), "tail_s": float(t["wall_s"]) - float(last),
            "fixed_s": command_s - span, "span_s": span, "per_point_s": span / (points - 1),
            "points": points}


def bound(f: dict[str, float], gpus: int) -> float:
    """The most that ``gpus`` GPUs can speed up the one-GPU command: only its span divides."""
    return f["command_s"] / (f["fixed_s"] + f["span_s"] / gpus)


def points_for(f: dict[str, float], gpus: int, target: float) -> int | None:
    """The fewest points for which a sweep of this fixed part and per-point cost can reach
    ``target`` on ``gpus`` GPUs; None where no number of points can (target >= gpus)."""
    if target >= gpus:
        return None
    return 1 + math.ceil(f["fixed_s"] * (target - 1) / (f["per_point_s"] * (1 - target / gpus)))


def run_span(doc: dict[str, Any]) -> float | None:
    """A run's first to last measurement (s) from its ``tune --json``: one process's, or over
    a --devices run's workers (each worker's ``began_at`` lines them up)."""
    times = [w["time"] for w in doc["workers"] if "time" in w] if "workers" in doc else \
        [doc["time"]] if "time" in doc else []
    at = [(t["began_at"] + t["first_point_s"], t["began_at"] + t["last_point_s"])
          for t in times if t.get("first_point_s") is not None]
    return max(b for _, b in at) - min(a for a, _ in at) if at else None


def numbers(f: dict[str, float], runs: dict[int, tuple[int, float, float | None]]
            ) -> dict[str, Any]:
    """What the section and the summary print: the one-GPU split ``f``; per run (GPUs ->
    (points, its command's wall, its measuring span or None)) its points per second over the
    whole command, the ratio to one GPU's, the bound, the run's own fixed part and how far its
    span divided; per target the points it needs and that sweep's one-GPU wall."""
    one = runs[1][0] / runs[1][1]  # fixed_part's command_s: the one-GPU wall is not 0
    rows = {g: {"points": n, "wall_s": wall, "points_per_s": n / wall,
                "x_one": n / wall / one if one else None, "bound": bound(f, g),
                "fixed_s": None if span is None else wall - span,
                "divided": None if not span else f["span_s"] / span}
            for g, (n, wall, span) in runs.items() if wall}
    targets = []
    for gpus, target in TARGETS:
        n = points_for(f, gpus, target)
        targets.append({"gpus": gpus, "target": target, "points": n,
                        "one_gpu_s": None if n is None else f["fixed_s"] + (n - 1) *
                        f["per_point_s"]})
    return {"fixed": f, "runs": rows, "targets": targets}


def bound_numbers(runs: dict[int, tuple[int, float, dict[str, Any] | None]]
                  ) -> dict[str, Any] | None:
    """_scale_bound.numbers of the runs (GPUs -> (points, the command's wall seconds, its
    tune --json or None)); None without the one-GPU run's breakdown and wall."""
    one = runs[1][2]
    t = one and (one["time"] if "time" in one else one["workers"][0]["time"])
    f = fixed_part(t, runs[1][1]) if t else None
    if f is None:
        return None
    return numbers(f, {g: (n, s, run_span(doc) if doc else None)
                       for g, (n, s, doc) in runs.items()})


def _num(x: float | None, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def section(nums: dict[str, Any]) -> str:
    """The report's section: the one-GPU split with the fields it comes from, each run's
    measured ratio beside its bound, and the points each target needs."""
    f = nums["fixed"]
    lines = ["## Amdahl's bound: what the one-GPU run's fixed part allows", "",
             f"One GPU: command {f['command_s']:.2f} s (single_s) = fixed {f['fixed_s']:.2f} s "
             f"+ {f['points'] - 1} points after the first in {f['span_s']:.2f} s "
             f"(last_point_s - first_point_s; {f['per_point_s'] * 1e3:.2f} ms a point). The "
             f"fixed part: the command's wall less the loop's (single_s - wall_s: its start "
             f"and its end) {f['start_end_s']:.2f} s, the loop before its first point "
             f"(first_point_s) {f['first_point_s']:.2f} s, the loop after its last point "
             f"(wall_s - last_point_s) {f['tail_s']:.2f} s. N GPUs can at most make it "
             "(F + P) / (F + P / N) as fast. Each run's own fixed part is its wall less its "
             "first to last measurement (the workers' began_at + first_point_s .. "
             "last_point_s); \"divided\" is the one-GPU span over the run's.", "",
             "| GPUs | x one GPU (measured) | bound | run's fixed s | per-point part divided |",
             "|---|---|---|---|---|"]
    for g, r in sorted(nums["runs"].items()):
        lines.append(f"| {g} | {_num(r['x_one'], '.2f')} | {r['bound']:.2f} | "
                     f"{_num(r['fixed_s'], '.2f')} | {_num(r['divided'], '.2f')} x |")
    lines += ["", "Points a sweep of this fixed part and per-point cost needs for the targets "
              "(points = 1 + F (R - 1) / (p (1 - R / N)), assuming the per-point part divides "
              f"by N; this sweep: {f['points']}):", "",
              "| GPUs | target | points | its one-GPU wall s |", "|---|---|---|---|"]
    for t in nums["targets"]:
        lines.append(f"| {t['gpus']} | {t['target']:.1f} | {_num(t['points'], 'd')} | "
                     f"{_num(t['one_gpu_s'], '.1f')} |")
    return "\n".join(lines) + "\n"
