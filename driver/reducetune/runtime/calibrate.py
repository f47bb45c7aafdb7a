"""What the fastest measured points cost an application, measured (``reducetune calibrate``).

The tuner times a point by graph replay on a cold L2; an application's lone call pays every
launch in full and finds data the size of the L2 where the previous kernel left it. For each
size this measures the candidates the application ranking weighs (the fastest few selected
points: ``store.candidates``, as Points, decided in db/application_ranking.cpp) one lone
call at a time, in rounds (``_core.time_in_rounds``) whose orders are the benchmarks' seeded
shuffles (runtime/rounds.py: a rotation would give each point the same predecessor, and with
it what L2 holds, in all but one round in n), and records each median in the database
(rt_application_times). From then on the Reducer built from the database, and the
"application" pick of ``export json``, rank that size by these times instead of the estimate.
The axis family's shapes are calibrated the same way (calibrate_axis.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from reducetune import _core, errors
from reducetune._no_gpu import device_problem
from reducetune.runtime.calibrate_axis import Shape, calibrate_shapes, time_on_gpu
from reducetune.runtime.calibrate_candidates import measured_first
from reducetune.runtime.rounds import index_orders
from reducetune.store.candidates import application_points

__all__ = ["DEFAULT_CANDIDATES", "DEFAULT_SAMPLES", "calibrate", "measured_first"]

DEFAULT_CANDIDATES = 8
DEFAULT_SAMPLES = 60


def _device(ordinal: int) -> dict[str, Any]:
    try:
        return dict(_core.query_device(ordinal))
    except errors.DeviceError as e:
        raise errors.DeviceError(device_problem(
            str(e), ordinal, "calibrate needs the GPU itself: run it on a machine with an "
            "NVIDIA GPU and its driver")) from e


def _size_row(dtype: str, op: str, n: int, cands: list[dict[str, Any]],
              medians: list[float]) -> dict[str, Any]:
    """One size's outcome: every candidate's lone-call median beside its protocol median, the
    protocol's winner (the first candidate) and the measured pick: the store's rule
    (_core.measured_pick: within application_tie of the fastest call, the least replayed
    median), the one the Reducer and the exports launch."""
    timed = [dict(c, application_s=m) for c, m in zip(cands, medians)]
    pick = timed[_core.measured_pick([(c["application_s"], c["median_s"]) for c in timed])]
    return {"dtype": dtype, "op": op, "n": n, "candidates": timed, "pick": pick,
            "protocol_winner": timed[0],
            "gain": timed[0]["application_s"] / pick["application_s"]}


def calibrate(db: str, pairs: Iterable[tuple[str, str]], sizes: list[int] | None,
              ordinal: int = 0, candidates: int = DEFAULT_CANDIDATES,
              samples: int = DEFAULT_SAMPLES, nondeterministic: bool = False,
              allow_flagged: bool = False,
              progress: Callable[[dict[str, Any]], None] | None = None,
              shapes: list[Shape] | None = None) -> list[dict[str, Any]]:
    """Measures and records the lone-call time of each size's first `candidates` candidates
    (and the fastest of each launch count they lack: measured_first) on GPU `ordinal`;
    returns one row per size (see _size_row), then one per axis shape (calibrate_axis.py).
    `sizes`, `shapes`: only those (None: every one measured; []: none). Sizes and shapes this
    device's model has no measurement at are skipped; a candidate this device cannot run (the
    Reducer falls back to its default preset or rule) is left out of the record and of the
    row."""
    if candidates < 1 or samples < 1:
        raise errors.InvalidConfiguration("calibrate needs --candidates >= 1 and --samples >= 1")
    pairs = list(pairs)
    device = _device(ordinal)
    # registered (as tuning does) so that a GPU of a tuned model that never tuned itself
    # finds its model's sizes
    store = _core.Store(db)
    try:
        store.register_device(dict(device, toolkit_version=device["runtime_version"]))
    finally:
        store.close()
    rows = [] if sizes == [] else _calibrate_sizes(
        db, pairs, sizes, device["uuid"], ordinal, candidates, samples, nondeterministic,
        allow_flagged, progress)
    if shapes != []:
        rows += calibrate_shapes(db, pairs, shapes, device["uuid"], time_on_gpu(ordinal),
                                 candidates, samples, nondeterministic, allow_flagged, progress)
    return rows


def _calibrate_sizes(db: str, pairs: list[tuple[str, str]], sizes: list[int] | None,
                     uuid: str, ordinal: int, candidates: int, samples: int,
                     nondeterministic: bool, allow_flagged: bool,
                     progress: Callable[[dict[str, Any]], None] | None) -> list[dict[str, Any]]:
    # the space the store reads each candidate's point in: this GPU's, as the runtime's
    limits = _core.device_limits(ordinal)
    rows = []
    for dtype, op in pairs:
        by_n = application_points(db, dtype, op, uuid, limits, nondeterministic, allow_flagged)
        for n in sorted(by_n) if sizes is None else [s for s in sizes if s in by_n]:
            rows.append(_calibrate_size(db, dtype, op, n, measured_first(by_n[n], candidates),
                                        samples, ordinal))
            if progress is not None:
                progress(rows[-1])
    return rows


def _calibrate_size(db: str, dtype: str, op: str, n: int, cands: list[dict[str, Any]],
                    samples: int, ordinal: int) -> dict[str, Any]:
    reducers = [_core.Reducer.for_point(c.pop("point")) for c in cands]  # rows stay JSON
    # compiled side by side inside; a candidate this device cannot run answered with the
    # default preset, and is dropped before anything is recorded
    medians = _core.time_in_rounds(reducers, dtype, n, index_orders(len(reducers), samples),
                                   ordinal)
    kept = [(c, m) for c, r, m in zip(cands, reducers, medians)
            if r.choice(n, ordinal)["source"] == "tuned"]
    if not kept:
        return {"dtype": dtype, "op": op, "n": n, "candidates": [], "pick": None,
                "protocol_winner": None, "gain": None}
    _core.record_application_times(db, [(c["measurement_id"], m, samples) for c, m in kept])
    return _size_row(dtype, op, n, [c for c, _ in kept], [m for _, m in kept])
