"""Optuna's studies in the results file: its connections sync as the store's do (WAL,
synchronous = NORMAL), not at every one of a trial's ~20 commits (_study_storage._Connection);
a file of another tool, not in WAL mode, keeps SQLite's default."""

from __future__ import annotations

import pickle

from reducetune import _core
from reducetune.store.study_storage import open_shared_storage, open_storage

NORMAL, FULL = 1, 2  # PRAGMA synchronous


def _synchronous(storage) -> int:
    with storage.engine.connect() as c:
        return int(c.exec_driver_sql("PRAGMA synchronous").scalar())


def test_optuna_in_the_results_file_syncs_as_the_store_does(tmp_path):
    path = tmp_path / "r.db"
    _core.Store(str(path)).close()  # the store makes the file WAL
    storage = open_storage(path)
    assert _synchronous(storage) == NORMAL
    storage.engine.dispose()  # connections made after the first, too
    assert _synchronous(storage) == NORMAL
    # RDBStorage pickles its engine arguments (Optuna rebuilds the engine from them)
    assert _synchronous(pickle.loads(pickle.dumps(storage))) == NORMAL


def test_a_shared_sqlite_file_not_in_wal_mode_keeps_full_sync(tmp_path):
    storage = open_shared_storage(f"sqlite:///{tmp_path / 'optuna.db'}")
    with storage.engine.connect() as c:
        assert c.exec_driver_sql("PRAGMA journal_mode").scalar() != "wal"
    assert _synchronous(storage) == FULL
