"""Optuna's storage for the studies of a results database: the same SQLite file (Optuna's own
tables beside the ``rt_`` ones), for the command line and the Python API alike.

Several processes may open one file at once (``reducetune tune`` in two terminals, a batch of
jobs). Optuna creates its tables without a lock of its own: two processes opening a new file
together both try, and one dies (``table studies already exists``, ``UNIQUE constraint
failed: alembic_version.version_num``). ``file_lock`` serializes that creation, the store's
own (its migration backup may otherwise be taken twice, or after the other's migration), and
the claims of points in a shared study (store/study_share.py)."""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import os
import sqlite3
import threading
import warnings
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reducetune.errors import StoreError
from reducetune.store.journal_storage import journal_storage
from reducetune.store.optuna_schema import make_tables, tables_ready
from reducetune.store.pg_storage import pg_storage
from reducetune.store.storage_check import JOURNAL, check_storage

__all__ = ["claim_lock", "file_lock", "import_ahead", "imports_done", "open_journal",
           "open_shared_storage", "open_storage", "optuna_tables", "storage_url"]


def storage_url(path: str | os.PathLike[str]) -> str:
    """``sqlite:///`` URL of the file at path (absolute), built by SQLAlchemy so that a ``?``,
    ``%`` or ``#`` in the path is quoted instead of read as a query or an escape.

    Optuna fills its URL in as a ``str.format`` template, so braces are doubled too (SQLAlchemy
    quotes them already; this only guards against a version that does not)."""
    # heavy (optuna's database layer): only for an RDB storage
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
    with contextlib.nullcontext() if tables_ready(path) else file_lock(path):
        return _file_storage(path)


def _file_storage(path: str | os.PathLike[str]) -> Any:
    import optuna  # heavy (about 0.5 s): only where a study is used

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna.storages.RDBStorage(storage_url(path), engine_kwargs=sqlite_engine_kwargs())


def import_ahead(storage: str | None = None) -> threading.Thread:
    """Imports Optuna on a thread of its own, begun while this process waits for its GPU
    worker's start (cli/tune.py), which then overlaps it: the studies' storage, opened once the
    evaluator answers, finds it imported (0.3 s here, 1.3 s on a GPU machine without bytecode:
    issue 25's startup, 2026-11-26). Touches no file. ``storage``: the run's --storage; without
    one (or a journal) only what the journal needs, as the results file's tables are made with
    plain SQL (store/optuna_schema.py); for an RDB URL, Optuna's RDB storage module too
    (Optuna imports SQLAlchemy and alembic lazily, when an RDBStorage is built). Once per
    process: a --devices worker begins it before its go, its tune command's call then gets
    the same thread."""
    if not _AHEAD:
        rdb = storage is not None and not storage.startswith(JOURNAL)
        _AHEAD.append(threading.Thread(target=_import_storages, args=(rdb,), daemon=True,
                                       name="reducetune-import-ahead"))
        _AHEAD[0].start()
    return _AHEAD[0]


_AHEAD: list[threading.Thread] = []  # import_ahead's thread, once begun


def imports_done() -> None:
    """Waits for import_ahead's thread where one was begun: before this thread imports
    Optuna's or SQLAlchemy's modules itself. Two threads importing one package's modules at
    once may deadlock; the import that Python then fails, on import_ahead's thread, left
    Optuna half-imported (its Trial without pruners._filter_study: test_distributed_tune)."""
    if _AHEAD:
        _AHEAD[0].join()


def _import_storages(rdb: bool) -> None:
    try:
        import optuna.storages.journal  # noqa: F401  heavy (about 0.5 s): import_ahead's thread
        if rdb:
            import optuna.storages._rdb.storage  # noqa: F401  (heavy: an RDB --storage's)
    except Exception:  # imported again where used, which says what is missing
        pass


def optuna_tables(path: str | os.PathLike[str]) -> None:
    """Optuna's tables made in the results file at path where missing, under file_lock: in a
    file without any, from the dump of what RDBStorage makes (store/optuna_schema.py: no
    SQLAlchemy, no alembic); else by Optuna's RDBStorage, as before. A file that has them is
    left alone, without opening Optuna's storage."""
    if tables_ready(path):
        return
    with file_lock(path):
        # another process may have made them while this one waited
        if not tables_ready(path) and not make_tables(path):
            _file_storage(path).engine.dispose()


