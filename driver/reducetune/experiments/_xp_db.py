"""What the measuring experiments (harris, cascading) keep beside the store's own tables, and
how their reports read a results database back.

The store (C++) keeps every measurement: point, workload, samples, statistics, status. Two
facts it has no column for are kept in tables of the same file, keyed by the measurement's
row id, so that a recording stays one file and ``--replay`` rebuilds every number:

- ``xp_facts``: what the runner reported when it measured the point (``launches``: kernel
  launches per sample, i.e. the passes of a multipass or two-pass protocol);
- ``xp_ncu``: Nsight Compute metrics of the point (``--ncu``), with the command that took them.

``db merge`` copies only the store's tables: merge the recordings, or keep them apart and
pass each with ``--replay`` (the reports take several).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reducetune import _core
from reducetune.evaluate.replay import ReplayEvaluator

__all__ = ["DbView", "open_views", "write_fact", "write_ncu", "SIDE_TABLES", "model_of"]


def model_of(device: dict[str, Any]) -> str:
    """GPUs of one model answer together (a recording resumed on another GPU of the model is
    one device): the core's key (db/records.hpp model_fields), as ReplayEvaluator groups them."""
    return _core.device_model_key(dict(device))

SIDE_TABLES = """
CREATE TABLE IF NOT EXISTS xp_facts (
  measurement_id INTEGER PRIMARY KEY,
  experiment     TEXT NOT NULL,
  facts          TEXT NOT NULL DEFAULT '{}',
  created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE IF NOT EXISTS xp_ncu (
  measurement_id INTEGER PRIMARY KEY,
  status         TEXT NOT NULL,
  reason         TEXT NOT NULL DEFAULT '',
  metrics        TEXT NOT NULL DEFAULT '{}',
  command        TEXT NOT NULL DEFAULT '',
  created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
"""


def _connect(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(str(path), timeout=30)
    con.executescript(SIDE_TABLES)
    return con


def write_fact(path: Path, measurement_id: int, experiment: str, facts: dict[str, Any]) -> None:
    with closing(_connect(path)) as con, con:
        con.execute("INSERT OR REPLACE INTO xp_facts (measurement_id, experiment, facts) "
                    "VALUES (?, ?, ?)", (measurement_id, experiment, json.dumps(facts)))


def write_ncu(path: Path, measurement_id: int, result: dict[str, Any]) -> None:
    with closing(_connect(path)) as con, con:
        con.execute("INSERT OR REPLACE INTO xp_ncu (measurement_id, status, reason, metrics, "
                    "command) VALUES (?, ?, ?, ?, ?)",
                    (measurement_id, result["status"], result.get("reason", ""),
                     json.dumps(result.get("metrics", {})), result.get("command", "")))


def _side_rows(path: Path, table: str) -> dict[int, dict[str, Any]]:
    """Every row of a side table by measurement id ({} when the file has none)."""
    uri = f"file:{path}?mode=ro"
    try:
        with closing(sqlite3.connect(uri, uri=True)) as con:
            con.row_factory = sqlite3.Row
            rows = con.execute(f"SELECT * FROM {table}").fetchall()  # table: ours, fixed
    except sqlite3.OperationalError:  # no such table: nothing was kept beside the store
        return {}
    out = {}
    for r in rows:
        d = dict(r)
        for key in ("facts", "metrics"):
            if key in d:
                d[key] = json.loads(d[key])
        out[int(d["measurement_id"])] = d
    return out


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
    keeps its command in rt_studies.config), in order."""
    uri = f"file:{path}?mode=ro"
    try:
        with closing(sqlite3.connect(uri, uri=True)) as con:
            rows = con.execute("SELECT name, config FROM rt_studies WHERE name LIKE "
                               "'experiment.%' ORDER BY id").fetchall()
    except sqlite3.OperationalError:
        return []
    out = [json.loads(config).get("command", "") for name, config in rows
           if any(name.endswith("@" + u) for u in uuids)]
    return [c for c in dict.fromkeys(out) if c]


def _runs(path: Path, uuids: list[str]) -> list[dict[str, Any]]:
    """The measuring runs behind this file's rows for these devices: rows grouped by GPU and
    by the command of their study, in the order they were measured."""
    uri = f"file:{path}?mode=ro"
    try:
        with closing(sqlite3.connect(uri, uri=True)) as con:
            rows = con.execute(
                "SELECT d.uuid, s.config, m.status, v.family, COUNT(*), MIN(m.created_at), "
                "MAX(m.created_at) FROM rt_measurements m JOIN rt_devices d ON d.id = "
                "m.device_id JOIN rt_variants v ON v.id = m.variant_id LEFT JOIN rt_studies s "
                "ON s.id = m.study_id GROUP BY d.uuid, s.config, m.status, v.family"
            ).fetchall()
            ceilings = dict(con.execute(
                "SELECT d.uuid, b.gbps FROM rt_baselines b JOIN rt_devices d ON d.id = "
                "b.device_id WHERE b.kind = 'ceiling' ORDER BY b.created_at").fetchall())
    except sqlite3.OperationalError:
        return []
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    for uuid, config, status, family, count, first, last in rows:
        if uuid not in uuids:
            continue
        command = json.loads(config).get("command", "") if config else ""
        r = runs.setdefault((uuid, command), {"gpu": uuid, "command": command, "first": first,
                                              "last": last, "status": {}, "families": {},
                                              "ceiling_gbps": ceilings.get(uuid)})
        r["first"], r["last"] = min(r["first"], first), max(r["last"], last)
        r["status"][status] = r["status"].get(status, 0) + count
        r["families"][family] = r["families"].get(family, 0) + count
    return sorted(runs.values(), key=lambda r: r["first"])


def _plain_path(evaluator: Any) -> Path:
    """The database file the evaluator reads (its decompressed copy for a .xz)."""
    if getattr(evaluator, "_tmp", None):
        return Path(evaluator._tmp) / evaluator.path.name[: -len(".xz")]
    return Path(evaluator.path)


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
            for i, d in enumerate(first._store.devices()):
                models.setdefault(model_of(d), []).append(i)
            for indexes in models.values():
                ev = first if indexes[-1] == 0 else ReplayEvaluator(path, indexes[-1])
                uuids = [str(first._store.devices()[i]["uuid"]) for i in indexes]
                plain = _plain_path(ev)
                views.append(DbView(str(path), dict(ev.device), ev,
                                    _side_rows(plain, "xp_facts"), _side_rows(plain, "xp_ncu"),
                                    _commands(plain, uuids), uuids, _runs(plain, uuids)))
            if all(v.evaluator is not first for v in views):
                first.close()
        yield views
    finally:
        for v in views:
            v.evaluator.close()
