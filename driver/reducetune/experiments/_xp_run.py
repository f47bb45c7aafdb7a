"""Measuring an experiment's points on the GPU into the results database, resumably.

A job is a point and a size. A job whose point this context (device, template hash, driver,
toolkit, workload) already measured is served from the database and never measured again:
a run cut short (time limit, kill, Ctrl-C) resumes where it stopped when run again. Jobs are
measured grouped by workload (the worker keeps one prepared workload at a time: a 2^30 input
takes seconds to generate and check), smallest input first, each variant compiled
beforehand in parallel.

A point measured by another GPU of this one's model (the same name, SMs and memory clock)
in this context counts as measured: a recording resumes on whichever GPU of the model the
machine has, as the store's `best` and the reports group a model's GPUs.
"""

from __future__ import annotations

import sys
import time
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reducetune._core import element_bytes
from reducetune.evaluate.base import CEILING_WORKLOAD, data_of, problem_of, workload
from reducetune.evaluate.evaluation import WORKLOAD_KEYS, StoreContext
from reducetune.store.experiment_tables import write_fact
from reducetune.store.results import same_model_ids

__all__ = ["Job", "Runner", "Counts"]


@dataclass(frozen=True)
class Job:
    point: Any  # _core.Point
    n: int

    @property
    def workload(self) -> dict[str, Any]:
        return workload(self.point.dtype, self.point.op, self.n)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.point.dtype, self.point.op, self.n)


@dataclass
class Counts:
    measured: int = 0
    known: int = 0
    failed: int = 0
    left: int = 0  # not measured: the time limit came first


class Runner:
    """Measures jobs with one evaluator into one store (one StoreContext per family)."""

    def __init__(self, evaluator: Any, store: Any, db_path: Path, experiment: str,
                 deadline: float | None = None) -> None:
        self.evaluator = evaluator
        self.store = store
        self.db_path = Path(db_path)
        self.experiment = experiment
        self.deadline = deadline
        self._ctx: dict[str, StoreContext] = {}
        self._study: dict[tuple[str, str, str], int | None] = {}
        self._model_ids: list[int] | None = None

    def ctx(self, family: str) -> StoreContext:
        if family not in self._ctx:
            self._ctx[family] = StoreContext(self.evaluator, self.store, family)
        return self._ctx[family]

    def _study_id(self, job: Job, config: dict[str, Any]) -> int | None:
        p = job.point
        key = (p.family, p.dtype, p.op)
        if key not in self._study:
            ctx = self.ctx(p.family)
            name = (f"experiment.{self.experiment}.{p.family}.{p.dtype}.{p.op}"
                    f"@{self.evaluator.device['uuid']}")
            study = types.SimpleNamespace(dtype=p.dtype, op=p.op, strategy="experiment")
            self._study[key] = ctx.create_study(name, study, config)
        return self._study[key]

    def known(self, job: Job) -> dict[str, Any] | None:
        ctx = self.ctx(job.point.family)
        found = ctx.find(job.point, job.workload)
        if found is not None:
            return found
        key = {**ctx.key(), **{k: job.workload[k] for k in WORKLOAD_KEYS},
               "variant_label": job.point.variant_label, "launch_label": job.point.launch_label}
        for other in self._same_model(ctx.device_id):
            row = self.store.find_measurement({**key, "device_id": other})
            if row is not None:
                return dict(row)
        return None

    def _same_model(self, device_id: int) -> list[int]:
        """The store's other GPUs of this one's model (looked up once per run)."""
        if self._model_ids is None:
            devices = list(self.store.devices())
            mine = next(d for d in devices if d["id"] == device_id)
            self._model_ids = same_model_ids(devices, mine)
        return self._model_ids

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def run(self, jobs: list[Job], config: dict[str, Any],
            first_in_workload: Callable[[dict[str, Any]], None] | None = None) -> Counts:
        """Every job measured or served, grouped by workload, smallest input first;
        ``first_in_workload(w)`` runs before a workload's first measured job (CUB's baseline,
        while the worker holds that workload)."""
        counts = Counts()
        order: dict[tuple[str, str, int], list[Job]] = {}
        for j in dict.fromkeys(jobs):
            order.setdefault(j.key, []).append(j)
        # the smallest inputs first: a time limit then leaves out the most expensive workloads
        # (a 2^30 float64 input takes tens of seconds to prepare), not every workload after one
        groups = sorted(order.values(), key=lambda g: g[0].n * element_bytes(g[0].point.dtype))
        todo = [j for group in groups for j in group if self.known(j) is None]
        counts.known = len(set(jobs)) - len(todo)
        if counts.known:
            print(f"{self.experiment}: {counts.known} of {counts.known + len(todo)} points "
                  f"already in {self.db_path}", file=sys.stderr)
        if todo:
            self.evaluator.precompile([j.point for j in todo])
        start, last, current = time.monotonic(), 0.0, None
        for i, j in enumerate(todo):
            if self.out_of_time():
                counts.left = len(todo) - i
                print(f"{self.experiment}: time limit: {counts.left} points left (run the "
                      "same command again to measure them)", file=sys.stderr)
                break
            if first_in_workload is not None and j.key != current:
                first_in_workload(j.workload)
            current = j.key
            ok = self._measure(j, config)
            counts.measured += 1
            counts.failed += 0 if ok else 1
            now = time.monotonic()
            if now - last > 5 or i + 1 == len(todo):
                last = now
                eta = (now - start) / (i + 1) * (len(todo) - i - 1)
                print(f"{self.experiment}: {i + 1}/{len(todo)} measured ({counts.failed} "
                      f"failed), {now - start:.0f} s, ~{eta:.0f} s left; now {j.point.dtype} "
                      f"n={j.n} {j.point.variant_label} {j.point.launch_label}",
                      file=sys.stderr)
        return counts

    def _measure(self, job: Job, config: dict[str, Any]) -> bool:
        w = job.workload
        ctx = self.ctx(job.point.family)
        result = self.evaluator.evaluate(job.point, problem_of(w), data_of(w))
        row = {**ctx.key(), **{k: w[k] for k in WORKLOAD_KEYS},
               "study_id": self._study_id(job, config),
               "samples_s": list(result.get("samples_s") or []), "status": result["status"],
               "reason": result.get("reason", "") or result.get("kind", ""),
               "gbps": result.get("gbps"), "pct_of_peak": result.get("pct_of_peak"),
               "pct_of_ceiling": result.get("pct_of_ceiling") or None}
        mid = int(self.store.record_measurement(job.point, row))
        if result.get("launches") is not None:
            write_fact(self.db_path, mid, self.experiment, {"launches": result["launches"]})
        return result["status"] == "ok"

    def ceiling(self) -> None:
        """The streaming ceiling, measured and recorded unless the database has it."""
        ctx = self.ctx("tunable")
        if self.store.find_baseline(ctx.device_id, CEILING_WORKLOAD, "ceiling") is None:
            ctx.record_ceiling(self.evaluator, self.evaluator.ceiling_bytes_per_s())

    def cub(self, w: dict[str, Any]) -> None:
        """CUB at this workload, measured and recorded unless the database has it."""
        self.ctx("tunable").cub_baseline(self.evaluator, w, gpu=True)
