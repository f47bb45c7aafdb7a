"""The command's default Optuna storage (issue 25): each study runs in a journal beside the
results file (``PATH.studies.journal``), and once each size is done its trials are copied
into the file's own Optuna tables, where ``db merge``, ``optuna.load_study(storage=
"sqlite:///PATH")`` and an older reducetune find them.

Why: in the file's tables (Optuna's RDBStorage) a trial cost about 23 writes and 25 reads,
each a SQLAlchemy round-trip of milliseconds: replaying 200 points of
h200_float32_sum_large, 28.0 of the loop's 32.1 s went to the storage (tuning/timing.py). In
a journal each write is one appended line (not synced to disk: the results file's own rule,
WAL with synchronous NORMAL) and a read only takes the lines appended since the last one:
the same 200 points took 2.6 s (docs/results/cpu_2026-11-26_replay_throughput.md).

- The journal holds the study while it runs: several processes (``--devices``, two
  commands on one file) share it as they share any ``--storage journal:``
  (store/study_share.py: claims, one budget).
- When a run opens a study, the journal's study takes the file's finished trials that did
  not come from it: all of them where the journal lacks the study (a file of an older
  reducetune, a journal removed or set aside), else those ``db merge`` brought in; so a
  resumed run keeps its budget and measures nothing twice.
- Each trial is written into the file as it is asked (RUNNING, one transaction of plain
  SQL: store/study_bulk.py), and the file's copy is brought up to the journal's finished
  trials after each size (an interrupted one too), in one transaction under the results
  file's lock. Each copy carries MIRRORED (the journal study's id and the trial's), so none
  is copied twice, by this process or another. A process killed mid-trial thus leaves its
  trial RUNNING in the file as in the journal; the next run fails both (StudyShare).
- The last process using the journal (each holds a shared flock on it) removes it at the
  end of its run, so that a run leaves only the results file (test_hostile_files), and the
  next run starts a journal from the file's copy (read with plain SQL: store/study_bulk.py).
  A journal a killed run left is taken up by the next run, and removed at its end.
- A journal that cannot be read (a line torn by a power cut) is set aside as
  ``PATH.studies.journal.broken-TIME`` and its studies start again from the file's copy.
- Where no journal can be made beside the file (a read-only folder; no flock), the studies
  live in the file's tables as before (``store.study_storage.open_storage``).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from reducetune.store.study_bulk import (SCHEMA, connect, insert_trial, read_trials, running,
                                         schema, study_id, sync_trials, trials_not_from)
from reducetune.store.study_share import StudyShare, left_by_dead
from reducetune.store.study_storage import (file_lock, flock_current, open_journal, open_storage,
                                           optuna_tables)
from reducetune.tuning.timing import current, timed_storage

__all__ = ["JOURNAL_SUFFIX", "MIRRORED", "SEEDED", "MirroredStorage", "journal_beside",
           "open_default_storage"]

JOURNAL_SUFFIX = ".studies.journal"
MIRRORED = "reducetune:mirror_of"  # a file trial copied from a journal: "<journal uid>:<id>"
SEEDED = "reducetune:seeded_from"  # a journal trial copied from the file: the file trial's id
JOURNAL_UID = "reducetune:journal_uid"  # a journal study's id (its trials' MIRRORED prefix)


def journal_beside(db: str | os.PathLike[str]) -> Path:
    return Path(f"{Path(db).resolve()}{JOURNAL_SUFFIX}")


def open_default_storage(db: str | os.PathLike[str]) -> Any:
    """The studies' storage of ``reducetune tune`` without --storage: a MirroredStorage, or the
    file's own tables (Optuna's RDBStorage) where no journal can be made beside the file or
    its Optuna tables are of a schema study_bulk does not write."""
    optuna_tables(db)  # made (under the file's lock) where missing
    if schema(db) != SCHEMA:
        return open_storage(db)
    path = journal_beside(db)
    try:
        user = _use(path)
    except (OSError, ImportError):
        return open_storage(db)
    try:
        return MirroredStorage(db, _open_journal(path), None, user)
    except BaseException:
        os.close(user)
        raise


def _use(path: Path) -> int:
    """A descriptor of the journal holding a shared flock on it while this process uses it
    (the last user removes it: MirroredStorage.close); one of a journal just removed by the
    last user is let go and the path opened again."""
    import fcntl  # POSIX (open_default_storage keeps the file's tables elsewhere)

    return flock_current(path, fcntl.LOCK_SH)


def _open_journal(path: Path) -> Any:
    try:
        return open_journal(path, durable=False)
    except ValueError as e:  # a torn line (JSONDecodeError too): the file's copy is whole
        aside = path.with_name(f"{path.name}.broken-{time.strftime('%Y%m%dT%H%M%S')}")
        os.replace(path, aside)
        print(f"reducetune: {path} cannot be read ({e}); set aside as {aside.name}, its "
              "studies continue from the results file's copy", file=sys.stderr)
        return open_journal(path, durable=False)


class MirroredStorage:
    """A journal beside the results file, the studies' storage while they run, and the file's
    own Optuna tables, their copy (each trial written there when asked, and whole once its
    size is done)."""

    def __init__(self, db: str | os.PathLike[str], journal: Any, file: Any,
                 user: int | None = None) -> None:
        self.db = Path(db)
        self.journal = journal
        # the results file's Optuna storage (RDBStorage), opened only where needed (a dead
        # process's trials to fail): its SQLAlchemy and alembic cost about a second a worker
        self._file = None if file is None else timed_storage(file)
        self._sids: dict[str, int] = {}  # study name -> its id in the file
        self._user = user  # the journal's descriptor with this process's shared flock
        self._con: Any = None  # the file, for the trials written as they are asked (began)

    @property
    def file(self) -> Any:
        if self._file is None:
            self._file = timed_storage(open_storage(self.db))
        return self._file

    def paths(self) -> list[Path]:
        """The files beside the results file that the journal uses."""
        j = journal_beside(self.db)
        return [j, Path(f"{j}.flock"), Path(f"{j}.claims")]

    def close(self) -> None:
        """At the end of the run (its studies copied into the file): the last process using
        the journal removes it and its lock files, so that a run leaves nothing beside the
        results file; the next run starts a journal from the file's copy."""
        import fcntl  # POSIX: _use made the descriptor

        if self._file is not None:
            self._file.engine.dispose()
        if self._con is not None:
            self._con.close()
            self._con = None
        if self._user is None:
            return
        try:
            fcntl.flock(self._user, fcntl.LOCK_EX | fcntl.LOCK_NB)  # no other user left
            for path in self.paths():
                path.unlink(missing_ok=True)
        except BlockingIOError:
            pass  # another process still runs on it: the last one removes it
        finally:
            os.close(self._user)
            self._user = None

    def attach(self, study: Any) -> None:
        """Before the study's first trial: its trials in the file that did not come from the
        journal join it (seed), RUNNING ones a dead process left in the file are failed (as
        store/study_share.py fails them in the journal), and the file holds the study."""
        # only for a dead process's trial: a live worker's (another --devices worker's) would
        # have this one open the file's RDBStorage, a second of its start, for nothing
        if any(left_by_dead(attrs) for attrs in running(self.db, study.study_name)):
            _reap(optuna_study(study.study_name, self.file))
        self.seed(study)
        self._sids[study.study_name] = study_id(self.db, study.study_name,
                                                study.directions)

    def seed(self, study: Any) -> None:
        """The journal's study takes the file's finished trials that did not come from it:
        all of them for a study new to the journal, else those another file's study brought
        (``db merge``), so that the run counts them against its budget as the file's study
        does. Each copy carries SEEDED (its file trial's id): copied once."""
        storage, sid = study._storage, study._study_id
        with file_lock(self.db):  # two processes opening the study at once: one copies
            uid = storage.get_study_system_attrs(sid).get(JOURNAL_UID)
            if uid is None:
                uid = uuid.uuid4().hex
                storage.set_study_system_attr(sid, JOURNAL_UID, uid)
            seeded = {t.system_attrs.get(SEEDED) for t in storage.get_all_trials(sid,
                                                                                  deepcopy=False)}
            ids = [i for i in trials_not_from(self.db, study.study_name, MIRRORED, f"{uid}:")
                   if i not in seeded]
            for t in read_trials(self.db, ids):
                storage.create_new_trial(sid, template_trial=_copy(t, {SEEDED: t._trial_id}))

    def began(self, study: Any, trial: Any) -> None:
        """The trial just asked (and stamped) written into the file, RUNNING: a process killed
        now leaves it there as it would in the file's own storage. One transaction."""
        sid = self._sids.get(study.study_name)
        if sid is None:
            return
        t = study._storage.get_trial(trial._trial_id)
        with _writing():
            if self._con is None:
                self._con = connect(self.db)
            insert_trial(self._con, sid, t, MIRRORED, f"{_uid(study)}:{t._trial_id}")

    def mirror(self, study: Any) -> int:
        """The file's copy brought up to the study's finished trials, in one transaction
        (store/study_bulk.py); returns how many trials were written."""
        sid = self._sids.get(study.study_name)
        storage = study._storage
        done = [t for t in storage.get_all_trials(study._study_id, deepcopy=False)
                if t.state.is_finished() and SEEDED not in t.system_attrs]
        if sid is None or not done:
            return 0
        uid = _uid(study)
        with _writing():
            return sync_trials(self.db, sid, done, MIRRORED, [f"{uid}:{t._trial_id}" for t in done])


