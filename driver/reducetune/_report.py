"""The final table of a tuning run (size, best variant, GB/s, % of peak, × CUB) and its JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table


def _fmt(v: Any, spec: str) -> str:
    return "" if v is None else format(v, spec)


def results_table(results: list[Any], device: dict[str, Any], config: Any, db: Path) -> Table:
    t = Table(title=f"{device['name']} {config.dtype} {config.op} ({config.strategy}; "
                    f"results in {db})")
    for c in ("size", "best variant", "launch", "GB/s", "% of peak", "× CUB", "points",
              "measured", "stopped"):
        t.add_column(c, no_wrap=True, justify="right" if c not in ("best variant", "launch")
                     else "left")
    for r in results:
        b = r.best or {}
        t.add_row(str(r.n), b.get("variant_label", "(none)"), b.get("launch_label", ""),
                  _fmt(b.get("gbps"), ".1f"), _fmt(b.get("pct_of_peak"), ".1f"),
                  _fmt(r.x_cub, ".2f"), str(r.points), str(r.evaluated), r.stopped)
    return t


def results_json(results: list[Any], device: dict[str, Any]) -> dict[str, Any]:
    return {
        "device": {k: device.get(k) for k in ("name", "uuid", "cc_major", "cc_minor")},
        "sizes": [
            {"n": r.n, "best": r.best, "cub_gbps": r.cub_gbps, "x_cub": r.x_cub,
             "points": r.points, "evaluated": r.evaluated, "served": r.served,
             "invalid": r.invalid, "flagged": r.flagged, "failed": r.failed,
             "escapes": r.escapes, "stopped": r.stopped}
            for r in results
        ],
    }
