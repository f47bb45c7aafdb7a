"""What the driver reads of a results file beside the C++ store's own calls: the studies'
names and configs, the streaming ceilings by GPU, whether a file holds any result, and the
VACUUM before a recording is packed. SQL on a results file lives here and in the other
modules of ``reducetune.store``, nowhere else in the driver (tests/python/test_import_graph.py).

Reads open the file as the C++ store's readers do (``connect_read_only``), through a ``file:``
URI built by ``Path.as_uri`` (so ``#``, ``?`` and ``%`` in a name are a name, never a URI's
query or fragment), and leave no -wal or -shm beside it.
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from reducetune.errors import StoreError

__all__ = ["connect_read_only", "holds_no_results", "studies", "ceilings_by_gpu", "vacuum"]


def _writable(p: Path) -> bool:
    return os.access(p, os.W_OK) and bool(p.stat().st_mode & 0o222)


def connect_read_only(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """A connection that only reads the file at path (never created, never written), by the
    C++ store's rule (db/read_only.cpp ``open_reader``): a -wal with frames is read through
    (commits not yet in the file included); a file or folder that cannot be written, which
    nothing else can be writing either, is opened immutable (no -wal, -shm or locks); else a
    read-write connection that never writes (query_only), which removes the -wal and -shm it
    made on close, where a read-only one would leave them beside the file."""
    p = Path(path)
    if not p.exists():
        raise StoreError(f"no database at {p}")
    uri = p.resolve().as_uri()  # '#', '?' and '%' in the name percent-encoded
    wal = Path(f"{p}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        con = sqlite3.connect(uri + "?mode=ro", uri=True, timeout=30)
        try:
            con.execute("SELECT count(*) FROM sqlite_schema")  # reads the WAL's index now
        except sqlite3.Error as e:
            con.close()
            raise StoreError(f"{p} has a write-ahead log ({wal}) that cannot be read here "
                             f"({e}): make its folder writable, or copy the file with its "
                             "-wal to a writable folder") from e
        return con
    if not (_writable(p) and _writable(p.resolve().parent)):
        return sqlite3.connect(uri + "?immutable=1", uri=True, timeout=30)
    con = sqlite3.connect(uri + "?mode=rw", uri=True, timeout=30)
    con.execute("PRAGMA query_only = 1")
    return con


def holds_no_results(path: str | os.PathLike[str]) -> bool:
    """True when the file was read and neither a measurement nor a baseline is in it; False
    when it holds one, or cannot be read as a results file (then it is not ours to remove)."""
    try:
        with closing(connect_read_only(path)) as con:
            return not any(con.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone()
                           for table in ("rt_measurements", "rt_baselines"))  # ours, fixed
    except (sqlite3.Error, StoreError):
        return False


def studies(path: str | os.PathLike[str]) -> dict[int, dict[str, Any]]:
    """Every study of the file by id: {"name", "config"} (config parsed from its JSON), in the
    order they were created; {} when the file has no study table."""
    try:
        with closing(connect_read_only(path)) as con:
            rows = con.execute("SELECT id, name, config FROM rt_studies ORDER BY id").fetchall()
    except sqlite3.OperationalError:  # no such table
        return {}
    return {int(i): {"name": name, "config": json.loads(config) if config else {}}
            for i, name, config in rows}


def ceilings_by_gpu(path: str | os.PathLike[str]) -> dict[str, float]:
    """Each GPU's (UUID) newest streaming ceiling in GB/s; {} when the file holds none."""
    try:
        with closing(connect_read_only(path)) as con:
            return dict(con.execute(
                "SELECT d.uuid, b.gbps FROM rt_baselines b JOIN rt_devices d ON d.id = "
                "b.device_id WHERE b.kind = 'ceiling' ORDER BY b.created_at").fetchall())
    except sqlite3.OperationalError:
        return {}


def vacuum(path: str | os.PathLike[str]) -> None:
    """Rewrites the file without its free pages (a recording is packed smaller)."""
    with closing(sqlite3.connect(str(path))) as con:
        con.execute("VACUUM")
