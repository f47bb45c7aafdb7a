"""``reducetune experiment harris``: the seeds' tables measured again on this GPU, beside the
published numbers.

Each row of each seed table (``_seed_tables.py``) is measured twice: with the seed's launch
(the family's preset: its block size and grid) and with the launch tuned for this GPU (the
same kernel, the fastest verified block size, and max_blocks for the grid-stride kernel,
over every valid choice). Every point goes into the results database first; the report is
built from the database alone, so ``--replay DB`` rebuilds it without a GPU.

    reducetune experiment harris --out docs/research/harris --time-limit 2m [--ncu]
    reducetune experiment harris --replay docs/research/harris/h100_harris.db.xz --out ...

``--ncu`` then profiles the rows of ``--ncu-tables`` (the seed launch; ``--ncu-launches both``
adds the tuned one) with Nsight Compute and keeps the metrics beside their measurement
(``_ncu.py``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from reducetune._space import Space
from reducetune.cli.args import name_list
from reducetune.errors import InvalidConfiguration
from reducetune.experiments._harris_report import markdown, plot
from reducetune.experiments._ncu import add_ncu_arguments, profile_rows
from reducetune.experiments._seed_tables import TABLES, SeedRow, SeedTable, table_named
from reducetune.experiments._xp_common import add_common, databases, study_config, write_report
from reducetune.experiments._xp_run import Job

__all__ = ["add_arguments", "run_from_args", "plan", "collect"]

OP = "sum"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common(p, "harris", sample_time=0.05, max_samples=50, timeout=30)
    p.add_argument("--tables", default=",".join(t.key for t in TABLES),
                   help="seed tables to reproduce (default: all: "
                        + ", ".join(t.key for t in TABLES) + ")")
    add_ncu_arguments(p, default_tables="g80")


def _space(family: str, dtype: str, limits: Any, restrict: dict[str, list[Any]] | None = None
           ) -> Any:
    return Space(family, dtype, OP, limits, restrict)


def row_points(table: SeedTable, row: SeedRow, limits: Any) -> tuple[Any, list[Any]]:
    """(the seed's point, every valid point of the same kernel the tuned launch is chosen
    from: the table's block sizes and, for a grid-stride kernel, every max_blocks)."""
    seed = _space(row.family, table.dtype, limits).preset(row.preset).point
    restrict: dict[str, list[Any]] = {"block_size": list(table.block_sizes)}
    for name, value in seed.params.items():
        if name not in ("block_size", *row.tuned_launch):
            restrict[name] = [value]
    candidates = list(_space(row.family, table.dtype, limits, restrict).points())
    return seed, candidates


def plan(tables: list[SeedTable], limits: Any) -> list[Any]:
    """Every job of the experiment, table by table (the runner groups them by workload)."""
    jobs = []
    for t in tables:
        for row in t.rows:
            seed, candidates = row_points(t, row, limits)
            jobs += [Job(p, t.n) for p in [seed, *candidates]]
    return jobs


def _cell(view: Any, point: Any, n: int) -> dict[str, Any]:
    """What the report shows of one measured point (status and reason when it failed)."""
    r = view.row(point, n)
    if r is None:
        return {"status": "not measured", "variant": point.variant_label,
                "launch": point.launch_label, "params": dict(point.params)}
    out = {"status": r["status"], "reason": r["reason"], "variant": point.variant_label,
           "launch": point.launch_label, "params": dict(point.params),
           "measurement_id": r["id"], "samples": len(r["samples_s"]),
           "median_s": r["median_s"], "rel_stddev": r["rel_stddev"], "gbps": r["gbps"],
           "launches": view.launches(r), "date": r["created_at"][:10]}
    ncu = view.ncu.get(int(r["id"]))
    if ncu is not None:
        out["ncu"] = {"status": ncu["status"], "reason": ncu["reason"],
                      "metrics": ncu["metrics"]}
    return out


def collect(view: Any, tables: list[SeedTable]) -> dict[str, Any]:
    """The report's numbers for one device, read from its database."""
    limits = view.evaluator.limits
    out: dict[str, Any] = {"device": view.name, "source": view.source, "tables": [],
                           "measured_by": view.commands}
    for t in tables:
        rows = []
        for row in t.rows:
            seed, candidates = row_points(t, row, limits)
            measured = [(view.ok(p, t.n), p) for p in candidates]
            ok = [(r["median_s"], p.labels, p) for r, p in measured if r is not None]
            tuned = min(ok, key=lambda x: (x[0], x[1]))[2] if ok else None
            rows.append({"name": row.name, "preset": row.preset, "family": row.family,
                         "line": row.line, "published": {
                             "time_ms": row.time_ms, "gbps": row.gbps, "step": row.step,
                             "cumulative": row.cumulative, **row.extra},
                         "seed": _cell(view, seed, t.n),
                         "tuned": None if tuned is None else _cell(view, tuned, t.n),
                         "candidates": len(candidates),
                         "tuned_over": ["block_size", *row.tuned_launch],
                         "candidates_ok": len(ok)})
        _speedups(rows)
        out["tables"].append({"key": t.key, "title": t.title, "source": t.source,
                              "gpu": t.gpu, "dtype": t.dtype, "n": t.n, "note": t.note,
                              "block_sizes": list(t.block_sizes),
                              "rows": rows})
    return out


def _speedups(rows: list[dict[str, Any]]) -> None:
    """Step (over the row before) and cumulative (over the first row) speed-ups of the
    measured times, for both launches, as the seeds compute theirs."""
    for which in ("seed", "tuned"):
        first = prev = None
        for r in rows:
            c = r[which]
            t = c.get("median_s") if c and c.get("status") == "ok" else None
            if c is not None and t is not None:
                c["step"] = prev / t if prev else None
                c["cumulative"] = first / t if first else None
                first = first or t
            prev = t


def _measure(args: argparse.Namespace, tables: list[SeedTable]) -> Any:
    def measure(runner: Any) -> None:
        jobs = plan(tables, runner.evaluator.limits)
        counts = runner.run(jobs, study_config(args, {"tables": [t.key for t in tables]}))
        print(f"harris: {counts.measured} measured ({counts.failed} failed), {counts.known} "
              f"from the database, {counts.left} left", file=sys.stderr)
        if args.ncu and not runner.out_of_time():
            profile_rows(runner, _ncu_points(args, tables, runner), args)
    return measure


def _ncu_points(args: argparse.Namespace, tables: list[SeedTable], runner: Any) -> list[Any]:
    """(point, n) of the seed launch of every row of --ncu-tables, and with --ncu-launches
    both the tuned one (as measured)."""
    out = []
    keys = set(args.ncu_tables.split(","))
    for t in (t for t in tables if t.key in keys):
        for row in t.rows:
            seed, candidates = row_points(t, row, runner.evaluator.limits)
            ok = [(r["median_s"], p.labels, p) for p in candidates
                  if (r := runner.known(Job(p, t.n))) is not None and r["status"] == "ok"]
            out.append(Job(seed, t.n))
            if ok and args.ncu_launches == "both":
                out.append(Job(min(ok, key=lambda x: (x[0], x[1]))[2], t.n))
    return list(dict.fromkeys(out))


def run_from_args(args: argparse.Namespace) -> int:
    try:
        keys = name_list(args.tables, tuple(t.key for t in TABLES), "--tables")
        name_list(args.ncu_tables, tuple(t.key for t in TABLES), "--ncu-tables")  # a typo
        tables = [table_named(k) for k in keys]
    except KeyError as e:
        raise InvalidConfiguration(f"--tables: no seed table {e} (known: "
                                   + ", ".join(t.key for t in TABLES) + ")") from None
    paths = databases(args, "harris", _measure(args, tables))
    return write_report(Path(args.out), paths, lambda v: collect(v, tables), {}, plot, markdown)
