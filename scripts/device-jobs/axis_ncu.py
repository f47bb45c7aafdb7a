"""Nsight Compute probe (issue 26) of the axis benchmark's shapes still below 0.95 x the faster
ceiling: for each shape, the best point the benchmark chose (its JSON's row), run once under
``ncu`` with the counters that explain a memory-bound kernel's shortfall, for every kernel of
the point (a split point's pass and its final_pass).

    python3 scripts/device-jobs/axis_ncu.py --out OUT/axis_ncu.md
        [--json AXIS.json] [--shapes bfloat16:16777216,16,1 ...] [--below 0.945] [--dry-run]

The probed process is the experiments' ncu probe (this tree's experiments/_ncu_probe.py): the
point (its Point.to_dict(), rebuilt from the row's variant and launch labels) compiled, run and
verified once on the row's view (outer, r, inner), a direct launch (no CUDA graph), one sample.
ncu profiles the first call's kernels only (--launch-count: the point's launches, matched by
the axis family's kernel names), kernel replay, caches flushed before each pass (cold L2, as
the streaming ceiling is timed), clocks left as the benchmark ran them (--clock-control none).

Writes OUT.md (one table: shape, dtype, point, kernel, each metric), OUT.json (the parsed
values, the commands and their status) and OUT.csv, ncu's raw CSV of every shape in one file,
each row led by its dtype and view. --dry-run prints the ncu command lines and runs nothing.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reducetune import _core
from reducetune._space import Space, limits_for_arch
from reducetune.benchmarks._axis_report import ceiling_ratio
from reducetune.evaluate.base import problem_of, workload
from reducetune.experiments._ncu import _ncu_path, _number, csv_lines, kernel_rows

ROOT = Path(__file__).resolve().parents[2]
# The H200 run of 2026-11-26 (commit a200b82), its rows extracted: tests/data's note says how.
DEFAULT_JSON = ROOT / "tests" / "data" / "axis_ncu_rows.json"
# The probe run from this tree's source, its imports from the installed package: a package
# installed on the GPU machine before the probe took a shape (4fa8c73) would refuse
# "OUTER,R,INNER", and a warm machine keeps an earlier call's install (z_common.sh, _z_build).
PROBE = ROOT / "driver" / "reducetune" / "experiments" / "_ncu_probe.py"
# Its shapes printed below 0.95 x the faster ceiling (x_ceiling under 0.945), then one at 1.00
# for comparison (bfloat16 rows of 8192).
DEFAULT_SHAPES = ("bfloat16:16777216,16,1", "bfloat16:2097152,128,1", "bfloat16:1,8192,32768",
                  "bfloat16:1,524288,512", "bfloat16:1,4194304,64", "float32:2097152,128,1",
                  "float32:1,4194304,64", "bfloat16:32768,8192,1")
# metric -> what it tells about a memory-bound kernel (each one pass or none: launch__ are
# read from the launch, not replayed)
METRICS = {
    "gpu__time_duration.sum": "kernel time",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "DRAM throughput, % of peak",
    "dram__bytes_read.sum": "DRAM bytes read (re-reads show above the input's bytes)",
    "dram__bytes_write.sum": "DRAM bytes written",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved occupancy %",
    "sm__maximum_warps_per_active_cycle_pct": "theoretical occupancy %",
    "launch__grid_size": "blocks", "launch__block_size": "threads a block",
    "launch__registers_per_thread": "registers a thread",
    "launch__waves_per_multiprocessor": "waves (a partial last wave: idle SMs at the tail)",
    "launch__occupancy_limit_blocks": "blocks an SM by the block limit",
    "launch__occupancy_limit_registers": "blocks an SM by registers",
    "launch__occupancy_limit_shared_mem": "blocks an SM by shared memory",
    "launch__occupancy_limit_warps": "blocks an SM by warps",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "global load sectors",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "global load requests",
    "lts__t_sector_hit_rate.pct": "L2 hit rate %",
    "smsp__average_warp_latency_per_inst_issued.ratio": "cycles a warp waits per instruction",
    "smsp__warps_eligible.avg.per_cycle_active": "eligible warps a cycle",
}
# Every stall reason's share of the active warps' cycles (the WarpStateStats breakdown)
STALLS = r"regex:smsp__warp_issue_stalled_.*_per_warp_active\.pct"
STALL_NAME = re.compile(r"smsp__warp_issue_stalled_(\w+)_per_warp_active\.pct")
TOP_STALLS = 3


@dataclass
class Job:
    """One shape: its benchmark row, the point rebuilt from it and the problem it reduces."""
    dtype: str
    view: tuple[int, int, int]
    row: dict[str, Any]
    point: Any  # _core.Point
    problem: _core.Problem
    result: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.dtype}_{'_'.join(map(str, self.view))}"

    @property
    def launches(self) -> int:
        """The point's kernels a call launches: the benchmark's record of it (the reducer's
        choice), which a split point's 2 (pass and final_pass) must match."""
        return int(self.row["point"]["launches"])


