"""The candidates of the application ranking (``_core.application_candidates``, decided in
db/application_ranking.cpp) as Points: the store's rows name their point by its stored
labels, read here once, so that ``reducetune calibrate`` hands typed points to the runtime
(``_core.Reducer.for_point``) and never parses a label itself. An axis shape's candidates
keep their labels: the runtime's axis table takes a point by its labels and reads them in
C++ (db/point_records.hpp)."""

from __future__ import annotations

from typing import Any

from reducetune import _core
from reducetune._space import Space

__all__ = ["application_points", "axis_candidates"]


def application_points(db: str, dtype: str, op: str, uuid: str, limits: Any,
                       nondeterministic: bool = False,
                       allow_flagged: bool = False) -> dict[int, list[dict[str, Any]]]:
    """n -> the candidates of the model of the device with this UUID, as
    ``_core.application_candidates`` gives them, each with its ``point`` in the space of
    these device limits (the Catalog these come from read the same labels with the same
    space: they parse)."""
    spaces: dict[str, Space] = {}

    def with_point(c: dict[str, Any]) -> dict[str, Any]:
        family = str(c["family"])
        space = spaces.setdefault(family, Space(family, dtype, op, limits))
        variant_label, launch_label = str(c["variant"]), str(c["launch"])
        return dict(c, point=space.parse(variant_label, launch_label))

    by_n = _core.application_candidates(db, dtype, op, uuid, nondeterministic, allow_flagged)
    return {int(n): [with_point(c) for c in cands] for n, cands in by_n.items()}


def axis_candidates(db: str, dtype: str, op: str, uuid: str, nondeterministic: bool = False,
                    allow_flagged: bool = False) -> dict[tuple[int, int, int], dict[str, Any]]:
    """(outer, r, inner) -> that tuned shape's candidates (each with its level,
    ``batch_invariant``) and the measurement ids of its two picks as the file stands, for the
    model of the device with this UUID (db/axis_candidates.hpp); {} for a UUID the file does
    not hold."""
    return dict(_core.axis_application_candidates(db, dtype, op, uuid, nondeterministic,
                                                  allow_flagged))
