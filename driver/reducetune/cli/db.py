"""``reducetune db``: database maintenance (merge other databases in, check one)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from reducetune import _core
from reducetune.cli.args import add_db, db_path
from reducetune.errors import InvalidConfiguration, StoreError
from reducetune.store.results import open_store
from reducetune.store.study_merge import merge_studies


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("db", help="database maintenance")
    dbsub = p.add_subparsers(dest="db_command", required=True, metavar="ACTION")
    m = dbsub.add_parser(
        "merge", help="copy other databases' results into --db",
        description="Copies other databases' devices, measurements, builds and baselines into "
        "--db. A measurement's key includes its workload's shape (outer, r, inner): two shapes "
        "with one r are two workloads, never merged into one. A measurement (or a CUB/ceiling baseline) whose key is in both keeps the better "
        "row, whichever file is merged into which: ok beats failed, invalid or wrong (two rows "
        "that are not ok: the newer); then the lower relative spread (rel_stddev), when the "
        "two differ by more than max(0.1 percentage point, 20% of the larger); then more "
        "samples; then the newer. A full tie keeps --db's row. Sampling stops once the noise "
        "is at most 1%, so more samples alone would favour the noisier row. Application "
        "times (reducetune calibrate) come along by calibration, a size (or shape) on a GPU "
        "model: the newer calibration replaces the older whole; a tie keeps --db's. "
        "Optuna studies: "
        "a study --db lacks is copied (its finished trials); one of the same name gains the "
        "finished trials of points it lacks (a point in both keeps --db's trial); one of the "
        "same name with other directions is skipped.")
    m.add_argument("others", nargs="+", type=Path)
    add_db(m)
    c = dbsub.add_parser("check", help="schema version and SQLite integrity check")
    add_db(c)


def cmd_db(args: argparse.Namespace) -> int:
    return _check(args) if args.db_command == "check" else _merge(args)


def _check(args: argparse.Namespace) -> int:
    path = db_path(args)
    if not path.exists():
        raise StoreError(f"no database at {path}")
    info = _core.check_file(str(path))  # reads the file as it is: never migrates it
    version = f"schema version {info['schema_version']}"
    if info["schema_version"] < info["current_version"]:
        version += (f" (current {info['current_version']}: a command that writes migrates "
                    "it, keeping a copy)")
    print(f"{path}: {version}, integrity {info['integrity']}")
    return 0 if info["integrity"] == "ok" else 1


def _merge(args: argparse.Namespace) -> int:
    for other in args.others:  # each one refused before --db is created or written
        open_store(other, read_only=True).close()
        _refuse_self(other, db_path(args))
    store = open_store(db_path(args))
    for other in args.others:
        s = store.merge_from(str(other))
        print(f"merged {other}: {s['inserted']} inserted, {s['replaced']} replaced, "
              f"{s['kept']} kept, {s['builds_inserted']} builds, "
              f"{s['baselines_inserted']} baselines inserted, "
              f"{s['baselines_replaced']} replaced, {s['application_times_copied']} "
              f"application times copied, {s['application_times_kept_out']} kept out "
              "(this file's calibration of their size as new)")
        t = merge_studies(db_path(args), other)
        print(f"merged {other}'s studies: {t['studies_added']} added, {t['trials_added']} "
              f"trials added, {t['studies_skipped']} skipped (other directions)")
    return 0



def _refuse_self(other: Path, db: Path) -> None:
    """The same file by device and inode (./a.db, a symlink, a hard link), refused before --db
    is opened: opening it migrates an older file, and a file merged into itself gains nothing."""
    if db.exists() and os.path.samefile(other, db):
        raise InvalidConfiguration(f"cannot merge {other} into {db}: they are the same file")


COMMANDS = {"db": cmd_db}
