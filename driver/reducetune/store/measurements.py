"""The one public read path of a results file: every measurement as one flat row.

``reducetune.measurements(db)`` gives them as a pandas DataFrame (pandas is an optional extra:
``pip install 'reducetune[pandas]'``), ``reducetune export csv`` writes the same rows as CSV,
and the experiments' reports read them here too: a research user's analysis starts from this
table, not from SQL.

A row is one measurement: its point (variant and launch labels, then each compile-time and
launch parameter as its own column), device, workload, statistics, determinism, flags,
status and reason, and the study that measured it. The rows come from the C++ store
(``Store.history``), so an older file is read through a private migrated copy and never
written. The samples themselves are left out unless asked for (``samples=True``: a list per
row, not written to CSV).
"""

from __future__ import annotations

import csv
import io
import json
import os
from typing import Any

from reducetune._space import DTYPES, OPS
from reducetune.errors import InvalidConfiguration, StoreError
from reducetune.store.files import studies
from reducetune.store.results import open_store

__all__ = ["COLUMNS", "measurement_rows", "measurements", "measurements_csv", "columns_of"]

# The fixed columns, in order; the point's parameters come after launch_label. n is the
# reduced extent r of the shape (outer, n, inner): the whole array's is (1, n, 1).
POINT = ("measurement_id", "device", "device_uuid", "family", "dtype", "op", "n", "outer",
         "inner", "data_pattern", "seed", "variant_label", "launch_label")
FACTS = ("determinism", "flags", "status", "reason", "sample_count", "median_s", "min_s",
         "rel_stddev", "gbps", "pct_of_peak", "pct_of_ceiling", "study_id", "study",
         "created_at", "template_hash", "driver_version", "toolkit_version")
COLUMNS = POINT + FACTS


def _parameters(r: dict[str, Any]) -> dict[str, Any]:
    """The point's compile-time then launch parameters; a name that is also a fixed column
    is kept as ``param.NAME`` so that it never hides one."""
    params = {**json.loads(r["parameters_json"] or "{}"),
              **json.loads(r["launch_parameters_json"] or "{}")}
    return {(f"param.{k}" if k in COLUMNS else k): v for k, v in params.items()}


def _flags(text: str) -> str:
    """The flagged values as ``parameter=value`` joined by ``;`` ('' when none)."""
    return ";".join(f"{f['parameter']}={f['value']}" for f in json.loads(text or "[]"))


def _row(device: dict[str, Any], r: dict[str, Any], study_names: dict[int, str],
         samples: bool) -> dict[str, Any]:
    row = {"measurement_id": r["id"], "device": device["name"], "device_uuid": device["uuid"]}
    row.update({k: r[k] for k in ("family", "dtype", "op", "n", "outer", "inner",
                                  "data_pattern", "seed", "variant_label", "launch_label")})
    row.update(_parameters(r))
    row.update(determinism=r["determinism"], flags=_flags(r["flags_json"]), status=r["status"],
               reason=r["reason"], sample_count=r["count"])
    row.update({k: r[k] for k in ("median_s", "min_s", "rel_stddev", "gbps", "pct_of_peak",
                                  "pct_of_ceiling", "study_id")})
    row["study"] = study_names.get(r["study_id"]) if r["study_id"] is not None else None
    row.update({k: r[k] for k in ("created_at", "template_hash", "driver_version",
                                  "toolkit_version")})
    if samples:
        row["samples_s"] = list(r["samples_s"])
    return row


def _chosen(store: Any, db: Any, device: str | None) -> list[dict[str, Any]]:
    devices = [dict(d) for d in store.devices()]
    if device is None:
        return devices
    chosen = [d for d in devices if device in (d["uuid"], d["name"], str(d["id"]))]
    if not chosen:
        raise StoreError(f"no device {device!r} in {db}: "
                         f"{', '.join(d['uuid'] for d in devices) or 'none recorded'}")
    return chosen


def measurement_rows(db: str | os.PathLike[str], *, dtype: str | None = None,
                     op: str | None = None, n: int | None = None, device: str | None = None,
                     samples: bool = False) -> list[dict[str, Any]]:
    """Every measurement of the file (of one dtype, op, size or device if named; a device by
    UUID, name or id) as a flat dict, in the order they were recorded."""
    if dtype is not None and dtype not in DTYPES:
        raise InvalidConfiguration(f"unknown dtype {dtype!r}: one of {', '.join(DTYPES)}")
    if op is not None and op not in OPS:
        raise InvalidConfiguration(f"unknown op {op!r}: one of {', '.join(OPS)}")
    store = open_store(db, create=False, read_only=True)
    try:
        names = {i: s["name"] for i, s in studies(db).items()}
        rows = [_row(d, r, names, samples)
                for d in _chosen(store, db, device)
                for t in ([dtype] if dtype else DTYPES) for o in ([op] if op else OPS)
                for r in store.history(d["id"], t, o, n)]
    finally:
        store.close()
    return sorted(rows, key=lambda row: row["measurement_id"])


def columns_of(rows: list[dict[str, Any]]) -> list[str]:
    """The table's columns: the fixed ones, with every parameter the rows carry (in the order
    first seen) after launch_label, and samples_s last when asked for."""
    params = [k for k in dict.fromkeys(k for row in rows for k in row)
              if k not in COLUMNS and k != "samples_s"]
    extra = ["samples_s"] if any("samples_s" in row for row in rows) else []
    return list(POINT) + params + list(FACTS) + extra


def measurements(db: str | os.PathLike[str], *, dtype: str | None = None,
                 op: str | None = None, n: int | None = None, device: str | None = None,
                 samples: bool = False) -> Any:
    """A results file's measurements as a pandas DataFrame, one row per measurement
    (``measurement_rows``: the same rows ``reducetune export csv`` writes). A parameter a
    point's family does not declare is missing (NaN) in its row."""
    try:
        import pandas  # optional (the pandas extra): only for the DataFrame
    except ImportError:
        raise ImportError("reducetune.measurements needs pandas: pip install "
                          "'reducetune[pandas]' (or pandas); without it, "
                          "reducetune export csv writes the same table") from None
    rows = measurement_rows(db, dtype=dtype, op=op, n=n, device=device, samples=samples)
    return pandas.DataFrame(rows, columns=columns_of(rows))


def measurements_csv(db: str | os.PathLike[str], **filters: Any) -> str:
    """The same table as CSV text (``reducetune export csv``): a header line, then a line per
    measurement; a missing parameter or statistic is an empty field."""
    rows = measurement_rows(db, **filters)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[c for c in columns_of(rows) if c != "samples_s"],
                            extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()
