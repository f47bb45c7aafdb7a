"""How the measuring experiments' reports (harris, cascading) read a results database back: a
view per device model, with the facts and Nsight Compute rows the experiments keep beside
the store's tables (store/experiment_tables.py) and the runs that measured it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reducetune import _core
from reducetune.evaluate.replay import ReplayEvaluator
from reducetune.store.experiment_tables import facts_by_measurement, ncu_by_measurement
from reducetune.store.files import ceilings_by_gpu, studies
from reducetune.store.measurements import measurement_rows

__all__ = ["DbView", "open_views", "model_of"]


def model_of(device: dict[str, Any]) -> str:
    """GPUs of one model answer together (a recording resumed on another GPU of the model is
    one device): the core's key (db/records.hpp model_fields), as ReplayEvaluator groups them."""
    return _core.device_model_key(dict(device))


@dataclass
class DbView:
    """One device of one results database, as the reports read it."""

    source: str  # the file given (for the report)
    device: dict[str, Any]
    evaluator: Any  # a ReplayEvaluator: table() per workload, cub(), ceiling_bytes_per_s()
    facts: dict[int, dict[str, Any]] = field(default_factory=dict)
    ncu: dict[int, dict[str, Any]] = field(default_factory=dict)
    commands: list[str] = field(default_factory=list)  # the experiments' measuring commands
    gpus: list[str] = field(default_factory=list)  # UUIDs of the model's GPUs in the file
    # each measuring run of these GPUs: command, GPU, first and last measurement (UTC), rows
    # by status and by family, that GPU's streaming ceiling (GB/s): who measured what, when,
    # on which GPU
    runs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.device["name"])

    @property
    def sm_count(self) -> int:
        return int(self.device["sm_count"])

    def row(self, point: Any, n: int) -> dict[str, Any] | None:
        """The newest measurement of the point at n (any status), or None."""
        return self.evaluator.table(point.dtype, point.op, n).get(point.labels)

    def ok(self, point: Any, n: int) -> dict[str, Any] | None:
        r = self.row(point, n)
        return r if r is not None and r["status"] == "ok" else None

    def launches(self, row: dict[str, Any]) -> int | None:
        f = self.facts.get(int(row["id"]))
        return None if f is None else f["facts"].get("launches")


def _commands(path: Path, uuids: list[str]) -> list[str]:
    """The commands that measured into this file for these devices (each experiment study
    keeps its command in its config), in order."""
    out = [s["config"].get("command", "") for s in studies(path).values()
           if s["name"].startswith("experiment.") and any(s["name"].endswith("@" + u)
                                                          for u in uuids)]
    return [c for c in dict.fromkeys(out) if c]


def _runs(path: Path, uuids: list[str]) -> list[dict[str, Any]]:
    """The measuring runs behind this file's rows for these devices: rows grouped by GPU and
    by the command of their study, in the order they were measured."""
    configs = {i: s["config"] for i, s in studies(path).items()}
    ceilings = ceilings_by_gpu(path)
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    for row in measurement_rows(path):
        uuid = row["device_uuid"]
        if uuid not in uuids:
            continue
        command = configs.get(row["study_id"], {}).get("command", "")
        at = row["created_at"]
        r = runs.setdefault((uuid, command), {"gpu": uuid, "command": command, "first": at,
                                              "last": at, "status": {}, "families": {},
                                              "ceiling_gbps": ceilings.get(uuid)})
        r["first"], r["last"] = min(r["first"], at), max(r["last"], at)
        for key, value in (("status", row["status"]), ("families", row["family"])):
            r[key][value] = r[key].get(value, 0) + 1
    for r in runs.values():
        r["status"], r["families"] = dict(sorted(r["status"].items())), \
            dict(sorted(r["families"].items()))
    return sorted(runs.values(), key=lambda r: r["first"])


@contextmanager
def open_views(paths: list[Path]) -> Iterator[list[DbView]]:
    """A view per device model of every file (a merged file gives several), closed at the end.
    A model measured by several GPUs (a run resumed on another GPU of the model) is one view,
    under its newest GPU: its evaluator reads the model's rows, the GPU's own winning."""
    views: list[DbView] = []
    try:
        for path in paths:
            first = ReplayEvaluator(path, 0)
            models: dict[str, list[int]] = {}
            devices = first.devices()
            for i, d in enumerate(devices):
                models.setdefault(model_of(d), []).append(i)
            for indexes in models.values():
                ev = first if indexes[-1] == 0 else ReplayEvaluator(path, indexes[-1])
                uuids = [str(devices[i]["uuid"]) for i in indexes]
                plain = ev.database
                views.append(DbView(str(path), dict(ev.device), ev,
                                    facts_by_measurement(plain), ncu_by_measurement(plain),
                                    _commands(plain, uuids), uuids, _runs(plain, uuids)))
            if all(v.evaluator is not first for v in views):
                first.close()
        yield views
    finally:
        for v in views:
            v.evaluator.close()
