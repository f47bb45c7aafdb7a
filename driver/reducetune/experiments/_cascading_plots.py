"""The cascading experiment's figures. Every curve has its own marker and line style and is
drawn half-transparent, and curves are shifted sideways a little, so that curves that coincide
stay visible. Each figure has one legend, each label once."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

__all__ = ["sweep_figure", "passes_figure", "compare_figure", "OFFSET_NOTE"]

MARKERS = ["o", "s", "^", "D", "v", "P", "X"]
STYLES = ["-", "--", "-.", ":"]
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
SHIFT = 0.06  # curves k of m are drawn at x * 2^((k - (m-1)/2) * SHIFT): coinciding ones show
OFFSET_NOTE = (f"curves are shifted sideways by up to ±{100 * (2 ** (2.5 * SHIFT) - 1):.0f}% "
               "of x so that coinciding ones stay visible; values are unshifted in the tables")
SHORT_GRID = "grid < one block per SM"


def _style(k: int, m: int) -> dict[str, Any]:
    return {"marker": MARKERS[k % 7], "ls": STYLES[k % 4], "color": COLORS[k % 6],
            "alpha": 0.8, "ms": 4.5, "mfc": "none" if k % 2 else COLORS[k % 6]}


def _shift(xs: list[float], k: int, m: int) -> list[float]:
    return [x * 2 ** ((k - (m - 1) / 2) * SHIFT) for x in xs]


def _grid(plt: Any, sweep: list[dict[str, Any]]) -> tuple[Any, Any, list[str], list[int]]:
    dtypes = list(dict.fromkeys(w["dtype"] for w in sweep))
    sizes = sorted({w["n"] for w in sweep})
    fig, axes = plt.subplots(len(sizes), len(dtypes), squeeze=False,
                             figsize=(4.8 * len(dtypes), 3.4 * len(sizes)))
    return fig, axes, dtypes, sizes


def _legend(fig: Any, axes: Any, ncol: int) -> None:
    """One legend for the figure: each label once, from whichever panel drew it first (so a
    mark some panels lack, as the streaming ceiling off a small n's scale, still shows)."""
    seen: dict[str, Any] = {}
    for ax in axes.flat:
        for h, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, h)
    fig.legend(list(seen.values()), list(seen), loc="upper center", ncol=ncol, fontsize=8,
               bbox_to_anchor=(0.5, 1.0))


def _marks(ax: Any, w: dict[str, Any]) -> None:
    ax.axvline(w["brent_target"], color="black", ls="--", lw=0.9, label="Brent: log2 n")
    ax.axvspan(1024, 4096, color="#bdbdbd", alpha=0.35, label="Harris: 1024–4096")


def _y_range(ax: Any, top: float, ceiling: float | None) -> None:
    """y from 0 to a little above the data (the panel's curves, CUB). The streaming ceiling
    is drawn where it lies within 1.3× of the data's top and named in the panel otherwise, so
    that a small n's curves are not squashed under a line far above them."""
    if ceiling and ceiling <= 1.3 * top:
        ax.axhline(ceiling, color="black", ls="-.", lw=0.7, label="streaming ceiling")
        ax.set_ylim(0, 1.08 * max(top, ceiling))
    elif ceiling:  # above the data, with room for the note over the curves and CUB
        ax.text(0.98, 0.97, f"streaming ceiling {ceiling:.0f} GB/s: off this scale",
                transform=ax.transAxes, ha="right", va="top", fontsize=7, color="0.3")
        ax.set_ylim(0, 1.2 * top)
    else:
        ax.set_ylim(0, 1.08 * top)


def _ring(ax: Any, pts: list[tuple[float, float]]) -> None:
    """A black ring around the points whose grid has fewer blocks than the GPU has SMs."""
    if pts:
        xs, ys = zip(*pts)
        ax.plot(xs, ys, ls="none", marker="o", ms=9, mfc="none", mec="black", mew=0.7,
                alpha=0.5, label=SHORT_GRID, zorder=4)


def _axes(ax: Any, w: dict[str, Any] | None, dtype: str, n: int) -> None:
    ax.set_xscale("log", base=2)
    ax.set_title(f"{dtype} n = 2^{int(math.log2(n))}", fontsize=9)
    ax.set_xlabel("elements per thread = n ÷ (grid × block) (log2)", fontsize=8)
    ax.set_ylabel("GB/s (bytes read ÷ median time)", fontsize=8)
    ax.grid(alpha=0.3, which="both")
    if w is None or not w["points"]:
        ax.text(0.5, 0.5, "not measured", transform=ax.transAxes, ha="center")


