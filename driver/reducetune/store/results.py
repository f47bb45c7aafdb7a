"""The results database: the C++ store, opened from Python, plus the Catalog and export.

``best`` and the exports leave out points with a value their family flags (family.json
"flags", e.g. tunable ``warp=volatile_unsafe``, racy by construction) unless
``allow_flagged``: such a point may pass verification when it is measured and still race in
an application. The flags are a column the store wrote from the C++ search space's decision
when the point was recorded; the Catalog, the store and the exports filter on it themselves.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from reducetune import _core
from reducetune.errors import Error, StoreError
from reducetune.store.paths import default_db_path
from reducetune.store.study_storage import file_lock

__all__ = ["Store", "open_store", "export_header", "export_json", "best", "best_point",
           "store_best", "application_best_shape", "same_model_ids"]

Store = _core.Store


def open_store(path: str | os.PathLike[str], create: bool = True,
               read_only: bool = False) -> Any:
    """Opens a results file. With create=False a missing file is a StoreError instead of a
    new empty database. read_only (commands that only read) never writes the file: an older
    one is migrated in a private copy in memory. Otherwise an older file is migrated in place
    after a copy of it is kept beside it, and a line on stderr says so."""
    p = Path(path)
    if (read_only or not create) and not p.exists():
        raise StoreError(f"no database at {p}")
    if create and not read_only:
        p.parent.mkdir(parents=True, exist_ok=True)
    if read_only:
        store = _core.Store(str(p), read_only)
    else:  # one creator or migrator at a time, Optuna's tables included (store/study_storage.py)
        with file_lock(p):
            store = _core.Store(str(p), read_only)
    m = None if read_only else store.migration
    if m is not None:
        print(f"reducetune: migrated {p} from schema {m['from_version']} to "
              f"{m['to_version']}; the file as it was is kept as {m['backup']}", file=sys.stderr)
    return store


def _existing(path: str | os.PathLike[str]) -> str:
    if not Path(path).exists():
        raise StoreError(f"no database at {path}")
    return str(path)


def export_header(path: str | os.PathLike[str], namespace: str = "reducetune_dispatch",
                  allow_flagged: bool = False, nondeterministic: bool = False) -> str:
    """A self-contained C++17 header with the dispatch table of every best in the file
    (without flagged or nondeterministic points unless allowed); each choice carries its
    launch rule and its determinism."""
    return str(_core.export_header(_existing(path), namespace, allow_flagged, nondeterministic))


def export_json(path: str | os.PathLike[str], allow_flagged: bool = False,
                nondeterministic: bool = False) -> str:
    """The same rules as export_header, as JSON text."""
    return str(_core.export_json(_existing(path), allow_flagged, nondeterministic))


def best(
    dtype: str, op: str, n: int, device: str | None = None,
    db: str | os.PathLike[str] | None = None, allow_flagged: bool = False,
    nondeterministic: bool = False,
) -> dict[str, Any] | None:
    """The export's rule (see export_json) for (device, type, operator) at the measured size
    nearest to n, with ``requested_n``, ``device`` and ``measurement_id``; device is a UUID
    or a name, by default the file's first device. Points with a flagged value (e.g. a racy
    warp unroll) are left out unless allow_flagged, and points whose result changes from run
    to run (a float sum finished by atomics) unless nondeterministic."""
    path = Path(db) if db is not None else default_db_path()
    _existing(path)
    if device is None:
        devices = open_store(path, read_only=True).devices()
        if not devices:
            return None
        device = devices[0]["uuid"]
    result = _core.catalog_best(str(path), device, dtype, op, int(n), allow_flagged,
                                nondeterministic)
    return None if result is None else dict(result)


def store_best(store: Any, device_id: int, dtype: str, op: str,
               n: int | tuple[int, int, int], allow_flagged: bool = False,
               nondeterministic: bool = False) -> dict[str, Any] | None:
    """``store.best`` (without flagged or nondeterministic points unless allowed), its JSON
    columns decoded: ``compile_parameters``, ``launch_parameters``, ``flags``. n is a size,
    or a shape (outer, r, inner): the best at the measured shape nearest to it
    (``bucket_shape``; db/shape_rule.hpp: rows and columns apart), never a whole-array
    point."""
    if isinstance(n, int):
        b = store.best(device_id, dtype, op, int(n), allow_flagged, nondeterministic)
    else:
        problem = _core.Problem(dtype, op, tuple(int(e) for e in n))
        b = store.best_for(device_id, problem, allow_flagged, nondeterministic)
    return None if b is None else _decoded(b)


def _decoded(b: Any) -> dict[str, Any]:
    """A best's dict with its JSON columns decoded."""
    out = dict(b)
    out["compile_parameters"] = json.loads(out.pop("parameters_json"))
    out["launch_parameters"] = json.loads(out.pop("launch_parameters_json"))
    out["flags"] = json.loads(out.pop("flags_json"))
    return out


def application_best_shape(db: str | Path, uuid: str, dtype: str, op: str,
                           shape: tuple[int, int, int], allow_flagged: bool = False,
                           nondeterministic: bool = False) -> dict[str, Any] | None:
    """What the runtime launches for a shape on the model of the device with this UUID, as
    store_best's dict plus ``application_s``: the pick of the tuned shape that answers it, the
    fastest lone call where ``reducetune calibrate`` timed that shape (its time, else None),
    else its fastest replayed median (db/axis_picks.hpp)."""
    b = _core.catalog_best_shape(str(db), uuid, dtype, op, *shape, allow_flagged,
                                 nondeterministic)
    return None if b is None else _decoded(b)


def best_point(store: Any, device_id: int, space: Any, n: int | tuple[int, int, int],
               allow_flagged: bool = False, nondeterministic: bool = False
               ) -> tuple[Any, float] | None:
    """The device's best (``store_best``) at exactly n (a size, or a shape (outer, r,
    inner)), as a point of ``space`` (a ``reducetune._space.Space``) with its median: built
    from its stored parameter columns, so no label is read. None where the best is at another
    size or shape (the nearest measured one is not this workload's), of another family, or
    has parameters the space does not declare (another version of the family)."""
    b = store_best(store, device_id, space.dtype, space.op, n, allow_flagged, nondeterministic)
    if b is None or b["family"] != space.family or not _measured_at(b, n):
        return None
    try:
        return (space.point({**b["compile_parameters"], **b["launch_parameters"]}),
                float(b["median_s"]))
    except Error:
        return None


def _measured_at(b: dict[str, Any], n: int | tuple[int, int, int]) -> bool:
    """Whether best b was measured at exactly size n, or exactly shape n."""
    if isinstance(n, int):
        return int(b["bucket_n"]) == n
    return tuple(b["bucket_shape"]) == tuple(int(e) for e in n)


def same_model_ids(devices: Any, device: dict[str, Any]) -> list[int]:
    """Ids of a store's other devices of this one's model (the core's key)."""
    model = _core.device_model_key(dict(device))
    return [d["id"] for d in devices if d["id"] != device["id"]
            and _core.device_model_key(dict(d)) == model]
