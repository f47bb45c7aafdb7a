"""A study's trials written into a results file's Optuna tables with plain SQL, one
transaction per call (tuning/mirror.py: the journal's trials copied into the file).

Optuna's RDBStorage writes a trial one ORM round-trip per parameter and attribute, about 23
commits a trial: replaying 200 points of h200_float32_sum_large spent 28 of its 32 s there,
and copying the same 200 finished trials through Optuna's API still took 15 s. These are the
same rows (Optuna's schema v3.2.0.a, Optuna 3.2 to 5.x: trials, trial_params, trial_values,
trial_user_attributes, trial_system_attributes, trial_intermediate_values), written with a
few statements; ``schema`` says whether a file has that schema (else the caller keeps the
studies in Optuna's own storage).
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from reducetune.errors import StoreError
from reducetune.store.study_storage import _Connection, file_lock

__all__ = ["SCHEMA", "connect", "insert_trial", "read_trials", "running", "schema", "study_id",
           "sync_trials", "trials_not_from"]

SCHEMA = "v3.2.0.a"  # the alembic version whose tables this module writes


def trials_not_from(db: str | os.PathLike[str], study_name: str, key: str,
                    prefix: str) -> list[int]:
    """The ids of the finished trials of the file's study ``study_name`` whose system attribute
    ``key`` is absent or does not start with ``prefix`` (no study, no tables: none)."""
    try:
        con = sqlite3.connect(Path(db).resolve().as_uri() + "?mode=rw", uri=True, timeout=60)
    except sqlite3.Error:
        return []
    try:
        return [int(r[0]) for r in con.execute(
            "SELECT t.trial_id FROM trials t JOIN studies s USING (study_id) "
            "LEFT JOIN trial_system_attributes a ON a.trial_id = t.trial_id AND a.key = ? "
            "WHERE s.study_name = ? AND t.state IN ('COMPLETE', 'FAIL', 'PRUNED') "
            "AND (a.value_json IS NULL OR substr(a.value_json, 1, ?) != ?) "
            "ORDER BY t.trial_id", (key, study_name, len(prefix) + 1, json.dumps(prefix)[:-1]))]
    except sqlite3.Error:
        return []
    finally:
        con.close()


def read_trials(db: str | os.PathLike[str], ids: list[int]) -> list[Any]:
    """The file's trials of those ids, as Optuna's FrozenTrials, read with a few queries
    (Optuna's storage reads a trial at a time, a round-trip per table)."""
    # heavy (about 0.5 s): only where a study is used
    from optuna.distributions import json_to_distribution
    from optuna.trial import FrozenTrial, TrialState  # heavy: only where a study is used

    if not ids:
        return []
    con = connect(db)
    try:
        marks = ",".join("?" * len(ids))
        rows: dict[int, dict[str, Any]] = {
            tid: {"number": number, "state": TrialState[state], "start": _parse(start),
                  "complete": _parse(complete), "params": {}, "dists": {}, "values": {},
                  "user": {}, "system": {}, "steps": {}}
            for tid, number, state, start, complete in con.execute(
                "SELECT trial_id, number, state, datetime_start, datetime_complete FROM trials "
                f"WHERE trial_id IN ({marks})", ids)}
        for tid, name, value, dist in con.execute(
                "SELECT trial_id, param_name, param_value, distribution_json FROM trial_params "
                f"WHERE trial_id IN ({marks})", ids):
            d = json_to_distribution(dist)
            rows[tid]["dists"][name] = d
            rows[tid]["params"][name] = d.to_external_repr(value)
        for tid, i, value, kind in con.execute(
                "SELECT trial_id, objective, value, value_type FROM trial_values "
                f"WHERE trial_id IN ({marks})", ids):
            rows[tid]["values"][i] = _float(value, kind)
        for tid, step, value, kind in con.execute(
                "SELECT trial_id, step, intermediate_value, intermediate_value_type FROM "
                f"trial_intermediate_values WHERE trial_id IN ({marks})", ids):
            rows[tid]["steps"][step] = _float(value, kind)
        for table, key in (("trial_user_attributes", "user"),
                           ("trial_system_attributes", "system")):
            for tid, k, v in con.execute(f"SELECT trial_id, key, value_json FROM {table} "
                                         f"WHERE trial_id IN ({marks})", ids):
                rows[tid][key][k] = json.loads(v)
    finally:
        con.close()
    return [FrozenTrial(number=r["number"], state=r["state"], value=None,
                        values=[r["values"][i] for i in sorted(r["values"])] or None,
                        datetime_start=r["start"], datetime_complete=r["complete"],
                        params=r["params"], distributions=r["dists"], user_attrs=r["user"],
                        system_attrs=r["system"], intermediate_values=r["steps"], trial_id=tid)
            for tid, r in sorted(rows.items())]


def _float(value: float | None, kind: str) -> float:
    return {"INF_POS": math.inf, "INF_NEG": -math.inf, "NAN": math.nan}.get(
        kind, value if value is not None else math.nan)


def _parse(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def study_id(db: str | os.PathLike[str], study_name: str, directions: Sequence[Any]) -> int:
    """The id of the file's study of that name, made (with ``directions``, Optuna's
    StudyDirection) when missing: the rows Optuna's create_new_study writes (a study, a
    direction per objective), without opening Optuna's storage of the file (its SQLAlchemy
    and alembic cost each worker about a second of its start)."""
    with file_lock(db):
        con = connect(db)
        try:
            row = con.execute("SELECT study_id FROM studies WHERE study_name = ?",
                              (study_name,)).fetchone()
            if row is not None:
                return int(row[0])
            con.execute("BEGIN IMMEDIATE")
            sid = int(con.execute("INSERT INTO studies (study_name) VALUES (?)",
                                  (study_name,)).lastrowid or 0)
            con.executemany("INSERT INTO study_directions (direction, study_id, objective) "
                            "VALUES (?, ?, ?)", [(d.name, sid, k)
                                                 for k, d in enumerate(directions)])
            con.commit()
            return sid
        finally:
            con.close()


def running(db: str | os.PathLike[str], study_name: str) -> list[dict[str, Any]]:
    """The user attributes of each RUNNING trial of the file's study of that name (no study:
    none)."""
    con = connect(db)
    try:
        rows = con.execute("SELECT t.trial_id, a.key, a.value_json FROM trials t "
                           "JOIN studies s USING (study_id) LEFT JOIN trial_user_attributes a "
                           "ON a.trial_id = t.trial_id WHERE s.study_name = ? "
                           "AND t.state = 'RUNNING'", (study_name,)).fetchall()
    except sqlite3.Error:
        return []
    finally:
        con.close()
    attrs: dict[int, dict[str, Any]] = {}
    for tid, key, value in rows:
        attrs.setdefault(tid, {})
        if key is not None:
            attrs[tid][key] = json.loads(value)
    return list(attrs.values())


def insert_trial(con: sqlite3.Connection, sid: int, t: Any, key: str, k: str) -> None:
    """The trial (a RUNNING one, just asked) appended to the file's study ``sid``, with the
    system attribute ``key`` = ``k``: one transaction, on ``con`` (``connect``: kept open by
    the caller, as a connection costs about a millisecond to open, at every trial)."""
    try:
        con.execute("BEGIN IMMEDIATE")  # the trial's number: the study's count, taken alone
        _insert(con, sid, t, {**t.system_attrs, key: k})
        con.commit()
    except BaseException:
        con.rollback()
        raise


def sync_trials(db: str | os.PathLike[str], sid: int, trials: list[Any], key: str,
                keys: list[str]) -> int:
    """The file's study ``sid`` brought up to the finished ``trials`` (each identified by the
    system attribute ``key`` = its entry of ``keys``): one missing is appended, one still
    RUNNING in the file is written again whole; in one transaction, under the file's lock
    (one process does it). Returns how many trials were written."""
    if _schema(db) != SCHEMA:
        raise StoreError(f"{db}: Optuna's tables are not of schema {SCHEMA}")
    with file_lock(db):
        con = connect(db)
        try:
            con.execute("BEGIN IMMEDIATE")
            have = {json.loads(v): (tid, state) for v, tid, state in con.execute(
                "SELECT a.value_json, t.trial_id, t.state FROM trial_system_attributes a "
                "JOIN trials t USING (trial_id) WHERE t.study_id = ? AND a.key = ?",
                (sid, key))}
            written = 0
            for t, k in zip(trials, keys, strict=True):
                old = have.get(k)
                if old is not None and old[1] != "RUNNING":
                    continue
                if old is not None:  # asked here, finished since: its rows written again
                    for table in _TRIAL_TABLES:
                        con.execute(f"DELETE FROM {table} WHERE trial_id = ?", (old[0],))
                    con.execute("UPDATE trials SET state = ?, datetime_complete = ? "
                                "WHERE trial_id = ?", (t.state.name,
                                                       _when(t.datetime_complete), old[0]))
                    _rows(con, old[0], t, {**t.system_attrs, key: k})
                else:
                    _insert(con, sid, t, {**t.system_attrs, key: k})
                written += 1
            con.commit()
            return written
        finally:
            con.close()


_TRIAL_TABLES = ("trial_params", "trial_values", "trial_intermediate_values",
                 "trial_user_attributes", "trial_system_attributes")


def connect(db: str | os.PathLike[str]) -> sqlite3.Connection:
    """A connection to the file with the store's own rule (WAL, synchronous NORMAL:
    study_storage._Connection): a trial written at every ask must not wait on an fsync while
    it holds the file's write lock, which every other worker of the file then waits for."""
    return sqlite3.connect(Path(db).resolve().as_uri() + "?mode=rw", uri=True, timeout=60,
                           factory=_Connection)


def schema(db: str | os.PathLike[str]) -> str:
    """The alembic version of the file's Optuna tables ("" without them)."""
    return _schema(db)


def _schema(db: str | os.PathLike[str]) -> str:
    con = connect(db)
    try:
        row = con.execute("SELECT version_num FROM alembic_version").fetchone()
        return str(row[0]) if row else ""
    except sqlite3.Error:
        return ""
    finally:
        con.close()


def _insert(con: sqlite3.Connection, sid: int, t: Any, system: dict[str, Any]) -> None:
    (number,) = con.execute("SELECT COUNT(*) FROM trials WHERE study_id = ?", (sid,)).fetchone()
    cur = con.execute("INSERT INTO trials (number, study_id, state, datetime_start, "
                      "datetime_complete) VALUES (?, ?, ?, ?, ?)",
                      (number, sid, t.state.name, _when(t.datetime_start),
                       _when(t.datetime_complete)))
    _rows(con, int(cur.lastrowid or 0), t, system)


def _rows(con: sqlite3.Connection, tid: int, t: Any, system: dict[str, Any]) -> None:
    """The trial's parameters, values, attributes and intermediate values."""
    from optuna.distributions import distribution_to_json  # heavy: only where a study is used

    con.executemany("INSERT INTO trial_params (trial_id, param_name, param_value, "
                    "distribution_json) VALUES (?, ?, ?, ?)",
                    [(tid, name, t.distributions[name].to_internal_repr(v),
                      distribution_to_json(t.distributions[name]))
                     for name, v in t.params.items()])
    con.executemany("INSERT INTO trial_values (trial_id, objective, value, value_type) "
                    "VALUES (?, ?, ?, ?)",
                    [(tid, i, *_value(v)) for i, v in enumerate(t.values or [])])
    con.executemany("INSERT INTO trial_intermediate_values (trial_id, step, "
                    "intermediate_value, intermediate_value_type) VALUES (?, ?, ?, ?)",
                    [(tid, step, *_value(v, nan=True))
                     for step, v in t.intermediate_values.items()])
    for table, attrs in (("trial_user_attributes", t.user_attrs),
                         ("trial_system_attributes", system)):
        con.executemany(f"INSERT INTO {table} (trial_id, key, value_json) VALUES (?, ?, ?)",
                        [(tid, k, json.dumps(v)) for k, v in attrs.items()])


def _value(v: float, nan: bool = False) -> tuple[float | None, str]:
    """Optuna's (value, value_type) of a float: infinities and NaN are a type, not a value."""
    if math.isinf(v):
        return None, "INF_POS" if v > 0 else "INF_NEG"
    if nan and math.isnan(v):
        return None, "NAN"
    return float(v), "FINITE"


def _when(d: datetime | None) -> str | None:
    """A datetime as SQLAlchemy writes it in SQLite."""
    return None if d is None else d.strftime("%Y-%m-%d %H:%M:%S.%f")
