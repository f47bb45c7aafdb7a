"""The command's default storage (issue 25, item 2; tuning/mirror.py): the studies run in a
journal beside the results file, copied into the file's Optuna tables, and the journal is
removed by the last process using it. On a replay of the real H200 recording (with its
sidecar's --restrict): the file's study holds every trial the run made, readable with Optuna
alone, and nothing is left beside the file; a resumed run measures nothing again; a journal
left by a killed run is taken up, a torn one set aside; a study copied twice is copied
once."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import optuna
import pytest

from reducetune.store.study_storage import open_storage
from reducetune.tuning.mirror import JOURNAL_SUFFIX, MIRRORED, MirroredStorage, journal_beside
from replay_support import h200_grid_replay, needs_h200_grid

pytestmark = needs_h200_grid("the default storage is tested on a real recording")

EVALS = 30


def replay(cli, db, *extra, evals=EVALS):
    code, out, err = cli(*h200_grid_replay(db, all_sizes=True), "--max-evals", str(evals),
                         "--json", *extra)
    assert code == 0, err
    return json.loads(out), err


def trials(storage) -> dict[str, list]:
    return {s.study_name: optuna.load_study(study_name=s.study_name, storage=storage).trials
            for s in optuna.get_all_study_summaries(storage)}


def outcomes(ts) -> Counter:
    return Counter((t.state.name, t.user_attrs.get("outcome"), t.user_attrs.get("variant_label"),
                    t.user_attrs.get("launch_label")) for t in ts)


def journal_trials(db: Path) -> dict[str, list]:
    from optuna.storages.journal import JournalFileBackend

    return trials(optuna.storages.JournalStorage(JournalFileBackend(str(journal_beside(db)))))


def beside(folder: Path) -> set[str]:
    """What is in the folder, less SQLite's -wal and -shm (in this process a connection of
    the store may outlive a command: test_hostile_files)."""
    return {p.name for p in folder.iterdir()} - {"r.db-wal", "r.db-shm"}


def kept_journal(monkeypatch):
    """The journal as a killed run leaves it: not removed at the end (its flock let go, as
    a killed process's is)."""
    def close(self):
        if self._file is not None:
            self._file.engine.dispose()
        if self._con is not None:
            self._con.close()
            self._con = None
        if self._user is not None:
            os.close(self._user)
            self._user = None

    monkeypatch.setattr(MirroredStorage, "close", close)


@pytest.mark.parametrize("strategy", ["tpe", "grid"])
def test_the_file_holds_every_trial_of_the_journal(cli, tmp_path, strategy, monkeypatch):
    db = tmp_path / "r.db"
    kept_journal(monkeypatch)
    doc, _ = replay(cli, db, "--strategy", strategy)
    assert Path(f"{db}{JOURNAL_SUFFIX}").exists()
    in_file, in_journal = trials(f"sqlite:///{db}"), journal_trials(db)
    assert set(in_file) == set(in_journal) and len(in_file) == len(doc["sizes"])
    for name, ts in in_journal.items():
        assert all(t.state.is_finished() for t in ts)
        assert outcomes(in_file[name]) == outcomes(ts)  # the same trials, attributes kept
        # values and times kept: the file's best is the journal's
        best = optuna.load_study(study_name=name, storage=f"sqlite:///{db}").best_trial
        assert best.values == min((t for t in ts if t.values), key=lambda t: t.values).values
        assert [t.datetime_complete for t in in_file[name]] == [t.datetime_complete for t in ts]
    measured = sum(s["evaluated"] for s in doc["sizes"])
    assert measured == sum(1 for ts in in_file.values() for t in ts
                           if t.user_attrs.get("outcome") == "measured")


def test_a_run_leaves_only_the_file_and_a_resumed_one_measures_nothing_again(cli, tmp_path):
    db = tmp_path / "r.db"
    replay(cli, db, "--strategy", "tpe")
    assert beside(tmp_path) == {"r.db"}
    before = trials(f"sqlite:///{db}")
    doc, _ = replay(cli, db, "--strategy", "tpe")  # the studies come back from the file
    assert all(s["evaluated"] == 0 and s["points"] == EVALS for s in doc["sizes"])
    # the file gains no copy of what it gave the journal
    assert {k: len(v) for k, v in trials(f"sqlite:///{db}").items()} == {
        k: len(v) for k, v in before.items()}
    doc, _ = replay(cli, db, "--strategy", "tpe", evals=EVALS + 5)  # and goes on from there
    assert all(s["evaluated"] == 5 and s["points"] == EVALS + 5 for s in doc["sizes"])
    assert all(len(v) > len(before[k]) for k, v in trials(f"sqlite:///{db}").items())
    assert beside(tmp_path) == {"r.db"}


def test_a_journal_a_killed_run_left_is_taken_up_and_removed(cli, tmp_path, monkeypatch):
    db = tmp_path / "r.db"
    with monkeypatch.context() as m:
        kept_journal(m)
        replay(cli, db, "--strategy", "grid")
    assert journal_beside(db).exists()
    doc, _ = replay(cli, db, "--strategy", "grid")
    assert all(s["evaluated"] == 0 and s["points"] == EVALS for s in doc["sizes"])
    assert beside(tmp_path) == {"r.db"}


def test_a_torn_journal_is_set_aside_and_the_run_resumes_from_the_file(cli, tmp_path,
                                                                       monkeypatch):
    db = tmp_path / "r.db"
    with monkeypatch.context() as m:
        kept_journal(m)
        replay(cli, db, "--strategy", "grid")
    with open(journal_beside(db), "ab") as f:  # a power cut in the middle of an append
        f.write(b'{"op_code": 4, "worker_id": "x", "trial_id"')
    doc, err = replay(cli, db, "--strategy", "grid")
    assert "set aside" in err
    assert list(tmp_path.glob(f"r.db{JOURNAL_SUFFIX}.broken-*"))
    assert all(s["evaluated"] == 0 and s["points"] == EVALS for s in doc["sizes"])


def test_a_study_copied_twice_is_copied_once(cli, tmp_path, monkeypatch):
    db = tmp_path / "r.db"
    kept_journal(monkeypatch)
    replay(cli, db, "--strategy", "grid")
    storage = MirroredStorage(db, optuna.storages.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(journal_beside(db)))), open_storage(db))
    for name in journal_trials(db):
        study = optuna.load_study(study_name=name, storage=storage.journal)
        storage.attach(study)
        assert storage.mirror(study) == 0  # every trial is in the file already
    keys = [t.system_attrs[MIRRORED] for ts in trials(f"sqlite:///{db}").values() for t in ts]
    assert len(keys) == len(set(keys))
    storage.file.engine.dispose()


