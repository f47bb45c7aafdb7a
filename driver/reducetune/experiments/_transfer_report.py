"""The transfer experiment's outputs: transfer.json (the report dictionary transfer._run
builds), report.md (a table per size) and transfer.png (mean fraction of the optimum after k
evaluations, cold and warm; written only when matplotlib is installed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reducetune.experiments._plotting import optimum_fraction_figure, pyplot

__all__ = ["markdown", "plot", "write_report"]


def write_report(report: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "transfer.json").write_text(json.dumps(report, indent=1))
    (out / "report.md").write_text(markdown(report))
    plot(report, out / "transfer.png")


def _k(v: float | None, budget: int) -> str:
    return f"> {budget}" if v is None else f"{v:g}"


def _sidecar(side: dict[str, Any] | None) -> str:
    if not side or not side.get("command"):
        return ""
    return (f", recorded {side.get('date', '?')} on {side.get('device', {}).get('name', '?')} "
            f"with `{side['command']}`")


def markdown(report: dict[str, Any]) -> str:
    target = report["target"]
    lines = [
        f"# Warm start from another GPU: {report['device']} ({report['dtype']} {report['op']}, "
        f"{report['strategy']})", "",
        f"- Searched: `{report['recording']}` ({report['device']})"
        + _sidecar(report.get("recording_sidecar")),
        f"- Bests taken from: `{report['from']}` ({', '.join(report['from_devices']) or 'none'})"
        + _sidecar(report.get("from_sidecar")),
        f"- Date of this run (UTC): {report['date']}; Optuna {report['optuna']}; replayed on a "
        "CPU, no GPU",
        f"- Command: `{report['command']}`", "",
        f"Evaluations (distinct valid points) until the best found is within {target:.2f} of "
        f"the recording's exhaustive optimum (its best deterministic, unflagged point), "
        f"{report['seeds']} seeds per mode. cold: the base preset first, then "
        f"{report['strategy']}; warm: the base preset, then the other GPU's best for that size "
        "(when valid here), then the same strategy. Mean over the seeds that reached the "
        "target; median over all seeds, a miss counted as beyond the budget.", ""]
    for n, e in report["sizes"].items():
        budget = e["max_evals"]
        lines += [f"## n = {n}", "",
                  f"{e['valid_points']} valid points; optimum {e['optimum_s'] * 1e6:.3f} µs; "
                  f"{e['points_within_target']} points within {target:.2f} of it; "
                  f"budget {budget} evaluations.", ""]
        if not e["from_points"]:
            lines += ["The other recording has no best for this size that is valid and "
                      "selected here: warm and cold runs are the same.", ""]
        for p in e["from_points"]:
            here = p["fraction_here"]
            lines.append(f"- from {p['device']}: `{p['variant_label']}` `{p['launch_label']}`: "
                         + ("not recorded here" if here is None
                            else f"{here:.3f} of the optimum here"))
        lines += ["", "| mode | reached | mean evaluations | median evaluations | "
                  "mean fraction at k=1, 2, 5, 10 |", "|---|---|---|---|---|"]
        for mode, m in e["modes"].items():
            fr = m["mean_fraction"]
            at = ", ".join(f"{fr[k - 1]:.3f}" for k in (1, 2, 5, 10) if k <= len(fr))
            mean = "" if m["mean_reached"] is None else f"{m['mean_reached']:.1f}"
            lines.append(f"| {mode} | {m['reached']}/{len(m['k'])} | {mean} | "
                         f"{_k(m['median'], budget)} | {at} |")
        pr = e["paired"]
        lines += ["", f"Per seed: warm needed fewer evaluations for {pr['warm_fewer']}, as "
                  f"many for {pr['equal']}, more for {pr['warm_more']}.", ""]
    return "\n".join(lines)


def _mode_curves(ax: Any, e: dict[str, Any]) -> float:
    low = 1.0
    for mode, m in e["modes"].items():
        ks = range(1, len(m["mean_fraction"]) + 1)
        ax.plot(ks, m["mean_fraction"], label=f"{mode} ({m['reached']}/{len(m['k'])} "
                                              "reach the target)")
        low = min(low, min(m["mean_fraction"]))
    return low


def plot(report: dict[str, Any], path: Path) -> None:
    plt = pyplot("transfer")
    if plt is None:
        return
    optimum_fraction_figure(plt, report, path, report["target"], _mode_curves,
                            "fraction of exhaustive optimum (mean over seeds)",
                            f"{report['device']}, {report['strategy']}: warm start from "
                            f"{', '.join(report['from_devices']) or 'nothing'}")