def sweep_figure(plt: Any, d: dict[str, Any], path: Path) -> None:
    fig, axes, dtypes, sizes = _grid(plt, d["sweep"])
    for i, n in enumerate(sizes):
        for j, dtype in enumerate(dtypes):
            ax = axes[i, j]
            w = next((w for w in d["sweep"] if (w["dtype"], w["n"]) == (dtype, n)), None)
            _axes(ax, w, dtype, n)
            if w is None or not w["points"]:
                continue
            _marks(ax, w)
            bss = sorted({p["block_size"] for p in w["points"]})
            short: list[tuple[float, float]] = []
            top = w.get("cub_gbps") or 0.0
            for k, bs in enumerate(bss):
                pts = sorted((p["effective"], p["gbps"], p["grid"]) for p in w["points"]
                             if p["block_size"] == bs and p["status"] == "ok")
                if not pts:
                    continue
                xs = _shift([x for x, _, _ in pts], k, len(bss))
                ys = [y for _, y, _ in pts]
                ax.plot(xs, ys, **_style(k, len(bss)), label=f"block {bs}")
                short += [(x, y) for x, (_, y, g) in zip(xs, pts) if g < d["sm_count"]]
                top = max(top, *ys)
            _ring(ax, short)
            o = w["optimum"]
            if o:
                k = bss.index(o["block_size"])
                ax.plot(_shift([o["effective"]], k, len(bss)), [o["gbps"]], marker="*",
                        ms=14, color="gold", markeredgecolor="black", ls="none",
                        label="optimum", zorder=5)
            if w.get("cub_gbps"):
                ax.axhline(w["cub_gbps"], color="grey", ls=":", lw=1, label="CUB")
            _y_range(ax, top, d.get("ceiling_gbps"))
    _legend(fig, axes, 9)
    fig.suptitle(f"{d['device']} ({d['sm_count']} SMs): GB/s against elements per thread; "
                 f"ringed: {SHORT_GRID}\n({OFFSET_NOTE})", y=1.05)
    fig.tight_layout()
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def _launches_text(ok: list[tuple[Any, ...]]) -> str:
    counts = [c[3] for c in ok if c[3]]
    if not counts:
        return ""
    lo, hi = min(counts), max(counts)
    return f" [{lo} launch{'es' if lo > 1 else ''}]" if lo == hi else f" [{lo}–{hi} launches]"


def passes_figure(plt: Any, d: dict[str, Any], path: Path) -> None:
    """Left: median time against n. Right: each protocol's time ÷ the fastest protocol's at
    that n, which separates the protocols the left panel's log scale draws on top of one
    another (and shows what a host finish costs). Launches per reduction in the legend."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    m = len(d["passes"])
    fastest: dict[int, float] = {}
    for p in d["passes"]:
        for c in p["cells"]:
            if c["status"] == "ok":
                fastest[c["n"]] = min(fastest.get(c["n"], math.inf), c["median_s"])
    for k, p in enumerate(d["passes"]):
        ok = sorted((c["n"], c["median_s"], c["gbps"], c["launches"]) for c in p["cells"]
                    if c["status"] == "ok")
        if not ok:
            continue
        ns = _shift([c[0] for c in ok], k, m)
        label = p["protocol"] + _launches_text(ok)
        left.plot(ns, [c[1] * 1e6 for c in ok], **_style(k, m), label=label)
        right.plot(ns, [c[1] / fastest[c[0]] for c in ok], **_style(k, m))
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("n (int32 elements, log2)")
        ax.grid(alpha=0.3, which="both")
    left.set_ylabel("median time, µs (log)")
    right.set_ylabel("time ÷ the fastest protocol's at this n (log)")
    right.axhline(1.0, color="black", lw=0.7)
    hi = max((max(line.get_ydata()) for line in right.get_lines() if len(line.get_ydata())),
             default=1.0)
    ticks = [t for t in (1, 1.5, 2, 3, 5, 10, 20, 50, 100, 200) if t <= 1.2 * hi]
    right.set_yticks(ticks, [f"×{t:g}" for t in ticks])
    right.set_yticks([], minor=True)
    fig.legend(*left.get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=8,
               bbox_to_anchor=(0.5, -0.02), title="protocol [kernel launches from the host "
                                                  "per reduction]", title_fontsize=8)
    fig.suptitle(f"{d['device']}: the other cascade, passes against n (int32 sum)\n"
                 f"({OFFSET_NOTE})")
    fig.tight_layout(rect=(0, 0.2, 1, 1))
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def _envelope(points: list[dict[str, Any]]) -> list[tuple[float, float, int]]:
    """The best GB/s over block sizes per half power of two of elements per thread, with
    that point's grid."""
    best: dict[float, tuple[float, float, int]] = {}
    for p in points:
        if p["status"] != "ok":
            continue
        key = round(2 * math.log2(p["effective"])) / 2
        if key not in best or p["gbps"] > best[key][1]:
            best[key] = (p["effective"], p["gbps"], p["grid"])
    return [best[k] for k in sorted(best)]


def compare_figure(plt: Any, devices: list[dict[str, Any]], path: Path) -> None:
    sweep = [w for d in devices for w in d["sweep"]]
    fig, axes, dtypes, sizes = _grid(plt, sweep)
    m = len(devices)
    for i, n in enumerate(sizes):
        for j, dtype in enumerate(dtypes):
            ax = axes[i, j]
            ws = [next((w for w in d["sweep"] if (w["dtype"], w["n"]) == (dtype, n)), None)
                  for d in devices]
            _axes(ax, next((w for w in ws if w and w["points"]), None), dtype, n)
            if not any(w and w["points"] for w in ws):
                continue
            _marks(ax, next(w for w in ws if w))
            short: list[tuple[float, float]] = []
            top = 0.0
            for k, (d, w) in enumerate(zip(devices, ws)):
                if not w or not w["points"]:
                    continue
                env = _envelope(w["points"])
                xs = _shift([x for x, _, _ in env], k, m)
                ys = [y for _, y, _ in env]
                ax.plot(xs, ys, **_style(k, m), label=f"{d['device']} (best over block sizes)")
                short += [(x, y) for x, (_, y, g) in zip(xs, env) if g < d["sm_count"]]
                top = max(top, *ys)
                if w["optimum"]:
                    ax.plot(_shift([w["optimum"]["effective"]], k, m), [w["optimum"]["gbps"]],
                            marker="*", ms=13, color=COLORS[k % 6], markeredgecolor="black",
                            ls="none", zorder=5, label=f"{d['device']}: optimum")
            _ring(ax, short)
            ax.set_ylim(0, 1.08 * top)
    _legend(fig, axes, 4)
    fig.suptitle("Does the optimum move with the memory system? (stars: each device's "
                 f"optimum; ringed: {SHORT_GRID})\n({OFFSET_NOTE})", y=1.06)
    fig.tight_layout()
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
