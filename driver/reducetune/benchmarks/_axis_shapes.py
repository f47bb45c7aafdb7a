"""The axis benchmark's shapes (python -m reducetune.benchmarks.axis): totals of 2^24 and 2^28
elements, rows and columns, r from 2 to 2^22 by powers of 8 (issue 26's grid), and the pick of a
few of them (--only)."""

from __future__ import annotations

from typing import Any

TOTALS = (1 << 24, 1 << 28)
RS = tuple(1 << k for k in range(1, 23, 3))  # 2, 16, 128, ..., 2^22
KINDS = ("rows", "columns")


def shapes(totals: tuple[int, ...], rs: tuple[int, ...], dtypes: tuple[str, ...] = ("float32",)
           ) -> list[dict[str, Any]]:
    """Each benchmark shape: the element type, the tensor's shape, the axis reduced and its
    view (outer, r, inner)."""
    return [{"dtype": t, **s} for t in dtypes for s in _shapes(totals, rs)]


def _shapes(totals: tuple[int, ...], rs: tuple[int, ...]) -> list[dict[str, Any]]:
    out = []
    for total in totals:
        for kind in KINDS:
            for r in rs:
                if r >= total:
                    continue
                m = total // r
                out.append({"total": total, "kind": kind, "r": r, "axis": 1 if kind == "rows" else 0,
                            "shape": (m, r) if kind == "rows" else (r, m),
                            "view": (m, r, 1) if kind == "rows" else (1, r, m)})
    return out


def only(todo: list[dict[str, Any]], picks: list[str] | None) -> list[dict[str, Any]]:
    """The shapes of `todo` that `picks` names, each KIND:R (rows:128, columns:524288), every
    total and dtype of each; all of them for no picks. A pick that names no shape is refused
    with the ones that exist: rerunning the few shapes a run left short costs a device call a
    fraction of the whole grid's."""
    if not picks:
        return todo
    names = {f"{s['kind']}:{s['r']}" for s in todo}
    unknown = [p for p in picks if p not in names]
    if unknown:
        known = sorted(names, key=lambda n: (n.split(":")[0], int(n.split(":")[1])))
        raise SystemExit(f"--only {' '.join(unknown)}: no such shape here; one of "
                         f"{', '.join(known)}")
    return [s for s in todo if f"{s['kind']}:{s['r']}" in picks]