def _uid(study: Any) -> str:
    """The journal study's id: with a trial's own, its copy's MIRRORED key."""
    return str(study._storage.get_study_system_attrs(study._study_id).get(JOURNAL_UID, ""))


def _writing() -> Any:
    """The file's copy is a storage write of the run (tuning/timing.py)."""
    b = current()
    return b.phase("storage_write") if b is not None else contextlib.nullcontext()


def optuna_study(name: str, storage: Any) -> Any:
    import optuna  # heavy (about 0.5 s): only where a study is used

    return optuna.load_study(study_name=name, storage=storage)


def _reap(study: Any) -> None:
    """The file study's RUNNING trials of dead processes failed, their claimed points
    re-queued: what StudyShare does when it opens a study (only that part of it is used)."""
    StudyShare(study, lambda *_: None, lambda _: False, set())


def _copy(t: Any, extra: dict[str, Any]) -> Any:
    """The finished trial as a template for another storage, its times kept, with ``extra``
    system attributes."""
    from optuna.trial import FrozenTrial  # heavy (about 0.5 s): only where a study is used

    return FrozenTrial(number=t.number, state=t.state, value=None, values=t.values,
                       datetime_start=t.datetime_start, datetime_complete=t.datetime_complete,
                       params=t.params, distributions=t.distributions,
                       user_attrs=t.user_attrs, system_attrs={**t.system_attrs, **extra},
                       intermediate_values=t.intermediate_values, trial_id=t._trial_id)
