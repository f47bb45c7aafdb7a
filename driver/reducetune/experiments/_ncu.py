"""Nsight Compute evidence for the experiments' rows (``--ncu``).

For each row, ``ncu`` runs a small probe (``python -m reducetune.experiments._ncu_probe``: the
same point, the same workload, a few samples) and profiles the first launch of the row's
first-pass kernel (``-c 1``, matched by its demangled name). The metrics, the ncu command
and its status are stored in ``xp_ncu`` beside the point's measurement
(``store/experiment_tables.py``), so ``--replay`` shows them without a GPU. A failed profile (no ncu, no permission to read the
counters, a metric the GPU lacks) is stored with its reason; the timings are not affected.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import subprocess
import sys
import time
from typing import Any

from reducetune.cli.args import TIMEOUT_MAX_S, duration
from reducetune.store.experiment_tables import ncu_by_measurement, write_ncu

__all__ = ["METRICS", "add_ncu_arguments", "profile_rows", "parse_csv", "kernel_regex"]

# metric -> what the report calls it (Nsight Compute 2023+ names, Volta and later)
METRICS = {
    "gpu__time_duration.sum": "kernel time",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "DRAM throughput % of peak",
    "dram__bytes_read.sum.per_second": "DRAM read bandwidth",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved occupancy %",
    "smsp__sass_average_branch_targets_threads_uniform.pct": "branch efficiency %",
    "smsp__thread_inst_executed_per_inst_executed.ratio": "active threads per warp instruction",
    "smsp__inst_executed.sum": "warp instructions executed",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "shared load bank conflicts",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "shared store bank conflicts",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "global load sectors",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": "global store sectors",
}


def add_ncu_arguments(p: argparse.ArgumentParser, default_tables: str) -> None:
    p.add_argument("--ncu", action="store_true",
                   help="after measuring, profile the rows of --ncu-tables with Nsight Compute "
                        "(metrics stored beside their measurement)")
    p.add_argument("--ncu-launches", choices=("seed", "both"), default="seed",
                   help="profile the seed launch of each row (default; about 6 s a row), or "
                        "the tuned launch too")
    p.add_argument("--ncu-tables", default=default_tables, metavar="KEYS",
                   help=f"tables whose rows --ncu profiles (default {default_tables})")
    p.add_argument("--ncu-path", default=None, metavar="PATH",
                   help="the ncu executable (default: ncu on PATH, else /usr/local/cuda/bin/ncu)")

    p.add_argument("--ncu-timeout", type=duration(1, TIMEOUT_MAX_S), default=120.0, metavar="S",
                   help="seconds per profiled row (default 120)")


def kernel_regex(point: Any) -> str:
    """The first-pass kernel's demangled name, as an ncu regex: seeds and nested name their
    kernel by the ``kernel`` parameter (``rt::seeds::{kernel}<...>``), tunable's is
    ``rt::tunable::pass<...>``."""
    name = point.params.get("kernel", "pass")
    return f"regex:::{name}<"


def _ncu_path(given: str | None) -> str | None:
    if given:
        return given
    return shutil.which("ncu") or (
        "/usr/local/cuda/bin/ncu" if shutil.which("/usr/local/cuda/bin/ncu") else None)


def command(ncu: str, point: Any, n: int, metrics: list[str] | None = None) -> list[str]:
    return [ncu, "--csv", "--page", "raw", "--metrics", ",".join(metrics or list(METRICS)),
            "--kernel-name-base", "demangled", "--kernel-name", kernel_regex(point),
            "--launch-count", "1", "--target-processes", "all",
            sys.executable, "-m", "reducetune.experiments._ncu_probe",
            json.dumps(point.to_dict()), str(n)]


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def csv_lines(stdout: str) -> list[str]:
    """ncu's CSV among its other output (its ==PROF== lines, the probe's own)."""
    return [ln for ln in stdout.splitlines() if ln.startswith('"')]


def kernel_rows(stdout: str) -> tuple[list[dict[str, str]], dict[str, str]]:
    """Each profiled kernel's cells ({column: text}) in ncu's ``--csv --page raw`` output (a
    header row, a units row, a row per kernel), and the units row ({column: unit})."""
    rows = list(csv.reader(io.StringIO("\n".join(csv_lines(stdout)))))
    head = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if head is None:
        return [], {}
    names = rows[head]
    data = [dict(zip(names, r)) for r in rows[head + 1:] if r and r[0] not in ("", "ID")]
    units = rows[head + 1] if len(rows) > head + 1 and rows[head + 1][0] == "" else []
    return data, dict(zip(names, units))


def parse_csv(stdout: str) -> dict[str, Any]:
    """{metric: value} of the first profiled kernel in ncu's ``--csv --page raw`` output,
    with ``units`` and the kernel's name."""
    data, units = kernel_rows(stdout)
    if not data:
        return {}
    first = data[0]
    out: dict[str, Any] = {m: _number(first[m]) for m in METRICS if m in first}
    out["units"] = {m: u for m, u in units.items() if m in METRICS and u}
    out["kernel"] = first.get("Kernel Name", "")
    out["grid"] = first.get("Grid Size", "")
    out["block"] = first.get("Block Size", "")
    return out


