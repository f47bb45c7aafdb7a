"""Issue R2 (24), section 1 "Wrong or lost data" and the first bullet of section 2, as the
command line meets them: each case runs ``reducetune`` in a process of its own on copies of
databases (SYNTHETIC ones from conftest.py, the committed schema-1 file) and checks the exit
status, the one-line message, the files' bytes and what the tables hold.

The store's own half of these cases is tested in C++ (tests/cpp/db/test_db_hostile_input.cpp,
test_db_kill_migration.cpp)."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, RESTRICT_ARGS

WORKLOAD = ["--dtype", "float32", "--op", "sum"]
TUNE = ["--quiet", "--strategy", "grid", "--sizes", "2^10", "--max-evals", "2", *RESTRICT_ARGS]
V1 = REPO / "tests" / "data" / "db" / "schema_v1.sqlite"


def run(*argv: object, cwd: Path | None = None, env: dict[str, str] | None = None
        ) -> tuple[int, str, str]:
    """The command line in a process of its own: (exit status, stdout, stderr)."""
    proc = subprocess.run([sys.executable, "-m", "reducetune", *map(str, argv)],
                          capture_output=True, text=True, cwd=cwd, timeout=300,
                          env=env)
    return proc.returncode, proc.stdout, proc.stderr


# `reducetune ARGV` with one function replaced (`target`, after `import_line`): the replacement
# touches the file argv[1] names and waits for good, so the command is held there to be killed.
HOLD = ("import pathlib, runpy, signal, sys\n"
        "{import_line}\n"
        "ready = pathlib.Path(sys.argv.pop(1))\n"
        "def held(*args, **kwargs):\n"
        "    ready.touch()\n"
        "    while True:\n"
        "        signal.pause()\n"
        "{target} = held\n"
        "sys.argv[0] = 'reducetune'\n"
        "runpy.run_module('reducetune', run_name='__main__', alter_sys=True)\n")


def held_at(import_line: str, target: str, ready: Path, *argv: object,
            env: dict[str, str] | None = None) -> subprocess.Popen:
    """The command, started and returned once it is held at ``target``."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD.format(import_line=import_line,
                                                               target=target),
                             str(ready), *map(str, argv)], env=env, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 120
    while not ready.exists():
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return proc


def one_line_error(code: int, err: str, *words: str) -> None:
    """Refused with one ``reducetune: error:`` line that names what is wrong."""
    lines = err.strip().splitlines()
    assert code != 0, err
    assert len(lines) == 1 and lines[0].startswith("reducetune: error: "), err
    for w in words:
        assert w in lines[0], err


def digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def snapshot(folder: Path) -> dict[str, str | None]:
    """Every file of the folder by name, with its bytes' digest. A -shm is listed without its
    bytes: it is SQLite's index of the -wal, rebuilt by any reader, and holds no data."""
    return {p.name: None if p.name.endswith("-shm") else digest(p)
            for p in sorted(folder.iterdir()) if p.is_file()}


def uuids(db: Path) -> list[str]:
    """The devices ``reducetune devices`` lists in db (its lines "in DB: NAME sm_XY UUID")."""
    code, out, err = run("devices", "--db", db)
    assert code == 0, err
    return sorted(line.rsplit(" ", 1)[1] for line in out.splitlines() if line.startswith("in "))


