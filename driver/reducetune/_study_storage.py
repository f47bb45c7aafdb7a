"""Optuna's storage for the studies of a results database: the same SQLite file (Optuna's own
tables beside the ``rt_`` ones), for the command line and the Python API alike.

Several processes may open one file at once (``reducetune tune`` in two terminals, a batch of
jobs). Optuna creates its tables without a lock of its own: two processes opening a new file
together both try, and one dies (``table studies already exists``, ``UNIQUE constraint
failed: alembic_version.version_num``). ``file_lock`` serializes that creation, the store's
own (its migration backup may otherwise be taken twice, or after the other's migration), and
the claims of points in a shared study (_study_share.py)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reducetune.errors import StoreError

__all__ = ["file_lock", "open_storage", "storage_url"]


def storage_url(path: str | os.PathLike[str]) -> str:
    """``sqlite:///`` URL of the file at path (absolute), built by SQLAlchemy so that a ``?``,
    ``%`` or ``#`` in the path is quoted instead of read as a query or an escape.

    Optuna fills its URL in as a ``str.format`` template, so braces are doubled too (SQLAlchemy
    quotes them already; this only guards against a version that does not)."""
    from sqlalchemy.engine import URL, make_url

    database = str(Path(path).resolve())
    url = URL.create("sqlite", database=database).render_as_string(hide_password=False)
    if make_url(url).database != database:  # an older SQLAlchemy that does not quote paths
        raise StoreError(f"this SQLAlchemy cannot name {database} in a URL; use a path "
                         "without '?', '%' or '#' for the database")
    return url.replace("{", "{{").replace("}", "}}")


def open_storage(path: str | os.PathLike[str]) -> Any:
    """Optuna's RDBStorage in the results file at path, its tables created under file_lock
    (a file that has them is opened without: RDBStorage then only reads)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = storage_url(path)
    with contextlib.nullcontext() if _optuna_ready(path) else file_lock(path):
        return optuna.storages.RDBStorage(url, engine_kwargs={"connect_args": {"timeout": 60}})


def _optuna_ready(path: str | os.PathLike[str]) -> bool:
    """Optuna's tables are complete: stamping alembic_version is its last step on a new file.
    Any doubt (no file, no table, a file SQLite cannot open) says no. Opened read-write
    (rw never creates the file) yet only read: the last connection to close a WAL file
    removes its -wal and -shm files, which a read-only one cannot."""
    import sqlite3

    try:
        con = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=rw", uri=True, timeout=60)
    except (sqlite3.Error, ValueError):
        return False
    try:
        return con.execute("SELECT 1 FROM alembic_version LIMIT 1").fetchone() is not None
    except sqlite3.Error:
        return False
    finally:
        con.close()


@contextlib.contextmanager
def file_lock(path: str | os.PathLike[str]) -> Iterator[None]:
    """Holds an exclusive lock on the results file at path among the processes that take it
    (an flock on ``PATH.lock`` beside it, removed on release). Not the database file itself:
    closing any descriptor of it drops SQLite's own POSIX locks of this process.

    Nothing is locked where the lock file cannot be made (a read-only folder, where no one
    can write the database either) or where there is no flock (not POSIX)."""
    lock = Path(os.path.realpath(path) + ".lock")  # one lock for every spelling of the path
    fd = _acquire(lock)
    try:
        yield
    finally:
        if fd is not None:
            _release(fd, lock)


def _acquire(lock: Path) -> int | None:
    try:
        import fcntl
    except ImportError:
        return None
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            # The holder before us removes the file when it releases it: a lock on a removed
            # file (or on one since replaced) excludes no one, so take the current file's.
            held, now = os.fstat(fd), os.stat(lock)
            if (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino):
                return fd
        except FileNotFoundError:
            pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def _release(fd: int, lock: Path) -> None:
    try:
        lock.unlink()  # still locked: whoever waits on this file will open the path again
    except OSError:
        pass
    finally:
        os.close(fd)  # releases the flock