def parse_shape(text: str) -> tuple[str, tuple[int, int, int]]:
    """'bfloat16:1,8192,32768' -> ('bfloat16', (1, 8192, 32768))."""
    dtype, _, view = text.partition(":")
    parts = tuple(int(v) for v in view.split(","))
    if len(parts) != 3:
        raise SystemExit(f"shape {text!r}: DTYPE:OUTER,R,INNER")
    return dtype, (parts[0], parts[1], parts[2])


def below(doc: dict[str, Any], x: float) -> list[str]:
    """The shapes of the run's rows whose rate is under x times the faster ceiling's."""
    return [f"{r['dtype']}:{','.join(map(str, r['view']))}" for r in doc["rows"]
            if ceiling_ratio(r)["x_ceiling"] < x]


def job_of(doc: dict[str, Any], shape: str) -> Job:
    """The shape's row, its best point parsed from its labels in the axis space of the run's
    device (refused where the space no longer holds it) and its problem, built as the probe
    builds it (workload, problem_of)."""
    dtype, view = parse_shape(shape)
    rows = [r for r in doc["rows"] if r["dtype"] == dtype and tuple(r["view"]) == view]
    if not rows:
        raise SystemExit(f"{shape}: no such row in the benchmark's JSON")
    row = rows[0]
    space = Space("axis", dtype, "sum", limits_for_arch(doc["device"]["arch"]))
    point = space.parse(row["point"]["variant"], row["point"]["launch"])
    if space.check(point):
        raise SystemExit(f"{shape}: the point is invalid now: {space.check(point)}")
    return Job(dtype, view, row, point, problem_of(workload(dtype, "sum", view)))


def kernel_filter() -> str:
    """The axis family's kernels (its family.json's "kernels", which the declaration the core
    gives leaves out: their names before the template arguments) as one ncu regex over
    demangled names."""
    declared = json.loads((ROOT / "kernel_templates" / "axis" / "family.json").read_text())
    names = [k.split("<")[0] for k in declared["kernels"].values()]
    return "regex:(" + "|".join(re.escape(n) for n in names) + ")<"


def command(ncu: str, job: Job, metrics: list[str], clock: str) -> list[str]:
    return [ncu, "--csv", "--page", "raw", "--print-units", "base", "--metrics",
            ",".join(metrics), "--kernel-name-base", "demangled", "--kernel-name",
            kernel_filter(), "--launch-count", str(job.launches), "--replay-mode", "kernel",
            "--cache-control", "all", "--clock-control", clock, "--target-processes", "all",
            sys.executable, str(PROBE), json.dumps(job.point.to_dict()),
            ",".join(map(str, job.view))]


def kernels(stdout: str) -> list[dict[str, Any]]:
    """Each profiled kernel of ncu's ``--csv --page raw`` output (experiments/_ncu.py's
    kernel_rows): its short name (pass, final_pass) and every metric, as numbers."""
    out = []
    for cells in kernel_rows(stdout)[0]:
        name = cells["Kernel Name"]
        short = re.search(r"::(\w+)<", name)
        metrics = {k: _number(v) for k, v in cells.items() if "__" in k}
        out.append({"kernel": short.group(1) if short else name, "name": name,
                    "metrics": metrics})
    return out


def derived(k: dict[str, Any], job: Job) -> dict[str, Any]:
    """What the table shows of a kernel beyond its raw counters: DRAM bytes per second, bytes
    read over the input's (1: each byte read once), sectors per load request (16: 16-byte loads
    by a whole warp, 4: 4-byte ones) and the top stall reasons."""
    m = k["metrics"]
    t_ns = m.get("gpu__time_duration.sum") or 0
    read, written = m.get("dram__bytes_read.sum"), m.get("dram__bytes_write.sum")
    sectors = m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
    requests = m.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
    input_bytes = job.problem.elements * _core.element_bytes(job.dtype)
    stalls = sorted(((STALL_NAME.fullmatch(n).group(1), v) for n, v in m.items()
                     if STALL_NAME.fullmatch(n) and v is not None), key=lambda s: -s[1])
    return {"time_us": t_ns / 1e3 if t_ns else None,
            "dram_gbps": (read + written) / t_ns if t_ns and None not in (read, written)
            else None,
            "read_over_input": read / input_bytes if read is not None else None,
            "sectors_per_request": sectors / requests if sectors and requests else None,
            "top_stalls": stalls[:TOP_STALLS]}


