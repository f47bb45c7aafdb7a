"""``db merge``, the Optuna part: another results file's studies copied into this one's.

The measurements and baselines are merged by the store (store_merge.cpp, one rule per key);
the studies are the search's history, which a resumed run reads to know its budget and its
points. The rule (db/README.md):

- a study whose name this file lacks is copied: its finished trials (complete, failed,
  pruned: rejected proposals included), with their parameters, values and attributes, and the
  study's directions and attributes. Running or waiting trials are not copied: they belong to
  a process of the other file, which is not resuming here.
- a study of the same name and directions gains the other's finished trials whose point
  (variant and launch labels) it has no finished trial for; a point both have keeps this
  file's trial (the measurement itself is chosen by the store's rule); trials without a point
  (rejected proposals) are not copied into an existing study.
- a study of the same name with other directions is left as it is, and counted as skipped.

Merging a file twice adds nothing the second time.
"""

from __future__ import annotations

import inspect
import os
import sqlite3
import stat
import tempfile
from pathlib import Path
from typing import Any

from reducetune.store.study_share import remove_dead_folders
from reducetune.store.study_storage import open_storage, storage_url

__all__ = ["merge_studies"]

CLAIM = "claim"  # a claim names a process of the other file: meaningless here
COPY_PREFIX = "reducetune-merge-"  # then the merging process's pid: $TMPDIR/PREFIX<pid>-*


def _writable(p: Path) -> bool:
    """Writable by its mode bits and by access(), as the store decides (read_only.cpp)."""
    try:
        bits = p.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    except OSError:
        return False
    return bool(bits) and os.access(p, os.W_OK)


def _connect(path: Path) -> sqlite3.Connection:
    """The other file, only read and left as it was, opened as the store opens a file it reads
    (db/reducetune/db/read_only.cpp, open_reader): a -wal with frames (commits maybe not in the
    file yet) is read through a read-only connection, which never folds it into the file nor
    removes it; without frames, a file or folder whose mode bits forbid writing is opened
    immutable, another read-write but query_only, so that its last close removes the -wal and
    -shm it made (copying nothing into the file)."""
    uri = path.resolve().as_uri()  # percent-encodes '#', '?' and '%'
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        return sqlite3.connect(uri + "?mode=ro", uri=True, timeout=60)
    if not _writable(path) or not _writable(path.resolve().parent):
        return sqlite3.connect(uri + "?immutable=1", uri=True)
    con = sqlite3.connect(uri + "?mode=rw", uri=True, timeout=60)
    con.execute("PRAGMA query_only = 1")
    return con


def _snapshot(path: Path, folder: str) -> Path | None:
    """A copy of the other file in folder (SQLite's backup), or None when it has no Optuna
    tables: Optuna then reads the copy, never the file itself."""
    con = _connect(path)
    try:
        if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'studies'").fetchone() is None:
            return None
        copy = Path(folder) / "other.db"
        dst = sqlite3.connect(copy)
        try:
            con.backup(dst)
        finally:
            dst.close()
        return copy
    finally:
        con.close()


def _read_only_storage(path: Path) -> Any:
    """Optuna over the copy, without creating or upgrading anything."""
    import optuna  # heavy (about 0.5 s): only where a study is used

    kwargs: dict[str, Any] = {"skip_compatibility_check": True}
    if "skip_table_creation" in inspect.signature(optuna.storages.RDBStorage).parameters:
        kwargs["skip_table_creation"] = True
    return optuna.storages.RDBStorage(storage_url(path), **kwargs)


def _point(t: Any) -> tuple[str, str] | None:
    a = t.user_attrs
    return (a["variant_label"], a["launch_label"]) if "variant_label" in a else None


def _copy(t: Any) -> Any:
    import optuna  # heavy (about 0.5 s): only where a study is used

    attrs = {k: v for k, v in t.user_attrs.items() if k != CLAIM}
    values = t.values if t.state == optuna.trial.TrialState.COMPLETE else None
    return optuna.trial.create_trial(state=t.state, params=t.params,
                                     distributions=t.distributions, values=values,
                                     user_attrs=attrs, system_attrs=t.system_attrs,
                                     intermediate_values=t.intermediate_values)


def merge_studies(db: str | os.PathLike[str], other: str | os.PathLike[str]) -> dict[str, int]:
    """Copies ``other``'s Optuna studies into ``db``'s (the rule above): {studies_added,
    studies_skipped, trials_added}."""
    import optuna  # heavy (about 0.5 s): only where a study is used

    stats = {"studies_added": 0, "studies_skipped": 0, "trials_added": 0}
    remove_dead_folders(COPY_PREFIX)
    with tempfile.TemporaryDirectory(prefix=f"{COPY_PREFIX}{os.getpid()}-") as folder:
        copy = _snapshot(Path(other), folder)
        if copy is None:
            return stats
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        source = _read_only_storage(copy)
        target = open_storage(db)
        try:
            mine = {s.study_name: s for s in optuna.get_all_study_summaries(target)}
            for summary in optuna.get_all_study_summaries(source):
                _merge_one(summary, source, target, mine.get(summary.study_name), stats)
        finally:
            source.engine.dispose()
            target.engine.dispose()
    return stats


def _merge_one(summary: Any, source: Any, target: Any, existing: Any,
               stats: dict[str, int]) -> None:
    import optuna  # heavy (about 0.5 s): only where a study is used

    name = summary.study_name
    if existing is not None and list(existing.directions) != list(summary.directions):
        stats["studies_skipped"] += 1
        return
    theirs = optuna.load_study(study_name=name, storage=source)
    finished = [t for t in theirs.get_trials(deepcopy=False) if t.state.is_finished()]
    if existing is None:
        study = optuna.create_study(study_name=name, storage=target,
                                    directions=list(summary.directions))
        for k, v in theirs.user_attrs.items():
            study.set_user_attr(k, v)
        stats["studies_added"] += 1
        new = finished
    else:
        study = optuna.load_study(study_name=name, storage=target)
        have = {_point(t) for t in study.get_trials(deepcopy=False) if t.state.is_finished()}
        new, seen = [], set(have)
        for t in finished:
            p = _point(t)
            if p is not None and p not in seen:
                seen.add(p)
                new.append(t)
    study.add_trials([_copy(t) for t in new])
    stats["trials_added"] += len(new)
