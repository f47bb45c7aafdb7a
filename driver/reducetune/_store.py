"""The results database: the C++ store, opened from Python, plus the Catalog and export.

``best`` and the exports leave out points with a value their family flags (family.json
"flags", e.g. tunable ``warp=volatile_unsafe``, racy by construction) unless
``allow_flagged``: such a point may pass verification when it is measured and still race in
an application. The C++ Catalog does not know flags, so the Python side answers from a
temporary copy of the file without those measurements (same rules, same code).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any, Iterator

from reducetune import _core
from reducetune.errors import StoreError

__all__ = ["Store", "open_store", "export_header", "export_json", "best", "flagged_measurements"]

Store = _core.Store


def open_store(path: str | os.PathLike[str], create: bool = True) -> Any:
    """Opens (creating or migrating) a results file. With create=False a missing file is a
    StoreError instead of a new empty database (for commands that only read)."""
    p = Path(path)
    if not create and not p.exists():
        raise StoreError(f"no database at {p}")
    if create:
        p.parent.mkdir(parents=True, exist_ok=True)
    return _core.Store(str(p))


def _read_only_uri(path: str | os.PathLike[str]) -> str:
    return Path(path).resolve().as_uri() + "?mode=ro"


def flagged_measurements(path: str | os.PathLike[str],
                         status: str | None = "ok") -> list[dict[str, Any]]:
    """The file's measurements (status ``status``; None: any) of points with a flagged value:
    {id, variant_label, launch_label, dtype, op, n, status, median_s, flags: [(name, value,
    why)]}."""
    from reducetune._space import flagged_labels

    if not Path(path).exists():
        raise StoreError(f"no database at {path}")
    query = ("SELECT m.id, v.label, m.launch_label, w.dtype, w.op, w.n, m.status, m.median_s "
             "FROM rt_measurements m JOIN rt_variants v ON v.id = m.variant_id "
             "JOIN rt_workloads w ON w.id = m.workload_id")
    args: tuple[Any, ...] = ()
    if status is not None:
        query += " WHERE m.status = ?"
        args = (status,)
    out = []
    cache: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    try:
        with contextlib.closing(sqlite3.connect(_read_only_uri(path), uri=True)) as c:
            rows = c.execute(query, args).fetchall()
    except sqlite3.Error as e:
        raise StoreError(f"cannot read {path}: {e}") from e
    for mid, label, launch, dtype, op, n, st, median in rows:
        key = (label, launch)
        if key not in cache:
            cache[key] = flagged_labels(label, launch)
        if cache[key]:
            out.append({"id": mid, "variant_label": label, "launch_label": launch,
                        "dtype": dtype, "op": op, "n": n, "status": st, "median_s": median,
                        "flags": cache[key]})
    return out


@contextlib.contextmanager
def _without_flagged(path: str | os.PathLike[str], allow_flagged: bool) -> Iterator[str]:
    """The file itself when flagged points are allowed or it holds none (status ok), else a
    temporary copy without those measurements, removed afterwards."""
    if not Path(path).exists():
        raise StoreError(f"no database at {path}")
    flagged = [] if allow_flagged else flagged_measurements(path)
    if not flagged:
        yield str(path)
        return
    folder = tempfile.mkdtemp(prefix="reducetune-unflagged-")
    copy = Path(folder) / "results.db"
    try:
        with contextlib.closing(sqlite3.connect(_read_only_uri(path), uri=True)) as src, \
                contextlib.closing(sqlite3.connect(copy)) as dst:
            src.backup(dst)
            dst.executemany("DELETE FROM rt_measurements WHERE id = ?",
                            [(r["id"],) for r in flagged])
            dst.commit()
        yield str(copy)
    except sqlite3.Error as e:
        raise StoreError(f"cannot copy {path} without its flagged points: {e}") from e
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def export_header(path: str | os.PathLike[str], namespace: str = "reducetune_dispatch",
                  allow_flagged: bool = False) -> str:
    """A self-contained C++17 header with the dispatch table of every best in the file
    (without flagged points unless allow_flagged)."""
    with _without_flagged(path, allow_flagged) as p:
        return str(_core.export_header(p, namespace))


def export_json(path: str | os.PathLike[str], allow_flagged: bool = False) -> str:
    with _without_flagged(path, allow_flagged) as p:
        return str(_core.export_json(p))


def best(
    dtype: str, op: str, n: int, device: str | None = None,
    db: str | os.PathLike[str] | None = None, allow_flagged: bool = False,
) -> dict[str, Any] | None:
    """The fastest verified variant for (device, type, operator) at the measured size nearest
    to n; device is a UUID or a name, by default the only (or first) device of the file.
    Points with a flagged value (e.g. a racy warp unroll) are left out unless allow_flagged."""
    from reducetune._paths import default_db_path

    path = Path(db) if db is not None else default_db_path()
    if not path.exists():
        raise StoreError(f"no database at {path}")
    if device is None:
        devices = open_store(path, create=False).devices()
        if not devices:
            return None
        device = devices[0]["uuid"]
    result = _core.catalog_best(str(path), device, dtype, op, int(n))
    if result is not None and not allow_flagged and _is_flagged(result):
        with _without_flagged(path, False) as p:
            result = _core.catalog_best(p, device, dtype, op, int(n))
    return dict(result) if result is not None else None


def _is_flagged(best_row: Any) -> bool:
    from reducetune._space import flagged_labels

    return bool(flagged_labels(best_row["variant_label"], best_row["launch_label"]))


def store_best(store: Any, path: str | os.PathLike[str], device_id: int, dtype: str, op: str,
               n: int, allow_flagged: bool = False) -> dict[str, Any] | None:
    """``store.best`` without flagged points unless allow_flagged. The fastest point is asked
    first: when it is not flagged it is the answer (leaving measurements out can only remove
    sizes and candidates, never add a nearer size or a faster point)."""
    b = store.best(device_id, dtype, op, int(n))
    if b is None or allow_flagged or not _is_flagged(b):
        return None if b is None else dict(b)
    with _without_flagged(path, False) as p:
        other = _core.Store(p)
        try:
            b = other.best(device_id, dtype, op, int(n))
        finally:
            other.close()
    return None if b is None else dict(b)
