"""Two GPUs against one: the report of scripts/multi-gpu-sweep (issue 15).

The script runs one grid sweep on GPU 0 alone (``single``), then the same sweep with
``--devices 0,1`` (``dual``: each point measured once, by whichever GPU claimed it). From the
two results files this writes a markdown report and a CSV of every point:

- coverage: every point of the sweep measured once in ``dual`` (none lost, none twice), and
  how the points split between the GPUs;
- the wall-time ratio (the script's timings of the two commands), and the ratio of the
  measuring spans (first to last measurement: without starting workers and compiling);
- points per second over each whole command, and (with ``--single-json``) a model of
  scale-out from the one-GPU sweep's per-point costs (``predict``), checked against the one-
  and two-GPU sweeps and extended to 4 and 8 GPUs and 4 machines of 8;
- agreement: each point's median in ``dual`` against its median on GPU 0 alone. Points that
  GPU 0 measured in both runs give the run-to-run spread of one GPU; points GPU 1 measured
  give the spread between two GPUs of one model. The second against the first is the answer
  to "how different are two identical H200s?".

Usage: python -m reducetune.experiments.multi_gpu --single S.db --dual D.db --single-s T1
--dual-s T2 --out report.md [--csv points.csv] [--command TEXT]
[--single-json S.json --dual-json D.json] [--quad Q.db --quad-s T4 --quad-json Q.json]
[--json BOUND.json]

With the four-GPU sweep (``--devices 0,1,2,3``, ``quad``) the report adds a row per run: its
points, none missing / none twice against GPU 0 alone, points per second over the whole
command, the ratio to one GPU's, and the model's prediction for that many GPUs.

With the sweeps' ``tune --json`` outputs, the report adds where each worker's time went
(issue 25: measuring, compiling, lock wait, storage reads and writes, sampler, results file,
the tuner's own, idle; tuning/timing.py), and each measured ratio beside Amdahl's bound from
the one-GPU run's fixed part, with the points a sweep needs for the targets (_scale_bound.py;
``--json``: those numbers, for scripts/device-jobs/z_summary.py).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from reducetune.experiments._scale_bound import bound_numbers, section
from reducetune.store.measurements import measurement_rows
from reducetune.tuning.timing import PHASES

# What the report reads of each measurement (reducetune.measurements' columns), in order.
FIELDS = ("device_uuid", "device", "variant_label", "launch_label", "n", "median_s", "status")


def read(db: Path) -> list[tuple[Any, ...]]:
    """Every measurement of the file as a tuple of FIELDS."""
    return [tuple(r[k] for k in FIELDS) for r in measurement_rows(db)]


def measuring_s(db: Path) -> float:
    """Seconds from the first measurement to the last (created_at): the sweep without its
    fixed costs (starting workers, compiling, the ceiling and CUB)."""
    stamps = [r["created_at"] for r in measurement_rows(db)]
    if not stamps:
        return 0.0
    lo, hi = (datetime.fromisoformat(t.replace("Z", "+00:00")) for t in (min(stamps),
                                                                           max(stamps)))
    return (hi - lo).total_seconds()


def spread(pairs: list[tuple[float, float]]) -> dict[str, float]:
    """Relative differences (b / a - 1) of the pairs: count, median |d|, p90 |d|, max |d|,
    median signed d, and the shares within 1 % and 5 %."""
    d = sorted(b / a - 1.0 for a, b in pairs if a and b)
    if not d:
        return {"count": 0}
    absd = sorted(abs(x) for x in d)
    return {"count": len(d), "median_abs": statistics.median(absd),
            "p90_abs": absd[min(len(absd) - 1, int(0.9 * len(absd)))], "max_abs": absd[-1],
            "median_signed": statistics.median(d),
            "within_1pct": sum(x <= 0.01 for x in absd) / len(absd),
            "within_5pct": sum(x <= 0.05 for x in absd) / len(absd)}


def _best(rows: list[tuple[Any, ...]], n: int) -> tuple[str, str, float] | None:
    ok = [(r[5], r[2], r[3]) for r in rows if r[4] == n and r[6] == "ok" and r[5]]
    if not ok:
        return None
    median, variant, launch = min(ok)
    return variant, launch, median


def analyse(single: list[tuple[Any, ...]], dual: list[tuple[Any, ...]]) -> dict[str, Any]:
    gpu0 = {r[0] for r in single}
    alone = {(r[2], r[3], r[4]): r[5] for r in single if r[6] == "ok"}
    counts = Counter((r[2], r[3], r[4]) for r in dual)
    by_device = Counter(r[0] for r in dual)
    same, other, points = [], [], []
    for uuid, _, variant, launch, n, median, status in dual:
        base = alone.get((variant, launch, n))
        points.append({"n": n, "variant": variant, "launch": launch, "gpu": uuid,
                       "same_gpu": uuid in gpu0, "single_median_s": base,
                       "dual_median_s": median if status == "ok" else None})
        if base and status == "ok" and median:
            (same if uuid in gpu0 else other).append((base, median))
    sizes = sorted({r[4] for r in single} | {r[4] for r in dual})
    return {
        "devices": {r[0]: r[1] for r in dual}, "by_device": dict(by_device),
        "sizes": sizes, "single_points": len({(r[2], r[3], r[4]) for r in single}),
        "dual_points": len(counts), "twice": sum(1 for k in counts.values() if k > 1),
        "missing": len({(r[2], r[3], r[4]) for r in single} - set(counts)),
        "same": spread(same), "other": spread(other), "points": points,
        "best": {n: (_best(single, n), _best(dual, n)) for n in sizes}}


def _rate(points: int, seconds: float) -> str:
    return f"{points / seconds:.1f}" if seconds else "-"


def _pct(x: float) -> str:
    return f"{100 * x:.2f} %"


def markdown(a: dict[str, Any], t_single: float, t_dual: float, command: str,
             spans: tuple[float, float] = (0.0, 0.0), bound: float | None = None) -> str:
    """The report's head; ``bound``: Amdahl's bound on two GPUs' ratio (_scale_bound.py)."""
    lines = ["# Two GPUs against one: a grid sweep shared by `--devices 0,1`", ""]
    if command:
        lines += [f"Command: `{command}`", ""]
    lines += ["| device | UUID | points measured in the two-GPU run |", "|---|---|---|"]
    lines += [f"| {a['devices'][u]} | {u} | {k} |" for u, k in a["by_device"].items()]
    lines += ["", f"- points: {a['single_points']} on GPU 0 alone, {a['dual_points']} in the "
              f"two-GPU run; {a['missing']} missing, {a['twice']} measured twice",
              f"- wall time: {t_single:.1f} s alone, {t_dual:.1f} s on two GPUs: ratio "
              f"{t_single / t_dual:.2f}" + ("" if bound is None else f" (Amdahl's bound from "
              f"the one-GPU run's fixed part: {bound:.2f})") if t_dual else
              "- wall time: not given",
              f"- measuring (first to last measurement): {spans[0]:.1f} s alone, "
              f"{spans[1]:.1f} s on two GPUs: ratio "
              f"{spans[0] / spans[1] if spans[1] else float('nan'):.2f}",
              f"- points per second (whole command): {_rate(a['single_points'], t_single)} "
              f"alone, {_rate(a['dual_points'], t_dual)} on two GPUs", "",
              "## Agreement of each point's median with GPU 0 alone", "",
              "| points measured in the two-GPU run by | count | median abs diff | p90 | max |"
              " median signed | within 1 % | within 5 % |", "|---|---|---|---|---|---|---|---|"]
    for key, what in (("same", "GPU 0 again (run to run)"), ("other", "GPU 1 (another GPU)")):
        s = a[key]
        if not s["count"]:
            lines.append(f"| {what} | 0 | | | | | | |")
            continue
        lines.append(f"| {what} | {s['count']} | {_pct(s['median_abs'])} | "
                     f"{_pct(s['p90_abs'])} | {_pct(s['max_abs'])} | "
                     f"{_pct(s['median_signed'])} | {_pct(s['within_1pct'])} | "
                     f"{_pct(s['within_5pct'])} |")
    lines += ["", "## Best per size", "", "| n | GPU 0 alone | two GPUs |", "|---|---|---|"]
    for n, (one, two) in a["best"].items():
        cell = [f"{b[0].split('.sum.')[-1]} {b[1]} {b[2] * 1e6:.2f} µs" if b else "-"
                for b in (one, two)]
        lines.append(f"| {n} | {cell[0]} | {cell[1]} |")
    return "\n".join(lines) + "\n"


