"""Warm start from other GPUs (issue 12): a new study first measures the best points other
devices found for the same workload (family, dtype, op, n), then the base preset.

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
  then in the database's order; a point already queued (another device's same best) is not
  queued twice.

Priors (issue 25): where the results file holds no other device, the queue takes its points
from the priors table instead (``config.priors``: the package's, or --priors FILE; store/
priors.py): the ranked points of the table's nearest device model (store/priors.py says the
rule) for the bucket nearest n, fastest first (another operator's or same-size type's where the
model lacks this workload: PriorDevice.closest), under the same rules (valid here, selected by
the run, not queued twice). One queue, two sources: measured results of other GPUs in the
file, else what the table learned. They go before the base preset: a short run (--time-limit
1m over 132 units) may measure one or two points per unit, and another GPU's best is a better
first guess than the family's generic preset.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reducetune._space import Point, Space
from reducetune.errors import Error
from reducetune.store.priors import chosen, load
from reducetune.store.results import best_point

__all__ = ["WarmPoint", "first_points", "warm_counts", "warm_points"]


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
    if not others:
        return _prior_points(me, space, config, n, set(skip))
    out: list[WarmPoint] = []
    queued = set(skip)
    for d in others:
        p = _best_point(store, d["id"], space, config, n)
        if p is None or p[0] in queued:
            continue
        queued.add(p[0])
        out.append(WarmPoint(p[0], str(d["name"]), str(d["uuid"]), p[1]))
    return out


def _prior_points(me: dict[str, Any] | None, space: Space, config: Any, n: int,
                  queued: set[Point]) -> list[WarmPoint]:
    """The priors table's ranked points for this workload, from the model nearest this device
    (``me``, its store row), that this run may measure; [] without a table or a device row."""
    # the run reads "auto" as the package's table or "off" (tuning/run.py); a study tuned
    # outside a run (an experiment's) is not known to be live: "auto" is none there
    path = chosen(getattr(config, "priors", "off"), live=False)
    table = load(path) if path is not None and me is not None else None  # read once a tune
    model = table.nearest(me) if table is not None and me is not None else None
    if model is None:
        return []
    dtype, op, priors = model.closest(space.family, space.dtype, space.op, n)
    # another workload's points (the model never measured this one) as points of this space
    source = space if (dtype, op) == (space.dtype, space.op) else \
        Space(space.family, dtype, op, space.limits, space.restrict)
    name = f"{model.name} (priors" + (")" if source is space else f" of {dtype} {op})")
    out: list[WarmPoint] = []
    for prior in priors:
        p = _selected(space, config, prior.point(source), source)
        if p is not None and p not in queued:
            queued.add(p)
            out.append(WarmPoint(p, name, model.model, prior.median_s))
    return out


def _selected(space: Space, config: Any, p: Point | None,
              source: Space | None = None) -> Point | None:
    """``p`` (a point of ``source``'s workload, else of this space; None: the store had none
    of this family's version) as a point of this space, if this run may measure it."""
    if p is None:
        return None
    if source is not None and source is not space:
        try:  # the same parameters in this workload, where it declares them
            p = space.point(p.params)
        except Error:
            return None
    if space.check(p) or not space.selected(p, config.allow_flagged, config.nondeterministic):
        return None
    return p


def _best_point(store: Any, device_id: int, space: Space, config: Any,
                n: int) -> tuple[Point, float] | None:
    """The device's best at exactly n as a point of this space, if this run may measure it."""
    best = best_point(store, device_id, space, n, config.allow_flagged, config.nondeterministic)
    p = None if best is None else _selected(space, config, best[0])
    return None if p is None else (p, best[1])


def first_points(store: Any, space: Space, config: Any, sizes: list[int],
                 device_uuid: str) -> list[Point]:
    """What a new study of each size measures first (its warm start, then the base preset):
    the points a short run compiles before any other (tuning/budget.py precompile_rest)."""
    base = space.base(config.base_preset, config.allow_flagged, config.nondeterministic)
    out = [w.point for n in sizes for w in warm_points(store, space, config, n, device_uuid)]
    return list(dict.fromkeys(out + ([base] if base is not None else [])))


def warm_counts(points: list[WarmPoint]) -> dict[str, int]:
    """Device name -> points enqueued from it (what SizeResult.warm reports)."""
    out: dict[str, int] = {}
    for w in points:
        out[w.device] = out.get(w.device, 0) + 1
    return out
