"""The final table of a tuning run (size, best variant, GB/s, % of peak, × CUB) and its JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table


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


def results_table(results: list[Any], device: dict[str, Any], config: Any, db: Path,
                  replay: Path | None = None) -> Table:
    missing = any(r.not_recorded for r in results)
    t = Table(title=f"{device['name']} {config.dtype} {config.op} ({config.strategy}; "
                    f"results in {db})", caption=not_recorded_note(results, replay) or None)
    columns = ["size", "best variant", "launch", "GB/s", "% of peak", "× CUB", "points",
               "measured", *(["not recorded"] if missing else []), "stopped"]
    for c in columns:
        t.add_column(c, no_wrap=True, justify="right" if c not in ("best variant", "launch")
                     else "left")
    for r in results:
        b = r.best or {}
        t.add_row(str(r.n), b.get("variant_label", "(none)"), b.get("launch_label", ""),
                  _fmt(b.get("gbps"), ".1f"), _fmt(b.get("pct_of_peak"), ".1f"),
                  _fmt(r.x_cub, ".2f"), str(r.points), str(r.evaluated),
                  *([str(r.not_recorded)] if missing else []), r.stopped)
    return t


def results_json(results: list[Any], device: dict[str, Any]) -> dict[str, Any]:
    return {
        "device": {k: device.get(k) for k in ("name", "uuid", "cc_major", "cc_minor")},
        "sizes": [
            {"n": r.n, "best": r.best, "cub_gbps": r.cub_gbps, "x_cub": r.x_cub,
             "points": r.points, "evaluated": r.evaluated, "not_recorded": r.not_recorded,
             "served": r.served, "invalid": r.invalid, "flagged": r.flagged,
             "failed": r.failed, "escapes": r.escapes, "stopped": r.stopped}
            for r in results
        ],
    }
