"""The cascading experiment's figures. Every curve has its own marker and line style and is
drawn half-transparent, so that curves that coincide stay visible."""

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


def _marks(ax: Any, w: dict[str, Any], first: bool) -> None:
    ax.axvline(w["brent_target"], color="black", ls="--", lw=0.9,
               label="Brent: log2 n" if first else None)
    ax.axvspan(1024, 4096, color="#bdbdbd", alpha=0.35,
               label="Harris: 1024–4096" if first else None)


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
    first = True
    for i, n in enumerate(sizes):
        for j, dtype in enumerate(dtypes):
            ax = axes[i, j]
            w = next((w for w in d["sweep"] if (w["dtype"], w["n"]) == (dtype, n)), None)
            _axes(ax, w, dtype, n)
            if w is None or not w["points"]:
                continue
            _marks(ax, w, first)
            bss = sorted({p["block_size"] for p in w["points"]})
            for k, bs in enumerate(bss):
                pts = sorted((p["effective"], p["gbps"]) for p in w["points"]
                             if p["block_size"] == bs and p["status"] == "ok")
                if pts:
                    xs, ys = zip(*pts)
                    ax.plot(_shift(list(xs), k, len(bss)), ys, **_style(k, len(bss)),
                            label=f"block {bs}" if first else None)
            o = w["optimum"]
            if o:
                ax.plot([o["effective"]], [o["gbps"]], marker="*", ms=14, color="gold",
                        markeredgecolor="black", ls="none", label="optimum" if first else None,
                        zorder=5)
            if w.get("cub_gbps"):
                ax.axhline(w["cub_gbps"], color="grey", ls=":", lw=1,
                           label="CUB" if first else None)
            if d.get("ceiling_gbps"):
                ax.axhline(d["ceiling_gbps"], color="black", ls="-.", lw=0.7,
                           label="streaming ceiling" if first else None)
            first = False
    fig.legend(loc="upper center", ncol=8, fontsize=8, bbox_to_anchor=(0.5, 1.0))
    fig.suptitle(f"{d['device']}: GB/s against elements per thread\n({OFFSET_NOTE})",
                 y=1.05)
    fig.tight_layout()
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def passes_figure(plt: Any, d: dict[str, Any], path: Path) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    m = len(d["passes"])
    for k, p in enumerate(d["passes"]):
        ok = sorted((c["n"], c["median_s"], c["gbps"], c["launches"]) for c in p["cells"]
                    if c["status"] == "ok")
        if not ok:
            continue
        ns = _shift([c[0] for c in ok], k, m)
        left.plot(ns, [c[1] * 1e6 for c in ok], **_style(k, m), label=p["protocol"])
        right.plot(ns, [c[2] for c in ok], **_style(k, m), label=p["protocol"])
        for x, (_, t, _, launches) in zip(ns, ok):
            if launches:
                left.annotate(str(launches), (x, t * 1e6), fontsize=6, color=COLORS[k % 6],
                              textcoords="offset points", xytext=(3, 3 + 3 * k))
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("n (elements, log2)")
        ax.grid(alpha=0.3, which="both")
    left.set_yscale("log")
    left.set_ylabel("median time, µs (log)")
    left.set_title("numbers beside the points: kernel launches from the host", fontsize=8)
    right.set_ylabel("GB/s (bytes read ÷ median time)")
    right.legend(fontsize=7, loc="upper left")
    fig.suptitle(f"{d['device']}: the other cascade, passes against n (int32 sum)\n"
                 f"({OFFSET_NOTE})")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _envelope(points: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """The best GB/s over block sizes per half power of two of elements per thread."""
    best: dict[float, tuple[float, float]] = {}
    for p in points:
        if p["status"] != "ok":
            continue
        key = round(2 * math.log2(p["effective"])) / 2
        if key not in best or p["gbps"] > best[key][1]:
            best[key] = (p["effective"], p["gbps"])
    return [best[k] for k in sorted(best)]


def compare_figure(plt: Any, devices: list[dict[str, Any]], path: Path) -> None:
    sweep = [w for d in devices for w in d["sweep"]]
    fig, axes, dtypes, sizes = _grid(plt, sweep)
    first = True
    for i, n in enumerate(sizes):
        for j, dtype in enumerate(dtypes):
            ax = axes[i, j]
            ws = [next((w for w in d["sweep"] if (w["dtype"], w["n"]) == (dtype, n)), None)
                  for d in devices]
            _axes(ax, next((w for w in ws if w and w["points"]), None), dtype, n)
            if not any(w and w["points"] for w in ws):
                continue
            _marks(ax, next(w for w in ws if w), first)
            for k, (d, w) in enumerate(zip(devices, ws)):
                if not w or not w["points"]:
                    continue
                xs, ys = zip(*_envelope(w["points"]))
                m = len(devices)
                ax.plot(_shift(list(xs), k, m), ys, **_style(k, m),
                        label=f"{d['device']} (best over block sizes)" if first else None)
                if w["optimum"]:
                    ax.plot(_shift([w["optimum"]["effective"]], k, m), [w["optimum"]["gbps"]],
                            marker="*", ms=13, color=COLORS[k % 6], markeredgecolor="black",
                            ls="none")
            first = False
    fig.legend(loc="upper center", ncol=4, fontsize=8, bbox_to_anchor=(0.5, 1.0))
    fig.suptitle("Does the optimum move with the memory system? (stars: each device's optimum)"
                 f"\n({OFFSET_NOTE})", y=1.05)
    fig.tight_layout()
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
