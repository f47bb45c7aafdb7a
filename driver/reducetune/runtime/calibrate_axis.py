"""``reducetune calibrate`` for the axis family's shapes (issue 26, item 4).

Each tuned shape's fastest points (the first k of the shape and the first k batch_invariant
ones: calibrate_candidates.both_levels) are timed through the runtime's axis call
(``Reducer.reduce_axis``, what ``AxisReducer`` launches) as an application calls it: one lone
call at a time, hot data, in rounds in the benchmarks' seeded shuffled orders
(``_core.time_axis_in_rounds`` with runtime/rounds.py's ``index_orders``). The medians are
recorded as the whole array's are (rt_application_times, one record per shape, replacing that
shape's earlier times), and from then on each level's pick of the shape is the fastest lone
call among its timed points (db/axis_picks.hpp), which ``best --shape``, both exports and the
runtime's tables answer. The candidates and the picks come from the core
(``store.candidates.axis_candidates``); nothing here ranks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from reducetune import _core
from reducetune.runtime.calibrate_candidates import both_levels
from reducetune.runtime.rounds import index_orders
from reducetune.store.candidates import axis_candidates

Shape = tuple[int, int, int]
# (dtype, op, shape, candidates, samples) -> each candidate's lone-call median, None for one
# the runtime did not launch (it fell back to its built-in rule)
Timer = Callable[[str, str, Shape, list[dict[str, Any]], int], list[float | None]]


def time_on_gpu(ordinal: int) -> Timer:
    """The timer of GPU `ordinal`: each candidate as the only entry of a Reducer's axis table."""

    def timed(dtype: str, op: str, shape: Shape, cands: list[dict[str, Any]],
              samples: int) -> list[float | None]:
        reducers = [_core.Reducer(dtype, op, log_fallbacks=False,
                                  axis_table=[(*shape, c["variant"], c["launch"])])
                    for c in cands]
        medians = _core.time_axis_in_rounds(reducers, dtype, *shape,
                                            index_orders(len(reducers), samples), ordinal)
        return [m if r.axis_choice(*shape, ordinal)["source"] == "table" else None
                for r, m in zip(reducers, medians)]

    return timed


def calibrate_shapes(db: str, pairs: Iterable[tuple[str, str]], shapes: list[Shape] | None,
                     uuid: str, timer: Timer, candidates: int, samples: int,
                     nondeterministic: bool = False, allow_flagged: bool = False,
                     progress: Callable[[dict[str, Any]], None] | None = None
                     ) -> list[dict[str, Any]]:
    """Times and records the candidates of each tuned shape of the model of the device with
    this UUID (`shapes`: only those; None: all); one row per shape (see _shape_row), its
    picks those of the file once recorded."""
    rows = []
    for dtype, op in pairs:
        by_shape = axis_candidates(db, dtype, op, uuid, nondeterministic, allow_flagged)
        chosen = sorted(by_shape) if shapes is None else [s for s in shapes if s in by_shape]
        done = []
        for shape in chosen:
            cands = both_levels(by_shape[shape]["candidates"], candidates)
            medians = timer(dtype, op, shape, cands, samples)
            kept = [dict(c, application_s=m) for c, m in zip(cands, medians) if m is not None]
            if kept:
                _core.record_application_times(
                    db, [(c["measurement_id"], c["application_s"], samples) for c in kept])
            done.append((shape, kept))
            if progress is not None:
                progress({"dtype": dtype, "op": op, "shape": list(shape), "candidates": kept})
        picks = axis_candidates(db, dtype, op, uuid, nondeterministic,
                                allow_flagged) if done else {}
        rows += [_shape_row(dtype, op, shape, kept, picks[shape]) for shape, kept in done]
    return rows


def _shape_row(dtype: str, op: str, shape: Shape, kept: list[dict[str, Any]],
               picks: dict[str, Any]) -> dict[str, Any]:
    """One shape's outcome: every timed candidate (lone-call median beside its protocol
    median), the protocol's winner (the fastest replayed median timed), each level's pick as
    the file now answers it (None: not among the timed, or none) and the gain of the
    run_to_run pick over the protocol's winner."""
    by_id = {c["measurement_id"]: c for c in kept}
    pick = by_id.get(picks["run_to_run_pick"])
    winner = kept[0] if kept else None
    return {"dtype": dtype, "op": op, "shape": list(shape), "candidates": kept, "pick": pick,
            "batch_invariant_pick": by_id.get(picks["batch_invariant_pick"]),
            "protocol_winner": winner,
            "gain": winner["application_s"] / pick["application_s"] if pick and winner else None}
