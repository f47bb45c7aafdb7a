"""The harris experiment's report: markdown (report.md) and one PNG per device, pure
functions of the report dictionary that harris.collect builds from the database."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from reducetune import _core
from reducetune.experiments._ncu import METRICS
from reducetune.experiments._plotting import pyplot

__all__ = ["markdown", "plot", "provenance", "slug"]

SAME = 0.05  # a step speed-up within 5% of 1 is "no longer matters"


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:40]


def provenance(report: dict[str, Any]) -> str:
    """A measuring experiment's report (this one, cascading's) opens with this bullet: the
    command and the date that built it, and where its numbers come from."""
    return (f"- Command: `{report['command']}`; report built {report['date']} (UTC) from the "
            "database(s) named per device: every number below is read from them.")


def _x(v: float | None, spec: str = ".2f") -> str:
    return "–" if v is None else format(v, spec)


def _us(c: dict[str, Any] | None) -> str:
    if not c:
        return "–"
    if c.get("status") != "ok":
        return f"({c.get('status')})"
    return f"{c['median_s'] * 1e6:.2f}"


def _launch(c: dict[str, Any] | None) -> str:
    if not c:
        return "–"
    p = c["params"]
    text = f"bs {p.get('block_size')}"
    if "max_blocks" in p and c["variant"].split(".k_")[-1].startswith("harris6"):
        text += f", mb {p['max_blocks']}"
    if c.get("launches"):
        text += f", {c['launches']} launch{'es' if c['launches'] > 1 else ''}"
    return text


def _table_lines(t: dict[str, Any]) -> list[str]:
    lines = [
        "| row (seed line) | published ms | published GB/s | published step × | published "
        "cum. × | seed launch | µs | GB/s | step × | cum. × | tuned launch | µs | GB/s | "
        "× seed launch |",
        "|---|" + "---|" * 13,
    ]
    for r in t["rows"]:
        p, s, u = r["published"], r["seed"], r["tuned"]
        ok = s.get("status") == "ok"
        over = (s["median_s"] / u["median_s"]) if (u and ok) else None
        lines.append(
            f"| {r['name']} ({r['line']}) | {_x(p['time_ms'], '.3f')} | {_x(p['gbps'], '.3f')} "
            f"| {_x(p['step'])} | {_x(p['cumulative'])} | {_launch(s)} | {_us(s)} | "
            f"{_x(s.get('gbps') if ok else None, '.1f')} | {_x(s.get('step'))} | "
            f"{_x(s.get('cumulative'))} | "
            f"{_launch(u)} | {_us(u)} | {_x((u or {}).get('gbps'), '.1f')} | {_x(over)} |")
    return lines


def _changes(t: dict[str, Any]) -> list[str]:
    """What the measured table says against the published one, stated from the numbers."""
    out = []
    rows = t["rows"]
    for prev, r in zip(rows, rows[1:]):
        ours, theirs = r["seed"].get("step"), r["published"]["step"]
        a, b = prev["published"]["time_ms"], r["published"]["time_ms"]
        if theirs is None and a and b:  # the seed gives times only: its step from them
            theirs = a / b
        if ours is None:
            continue
        was = f" (published ×{theirs:.2f})" if theirs else ""
        if ours < 1 - SAME:
            out.append(f"- ordering flips: {r['preset']} is slower than {prev['preset']} here "
                       f"(step ×{ours:.2f}{was}).")
        elif ours <= 1 + SAME:
            out.append(f"- no longer matters: {prev['preset']} → {r['preset']} step "
                       f"×{ours:.2f}{was}.")
    for r in rows:
        s = r["seed"]
        if s.get("status") not in ("ok", None):
            out.append(f"- {r['preset']}, seed launch: {s['status']}: {s.get('reason', '')}")
        u = r["tuned"]
        if u is None:
            out.append(f"- {r['preset']}: no verified launch among its {r['candidates']} "
                       "candidates (failed, wrong or not measured): no tuned launch.")
        if u is not None and s.get("status") == "ok" and s["median_s"] / u["median_s"] > 1.5:
            out.append(f"- {r['preset']}: the tuned launch ({_launch(u)}) is "
                       f"×{s['median_s'] / u['median_s']:.2f} faster than the seed's "
                       f"({_launch(s)}).")
    ok = [(r["tuned"]["gbps"], r["preset"]) for r in rows if r["tuned"]]
    if ok:
        best = max(ok)
        out.append(f"- fastest row here: {best[1]} (tuned launch) at {best[0]:.1f} GB/s.")
    return out


# the counters that say why a step of the seeds helped (or no longer does)
EVIDENCE = ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
            "smsp__sass_average_branch_targets_threads_uniform.pct",
            "sm__warps_active.avg.pct_of_peak_sustained_active",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
            "smsp__inst_executed.sum")


def _ncu_steps(t: dict[str, Any]) -> list[str]:
    """Per step of the table (seed launches, both profiled): how each counter moved."""
    out = []
    rows = t["rows"]
    for prev, r in zip(rows, rows[1:]):
        a, b = (x["seed"].get("ncu") for x in (prev, r))
        if not (a and b and a["status"] == "ok" and b["status"] == "ok"):
            continue
        moves = [f"{METRICS[m]} {a['metrics'][m]:.4g} → {b['metrics'][m]:.4g}" for m in EVIDENCE
                 if a["metrics"].get(m) is not None and b["metrics"].get(m) is not None]
        if moves:
            out.append(f"- {prev['preset']} → {r['preset']} (seed launches): " + "; ".join(moves))
    return out


def _ncu_lines(t: dict[str, Any]) -> list[str]:
    cells = [(r, which, r[which]) for r in t["rows"] for which in ("seed", "tuned")
             if r[which] and r[which].get("ncu")]
    if not cells:
        return []
    keys = [m for m in METRICS if m != "gpu__time_duration.sum"]
    lines = ["", "Nsight Compute, first launch of the first-pass kernel (`--ncu`):", "",
             "| row | launch | " + " | ".join(METRICS[m] for m in keys)
             + " | published by the seed (its GPU) |", "|---|---|" + "---|" * (len(keys) + 1)]
    for r, which, c in cells:
        n = c["ncu"]
        theirs = ", ".join(f"{k} {v:g}" for k, v in r["published"].items()
                           if k not in ("time_ms", "gbps", "step", "cumulative")
                           and v is not None) if which == "seed" else ""
        if n["status"] != "ok":
            lines.append(f"| {r['preset']} | {which} | ncu failed: {n['reason'][:160]} |"
                         + " |" * (len(keys) - 1) + f" {theirs} |")
            continue
        vals = [_x(n["metrics"].get(m), ".4g") for m in keys]
        lines.append(f"| {r['preset']} | {which} ({_launch(c)}) | " + " | ".join(vals)
                     + f" | {theirs} |")
    return lines


def _device_lines(d: dict[str, Any], images: dict[str, str]) -> list[str]:
    dates = sorted({c["date"] for t in d["tables"] for r in t["rows"]
                    for c in (r["seed"], r["tuned"]) if c and c.get("date")})
    lines = [f"## {d['device']}", "",
             f"- Measured {dates[0] if dates else '?'} .. {dates[-1] if dates else '?'} (UTC), "
             f"database `{d['source']}`",
             *(f"- Measured with `{c}`" for c in d.get("measured_by", [])), ""]
    if d["device"] in images:
        lines += [f"![{d['device']}]({images[d['device']]})", ""]
    for t in d["tables"]:
        lines += [f"### {t['title']}", "",
                  f"Published: `../shared/seeds/{t['source']}` ({t['gpu']}), {t['dtype']} "
                  f"n = {t['n']}; lines cited per row. {t['note']}", ""]
        lines += _table_lines(t)
        changes = _changes(t)
        if changes:
            lines += ["", "From the numbers above:", "", *changes]
        lines += _ncu_lines(t)
        steps = _ncu_steps(t)
        if steps:
            lines += ["", "Counters across each step (the evidence for what changed):", "",
                      *steps]
        lines.append("")
    return lines


def markdown(report: dict[str, Any], images: dict[str, str]) -> str:
    lines = [
        "# The seeds' tables on today's GPUs (`reducetune experiment harris`)", "",
        provenance(report),
        "- Each row twice: the **seed launch** (the seed's kernel with its block size and grid "
        "rule: the family's preset) and the **tuned launch** (the same kernel, the fastest "
        "verified block size, and max_blocks for Kernel 7, on this GPU).",
        "- µs: median of L2-flushed cold samples of the whole launch sequence (every pass); "
        "GB/s: bytes read / median. Step × and cum. × are computed as the seeds do, over the "
        "row before and over the first row. Published numbers are the seeds' own (their GPU, "
        "timer and bandwidth formula: see each table's note).",
        "- (wrong): the kernel's result failed verification on this GPU (the seeds' volatile "
        "last-warp unroll without `__syncwarp()` is racy since Volta); (failed): see the reason "
        "below the table.",
        "- `report.json` names every shown point's measurement (`measurement_id`: the row of "
        "`rt_measurements` that holds its samples).", "",
    ]
    for d in report["devices"]:
        lines += _device_lines(d, images)
    return "\n".join(lines)


def plot(report: dict[str, Any], out: Path) -> dict[str, str]:
    """One PNG per device, a panel per table: GB/s (bytes / time, log scale) of the published
    row, the seed launch and the tuned launch, side by side. {device: file name}."""
    plt = pyplot("harris")
    if plt is None:
        return {}
    images = {}
    for d in report["devices"]:
        tables = d["tables"]
        fig, axes = plt.subplots(len(tables), 1, squeeze=False,
                                 figsize=(9, sum(1.2 + 0.45 * len(t["rows"]) for t in tables)))
        for ax, t in zip(axes[:, 0], tables):
            _panel(ax, t)
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="upper center", ncol=3, fontsize=8,
                   bbox_to_anchor=(0.5, 0.985))
        fig.suptitle(f"{d['device']}: the seeds' kernels, published vs. measured", y=0.999)
        fig.tight_layout(rect=(0, 0, 1, 0.965))
        name = f"harris_{slug(d['device'])}.png"
        fig.savefig(out / name, dpi=110, bbox_inches="tight")
        plt.close(fig)
        images[d["device"]] = name
    return images


def _panel(ax: Any, t: dict[str, Any]) -> None:
    nbytes = t["n"] * _core.element_bytes(t["dtype"])  # the core's element size
    rows = t["rows"]
    series = [("published (the seed's GPU)", "#9e9e9e", "//",
               [nbytes / (r["published"]["time_ms"] * 1e-3) / 1e9
                if r["published"]["time_ms"] else None for r in rows]),
              ("seed launch (this GPU)", "#1f77b4", "",
               [r["seed"].get("gbps") if r["seed"].get("status") == "ok" else None
                for r in rows]),
              ("tuned launch (this GPU)", "#ff7f0e", "",
               [r["tuned"]["gbps"] if r["tuned"] else None for r in rows])]
    h = 0.26
    for k, (label, color, hatch, vals) in enumerate(series):
        ys = [i + (k - 1) * h for i in range(len(rows))]
        ax.barh([y for y, v in zip(ys, vals) if v], [v for v in vals if v], height=h,
                color=color, hatch=hatch, edgecolor="black", linewidth=0.4, label=label)
        missing = "no published time" if k == 0 else "not measured, or failed"
        for y, v in zip(ys, vals):
            if v is None:
                ax.text(0.01, y, missing, transform=ax.get_yaxis_transform(), va="center",
                        fontsize=6, color="black")
    values = [v for _, _, _, vals in series for v in vals if v]
    if values:
        ax.set_xlim(min(values) / 3, max(values) * 1.5)
    ax.set_yticks(range(len(rows)), [r["preset"] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("GB/s = input bytes / time (log scale)")
    ax.set_title(f"{t['title']} — {t['dtype']} n = {t['n']}", fontsize=9)
    ax.grid(axis="x", alpha=0.3, which="both")
