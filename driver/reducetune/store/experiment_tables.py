"""What the measuring experiments (harris, cascading) keep beside the store's own tables.

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
import os
import sqlite3
from contextlib import closing
from typing import Any

from reducetune.errors import StoreError
from reducetune.store.files import connect_read_only

__all__ = ["SIDE_TABLES", "write_fact", "write_ncu", "facts_by_measurement",
           "ncu_by_measurement"]

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


def _connect(path: str | os.PathLike[str]) -> sqlite3.Connection:
    con = sqlite3.connect(str(path), timeout=30)
    con.executescript(SIDE_TABLES)
    return con


def write_fact(path: str | os.PathLike[str], measurement_id: int, experiment: str,
               facts: dict[str, Any]) -> None:
    """Keeps what the runner reported of a measurement (e.g. its launches per sample)."""
    with closing(_connect(path)) as con, con:
        con.execute("INSERT OR REPLACE INTO xp_facts (measurement_id, experiment, facts) "
                    "VALUES (?, ?, ?)", (measurement_id, experiment, json.dumps(facts)))


def write_ncu(path: str | os.PathLike[str], measurement_id: int, result: dict[str, Any]) -> None:
    """Keeps a measurement's Nsight Compute result (status, reason, metrics, command)."""
    with closing(_connect(path)) as con, con:
        con.execute("INSERT OR REPLACE INTO xp_ncu (measurement_id, status, reason, metrics, "
                    "command) VALUES (?, ?, ?, ?, ?)",
                    (measurement_id, result["status"], result.get("reason", ""),
                     json.dumps(result.get("metrics", {})), result.get("command", "")))


def _rows(path: str | os.PathLike[str], query: str) -> dict[int, dict[str, Any]]:
    try:
        with closing(connect_read_only(path)) as con:
            con.row_factory = sqlite3.Row
            rows = con.execute(query).fetchall()
    except (sqlite3.OperationalError, StoreError):  # no such table: nothing kept beside
        return {}
    out = {}
    for r in rows:
        d = dict(r)
        for key in ("facts", "metrics"):
            if key in d:
                d[key] = json.loads(d[key])
        out[int(d["measurement_id"])] = d
    return out


def facts_by_measurement(path: str | os.PathLike[str]) -> dict[int, dict[str, Any]]:
    """Every xp_facts row by measurement id ({} when the file has none)."""
    return _rows(path, "SELECT * FROM xp_facts")


def ncu_by_measurement(path: str | os.PathLike[str]) -> dict[int, dict[str, Any]]:
    """Every xp_ncu row by measurement id ({} when the file has none)."""
    return _rows(path, "SELECT * FROM xp_ncu")
