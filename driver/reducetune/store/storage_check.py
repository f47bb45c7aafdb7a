"""``--storage`` checked before any file is opened: a storage that names a file Optuna must not
write into is refused with one line, the file left as it was.

Optuna writes what it is given: ``JournalFileBackend`` appends its records to any file (a text
file, the results file, a recording) and ``RDBStorage`` creates its tables in any SQLite file
(the replay recording, another application's database). So:

- ``journal:PATH``: PATH is missing, empty, or an Optuna journal (its first line one of
  Optuna's JSON records, which carry an ``op_code``); never the ``--db`` file or the
  ``--replay`` recording, even before they exist.
- ``sqlite:///PATH``: never the ``--replay`` recording; an existing file is an SQLite file
  that holds reducetune's mark (a results file, the ``--db`` itself included) or Optuna's
  tables alone (Optuna's storage), or nothing at all.
- anything else is an SQLAlchemy URL (``postgresql+psycopg2://...``), checked by connecting.
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path

from reducetune.errors import StoreError

__all__ = ["JOURNAL", "check_storage"]

JOURNAL = "journal:"
RESULTS_APPLICATION_ID = 0x52546462  # "RTdb": db/reducetune/db/schema.hpp, application_id
SQLITE_HEADER = b"SQLite format 3\0"


def check_storage(spec: str, db: str | os.PathLike[str] | None = None,
                  replay: str | os.PathLike[str] | None = None) -> None:
    """StoreError (one line, nothing written) for a ``--storage`` that cannot be used, or that
    names a file it must not write (see the module's docstring)."""
    if spec.startswith(JOURNAL):
        if not spec[len(JOURNAL):]:
            raise StoreError("--storage journal:PATH needs a file path")
        _check_journal(Path(spec[len(JOURNAL):]), db, replay)
        return
    if "://" not in spec:
        raise StoreError(f"--storage {spec!r}: an SQLAlchemy URL (postgresql+psycopg2://user@"
                         "host/db) or journal:PATH")
    from sqlalchemy.engine import make_url  # heavy (Optuna's database layer): an RDB URL only
    from sqlalchemy.exc import ArgumentError  # heavy (Optuna's database layer): an RDB URL only

    try:
        url = make_url(spec)
    except ArgumentError as e:
        raise StoreError(f"--storage {spec!r} is not an SQLAlchemy URL ({e})") from None
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        _check_sqlite(Path(url.database), spec, replay)


def _same(a: Path, b: str | os.PathLike[str] | None) -> bool:
    """The same file by device and inode where both exist, else by resolved path."""
    if b is None:
        return False
    b = Path(b)
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def _check_journal(path: Path, db: str | os.PathLike[str] | None,
                   replay: str | os.PathLike[str] | None) -> None:
    def refuse(why: str) -> StoreError:
        return StoreError(f"--storage journal:{path}: {why}; it was left untouched. Name a new "
                          "file, or an Optuna journal written by an earlier run")

    for other, what in ((db, "the --db results file"), (replay, "the --replay recording")):
        if _same(path, other):
            raise refuse(f"it is {what}, not an Optuna journal")
    if not path.exists():
        return
    if not path.is_file():
        raise refuse("not an Optuna journal (not a regular file)")
    with open(path, "rb") as f:
        first = f.readline()
    if not first:
        return  # empty: Optuna starts its journal there
    if first.startswith(SQLITE_HEADER):
        raise refuse("it is an SQLite database, not an Optuna journal")
    try:
        record = json.loads(first)
    except ValueError:
        record = None
    if not isinstance(record, dict) or "op_code" not in record:
        raise refuse("not an Optuna journal (its first line is not one of Optuna's records)")


def _check_sqlite(path: Path, spec: str, replay: str | os.PathLike[str] | None) -> None:
    def refuse(why: str) -> StoreError:
        return StoreError(f"--storage {spec}: {path} {why}; Optuna's tables would be written "
                          "into it. The file was left untouched: name another file")

    if _same(path, replay):
        raise refuse("is the --replay recording")
    if not path.is_file() or path.stat().st_size == 0:
        return  # a new file, or an empty one: Optuna creates its tables there
    with open(path, "rb") as f:
        header = f.read(100)
    if not header.startswith(SQLITE_HEADER):
        raise refuse("is not an SQLite database")
    # Read without creating anything beside the file: a WAL file nobody has open (no -wal)
    # immutable; any other read-only, under SQLite's locks (other workers may be writing a
    # shared storage), which in rollback mode creates nothing and in WAL mode finds its -wal
    # and -shm there already.
    wal_mode = len(header) > 18 and header[18] == 2
    quiet = wal_mode and not Path(f"{path}-wal").exists()
    uri = path.resolve().as_uri() + ("?immutable=1" if quiet else "?mode=ro")
    try:
        with closing(sqlite3.connect(uri, uri=True, timeout=60)) as con:
            app_id = con.execute("PRAGMA application_id").fetchone()[0]
            objects = con.execute("SELECT type, name FROM sqlite_schema"
                                  " WHERE type <> 'index'").fetchall()
    except sqlite3.Error as e:
        raise refuse(f"cannot be read as an SQLite database ({e})") from None
    if app_id == RESULTS_APPLICATION_ID:
        return  # a reducetune results file: Optuna's tables live beside ours
    foreign = sorted(f"{kind} {name}" if kind != "table" else name for kind, name in objects
                     if kind != "table" or name not in _optuna_tables())
    if app_id != 0 or foreign:
        raise refuse("is an SQLite database of another application"
                     + (f" ({', '.join(foreign)})" if foreign else f" (application_id {app_id})"))


def _optuna_tables() -> frozenset[str]:
    """The tables Optuna's RDB storage creates (its own declaration), Alembic's and SQLite's."""
    from optuna.storages._rdb import models  # heavy (about 0.5 s): an RDB storage only

    return frozenset(models.BaseModel.metadata.tables) | {"alembic_version", "sqlite_sequence",
                                                           "sqlite_stat1"}
