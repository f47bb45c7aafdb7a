"""Optuna's tables of a new results file made from the committed dump with plain SQL
(store/optuna_schema.py, issue 25: the default start without SQLAlchemy or alembic).

- The dump makes what the installed Optuna's RDBStorage makes on an empty file: the same
  sqlite_master (tables, indexes, their SQL), alembic revision and version_info row. This is
  the test that fails when the dump is stale: run scripts/update-optuna-schema.
- A results file made so is Optuna's: optuna.load_study reads it, writes to it, and
  study_bulk (the default storage's copy) writes its schema.
- Anything else takes RDBStorage's path, as before: another head revision installed than the
  dump's, a half-made file (RDBStorage stamps it), a file of an older schema (refused with
  Optuna's "storage upgrade").
- The default start imports neither SQLAlchemy nor alembic (a fresh process, its
  sys.modules), and the whole replayed command neither (python -X importtime's log).
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import optuna
import pytest

import reducetune  # the package under test: the installed one in CI, driver/ here

from conftest import REPO
from reducetune.store import optuna_schema, study_storage
from reducetune.store.optuna_schema import dump, installed_optuna, make_tables, tables_ready
from reducetune.store.results import open_store
from reducetune.store.study_bulk import SCHEMA, schema
from replay_support import H200_GRID, h200_grid_replay

# the subprocesses import the same package as this process (CI tests the installed one, whose
# _core the source tree lacks)
ENV = {**os.environ, "PYTHONPATH": str(Path(reducetune.__file__).resolve().parents[1])}


def master(path: Path) -> list[tuple]:
    """sqlite_master (type, name, table, SQL), the alembic revision and the version_info row
    (its Optuna version aside: each writer names its own)."""
    con = sqlite3.connect(path)
    try:
        return [*con.execute("SELECT type, name, tbl_name, sql FROM sqlite_master "
                             "ORDER BY type, name"),
                *con.execute("SELECT version_num FROM alembic_version"),
                *con.execute("SELECT version_info_id, schema_version FROM version_info")]
    finally:
        con.close()


def empty_file(path: Path) -> Path:
    sqlite3.connect(path).close()  # a file of no tables (make_tables never creates one)
    return path


def by_rdbstorage(path: Path) -> Path:
    optuna.storages.RDBStorage(f"sqlite:///{path}").engine.dispose()
    return path


def test_the_dump_makes_what_optunas_rdbstorage_makes_on_an_empty_file(tmp_path):
    made = empty_file(tmp_path / "dump.db")
    assert make_tables(made)
    want = master(by_rdbstorage(tmp_path / "rdb.db"))
    assert master(made) == want, (
        f"store/optuna_schema.sql is stale for Optuna {optuna.__version__}: run "
        "scripts/update-optuna-schema")
    assert any(kind == "index" and sql for kind, _, _, sql in want[:-2])  # indexes compared too


def test_the_installed_head_is_what_alembic_says(tmp_path):
    storage = by_rdbstorage(tmp_path / "r.db")
    head = optuna.storages.RDBStorage(f"sqlite:///{storage}")._version_manager.get_head_version()
    assert installed_optuna() == (optuna.__version__, head)


def test_a_new_results_file_is_optunas_and_the_default_storages(tmp_path):
    db = tmp_path / "r.db"
    open_store(db).close()
    study_storage.optuna_tables(db)
    assert tables_ready(db) and schema(db) == dump().revision == SCHEMA
    con = sqlite3.connect(db)
    assert con.execute("SELECT library_version FROM version_info").fetchone() == (
        optuna.__version__,)
    con.close()
    study = optuna.create_study(study_name="s", storage=f"sqlite:///{db}")  # Optuna's check
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    again = optuna.load_study(study_name="s", storage=f"sqlite:///{db}")
    assert [t.value for t in again.trials] == [t.value for t in study.trials]
    assert len(again.trials) == 3


def rdbstorage_spy(monkeypatch) -> list[Path]:
    """The files study_storage opens Optuna's RDBStorage on (it still does)."""
    built: list[Path] = []
    real = study_storage._file_storage
    monkeypatch.setattr(study_storage, "_file_storage",
                        lambda path: built.append(Path(path)) or real(path))
    return built