def test_a_run_opens_no_optuna_storage_of_the_file_unless_a_dead_process_left_a_trial(
        cli, tmp_path, monkeypatch):
    """Optuna's RDBStorage of the file (SQLAlchemy and alembic: about a second of each
    worker's start) is not opened (a new file's tables come from store/optuna_schema.py,
    test_optuna_schema); a worker starting beside a live worker's RUNNING trial (another
    --devices worker's) does not open it either."""
    from reducetune.store.study_bulk import study_id
    from reducetune.tuning import mirror

    opened: list[object] = []
    monkeypatch.setattr(mirror, "open_storage", lambda db: opened.append(db))
    db = tmp_path / "r.db"
    replay(cli, db, "--strategy", "grid")  # a new file: its tables made, its studies' rows
    names = list(trials(f"sqlite:///{db}"))
    for name in names:  # a live worker's trial: this process's, asked and not told
        study = optuna.load_study(study_name=name, storage=f"sqlite:///{db}")
        study.ask().set_user_attr("owner", {"host": os.uname().nodename, "pid": os.getpid()})
    doc, _ = replay(cli, db, "--strategy", "grid", evals=EVALS + 2)
    assert opened == [] and all(s["evaluated"] == 2 for s in doc["sizes"])
    # the rows Optuna's create_new_study writes: found again, and read by Optuna alone
    assert study_id(db, names[0], [optuna.study.StudyDirection.MINIMIZE]) == \
        optuna.storages.RDBStorage(f"sqlite:///{db}").get_study_id_from_name(names[0])
    made = study_id(db, "new", [optuna.study.StudyDirection.MINIMIZE] * 2)
    assert optuna.load_study(study_name="new", storage=f"sqlite:///{db}").directions == [
        optuna.study.StudyDirection.MINIMIZE] * 2 and study_id(db, "new", []) == made
