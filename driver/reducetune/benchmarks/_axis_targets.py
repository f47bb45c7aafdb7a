"""Issue 26's targets for the axis benchmark, judged from its rows and their ratios (the report's
``ratios``, which calls ``verdicts`` for axis.md's block of targets), one verdict per target and
group of shapes (a dtype and a total): met or missed, with the worst value and its shape. The
summary line rounds to two digits, so a 0.9496 x the ceiling would read 0.95 there; here the
comparison is exact and the value printed to four.

The targets, as the issue states them (the benchmark's times as applications call them):
- at every 2^28 shape, at least ``PCT_PEAK`` % of the HBM peak (bytes read + written) and
  ``X_CEILING`` x the faster of the two ceilings of the same rounds (rates);
- at every shape, at least ``X_PEER`` x the fastest peer, a tie (the ratio's interval holds 1)
  excepted, and ties in at most ``TIES_SHARE`` of the shapes;
- the geometric mean over a total's shapes at least ``GEOMEAN[log2 total]`` x the fastest peer;
- rows of 16 columns or fewer at 2^28: at least ``SHORT_ROWS_X_TORCH`` x ``torch.sum`` eager.

    scripts/axis-targets docs/results/<run>/*/axis.json.xz     (recorded runs, no GPU)
"""

from __future__ import annotations

import math
from typing import Any, Callable

PCT_PEAK = 85.0
X_CEILING = 0.95
X_PEER = 1.0
TIES_SHARE = 0.1
GEOMEAN = {28: 1.1, 24: 1.3}
SHORT_ROWS_X_TORCH = 2.5
FULL_TOTAL = 28  # log2 of the total whose shapes carry the bandwidth targets
SHORT_ROWS = 16  # rows of this many columns or fewer

Verdict = tuple[str, bool, str]  # target, met, what was measured
Pairs = list[tuple[dict[str, Any], dict[str, Any]]]  # (the report's ratios of a row, the row)


def shape_label(row: dict[str, Any]) -> str:
    """How the report names a row's shape: "columns (65536, 4096)"."""
    return f"{row['kind']} {tuple(row['shape'])}"


def geomean(xs: list[float]) -> float | None:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def _worst(name: str, pairs: list[tuple[float, dict[str, Any]]], floor: float,
           fmt: Callable[[float], str]) -> Verdict:
    """`name` met where every value is at least `floor`; the lowest value and its shape, and
    how many shapes fall short."""
    if not pairs:
        return name, False, "not measured"
    low, row = min(pairs, key=lambda p: p[0])
    short = sum(v < floor for v, _ in pairs)
    under = f", {short} of {len(pairs)} shapes under" if short else ""
    return name, short == 0, f"worst {fmt(low)} ({shape_label(row)}){under}"


def judge(rs: Pairs, total_log2: int) -> list[Verdict]:
    """The verdicts for one group of rows (one dtype, one total)."""
    out: list[Verdict] = []
    if total_log2 == FULL_TOTAL:
        out.append(_worst(f"{PCT_PEAK:g} % of peak", [(q["pct_peak"], r) for q, r in rs
                                                     if q["pct_peak"] is not None],
                          PCT_PEAK, lambda v: f"{v:.2f} %"))
        out.append(_worst(f"{X_CEILING:g} x faster ceiling",
                          [(q["x_ceiling"], r) for q, r in rs if q["x_ceiling"]], X_CEILING,
                          lambda v: f"{v:.4f}"))
    peer = [(q["x_peer"], r) for q, r in rs if q["x_peer"] and not q["tie"]]
    out.append(_worst(f"{X_PEER:.1f} x fastest peer (ties apart)", peer, X_PEER,
                      lambda v: f"{v:.3f}"))
    ties = sum(bool(q["tie"]) for q, _ in rs)
    out.append((f"ties in at most 1 shape in {round(1 / TIES_SHARE)}",
                ties <= TIES_SHARE * len(rs),
                f"{ties} of {len(rs)}"))
    xs = [q["x_peer"] for q, _ in rs if q["x_peer"]]
    g = geomean(xs)
    if total_log2 in GEOMEAN and g is not None:
        out.append((f"geometric mean {GEOMEAN[total_log2]:g} x fastest peer",
                    g >= GEOMEAN[total_log2], f"{g:.3f} over {len(xs)} shapes"))
    if total_log2 == FULL_TOTAL:
        short = [(q["x_torch"], r) for q, r in rs
                 if r["kind"] == "rows" and r["r"] <= SHORT_ROWS and q["x_torch"]]
        if short:
            out.append(_worst(f"rows of {SHORT_ROWS} or fewer {SHORT_ROWS_X_TORCH:g} x torch.sum",
                              short, SHORT_ROWS_X_TORCH, lambda v: f"{v:.2f}"))
    return out


def verdicts(dtype: str, total_log2: int, rs: Pairs, not_run: int = 0) -> str:
    """One group's line of axis.md's block of targets: each target met or MISSED over the
    shapes measured; `not_run` shapes of the group that the run left out (its time limit) are
    named, since a target met over the others says nothing of them."""
    text = "; ".join(f"{name}: {'met' if met else 'MISSED'} ({what})"
                     for name, met, what in judge(rs, total_log2))
    left = f", {not_run} not run" if not_run else ""
    return f"- {dtype}, 2^{total_log2} ({len(rs)} shape(s) measured{left}): {text}"