class _Connection(sqlite3.Connection):
    """Optuna's SQLite connections, in a WAL file, with ``synchronous = NORMAL``: what the store
    sets on its own connections to the same file (db/reducetune/db/schema.cpp). SQLite's
    default (FULL) syncs the WAL to disk at every commit, and Optuna's RDBStorage commits
    about 20 times a trial (each parameter, each user attribute, ask and tell): a grid sweep
    replayed from tests/data/recorded/h100_float32_sum_grid.db.xz at 2^16 (2,304 trials)
    took 172-179 s here, of which ~90 s waiting on fsync, and 70-72 s with NORMAL. In WAL
    mode NORMAL never corrupts the file; a power cut may lose the last commits, which a
    resumed study measures again. Left as it is in a file not in WAL mode (--storage
    sqlite:///PATH of another tool), where NORMAL is not that safe."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if str(self.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
            self.execute("PRAGMA synchronous = NORMAL")


def sqlite_engine_kwargs() -> dict[str, Any]:
    """What Optuna's RDBStorage gets for an SQLite file: a lock waited for up to a minute, and
    _Connection (a module-level class: RDBStorage pickles its engine_kwargs)."""
    return {"connect_args": {"timeout": 60, "factory": _Connection}}


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
        import fcntl  # POSIX only: elsewhere no lock (one process per file)
    except ImportError:
        return None
    try:
        return flock_current(lock, fcntl.LOCK_EX)
    except OSError:  # the lock file cannot be made: no one can write beside it either
        return None


def flock_current(path: Path, operation: int) -> int:
    """A descriptor of the file now at `path` (created if missing) holding flock `operation`
    (fcntl.LOCK_EX or LOCK_SH). A lock's last holder removes the file when it lets go, and a
    lock on a removed (or since replaced) file excludes no one: so after the lock is granted,
    the descriptor must still be the file at the path, else it is let go and the path opened
    again. Raises OSError when the file cannot be opened."""
    import fcntl  # POSIX only (the callers decide what no flock means)

    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, operation)
            held, now = os.fstat(fd), os.stat(path)
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


# --storage: Optuna's studies in a storage several processes or machines share. A worker that
# dies leaves its trial RUNNING; with a heartbeat (RDB storages), the others fail it once it is
# HEARTBEAT_GRACE_S stale and re-queue its point (RetryFailedTrialCallback).
HEARTBEAT_S = 2
HEARTBEAT_GRACE_S = 10

_LOCKS: dict[int, Any] = {}  # id(storage backend) -> a context manager factory for its claims


def open_shared_storage(spec: str) -> Any:
    """Optuna's storage named by ``--storage``: ``journal:PATH`` (a JournalStorage file, for the
    processes of one host) or an SQLAlchemy URL (``postgresql+psycopg2://...``, or
    ``sqlite:///PATH``), an RDBStorage with a heartbeat (for PostgreSQL, store/pg_storage.py's)."""
    import optuna  # heavy (about 0.5 s): only where a study is used

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    check_storage(spec)  # the command line checks it earlier, knowing --db and --replay
    if spec.startswith(JOURNAL):
        return open_journal(spec[len(JOURNAL):])
    return _rdb(spec)


def open_journal(spec_path: str | os.PathLike[str], durable: bool = True) -> Any:
    """Optuna's JournalStorage in the file at path, its claims under ``PATH.claims``.
    ``durable``: Optuna's own backend (each append synced to disk, JournalFileOpenLock);
    else each append is one write under an flock of ``PATH.flock`` (no fsync; a waiter
    wakes when the lock is released instead of polling with Optuna's sleeps growing to 1 s):
    for the journal beside a results file (tuning/mirror.py), which the file's copy backs;
    ValueError when its last line is torn (a power cut), which Optuna would not notice."""
    import optuna  # heavy (about 0.5 s): only where a study is used
    # heavy (about 0.5 s): only where a study is used
    from optuna.storages.journal import JournalFileBackend, JournalFileOpenLock

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    path = Path(spec_path).resolve()
    if durable:
        backend = JournalFileBackend(str(path), lock_obj=JournalFileOpenLock(str(path)))
    else:
        with _flocked(f"{path}.flock"):  # appends hold it: the last line read is whole
            _check_tail(path)
        backend = _fast_journal_class()(str(path))
    storage = journal_storage(backend)  # Optuna's, with set_trial_user_attrs
    # not PATH.lock: JournalFileOpenLock's own lock file
    _LOCKS[id(storage)] = lambda _name: file_lock(f"{path}.claims")
    return storage


@functools.cache  # one class, made on first use: its base is optuna's (heavy)
def _fast_journal_class() -> Any:
    """JournalFileBackend whose appends are not synced: the results file's own rule
    (_Connection: WAL, synchronous NORMAL), where a power cut may lose the last appends."""
    # heavy (about 0.5 s): only where a study is used
    from optuna.storages.journal import JournalFileBackend

    class FastJournal(JournalFileBackend):  # type: ignore[misc]
        def append_logs(self, logs: list[dict[str, Any]]) -> None:
            data = "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in logs).encode()
            with _flocked(self._file_path + ".flock"):
                fd = os.open(self._file_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    while data:  # one write unless interrupted
                        data = data[os.write(fd, data):]
                finally:
                    os.close(fd)

    return FastJournal


def _check_tail(path: Path) -> None:
    """ValueError unless the journal's last line is whole (ends with a newline, is JSON):
    Optuna reads a torn last line without a word, and the next append then joins it."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - (1 << 16)))
            tail = f.read()
    except FileNotFoundError:
        return
    if tail and not tail.endswith(b"\n"):
        raise ValueError("its last line is cut short")
    last = tail.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    if last:
        json.loads(last)  # JSONDecodeError is a ValueError


@contextlib.contextmanager
def _flocked(path: str) -> Iterator[None]:
    """An flock on the file at path (created, never removed) for as long as the block runs."""
    import fcntl  # POSIX: the journal beside a results file is made only where it exists

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the flock


def _rdb(url: str) -> Any:
    import optuna  # heavy (about 0.5 s): only where a study is used

    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    # ask/tell with a heartbeat: _study_share keeps it (beat) and fails stale trials (_reap)
    warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used")
    # RetryHeartbeatStaleTrialCallback since Optuna 4.9 (the older name is deprecated there)
    retry = getattr(optuna.storages, "RetryHeartbeatStaleTrialCallback",
                    optuna.storages.RetryFailedTrialCallback)(max_retry=3)
    params = inspect.signature(optuna.storages.RDBStorage).parameters
    callback = ("heartbeat_stale_trial_callback" if "heartbeat_stale_trial_callback" in params
                else "failed_trial_callback")
    kwargs: dict[str, Any] = {"heartbeat_interval": HEARTBEAT_S,
                              "grace_period": HEARTBEAT_GRACE_S, callback: retry}
    if url.startswith("sqlite"):
        kwargs["engine_kwargs"] = sqlite_engine_kwargs()
    try:
        with _creating(url):  # Optuna creates its tables without a lock of its own
            storage = _rdb_class(url)(url, **kwargs)
    except ImportError as e:  # the URL's driver (psycopg2, ...) is not installed
        raise StoreError(f"--storage {url.split('://')[0]}: {e} (pip install "
                         "'reducetune[distributed]' for PostgreSQL)") from e
    except Exception as e:  # an unreachable server, a refused login, ...
        raise StoreError(f"cannot open --storage {url}: {e}") from e
    if storage.engine.dialect.name == "postgresql":
        _LOCKS[id(storage)] = lambda name: _pg_lock(storage.engine, name)
    elif storage.engine.dialect.name == "sqlite" and storage.engine.url.database:
        path = storage.engine.url.database
        _LOCKS[id(storage)] = lambda _name: file_lock(path)
    return storage


def _rdb_class(url: str) -> Any:
    """What opens an RDB URL: for PostgreSQL, Optuna's storage with its per-trial calls in
    plain SQL (store/pg_storage.py: a replayed grid point's storage time 62 -> 14 ms here);
    elsewhere Optuna's RDBStorage."""
    import optuna  # heavy (about 0.5 s): only where a study is used
    # heavy (optuna's database layer): only for an RDB storage
    from sqlalchemy.engine import make_url

    if make_url(url).get_backend_name() == "postgresql":
        return pg_storage
    return optuna.storages.RDBStorage


@contextlib.contextmanager
def _creating(url: str) -> Iterator[None]:
    """Serializes the creation of Optuna's tables: a PostgreSQL advisory lock, a SQLite
    file's file_lock; nothing elsewhere."""
    from sqlalchemy import create_engine  # heavy (optuna's database layer): only for an RDB storage
    # heavy (optuna's database layer): only for an RDB storage
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database:
        with file_lock(parsed.database):
            yield
        return
    if parsed.get_backend_name() != "postgresql":
        yield
        return
    engine = create_engine(url)
    try:
        with _pg_lock(engine, "reducetune: Optuna's tables"):
            yield
    finally:
        engine.dispose()


def claim_lock(storage: Any, study_name: str) -> Any:
    """The lock under which a process claims a point of a study in this storage (the results
    file's, the journal's, a PostgreSQL advisory lock), or None where none is known."""
    factory = _LOCKS.get(id(storage))
    if factory is None:  # an RDBStorage behind Optuna's cache
        factory = _LOCKS.get(id(getattr(storage, "_backend", storage)))
    return None if factory is None else factory(study_name)


@contextlib.contextmanager
def _pg_lock(engine: Any, name: str) -> Iterator[None]:
    """A session-level advisory lock keyed by the study's name: released when the holder's
    connection ends, a killed process's included."""
    from sqlalchemy import text  # heavy (optuna's database layer): only for an RDB storage

    key = zlib.crc32(name.encode()) - (1 << 31)  # a signed 32-bit key
    with engine.connect() as con:
        con.execute(text("SELECT pg_advisory_lock(:k)"), {"k": key})
        try:
            yield
        finally:
            con.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
            con.commit()
