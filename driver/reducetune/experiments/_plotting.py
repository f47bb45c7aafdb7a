"""matplotlib for the experiments' reports: an optional extra, so a report without it is
still written, without its PNGs."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["pyplot"]


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