def breakdowns(doc: dict[str, Any], name: str) -> list[tuple[str, dict[str, Any]]]:
    """(worker, its "time") from a ``tune --json`` output: one per worker of a --devices
    run, else the one process's."""
    if "workers" in doc:
        return [(f"{name} GPU {w['ordinal']}", w["time"]) for w in doc["workers"] if "time" in w]
    return [(name, doc["time"])] if "time" in doc else []


def time_section(rows: list[tuple[str, dict[str, Any]]]) -> str:
    """Where each worker's time went (tuning/timing.py): seconds per phase and idle, split
    into its start (before its run) and its wait (after it, for the last worker) where the
    run says (cli/tune_devices.py); the first and last points' times in its run."""
    cols = [*PHASES, "idle", "start", "wait", "first point", "last point"]
    lines = ["## Where each worker's time went (s)", "",
             "| worker | points | points/s | wall | " + " | ".join(cols) + " |",
             "|---|" + "---|" * (3 + len(cols))]
    for name, t in rows:
        cells = [f"{t['phases'].get(c, 0.0):.2f}" for c in PHASES]
        cells += [f"{t[k]:.2f}" if t.get(k) is not None else "-"
                  for k in ("idle_s", "start_s", "wait_s", "first_point_s", "last_point_s")]
        lines.append(f"| {name} | {t['points']} | {t['points_per_s']:.1f} | {t['wall_s']:.2f} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n" + start_section(rows)


def start_section(rows: list[tuple[str, dict[str, Any]]]) -> str:
    """Each worker's start, step by step (``time.startup``: when each step before its loop
    ended, in seconds after its process started): the part more GPUs do not divide. Empty
    where no row has it (a tune --json of before 2026-11-26)."""
    steps = list(dict.fromkeys(k for _, t in rows for k in t.get("startup") or {}))
    if not steps:
        return ""
    lines = ["", "Each worker's start (s after its process started, at the end of each step):",
             "", "| worker | " + " | ".join(steps) + " |", "|---|" + "---|" * len(steps)]
    for name, t in rows:
        at = t.get("startup") or {}
        lines.append(f"| {name} | " + " | ".join(
            f"{at[k]:.2f}" if k in at else "-" for k in steps) + " |")
    return "\n".join(lines) + "\n"


# A PostgreSQL round trip between the machines of one cluster: stated, not measured here (no
# PostgreSQL run yet); each storage call of a worker on another machine than the server pays it.
PG_RTT_S = 0.0005
# What a --devices run adds to a worker's start: the command's own process (its imports, the
# arguments checked) before it starts the workers. 2 x H200, 2026-11-26 (scaling_default_
# storage.md): the last worker to finish was idle 4.29 s, the one-GPU command started in 3.9 s.
SPAWN_S = 0.4


def trial_costs(t: dict[str, Any]) -> dict[str, float]:
    """Per point, from a one-GPU sweep's breakdown (``tune --json`` "time"): what each worker
    does on its own (``own_s``: measuring, the sampler, the results file, the tuner), what it
    reads of the shared study (``read_s``: with W workers it reads W times the trials), what
    one study's workers do in turn (``turn_s``: the storage's writes, appended under one lock,
    and the claim), the storage calls (``calls``), and what every worker spends once before its
    first point (``fixed_s``: compiling, the streaming ceiling, the first CUB baseline and its
    data: ``first_point_s`` where the breakdown has it, else compiling alone), which W workers
    do not share: each pays it whole."""
    ph, n = t["phases"], max(1, int(t["points"]))
    calls = t.get("calls", {})
    first = t.get("first_point_s")
    fixed = float(first) if first is not None else ph["compiling"]
    own = ph["measuring"] + ph["sampler"] + ph["results"] + ph["tuner"] + ph["compiling"] - fixed
    return {"own_s": max(0.0, own) / n, "read_s": ph["storage_read"] / n,
            "turn_s": (ph["storage_write"] + ph["lock_wait"]) / n,
            "calls": (calls.get("storage_read", 0) + calls.get("storage_write", 0)) / n,
            "fixed_s": fixed}


def predict(costs: dict[str, float], points: int, start_s: float, gpus: int,
            machines: int = 1, spawn_s: float = SPAWN_S) -> float:
    """Points per second over a whole command of ``points`` points on ``gpus`` GPUs per
    machine: the start (``start_s``: the command's wall less the loop's; a --devices run of
    several workers adds ``spawn_s``, its own process before its workers'), each worker's fixed
    cost (paid by every worker at once: it does not shrink with W), then the points at W
    workers' rate, each point costing its own and W times its reads, bounded by the part taken
    in turn (one at a time, whatever W). Across machines (a PostgreSQL server) every storage
    call pays PG_RTT_S, the writes in turn too. Workers start together and split the points
    evenly (tuning/grid_walk.py: no point asked by two)."""
    w = gpus * machines
    rtt = PG_RTT_S if machines > 1 else 0.0
    turn = costs["turn_s"] + costs["calls"] * rtt / 2
    per_point = costs["own_s"] + costs["read_s"] * w + costs["calls"] * rtt + turn
    rate = w / per_point
    if turn > 0:
        rate = min(rate, 1.0 / turn)
    start = start_s + (spawn_s if w > 1 else 0.0)
    return points / (start + costs["fixed_s"] + points / rate)


def least_idle(doc: dict[str, Any] | None) -> float | None:
    """The least ``idle_s`` of a --devices run's workers (cli/tune_devices.py): the last one
    to finish, idle only for its start and the command's end, as one process's command is
    for its own (its wall less its loop's)."""
    idle = [w["time"]["idle_s"] for w in (doc or {}).get("workers", [])
            if "idle_s" in w.get("time", {})]
    return min(idle) if idle else None


def _model_inputs(single: dict[str, Any], single_s: float, dual: dict[str, Any] | None,
                  dual_s: float) -> tuple[dict[str, float], int, float, float, bool]:
    """What the model takes from the runs: the one-GPU sweep's per-point costs and points, its
    start (the command's wall less the loop's), and ``spawn_s`` (measured: True, from the two-GPU
    run's ``tune --json``; see model_section)."""
    t = single["time"] if "time" in single else single["workers"][0]["time"]
    costs, points = trial_costs(t), int(t["points"])
    start = max(0.0, single_s - float(t["wall_s"]))
    idle = least_idle(dual)
    before = max(0.0, dual_s - float(dual["wall_s"])) if dual and dual_s and "wall_s" in dual \
        else 0.0
    spawn = SPAWN_S if idle is None else before + idle - start
    return costs, points, start, spawn, idle is not None


def model_section(single: dict[str, Any], single_s: float, measured: dict[int, float],
                  dual: dict[str, Any] | None = None, dual_s: float = 0.0) -> str:
    """The model's points per second beside the measured ones (``measured``: GPUs -> points
    per second over the whole command), for 1, 2, 4 and 8 GPUs and 4 machines of 8. With the
    two-GPU run's ``tune --json`` (``dual``), ``spawn_s`` is its start less the one-GPU
    command's: its least idle worker's idle, plus (with the command's wall time ``dual_s``)
    what the command did before starting its workers (its imports, the GPUs counted). It is
    negative where the workers start sooner than one process runs (issue 25: the results
    file made while they start, their GPU workers started first)."""
    costs, points, start, spawn, measured_spawn = _model_inputs(single, single_s, dual, dual_s)
    lines = ["## Scale-out: the model against the measurements (points/s, whole command)", "",
             f"Per point on one GPU: own {costs['own_s'] * 1e3:.2f} ms, reads "
             f"{costs['read_s'] * 1e3:.2f} ms, in turn {costs['turn_s'] * 1e3:.2f} ms, "
             f"{costs['calls']:.1f} storage calls; start {start:.1f} s ({spawn:+.1f} s for "
             f"several workers{', measured' if measured_spawn else ', assumed'}); each "
             f"worker's fixed cost before its first point {costs['fixed_s']:.1f} s; {points} "
             f"points. PostgreSQL round trip {PG_RTT_S * 1e3:.1f} ms (assumed).", "",
             "| GPUs | model | measured |", "|---|---|---|"]
    for label, gpus, machines in (("1", 1, 1), ("2", 2, 1), ("4", 4, 1), ("8", 8, 1),
                                  ("4 machines x 8", 8, 4)):
        got = measured.get(gpus) if machines == 1 else None
        lines.append(f"| {label} | {predict(costs, points, start, gpus, machines, spawn):.1f} | "
                     f"{'-' if got is None else f'{got:.1f}'} |")
    return "\n".join(lines) + "\n"


def scale_section(runs: list[tuple[int, dict[str, Any], float]],
                  model: tuple[dict[str, float], int, float, float, bool] | None,
                  bounds: dict[int, float] | None = None) -> str:
    """One row per run (GPUs, its analyse() against GPU 0 alone, its command's wall seconds):
    points, none missing / none twice, points per second over the whole command, the ratio to
    one GPU's beside Amdahl's bound on it (``bounds``: GPUs -> bound, _scale_bound.py), and the
    model's points per second for that many GPUs from the one-GPU per-point costs (``model``:
    _model_inputs; '-' without the one-GPU sweep's tune --json)."""
    one = next((a["single_points"] / s for g, a, s in runs if g == 1 and s), 0.0)
    lines = ["## One GPU, two, four: the whole command", "",
             "| GPUs | points | missing | measured twice | wall s | points/s | x one GPU | bound |"
             " model |", "|---|---|---|---|---|---|---|---|---|"]
    for gpus, a, seconds in runs:
        points = a["single_points"] if gpus == 1 else a["dual_points"]
        rate = points / seconds if seconds else 0.0
        missing, twice = (0, 0) if gpus == 1 else (a["missing"], a["twice"])
        guess = "-" if model is None else \
            f"{predict(model[0], model[1], model[2], gpus, 1, model[3]):.1f}"
        lines.append(f"| {gpus} | {points} | {missing} | {twice} | {seconds:.1f} | "
                     f"{rate:.1f} | {f'{rate / one:.2f}' if one and rate else '-'} | "
                     f"{f'{bounds[gpus]:.2f}' if bounds and gpus in bounds else '-'} | {guess} |")
    return "\n".join(lines) + "\n"


def _doc(path: Path | None) -> dict[str, Any] | None:
    """A sweep's ``tune --json`` output; None where it was not given or is empty (a sweep
    that failed before printing)."""
    if path is None or not path.exists() or not path.stat().st_size:
        return None
    return dict(json.loads(path.read_text()))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--single", type=Path, required=True)
    p.add_argument("--dual", type=Path, required=True)
    p.add_argument("--quad", type=Path, default=None,
                   help="the four-GPU sweep's results file (--devices 0,1,2,3), if run")
    p.add_argument("--single-s", type=float, default=0.0)
    p.add_argument("--dual-s", type=float, default=0.0)
    p.add_argument("--quad-s", type=float, default=0.0)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--csv", type=Path, default=None)
    p.add_argument("--command", default="")
    p.add_argument("--single-json", type=Path, default=None,
                   help="the one-GPU sweep's tune --json output: its time breakdown")
    p.add_argument("--dual-json", type=Path, default=None,
                   help="the two-GPU sweep's tune --json output: each worker's breakdown")
    p.add_argument("--quad-json", type=Path, default=None,
                   help="the four-GPU sweep's tune --json output: each worker's breakdown")
    p.add_argument("--json", type=Path, default=None,
                   help="write Amdahl's bound's numbers here (scripts/device-jobs/z_summary.py)")
    args = p.parse_args(argv)
    single = read(args.single)
    a = analyse(single, read(args.dual))
    quad = analyse(single, read(args.quad)) if args.quad is not None else None
    docs = {name: _doc(path) for name, path in (("one GPU", args.single_json),
                                               ("two GPUs", args.dual_json),
                                               ("four GPUs", args.quad_json))}
    runs = {1: (a["single_points"], args.single_s, docs["one GPU"]),
            2: (a["dual_points"], args.dual_s, docs["two GPUs"])}
    if quad is not None:
        runs[4] = (quad["dual_points"], args.quad_s, docs["four GPUs"])
    nums = bound_numbers(runs)
    spans = (measuring_s(args.single), measuring_s(args.dual))
    text = markdown(a, args.single_s, args.dual_s, args.command, spans,
                    nums["runs"][2]["bound"] if nums and 2 in nums["runs"] else None)
    rows = [r for name, doc in docs.items() if doc is not None for r in breakdowns(doc, name)]
    if rows:
        text += "\n" + time_section(rows)
    model = None
    if docs["one GPU"] is not None and rows and args.single_s and args.dual_s:
        model = _model_inputs(docs["one GPU"], args.single_s, docs["two GPUs"], args.dual_s)
        measured = {g: n / s for g, (n, s, _) in runs.items() if s}
        text += "\n" + model_section(docs["one GPU"], args.single_s, measured,
                                     docs["two GPUs"], args.dual_s)
    bounds = {g: r["bound"] for g, r in nums["runs"].items()} if nums else None
    if quad is not None:
        text += "\n" + scale_section([(1, a, args.single_s), (2, a, args.dual_s),
                                      (4, quad, args.quad_s)], model, bounds)
    if nums:
        text += "\n" + section(nums)
    if args.json:
        args.json.write_text(json.dumps(nums, indent=1) + "\n")
    args.out.write_text(text)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(a["points"][0]) if a["points"] else ["n"])
            w.writeheader()
            w.writerows(a["points"])
    print(args.out.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
