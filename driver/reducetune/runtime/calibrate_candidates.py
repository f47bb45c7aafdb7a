"""Which of a size's or shape's candidates ``reducetune calibrate`` times (the candidates come
from the core, fastest replayed median first: db/application_ranking.hpp for sizes,
db/axis_candidates.hpp for axis shapes)."""

from __future__ import annotations

from typing import Any


def measured_first(cands: list[dict[str, Any]], k: int) -> list[dict[str, Any]]:
    """The first k candidates (fastest replayed median first), then the fastest of each launch
    count they lack: the protocol cannot see what a launch costs a lone call, so the fastest
    one-launch point is timed even when k two-launch points replayed faster."""
    out = cands[:k]
    counts = {c["launches"] for c in out}
    for c in cands[k:]:
        if c["launches"] not in counts:
            out.append(c)
            counts.add(c["launches"])
    return out


def both_levels(cands: list[dict[str, Any]], k: int) -> list[dict[str, Any]]:
    """An axis shape's candidates to time, in their order: measured_first of all of them (what
    the run_to_run level picks from) and of the batch_invariant ones (the batch_invariant
    level's, compared with each other only), so that one calibration decides both levels."""
    invariant = [c for c in cands if c["batch_invariant"]]
    ids = {c["measurement_id"] for c in measured_first(cands, k) + measured_first(invariant, k)}
    return [c for c in cands if c["measurement_id"] in ids]
