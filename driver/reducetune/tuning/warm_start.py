"""Warm start from other GPUs (issue 12): a new study first measures the best points other
devices found for the same workload (family, dtype, op, n), right after the base preset.

Why: the results database often holds other GPUs' tuned bests (``reducetune db merge``), and a
point that is fastest on one GPU is usually close to the fastest on another; measuring it first
costs one evaluation per device and often starts the search near its end.

Rules (what ``Proposal.start`` enqueues, in this order):

- one point per other device (another UUID than this one): ``store.best`` with the run's own
  selection (flagged / nondeterministic points only when the run admits them), at exactly this
  n (``store.best`` answers the nearest measured size: a neighbour's best is not this
  workload's) and of the run's family;
- only when it is valid in this device's (restricted) space and selected by the run
  (``space.check`` empty, ``space.selected``): another GPU's limits or another --restrict may
  rule it out, and the study must never be told a point it would reject;
- devices of this device's compute capability first (their best is likelier to transfer),
  then in the database's order; a point already queued (the base preset, or another device's
  same best) is not queued twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reducetune._space import Point, Space
from reducetune.errors import Error

__all__ = ["WarmPoint", "warm_counts", "warm_points"]


@dataclass(frozen=True)
class WarmPoint:
    """One point to measure first, and the device whose best it is."""

    point: Point
    device: str  # the device's name
    uuid: str
    median_s: float  # its median time on that device


def warm_points(store: Any, space: Space, config: Any, n: int, device_uuid: str,
                skip: set[Point] | frozenset[Point] = frozenset()) -> list[WarmPoint]:
    """Other devices' best points for this workload that this run may measure (the module's
    rules), without those in ``skip``; [] without a store or with ``config.warm_start`` off."""
    if store is None or not getattr(config, "warm_start", True):
        return []
    devices = [dict(d) for d in store.devices()]
    me = next((d for d in devices if d["uuid"] == device_uuid), None)
    cc = (me["cc_major"], me["cc_minor"]) if me else None
    others = sorted((d for d in devices if d["uuid"] != device_uuid),
                    key=lambda d: ((d["cc_major"], d["cc_minor"]) != cc, d["id"]))
    out: list[WarmPoint] = []
    queued = set(skip)
    for d in others:
        p = _best_point(store, d["id"], space, config, n)
        if p is None or p[0] in queued:
            continue
        queued.add(p[0])
        out.append(WarmPoint(p[0], str(d["name"]), str(d["uuid"]), p[1]))
    return out


def _best_point(store: Any, device_id: int, space: Space, config: Any,
                n: int) -> tuple[Point, float] | None:
    """The device's best at exactly n as a point of this space, if this run may measure it."""
    b = store.best(device_id, space.dtype, space.op, int(n), config.allow_flagged,
                   config.nondeterministic)
    if b is None or int(b["bucket_n"]) != int(n) or b["family"] != space.family:
        return None
    try:  # labels the space does not declare (another version of the family)
        p = space.parse(b["variant_label"], b["launch_label"])
    except Error:
        return None
    if space.check(p) or not space.selected(p, config.allow_flagged, config.nondeterministic):
        return None
    return p, float(b["median_s"])


def warm_counts(points: list[WarmPoint]) -> dict[str, int]:
    """Device name -> points enqueued from it (what SizeResult.warm reports)."""
    out: dict[str, int] = {}
    for w in points:
        out[w.device] = out.get(w.device, 0) + 1
    return out
