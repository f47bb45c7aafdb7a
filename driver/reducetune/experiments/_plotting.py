"""matplotlib for the experiments' reports: an optional extra, so a report without it is
still written, without its PNGs."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["pyplot", "optimum_fraction_figure"]


def pyplot(experiment: str) -> Any | None:
    """matplotlib.pyplot on the file-only Agg backend (no display on a GPU machine), or None
    after saying on stderr that `experiment` writes no PNG."""
    try:
        import matplotlib  # optional (the experiments extra): only to plot

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # optional (the experiments extra): only to plot
    except ImportError:
        print(f"{experiment}: matplotlib is missing; no PNG written", file=sys.stderr)
        return None
    return plt


def optimum_fraction_figure(plt: Any, report: dict[str, Any], path: Path, target: float,
                            draw: Callable[[Any, Any], float], ylabel: str, title: str) -> None:
    """The search experiments' figure (search efficiency, transfer), saved to path: one panel
    per size of report["sizes"], side by side, with the curves draw(axes, size entry) plots
    (it returns their lowest point), the target line, evaluations on a log x axis (the early
    evaluations are where strategies and warm starts differ) and the fraction of the
    exhaustive optimum on the y axis."""
    sizes = list(report["sizes"].items())
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4.5), squeeze=False)
    for ax, (n, e) in zip(axes[0], sizes):
        low = draw(ax, e)
        ax.axhline(target, color="grey", ls="--", lw=0.8, label=f"target {target:.2f}")
        ax.set_title(f"{report['dtype']} {report['op']} n={n}")
        ax.set_xscale("log")
        ax.set_xlabel("evaluations (log scale)")
        ax.set_ylabel(ylabel)
        ax.set_ylim(max(0.0, min(low, target) - 0.02), 1.005)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