def profile(ncu: str, job: Job, clock: str, timeout_s: float) -> dict[str, Any]:
    """The shape's kernels; a metric this ncu or GPU does not know is named in ncu's error,
    and the profile is taken once more without it (the result says which were left out), as
    experiments/_ncu.py does."""
    wanted = [*METRICS, STALLS]
    result = _profile_once(ncu, job, wanted, clock, timeout_s)
    unknown = [m for m in wanted if result["status"] != "ok" and m in result["output"]]
    if unknown:
        result = _profile_once(ncu, job, [m for m in wanted if m not in unknown], clock,
                               timeout_s)
        result["left_out"] = unknown
    return result


def _profile_once(ncu: str, job: Job, metrics: list[str], clock: str, timeout_s: float
                  ) -> dict[str, Any]:
    cmd = command(ncu, job, metrics, clock)
    started = time.monotonic()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"status": "failed", "output": f"ncu took more than {timeout_s:g} s",
                "command": shlex.join(cmd), "kernels": [], "csv": ""}
    found = kernels(done.stdout)
    tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-8:])
    # the probe's own exit (1: its point failed verification) does not void the counters
    return {"status": "ok" if found else "failed", "exit": done.returncode, "output": tail,
            "command": shlex.join(cmd), "kernels": found, "csv": "\n".join(csv_lines(done.stdout)),
            "seconds": time.monotonic() - started}


def _f(v: float | None, fmt: str) -> str:
    return "–" if v is None else format(v, fmt)


# The table after its shape, dtype, point and kernel: (title, metric or derived value, format)
CELLS = (("grid", "launch__grid_size", ".0f"), ("block", "launch__block_size", ".0f"),
         ("regs", "launch__registers_per_thread", ".0f"), ("µs", "time_us", ".1f"),
         ("DRAM % peak", "dram__throughput.avg.pct_of_peak_sustained_elapsed", ".1f"),
         ("DRAM GB/s", "dram_gbps", ".0f"), ("read / input", "read_over_input", ".3f"),
         ("achieved occ %", "sm__warps_active.avg.pct_of_peak_sustained_active", ".1f"),
         ("theoretical occ %", "sm__maximum_warps_per_active_cycle_pct", ".1f"),
         ("limit blocks/regs/smem/warps", "limits", "s"),
         ("waves", "launch__waves_per_multiprocessor", ".2f"),
         ("sectors/request", "sectors_per_request", ".2f"),
         ("L2 hit %", "lts__t_sector_hit_rate.pct", ".1f"),
         ("cycles/inst", "smsp__average_warp_latency_per_inst_issued.ratio", ".1f"),
         ("eligible/cycle", "smsp__warps_eligible.avg.per_cycle_active", ".2f"),
         ("top stalls (% of active warps)", "stalls", "s"))
COLUMNS = ("shape", "dtype", "point", "× ceiling (bench)", "kernel", *(c[0] for c in CELLS))


def table_rows(job: Job) -> list[str]:
    """The shape's table rows: one per profiled kernel, or one that says why there is none."""
    shape = f"{job.row['kind']} ({', '.join(map(str, job.view))})"
    point = job.row["point"]["name"] + " `" + str(job.point.variant_label).split(".sum.")[-1] + "`"
    head = [shape, job.dtype, point, _f(ceiling_ratio(job.row)["x_ceiling"], ".3f")]
    if not job.result.get("kernels"):
        why = job.result.get("output", "not run").replace("|", "/").replace("\n", " / ")
        return ["| " + " | ".join(head + [f"no profile: {why[-300:]}"] + [""] * len(CELLS)) + " |"]
    return ["| " + " | ".join(head + _kernel_cells(k, job)) + " |" for k in job.result["kernels"]]


def _kernel_cells(k: dict[str, Any], job: Job) -> list[str]:
    m, d = k["metrics"], derived(k, job)
    limits = "/".join(_f(m.get(f"launch__occupancy_limit_{x}"), ".0f")
                      for x in ("blocks", "registers", "shared_mem", "warps"))
    stalls = ", ".join(f"{name} {v:.0f}" for name, v in d["top_stalls"])
    values = {**m, **d, "limits": limits, "stalls": stalls}
    return [k["kernel"], *(_f(values.get(key), fmt) for _, key, fmt in CELLS)]