def profile(ncu: str, point: Any, n: int, timeout_s: float) -> dict[str, Any]:
    """The row's metrics; a metric this ncu or GPU does not know is named in ncu's error, and
    the profile is taken once more without it (the result says which were left out)."""
    result = _profile_once(ncu, point, n, timeout_s, list(METRICS))
    unknown = [m for m in METRICS if result["status"] != "ok" and m in result["reason"]]
    if unknown:
        result = _profile_once(ncu, point, n, timeout_s,
                               [m for m in METRICS if m not in unknown])
        result["reason"] = (result.get("reason", "") + " left out (unknown to ncu): "
                            + ", ".join(unknown)).strip()
    return result


def _profile_once(ncu: str, point: Any, n: int, timeout_s: float,
                  metrics: list[str]) -> dict[str, Any]:
    cmd = command(ncu, point, n, metrics)
    shown = " ".join(cmd[:-8] + ["python3"] + cmd[-7:])  # no local path to the interpreter
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"status": "failed", "reason": f"ncu took more than {timeout_s:g} s",
                "command": shown}
    except OSError as e:
        return {"status": "failed", "reason": f"cannot run ncu: {e}", "command": shown}
    metrics = parse_csv(done.stdout)
    if not any(m in metrics for m in METRICS):
        tail = (done.stdout + done.stderr).strip().splitlines()[-6:]
        return {"status": "failed", "command": shown,
                "reason": f"ncu exit {done.returncode}: " + " | ".join(tail)[-600:]}
    # the probe's own exit (1: its point failed verification) does not void the counters
    return {"status": "ok", "metrics": metrics, "command": shown,
            "reason": "" if done.returncode == 0 else f"exit {done.returncode}"}


def profile_rows(runner: Any, jobs: list[Any], args: argparse.Namespace) -> None:
    """Profiles each job whose point has a measurement and no ncu row yet."""
    ncu = _ncu_path(args.ncu_path)
    done = ncu_by_measurement(runner.db_path)
    start = time.monotonic()
    for i, job in enumerate(jobs):
        row = runner.known(job)
        if row is None or int(row["id"]) in done and done[int(row["id"])]["status"] == "ok":
            continue
        if runner.out_of_time():
            print(f"ncu: time limit: {len(jobs) - i} rows left", file=sys.stderr)
            return
        if ncu is None:
            result = {"status": "failed", "reason": "ncu not found (--ncu-path)"}
        else:
            result = profile(ncu, job.point, job.n, args.ncu_timeout)
        write_ncu(runner.db_path, int(row["id"]), result)
        print(f"ncu: {i + 1}/{len(jobs)} {job.point.variant_label} {job.point.launch_label}: "
              f"{result['status']} {result.get('reason', '')[:200]} "
              f"({time.monotonic() - start:.0f} s)", file=sys.stderr)
