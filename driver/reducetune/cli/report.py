"""The final table of a tuning run (size, best variant, GB/s, % of peak, × CUB) and its JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table

from reducetune.evaluate.base import percent_of
from reducetune.tuning.shapes import unit_text
from reducetune.tuning.timing import MEASURING_PARTS, PHASES, PREPARE_PARTS


def _fmt(v: Any, spec: str) -> str:
    return "" if v is None else format(v, spec)


def not_recorded_note(results: list[Any], replay: Path | None) -> str:
    """'N not in the recording ...' when a replay proposed points its recording lacks (they
    count against the budget, but nothing was measured or stored for them); else ""."""
    missing = sum(r.not_recorded for r in results)
    if not missing:
        return ""
    name = replay.name if replay is not None else "the recording"
    return (f"{missing} not in the recording {name}: neither measured nor stored (replay with "
            "the --restrict it was recorded under, listed in its sidecar .json)")


def warm_note(results: list[Any]) -> str:
    """'warm start: N points queued first from other devices' bests (name: k, ...)' when
    a new study enqueued some (tuning/warm_start.py); else ""."""
    counts: dict[str, int] = {}
    for r in results:
        for name, k in getattr(r, "warm", {}).items():
            counts[name] = counts.get(name, 0) + k
    if not counts:
        return ""
    return (f"warm start: {sum(counts.values())} points queued first from other devices' "
            "bests (" + ", ".join(f"{name}: {k}" for name, k in counts.items())
            + "; --no-warm-start to search cold)")


# Why × CUB is empty for an axis run: no baseline is recorded for a shape.
NO_CUB_FOR_SHAPES = ("× CUB: none for shapes (CUB's DeviceReduce reduces whole arrays; "
                     "python -m reducetune.benchmarks.axis compares DeviceSegmentedReduce)")


def results_table(results: list[Any], device: dict[str, Any], config: Any, db: Path,
                  replay: Path | None = None) -> Table:
    """One row per size: the best point, its GB/s and × CUB. × CUB compares the best
    deterministic point with CUB (both run-to-run deterministic); a run that admitted
    nondeterministic points also shows its best point's ratio (× CUB any)."""
    missing = any(r.not_recorded for r in results)
    anyway = bool(getattr(config, "nondeterministic", False))
    unit = "shape" if any(r.shape for r in results) else "size"  # an axis run's units
    t = Table(title=f"{device['name']} {config.dtype} {config.op} ({config.strategy}; "
                    f"results in {db})", caption="\n".join(
                        filter(None, [not_recorded_note(results, replay), warm_note(results),
                                      NO_CUB_FOR_SHAPES if unit == "shape" else ""])) or None)
    columns = [unit, "best variant", "launch", "GB/s", "% of peak", "× CUB",
               *(["× CUB any"] if anyway else []), "points", "measured",
               *(["not recorded"] if missing else []), "stopped"]
    for c in columns:
        t.add_column(c, no_wrap=True, justify="right" if c not in ("best variant", "launch")
                     else "left")
    for r in results:
        b = r.best or {}
        t.add_row(unit_text(r.unit), b.get("variant_label", _empty(r)), b.get("launch_label", ""),
                  _fmt(b.get("gbps"), ".1f"), _fmt(b.get("pct_of_peak"), ".1f"),
                  _fmt(r.x_cub, ".2f"), *([_fmt(r.x_cub_any, ".2f")] if anyway else []),
                  str(r.points), str(r.evaluated),
                  *([str(r.not_recorded)] if missing else []), r.stopped)
    return t


def _empty(r: Any) -> str:
    """Why a size has no best: every point failed, none was in the recording, or none tried."""
    if r.failed:
        return f"(none: all {r.failed} measured points failed)"
    if r.not_recorded:
        return "(none: not in the recording)"
    return "(none: no point tried)"


def results_json(results: list[Any], device: dict[str, Any]) -> dict[str, Any]:
    return {
        "device": {k: device.get(k) for k in ("name", "uuid", "cc_major", "cc_minor")},
        "sizes": [
            {"n": r.n, **({"shape": list(r.shape)} if r.shape else {}), "best": r.best, "best_deterministic": r.best_deterministic,
             "cub_gbps": r.cub_gbps, "x_cub": r.x_cub, "x_cub_any": r.x_cub_any,
             # only where CUB failed: a run without failures answers as it always did
             **({"cub_failure": r.cub_failure} if r.cub_failure else {}),
             "points": r.points, "evaluated": r.evaluated, "not_recorded": r.not_recorded,
             "served": r.served, "invalid": r.invalid, "flagged": r.flagged,
             "nondeterministic": r.nondeterministic, "proposed": r.proposed,
             "rejected": r.rejected, "rejected_rate": r.rejected_rate,
             "failed": r.failed, "escapes": r.escapes, "warm": r.warm, "stopped": r.stopped}
            for r in results
        ],
    }


def time_json(breakdown: Any, results: list[list[Any]]) -> dict[str, Any]:
    """Where the run's time went (tuning/timing.py), with the points it measured: the
    ``time`` of ``tune --json``."""
    return breakdown.to_json(sum(r.evaluated for rs in results for r in rs))


def time_table(workers: list[tuple[str, dict[str, Any]]], wall_s: float | None = None) -> Table:
    """One row per worker (its name and ``time`` document): seconds per phase, and the share
    of its wall time in brackets. With ``wall_s`` (a --devices run's whole command), ``idle``
    is that less the worker's own wall time (its start, and its wait for the others)."""
    t = Table(title="where the time went (s; % of wall)", caption_justify="left")
    phases = [*PHASES, *(["idle"] if wall_s is not None else [])]
    for c in ("worker", "points", "points/s", "wall", *phases):
        t.add_column(c, justify="left" if c == "worker" else "right", no_wrap=True)
    for name, doc in workers:
        seconds = dict(doc["phases"])
        wall = doc["wall_s"]
        if wall_s is not None:
            seconds["idle"] = max(0.0, wall_s - wall)
            wall = max(wall, wall_s)
        t.add_row(name, str(doc["points"]), f"{doc['points_per_s']:.1f}", f"{wall:.2f}",
                  *(f"{seconds[p]:.2f} ({percent_of(seconds[p], wall) or 0.0:.0f}%)" if wall else "-"
                    for p in phases))
    parts = [f"{name}: {line}" for name, doc in workers if (line := measuring_text(doc))]
    t.caption = "\n".join(parts) or None
    return t


def measuring_text(doc: dict[str, Any]) -> str | None:
    """Measuring's parts (tuning/timing.py, summed over the evaluations), seconds and share of
    measuring, in one line; None where the results reported no times (a replay, an older run)."""
    parts = doc.get("measuring_parts") or {}
    if not parts.get("evaluations"):
        return None
    total = doc["phases"]["measuring"]
    shown = [(k.removesuffix("_s"), float(parts.get(k) or 0.0))
             for k in (*MEASURING_PARTS, "other_s")]
    text = (f"measuring, {parts['evaluations']} evaluations: "
            + ", ".join(f"{k} {v:.2f} s ({percent_of(v, total) or 0.0:.0f}%)" for k, v in shown))
    prepare = parts.get("prepare_parts") or {}
    if any(prepare.get(k) for k in PREPARE_PARTS):  # an older worker's times have none
        text += "; prepare: " + ", ".join(
            f"{k.removesuffix('_s')} {float(prepare.get(k) or 0):.2f} s"
            for k in (*PREPARE_PARTS, "other_s"))
    return text