def report(doc: dict[str, Any], jobs: list[Job], clock: str, argv: list[str]) -> str:
    dev = doc["device"]
    lines = [f"# Nsight Compute probe of the axis benchmark's best points ({dev['name']} run, "
             f"commit {doc.get('commit', '?')})", "",
             f"Command: `python3 scripts/device-jobs/axis_ncu.py {shlex.join(argv)}`. Each shape: "
             "its best point run once by experiments/_ncu_probe.py (direct launch, one "
             "sample), the first call's kernels profiled: kernel replay, caches flushed before "
             f"each pass, --clock-control {clock}. × ceiling: the benchmark's rate over the "
             "faster ceiling's. read / input: DRAM bytes read over the input's bytes. limit: "
             "blocks an SM by each resource. Stalls: each reason's % of the active warps' cycles.",
             "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for job in jobs:
        lines += table_rows(job)
    left = sorted({m for j in jobs for m in j.result.get("left_out", [])})
    if left:
        lines += ["", "Left out (unknown to this ncu or GPU): " + ", ".join(left)]
    return "\n".join(lines) + "\n"


def write_csv(path: Path, jobs: list[Job]) -> None:
    """Every shape's ncu CSV in one file (a device call brings back a few files only), each
    row led by its shape: ncu's columns (a metric left out of one shape's profile is empty
    there), its units row once."""
    head, units, rows = ["dtype", "view"], {}, []
    for job in jobs:
        table = list(csv.reader(job.result.get("csv", "").splitlines()))
        if not table:
            continue
        head += [c for c in table[0] if c not in head]
        for r in table[1:]:
            cells = dict(zip(table[0], r))
            if r and r[0] == "":
                units.update({k: v for k, v in cells.items() if v})
            else:
                rows.append({"dtype": job.dtype, "view": ",".join(map(str, job.view)), **cells})
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, head, quoting=csv.QUOTE_ALL)
        w.writeheader()
        w.writerows([units, *rows] if units else rows)


def write(out: Path, doc: dict[str, Any], jobs: list[Job], clock: str, argv: list[str]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    write_csv(out.with_suffix(".csv"), jobs)
    out.with_suffix(".json").write_text(json.dumps([
        {"dtype": j.dtype, "view": list(j.view), "point": j.row["point"],
         **{k: v for k, v in j.result.items() if k != "csv"},
         "derived": [derived(k, j) for k in j.result.get("kernels", [])]} for j in jobs],
        indent=1))
    out.write_text(report(doc, jobs, clock, argv))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", type=Path, default=DEFAULT_JSON,
                   help="the axis benchmark's JSON (default: the H200 run's extract)")
    p.add_argument("--out", type=Path, help="OUT.md (OUT.json and OUT.csv beside it)")
    p.add_argument("--shapes", nargs="+", metavar="DTYPE:OUTER,R,INNER",
                   help="default: the H200 run's shapes under 0.95 x ceiling and one at 1.00")
    p.add_argument("--below", type=float, metavar="X",
                   help="instead of --shapes: the JSON's rows under X times the faster ceiling")
    p.add_argument("--ncu", help="the ncu executable (default: ncu on PATH)")
    p.add_argument("--clock-control", choices=("none", "base"), default="none")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds a shape (default 60)")
    p.add_argument("--time-limit", type=float, default=150.0,
                   help="start no shape after this many seconds (default 150: with --timeout, "
                   "a run stays within 3.5 minutes whatever a shape costs)")
    p.add_argument("--dry-run", action="store_true", help="print the ncu commands, run nothing")
    a = p.parse_args(argv)
    doc = json.loads(a.json.read_text())
    shapes = below(doc, a.below) if a.below is not None else (a.shapes or list(DEFAULT_SHAPES))
    jobs = [job_of(doc, s) for s in shapes]
    if a.dry_run:
        for job in jobs:
            print(shlex.join(command(a.ncu or "ncu", job, [*METRICS, STALLS], a.clock_control)))
        return 0
    if a.out is None:
        p.error("--out is required unless --dry-run")
    return _run(a, doc, jobs, argv)


def _run(a: argparse.Namespace, doc: dict[str, Any], jobs: list[Job], argv: list[str]) -> int:
    ncu = _ncu_path(a.ncu)
    if ncu is None:
        raise SystemExit("ncu not found (--ncu)")
    started = time.monotonic()
    for job in jobs:
        if time.monotonic() - started > a.time_limit:
            job.result = {"status": "skipped", "output": f"--time-limit {a.time_limit:g} s"}
            continue
        job.result = profile(ncu, job, a.clock_control, a.timeout)
        print(f"axis_ncu: {job.key}: {job.result['status']}, {len(job.result['kernels'])} "
              f"kernel(s) ({time.monotonic() - started:.0f} s)", file=sys.stderr)
        write(a.out, doc, jobs, a.clock_control, argv)  # a run cut short keeps what it got
    write(a.out, doc, jobs, a.clock_control, argv)
    print(a.out.read_text())
    return 0 if all(j.result.get("status") == "ok" for j in jobs) else 1


if __name__ == "__main__":
    sys.exit(main())
