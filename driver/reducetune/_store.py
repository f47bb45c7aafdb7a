"""The results database: the C++ store, opened from Python, plus the Catalog and export."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from reducetune import _core
from reducetune.errors import StoreError

__all__ = ["Store", "open_store", "export_header", "export_json", "best"]

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


def export_header(path: str | os.PathLike[str], namespace: str = "reducetune_dispatch") -> str:
    """A self-contained C++17 header with the dispatch table of every best in the file."""
    if not Path(path).exists():
        raise StoreError(f"no database at {path}")
    return str(_core.export_header(str(path), namespace))


def export_json(path: str | os.PathLike[str]) -> str:
    if not Path(path).exists():
        raise StoreError(f"no database at {path}")
    return str(_core.export_json(str(path)))


def best(
    dtype: str, op: str, n: int, device: str | None = None, db: str | os.PathLike[str] | None = None
) -> dict[str, Any] | None:
    """The fastest verified variant for (device, type, operator) at the measured size nearest
    to n; device is a UUID or a name, by default the only (or first) device of the file."""
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
    return dict(result) if result is not None else None
