"""The axis experiment's PNGs: per GPU and element type, a heatmap of the winning strategy
over log2 r × log2 outer·inner (rows and columns as two panels, each cell coloured by the
winner's strategy with its % of the HBM peak written in it), and one plot of what batch
invariance costs per shape. Written only when matplotlib is installed."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from reducetune._space import parameter_values
from reducetune.experiments._harris_report import slug
from reducetune.experiments._plotting import pyplot

__all__ = ["plot", "heatmap_name"]

KINDS = ("rows", "columns")
COST_PLOT = "determinism_cost.png"


def heatmap_name(device: str, dtype: str) -> str:
    return f"heatmap_{slug(device)}_{dtype}.png"


def _colours(plt: Any) -> dict[str, Any]:
    """A colour per strategy, in the family's declared order: one strategy has one colour
    on every GPU's heatmap."""
    cmap = plt.get_cmap("tab10")
    return {str(s): cmap(i % 10) for i, s in enumerate(parameter_values("axis", "strategy"))}


def plot(report: dict[str, Any], out: Path) -> list[str]:
    """Every PNG, written into `out`; their file names (none without matplotlib)."""
    plt = pyplot("axis experiment")
    if plt is None:
        return []
    colours = _colours(plt)
    names = []
    for gpu in report["gpus"]:
        for dtype in dict.fromkeys(s["dtype"] for s in gpu["shapes"]):
            name = heatmap_name(gpu["device"], dtype)
            _heatmap(plt, colours, gpu, dtype, out / name)
            names.append(name)
    if any(s["bi_cost_pct"] is not None for g in report["gpus"] for s in g["shapes"]):
        _cost_plot(plt, report, out / COST_PLOT)
        names.append(COST_PLOT)
    return names


def _step(values: list[int]) -> int:
    """The cell width along log2 r: the smallest gap between its values (the benchmark steps r
    by powers of 8: cells 3 wide), at least 1."""
    v = sorted(set(values))
    return max(1, min((b - a for a, b in zip(v, v[1:])), default=1))


def _height(cells: list[tuple[int, int]]) -> int:
    """The cell height along log2 outer·inner: the smallest gap between two shapes of one r
    (totals 2^24 and 2^28: 4), so that no two cells overlap; cells of other r sit beside each
    other, however close their outer·inner."""
    gaps = []
    for x in {c[0] for c in cells}:
        ys = sorted({y for cx, y in cells if cx == x})
        gaps += [b - a for a, b in zip(ys, ys[1:])]
    return max(1, min(gaps, default=1))


def _heatmap(plt: Any, colours: dict[str, Any], gpu: dict[str, Any], dtype: str,
             path: Path) -> None:
    from matplotlib.patches import Patch, Rectangle  # optional: only to plot

    shapes = [s for s in gpu["shapes"] if s["dtype"] == dtype and s["best"]]
    cells = [(int(math.log2(s["r"])), int(math.log2(s["outer_inner"]))) for s in shapes]
    xs, ys = [c[0] for c in cells] or [0], [c[1] for c in cells] or [0]
    dx, dy = _step(xs), _height(cells)
    totals = sorted({s["total"] for s in shapes})
    fig, axes = plt.subplots(1, 2, figsize=(12, 6.5), sharey=True)
    seen: set[str] = set()
    for ax, kind in zip(axes, KINDS):
        for s in (s for s in shapes if s["kind"] == kind):
            x, y = math.log2(s["r"]), math.log2(s["outer_inner"])
            strategy = s["best"]["strategy"] or "?"
            seen.add(strategy)
            ax.add_patch(Rectangle((x - dx / 2, y - dy / 2), dx, dy, edgecolor="white",
                                   facecolor=colours.get(strategy, "lightgrey")))
            pct = "–" if s["pct_peak"] is None else f"{s['pct_peak']:.0f}%"
            ax.text(x, y, f"{strategy}\n{pct}", ha="center", va="center", fontsize=8)
        ax.set_xlim(min(xs) - dx, max(xs) + dx)
        ax.set_ylim(min(ys) - dy, max(ys) + dy)
        ax.set_title(f"{kind} ({'inner' if kind == 'columns' else 'outer'} = outer·inner)")
        ax.set_xlabel("log2 r (elements reduced per output)")
        ax.grid(alpha=0.2)
    if len(totals) > 1:  # the cells of one r, one per total: which is which
        fig.text(0.5, 0.925, "at each r, from the top: " + ", ".join(
            f"2^{t.bit_length() - 1}" for t in reversed(totals)) + " elements in all",
            ha="center", fontsize=9, color="dimgrey")
    axes[0].set_ylabel("log2 outer·inner (outputs)")
    handles = [Patch(facecolor=colours.get(k, "lightgrey"), label=k) for k in sorted(seen)]
    fig.legend(handles=handles, loc="lower center", ncol=max(1, len(handles)),
               title="winning strategy (the fastest of the run's own candidates)")
    fig.suptitle(f"{gpu['device']}, {dtype}: the winning strategy per shape, its % of the HBM "
                 "peak (bytes read + written)")
    fig.tight_layout(rect=(0, 0.1, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _cost_plot(plt: Any, report: dict[str, Any], path: Path) -> None:
    """A panel per GPU: batch_invariant best ÷ best − 1 (%) against log2 r, a line per type
    (colour), total (line style) and kind (marker): the same r at another total is another
    problem."""
    from matplotlib.lines import Line2D  # optional: only to plot

    gpus = report["gpus"]
    fig, axes = plt.subplots(1, len(gpus), figsize=(6 * len(gpus), 4.8), sharey=True,
                             squeeze=False)
    dtypes = sorted({s["dtype"] for g in gpus for s in g["shapes"]})
    totals = sorted({s["total"] for g in gpus for s in g["shapes"]}, reverse=True)
    colour = {d: plt.get_cmap("tab10")(i) for i, d in enumerate(dtypes)}
    style = dict(zip(totals, ["-", "--", "-.", ":"]))
    markers = {"rows": "o", "columns": "s"}
    for ax, gpu in zip(axes[0], gpus):
        for dtype, total, kind in sorted({(s["dtype"], s["total"], s["kind"])
                                          for s in gpu["shapes"]}):
            pts = sorted((math.log2(s["r"]), s["bi_cost_pct"]) for s in gpu["shapes"]
                         if (s["dtype"], s["total"], s["kind"]) == (dtype, total, kind)
                         and s["bi_cost_pct"] is not None)
            if pts:
                ax.plot(*zip(*pts), marker=markers[kind], ls=style.get(total, "-"),
                        color=colour[dtype], fillstyle="full" if kind == "rows" else "none")
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_title(gpu["device"])
        ax.set_xlabel("log2 r (elements reduced per output)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("batch_invariant best ÷ best − 1 (%)")
    handles = ([Line2D([], [], color=colour[d], label=d) for d in dtypes]
               + [Line2D([], [], color="grey", ls=style[t], label=f"2^{t.bit_length() - 1} "
                         "elements") for t in totals]
               + [Line2D([], [], color="grey", ls="", marker=markers[k], label=k,
                         fillstyle="full" if k == "rows" else "none") for k in KINDS])
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8)
    fig.suptitle("What batch invariance costs per shape: the best batch_invariant point's "
                 "median over the best point's")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