def test_a_half_made_file_is_left_to_rdbstorage(tmp_path, monkeypatch):
    """A file whose tables RDBStorage made but did not stamp (a process killed between the
    two): the dump writes nothing there, RDBStorage stamps it, as before."""
    built = rdbstorage_spy(monkeypatch)
    db = by_rdbstorage(tmp_path / "r.db")
    con = sqlite3.connect(db)
    con.execute("DELETE FROM alembic_version")
    con.commit()
    con.close()
    assert not make_tables(db) and not tables_ready(db)
    study_storage.optuna_tables(db)
    assert built == [db] and master(db) == master(by_rdbstorage(tmp_path / "rdb.db"))


def test_a_file_sqlite_cannot_write_is_left_to_rdbstorage(tmp_path):
    """An SQLite error (here: not a database) writes nothing and leaves the file to
    RDBStorage's path, which says what is wrong as before."""
    db = tmp_path / "r.db"
    db.write_bytes(b"not a database" * 100)
    assert not make_tables(db)
    assert db.read_bytes() == b"not a database" * 100


def test_another_head_revision_takes_rdbstorages_path(tmp_path, monkeypatch):
    """An Optuna whose migrations end at another revision than the dump's: its RDBStorage
    makes the tables (and the stamp says its own head, not the dump's)."""
    other = dataclasses.replace(dump(), revision="v0.0.0.z")
    monkeypatch.setattr(optuna_schema, "dump", lambda: other)
    built = rdbstorage_spy(monkeypatch)
    db = tmp_path / "r.db"
    open_store(db).close()
    study_storage.optuna_tables(db)
    assert built == [db] and schema(db) == SCHEMA


def test_a_file_of_an_older_schema_is_refused_as_before(tmp_path):
    """A file Optuna stamped at an older revision: the default storage opens Optuna's
    RDBStorage on it, which asks for ``optuna storage upgrade`` (nothing is made by the dump)."""
    from reducetune.tuning.mirror import open_default_storage

    db = tmp_path / "r.db"
    open_store(db).close()
    study_storage.optuna_tables(db)
    con = sqlite3.connect(db)
    con.execute("UPDATE alembic_version SET version_num = 'v3.0.0.d'")
    con.commit()
    con.close()
    with pytest.raises(RuntimeError, match="storage upgrade"):
        open_default_storage(db)
    assert schema(db) == "v3.0.0.d"


START = """
import sys
from reducetune.store.results import open_store
from reducetune.store.study_storage import import_ahead
from reducetune.tuning.mirror import MirroredStorage, open_default_storage
import_ahead().join()  # as cli/tune.py: Optuna imported on its thread, then the storage
store = open_store(sys.argv[1])
storage = open_default_storage(sys.argv[1])
assert isinstance(storage, MirroredStorage), storage
storage.close()
store.close()
print(sorted(m for m in sys.modules if m.split(".")[0] in ("sqlalchemy", "alembic")))
"""


def test_the_default_start_imports_no_sqlalchemy(tmp_path):
    db = tmp_path / "r.db"
    run = subprocess.run([sys.executable, "-c", START, str(db)], cwd=REPO, env=ENV,
                         capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"
    assert tables_ready(db)


@pytest.mark.replay
@pytest.mark.skipif(H200_GRID is None, reason="tests/data/recorded/h200_float32_sum_grid.db.xz "
                    "is absent: the whole command's imports are not checked")
def test_a_replayed_tune_on_a_new_file_imports_no_sqlalchemy(tmp_path):
    db = tmp_path / "r.db"
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "reducetune",
                          *h200_grid_replay(db), "--max-evals", "4"], cwd=REPO, env=ENV,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines()
                if line.startswith("import time:")]
    assert "optuna" in imported  # the log is read: the journal's Optuna is there
    assert not [m for m in imported if m.split(".")[0] in ("sqlalchemy", "alembic")]
    assert optuna.get_all_study_summaries(f"sqlite:///{db}")[0].n_trials == 4
