"""Where a point's measurement comes from in a study: the store when this exact context
(device, template hash, driver, toolkit, workload) already measured it, else the evaluator
(GPU worker or replay), whose result is recorded. CUB's baseline is served or measured alike.

The store answers "already measured" (``find_measurement``, in C++) and writes what the
space decided about the point (compile parameters with the variant, launch parameters with
the measurement, flags, determinism): Python hands it the Point and the measurement only.
"""

from __future__ import annotations

import json
from typing import Any

from reducetune import _core
from reducetune._space import Point
from reducetune.evaluate.base import CEILING_WORKLOAD, Evaluator, data_of, problem_of

__all__ = ["KNOWN", "MEASURED", "NOT_RECORDED", "Evaluation", "StoreContext"]

# Where a point's row came from (Evaluation.row).
KNOWN = "known"  # measured before: by this run, or in the store in this context
MEASURED = "measured"  # evaluated now and recorded
NOT_RECORDED = "not_recorded"  # a replay's recording lacks it: nothing measured or stored

WORKLOAD_KEYS = ("dtype", "op", "n", "data_pattern", "seed", "outer", "inner")


class StoreContext:
    """What a run's studies share with the store: the device, template and toolkit; without
    a store, nothing is served and nothing is recorded."""

    def __init__(self, evaluator: Evaluator, store: Any, family: str) -> None:
        self.store = store
        dev = evaluator.device
        self.template_hash = _core.template_hash(family)
        self.driver_version = int(dev.get("driver_version", 0))
        self.toolkit_version = int(dev.get("toolkit_version", 0))
        self.device_id = 0
        if store is not None:
            self.device_id = store.register_device(dev)
            store.register_template(family, self.template_hash)

    def key(self) -> dict[str, Any]:
        return {"device_id": self.device_id, "template_hash": self.template_hash,
                "driver_version": self.driver_version, "toolkit_version": self.toolkit_version}

    def find(self, point: Point, w: dict[str, Any]) -> dict[str, Any] | None:
        """The point's row if this context already measured it (any status), else None."""
        if self.store is None:
            return None
        key = {**self.key(), **{k: w[k] for k in WORKLOAD_KEYS},
               "variant_label": point.variant_label, "launch_label": point.launch_label}
        found = self.store.find_measurement(key)
        return None if found is None else dict(found)

    def record(self, point: Point, row: dict[str, Any]) -> None:
        if self.store is not None:
            self.store.record_measurement(point, row)

    def create_study(self, name: str, config: Any, config_json: dict[str, Any]) -> int | None:
        """The study's row id (a resumed study keeps its existing row); None without a store."""
        if self.store is None:
            return None
        return int(self.store.create_study({
            "name": name, "device_id": self.device_id, "dtype": config.dtype, "op": config.op,
            "strategy": config.strategy, "config_json": json.dumps(config_json)}))

    def record_ceiling(self, evaluator: Evaluator, ceiling: float | None) -> None:
        samples = getattr(evaluator, "ceiling_samples_s", None)
        if self.store is not None and ceiling and samples:
            self.store.record_baseline({**self.key(), **CEILING_WORKLOAD, "kind": "ceiling",
                                        "samples_s": samples, "gbps": ceiling / 1e9})

    def cub_baseline(self, evaluator: Evaluator, w: dict[str, Any],
                     gpu: bool) -> tuple[float | None, str | None]:
        """CUB's GB/s for this workload (from the store, else measured, and recorded when
        measured on a GPU), and why it failed where it was measured and failed (None
        otherwise): a unit whose CUB call fails has no x CUB, and the run says so rather
        than going on silently (a reuse bug in 399a387 failed CUB for 120 of 132 units of an
        H200 tune unseen). (None, None) for a shape other than the whole array: CUB's
        DeviceReduce reduces a whole array, and no axis baseline is measured here (the axis
        benchmark runs DeviceSegmentedReduce)."""
        if (w.get("outer", 1), w.get("inner", 1)) != (1, 1):
            return None, None
        store = self.store
        found = store.find_baseline(self.device_id, w, "cub") if store is not None else None
        if found is None:
            found = evaluator.cub(w)
            if found and found.get("status") == "ok" and store is not None and gpu:
                store.record_baseline({**self.key(), **w, "kind": "cub",
                                       "samples_s": found["samples_s"], "gbps": found["gbps"]})
        if not found:
            return None, None
        if found.get("status", "ok") != "ok":
            return None, (found.get("reason") or found.get("kind") or str(found.get("status")))
        return float(found["gbps"]), None


class Evaluation:
    """One workload's points in one study: the typed problem (and the input's data) its
    evaluator measures, and each point's row, answered once per run (a point proposed again
    gets this run's answer, a replayed point the recording lacks included). The tuning loop
    asks ``known`` first, hands the point and the problem to the evaluator itself, and gives
    the result to ``answer``."""

    def __init__(self, evaluator: Evaluator, ctx: StoreContext, w: dict[str, Any],
                 study_id: int | None) -> None:
        self.evaluator = evaluator
        self.ctx = ctx
        self.w = w  # the store's key
        self.problem = problem_of(w)
        self.data = data_of(w)
        self.study_id = study_id
        self._rows: dict[Point, dict[str, Any]] = {}

    def known(self, point: Point) -> dict[str, Any] | None:
        """The point's row if this run or the store already has it, without evaluating."""
        row = self._rows.get(point)
        return row if row is not None else self.ctx.find(point, self.w)

    def answer(self, point: Point, result: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """(MEASURED | NOT_RECORDED, the point's row) from the evaluator's result for it; a
        measured row is recorded."""
        row = {**self.ctx.key(), **{k: self.w[k] for k in WORKLOAD_KEYS},
               "study_id": self.study_id, "samples_s": list(result.get("samples_s") or []),
               "status": result["status"],
               "reason": result.get("reason", "") or result.get("kind", ""),
               "gbps": result.get("gbps"), "pct_of_peak": result.get("pct_of_peak"),
               "pct_of_ceiling": result.get("pct_of_ceiling") or None}
        source = NOT_RECORDED if result.get("kind") == NOT_RECORDED else MEASURED
        if source == MEASURED:
            self.ctx.record(point, row)
        self._rows[point] = row = {**row, "median_s": result.get("median_s"),
                                   "rel_stddev": result.get("rel_stddev")}
        return source, row