def kill_a_writer(db: Path, uuid: str) -> None:
    """A process registers a device in db and is killed before any checkpoint: its commit is
    only in db's -wal, as a SIGKILLed tune leaves it."""
    code = (
        "import os, signal, sys\n"
        "from reducetune import _core\n"
        "s = _core.Store(sys.argv[1])\n"
        "d = {k: v for k, v in s.devices()[0].items() if k != 'id'}\n"
        "s.register_device({**d, 'uuid': sys.argv[2]})\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(db), uuid], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert Path(f"{db}-wal").stat().st_size > 0


@pytest.fixture
def results(tmp_path: Path, synthetic_db: Path) -> Path:
    """A results file with measurements and an Optuna study (a replayed tune)."""
    db = tmp_path / "in" / "results.db"
    db.parent.mkdir()
    code, _, err = run("tune", "--replay", synthetic_db, "--db", db, *WORKLOAD, *TUNE)
    assert code == 0, err
    return db


def studies_and_running(db: Path) -> tuple[int, int]:
    with sqlite3.connect(db) as con:
        studies = con.execute("SELECT count(*) FROM studies").fetchone()[0]
        running = con.execute("SELECT count(*) FROM trials WHERE state = 'RUNNING'").fetchone()[0]
    con.close()
    return studies, running


# --- a database read without its WAL -----------------------------------------------------


@pytest.mark.parametrize("read_only", ["file", "folder"])
def test_a_read_only_file_or_folder_is_read_with_the_commits_in_its_wal(read_only, results,
                                                                         tmp_path):
    before = uuids(results)
    kill_a_writer(results, "GPU-only-in-the-wal")
    folder = results.parent
    files = snapshot(folder)
    target = results if read_only == "file" else folder
    mode = target.stat().st_mode
    target.chmod(0o444 if read_only == "file" else 0o555)
    try:
        assert uuids(results) == sorted([*before, "GPU-only-in-the-wal"])
        # As the other input of db merge: its WAL's commits come along, the studies too.
        into = tmp_path / "into.db"
        code, out, err = run("db", "merge", results, "--db", into)
        assert code == 0, err
        assert uuids(into) == sorted([*before, "GPU-only-in-the-wal"])
        assert studies_and_running(into) == (1, 0)
    finally:
        target.chmod(mode)
    assert snapshot(folder) == files  # read, never written: the -wal is still there


def test_db_merge_never_folds_an_inputs_wal_into_it(results, tmp_path):
    kill_a_writer(results, "GPU-only-in-the-wal")
    files = snapshot(results.parent)
    into = tmp_path / "into.db"
    code, _, err = run("db", "merge", results, "--db", into)
    assert code == 0, err
    assert "GPU-only-in-the-wal" in uuids(into)
    assert snapshot(results.parent) == files


# --- names that look like URIs -----------------------------------------------------------


@pytest.mark.parametrize("name", ["a#b.db", "a?b.db", "a%20b.db", "file:x.db", ":memory:"])
def test_a_db_name_is_a_plain_path(name, tmp_path, synthetic_db):
    """No URI reading: results and Optuna's tables go into the file of exactly that name (a
    file 'a' for 'a#b.db', './x.db' for 'file:x.db', or nothing at all for ':memory:' was what
    a URI made of them)."""
    work = tmp_path / "work"
    work.mkdir()
    recording = work / f"rec-{name}"
    shutil.copyfile(synthetic_db, recording)
    def only_named_files(*names: str) -> None:
        """The named files exist, and every file here is one of them or named after one (a
        file the command keeps beside its database): none named after a URI's path."""
        here = sorted(p.name for p in work.iterdir())
        assert set(names) <= set(here), here
        assert all(h.startswith(names) for h in here), here

    code, _, err = run("tune", "--replay", recording.name, "--db", name, *WORKLOAD, *TUNE,
                       cwd=work)
    assert code == 0, err
    only_named_files(recording.name, name)
    assert studies_and_running(work / name) == (1, 0)
    code, out, err = run("best", "--db", name, *WORKLOAD, "--n", "2^10", cwd=work)
    assert code == 0 and out.startswith("tunable.float32.sum."), err
    # db merge, both ways, with such names
    code, _, err = run("db", "merge", name, "--db", f"merged-{name}", cwd=work)
    assert code == 0, err
    assert studies_and_running(work / f"merged-{name}") == (1, 0)
    only_named_files(recording.name, name, f"merged-{name}")
    # and into a --db of that very name (in another folder)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, _, err = run("db", "merge", work / name, "--db", name, cwd=elsewhere)
    assert code == 0, err
    assert studies_and_running(elsewhere / name) == (1, 0)
    assert [p.name for p in elsewhere.iterdir() if not p.name.startswith(name)] == []


# --- foreign SQLite files ----------------------------------------------------------------

FOREIGN = {
    "only studies": "CREATE TABLE studies (id INTEGER PRIMARY KEY, title TEXT);"
                    "INSERT INTO studies (title) VALUES ('sleep')",
    "only trials": "CREATE TABLE trials (id INTEGER PRIMARY KEY, drug TEXT)",
    "only a view": "CREATE VIEW answer AS SELECT 42 AS value",
    "another application": "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)",
}


@pytest.mark.parametrize("kind", sorted(FOREIGN))
@pytest.mark.parametrize("command", ["tune --db", "db merge --db"])
def test_a_foreign_sqlite_file_is_refused_and_left_as_it_was(kind, command, tmp_path,
                                                            synthetic_db):
    x = tmp_path / "x.db"
    con = sqlite3.connect(x)
    con.executescript(FOREIGN[kind])
    con.close()
    files = snapshot(tmp_path)
    if command == "tune --db":
        code, _, err = run("tune", "--replay", synthetic_db, "--db", x, *WORKLOAD, *TUNE)
    else:
        code, _, err = run("db", "merge", synthetic_db, "--db", x)
    one_line_error(code, err, "another application", "untouched")
    assert snapshot(tmp_path) == files


# --- a file merged into itself -----------------------------------------------------------


@pytest.mark.parametrize("spelling", ["same", "dot", "symlink", "hard link"])
def test_a_file_is_not_merged_into_itself(spelling, tmp_path):
    """An older file, so that a migration (or its backup) would show: nothing is touched."""
    a = tmp_path / "a.db"
    shutil.copyfile(V1, a)
    other = {"same": a, "dot": tmp_path / "." / "a.db", "symlink": tmp_path / "link.db",
             "hard link": tmp_path / "hard.db"}[spelling]
    if spelling == "symlink":
        other.symlink_to(a)
    elif spelling == "hard link":
        os.link(a, other)
    files = snapshot(tmp_path)
    code, _, err = run("db", "merge", other, "--db", a)
    one_line_error(code, err, "same file")
    assert snapshot(tmp_path) == files


# --- SIGKILL: migration, merge, a tune --------------------------------------------------


def test_a_killed_merges_copy_is_removed_by_the_next_merge(results, tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # its pid no longer runs (reaped)
    temp = tmp_path / "tmp"
    temp.mkdir()
    stale = temp / f"reducetune-merge-{dead.pid}-abc123"
    stale.mkdir()
    (stale / "other.db").write_bytes(b"x" * 4096)
    alive = temp / f"reducetune-merge-{os.getpid()}-def456"  # this process runs
    alive.mkdir()
    code, _, err = run("db", "merge", results, "--db", tmp_path / "into.db",
                       env=dict(os.environ, TMPDIR=str(temp)))
    assert code == 0, err
    assert sorted(temp.iterdir()) == [alive]


def test_a_merge_killed_while_copying_the_studies_leaves_no_copy_for_ever(results, tmp_path):
    """The merge is held where it reads the other file's studies (its copy exists), killed,
    and the next merge removes what it left."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    ready = tmp_path / "copying"
    env = dict(os.environ, TMPDIR=str(temp))
    proc = held_at("from reducetune.store import study_merge", "study_merge._read_only_storage",
                   ready, "db", "merge", results, "--db", tmp_path / "into.db", env=env)
    assert [p.name.startswith("reducetune-merge-") for p in temp.iterdir()] == [True]
    proc.kill()
    proc.wait()
    code, _, err = run("db", "merge", results, "--db", tmp_path / "into.db", env=env)
    assert code == 0, err
    assert list(temp.iterdir()) == []


def test_a_resumed_tune_fails_the_trials_its_dead_processes_left_running(results,
                                                                          synthetic_db):
    """A tune killed mid-trial leaves it RUNNING: claimed (its point being measured), or not
    yet claimed (killed between Optuna's ask and the claim). The resumed tune fails them
    (and measures a claimed point again), so the study ends with no trial running."""
    import socket

    import optuna

    from reducetune.store.study_share import CLAIM
    from reducetune.store.study_storage import open_storage

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    storage = open_storage(results)
    (summary,) = optuna.get_all_study_summaries(storage)
    study = optuna.load_study(study_name=summary.study_name, storage=storage)
    done = [t for t in study.get_trials() if "variant_label" in t.user_attrs]
    claimed = study.ask()
    claimed.set_user_attr(CLAIM, {"variant_label": done[0].user_attrs["variant_label"],
                                  "launch_label": done[0].user_attrs["launch_label"],
                                  "host": socket.gethostname(), "pid": dead.pid})
    study.ask()  # not claimed
    storage.engine.dispose()
    assert studies_and_running(results) == (1, 2)
    code, _, err = run("tune", "--replay", synthetic_db, "--db", results, *WORKLOAD, *TUNE)
    assert code == 0, err
    assert studies_and_running(results) == (1, 0)


def test_a_tune_killed_mid_evaluation_and_resumed_ends_with_no_trial_running(tmp_path,
                                                                            synthetic_db):
    ready = tmp_path / "evaluating"
    db = tmp_path / "results.db"
    argv = ["tune", "--replay", str(synthetic_db), "--db", str(db), *WORKLOAD, *TUNE]
    proc = held_at("from reducetune.evaluate.replay import ReplayEvaluator",
                   "ReplayEvaluator.evaluate", ready, *argv)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert studies_and_running(db) == (1, 1)
    code, _, err = run(*argv)
    assert code == 0, err
    assert studies_and_running(db) == (1, 0)


# --- storage arguments and refused tunes: nothing is touched -----------------------------


def test_storage_arguments_naming_files_they_must_not_write_are_refused(tmp_path, synthetic_db):
    """--db is an older file: a refusal after opening it would have migrated it (and kept a
    .schema1.bak), so an untouched folder also says the refusal came first."""
    recording = tmp_path / "rec.db"
    shutil.copyfile(synthetic_db, recording)
    db = tmp_path / "results.db"
    shutil.copyfile(V1, db)
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    foreign = tmp_path / "foreign.db"
    con = sqlite3.connect(foreign)
    con.executescript(FOREIGN["another application"])
    con.close()
    files = snapshot(tmp_path)
    for storage, words in ((f"journal:{notes}", ["not an Optuna journal"]),
                           (f"journal:{db}", ["not an Optuna journal"]),
                           (f"journal:{recording}", ["not an Optuna journal"]),
                           (f"sqlite:///{recording}", ["--replay"]),
                           (f"sqlite:///{foreign}", ["another application"]),
                           ("journal:", ["needs a file path"]),
                           ("bogus", ["--storage"])):
        code, _, err = run("tune", "--replay", recording, "--db", db, "--storage", storage,
                           *WORKLOAD, *TUNE)
        one_line_error(code, err, *words)
        assert snapshot(tmp_path) == files, storage


def test_without_a_driver_a_tune_says_no_gpu_and_leaves_an_older_file_as_it_was(tmp_path):
    """A one-GPU tune opens its files while its GPU worker starts (issue 25); without NVIDIA's
    driver it asks the GPU first: the schema-1 file is neither migrated nor touched."""
    from reducetune._no_gpu import has_driver

    if has_driver():
        pytest.skip("checks a machine without NVIDIA's driver; this one has libcuda.so.1")
    db = tmp_path / "results.db"
    shutil.copyfile(V1, db)
    files = snapshot(tmp_path)
    code, _, err = run("tune", "--db", db, *WORKLOAD, *TUNE)
    one_line_error(code, err, "no NVIDIA driver / GPU")
    assert snapshot(tmp_path) == files


@pytest.mark.parametrize("why", ["restrict key", "base", "device", "missing replay", "family"])
def test_a_refused_tune_touches_no_file(why, tmp_path, synthetic_db):
    recording = tmp_path / "rec.db"
    shutil.copyfile(synthetic_db, recording)
    db = tmp_path / "results.db"
    shutil.copyfile(V1, db)
    files = snapshot(tmp_path)
    argv: list[object] = ["tune", "--replay", recording, "--db", db, *WORKLOAD, *TUNE]
    if why == "restrict key":
        argv += ["--restrict", "no_such_parameter=1"]
    elif why == "base":
        argv += ["--base", "no_such_preset"]
    elif why == "device":
        argv += ["--device", "5"]
    elif why == "missing replay":
        argv[2] = tmp_path / "missing.db"
    else:
        argv += ["--family", "no_such_family"]
    code, _, err = run(*argv)
    one_line_error(code, err)
    assert snapshot(tmp_path) == files
