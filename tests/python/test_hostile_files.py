"""Issue 11, the hostile-file matrix: every command that takes a database or a file, against
every kind of file it should not trust, and against paths the shell and URLs find awkward.

For each (command slot x file kind) the command either succeeds or ends with a short error
(exit status != 0, a ``reducetune: error: ...`` line, no traceback), and every file beside the
target keeps its bytes (sha256) and mode; the target itself changes only where writing it is
the command's job and the file is one it may write (a foreign, corrupt or read-only file is
refused and left as it was). test_file_safety.py covers export's overwrite rules, inode
checks and .xz temporary folders; this file does not repeat them.

Read-only means the mode bits (0444 file, 0555 folder). Root ignores them at the system-call
level, so the refusals asserted here are reducetune's own: they hold whoever runs the tests.
Databases are SYNTHETIC (conftest.py) except the committed recording, used for .xz kinds."""

from __future__ import annotations

import gc
import hashlib
import lzma
import os
import random
import shutil
import sqlite3
import stat
import traceback
from pathlib import Path
from typing import Callable

import pytest

from conftest import RECORDED_DIR, RESTRICT_ARGS

WORKLOAD = ["--dtype", "float32", "--op", "sum"]
TUNE = ["--quiet", "--strategy", "grid", "--sizes", "2^10", "--max-evals", "2", *RESTRICT_ARGS]
EXPERIMENT = ["--n", "1024", "--strategies", "random", "--seeds", "1", "--max-evals", "2",
              *RESTRICT_ARGS]
XZ = sorted(RECORDED_DIR.glob("*.db.xz"))

# What a slot does with its file X: reads a database, writes a database, writes a file
# (export -o), or writes into a folder (experiment --out).
READ, WRITE_DB, WRITE_FILE, WRITE_FOLDER = "read", "write_db", "write_file", "write_folder"


class Ctx:
    """The folders of one case: ``target`` holds X (snapshotted), ``inputs`` the valid files
    other arguments name (snapshotted), ``scratch`` what a command may create on its own."""

    def __init__(self, tmp: Path, good_db: Path, export_text: dict[str, bytes]) -> None:
        self.target, self.inputs, self.scratch = tmp / "target", tmp / "inputs", tmp / "scratch"
        for d in (self.target, self.inputs, self.scratch):
            d.mkdir()
        self.good_db = self.inputs / "good.db"
        shutil.copyfile(good_db, self.good_db)
        self.export_text = export_text

    @property
    def fresh(self) -> Path:
        return self.scratch / "fresh.db"


# slot -> (role, the argv that names X)
SLOTS: dict[str, tuple[str, Callable[[Ctx, Path], list[object]]]] = {
    "tune --db": (WRITE_DB, lambda c, x: ["tune", "--replay", c.good_db, "--db", x, *WORKLOAD,
                                          *TUNE]),
    "tune --replay": (READ, lambda c, x: ["tune", "--replay", x, "--db", c.fresh, *WORKLOAD,
                                          *TUNE]),
    "best": (READ, lambda c, x: ["best", "--db", x, *WORKLOAD, "--n", "2^10"]),
    "best --json": (READ, lambda c, x: ["best", "--db", x, *WORKLOAD, "--n", "2^20", "--json"]),
    "show": (READ, lambda c, x: ["show", "--db", x, *WORKLOAD, "--limit", "2"]),
    "history --json": (READ, lambda c, x: ["history", "--db", x, *WORKLOAD, "--json"]),
    "devices": (READ, lambda c, x: ["devices", "--db", x]),
    "export header": (READ, lambda c, x: ["export", "header", "--db", x]),
    "export json": (READ, lambda c, x: ["export", "json", "--db", x]),
    "db check": (READ, lambda c, x: ["db", "check", "--db", x]),
    "db merge X": (READ, lambda c, x: ["db", "merge", x, "--db", c.fresh]),
    "db merge --db X": (WRITE_DB, lambda c, x: ["db", "merge", c.good_db, "--db", x]),
    "export header -o": (WRITE_FILE, lambda c, x: ["export", "header", "-o", x, "--db",
                                                    c.good_db]),
    "export json -o": (WRITE_FILE, lambda c, x: ["export", "json", "-o", x, "--db", c.good_db]),
    "experiment --replay": (READ, lambda c, x: ["experiment", "search-efficiency", "--replay",
                                                x, "--out", c.scratch / "se", *EXPERIMENT]),
    "experiment --out": (WRITE_FOLDER, lambda c, x: ["experiment", "search-efficiency",
                                                     "--replay", c.good_db, "--out", x,
                                                     *EXPERIMENT]),
}


def random_bytes(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


def sqlite_file(path: Path, *sql: str) -> None:
    con = sqlite3.connect(path)
    for s in sql:
        con.execute(s)
    con.commit()
    con.close()


def current_version(db: Path) -> int:
    from reducetune import _core

    return int(_core.check_file(str(db))["current_version"])


def good_content(c: Ctx, role: str, slot: str) -> bytes | None:
    """What a legitimate X holds for a slot: the database, a previous export of the same
    format (export -o), or nothing (experiment --out: a folder)."""
    if role in (READ, WRITE_DB):
        return c.good_db.read_bytes()
    if role == WRITE_FILE:
        return c.export_text["header" if "header" in slot else "json"]
    return None


def put(path: Path, content: bytes | None, folder_slot: bool) -> None:
    if content is not None:
        path.write_bytes(content)
    elif folder_slot:
        path.mkdir()


def corrupt(c: Ctx, x: Path) -> None:
    """SQLite's header and garbage after it: page 1 (the schema) cannot be read."""
    x.write_bytes(c.good_db.read_bytes()[:100] + random_bytes(16 * 4096 - 100, 3))


def newer(c: Ctx, x: Path) -> None:
    shutil.copyfile(c.good_db, x)
    sqlite_file(x, f"PRAGMA user_version = {current_version(c.good_db) + 1}")


def directory(c: Ctx, x: Path) -> None:
    x.mkdir()
    (x / "inside.txt").write_text("a file in the folder\n")


def foreign_xz(c: Ctx, x: Path) -> None:
    other = c.scratch / "foreign.db"
    sqlite_file(other, "CREATE TABLE contacts (name TEXT)", "INSERT INTO contacts VALUES ('x')")
    x.write_bytes(lzma.compress(other.read_bytes()))
    other.unlink()


# Hostile contents: X exists and is not a file a command may trust (the name is plain).
CONTENTS: dict[str, Callable[[Ctx, Path], None]] = {
    "truncated": lambda c, x: x.write_bytes(c.good_db.read_bytes()[: c.good_db.stat().st_size // 2]),
    "random": lambda c, x: x.write_bytes(random_bytes(64 * 1024, 1)),
    "corrupt": corrupt,
    "foreign": lambda c, x: sqlite_file(x, "CREATE TABLE contacts (name TEXT, phone TEXT)",
                                        "INSERT INTO contacts VALUES ('Ada', '123')"),
    "foreign_id": lambda c, x: sqlite_file(x, "PRAGMA application_id = 1179537988",
                                           "CREATE TABLE t (x)"),
    "newer": newer,
    "empty": lambda c, x: x.write_bytes(b""),
    "directory": directory,
}
# Compressed recordings, for the slots that take --replay (a .xz is decompressed first).
XZ_CONTENTS: dict[str, Callable[[Ctx, Path], None]] = {
    "xz_truncated": lambda c, x: x.write_bytes(XZ[0].read_bytes()[:50_000]),
    "xz_random": lambda c, x: x.write_bytes(random_bytes(4096, 2)),
    "xz_foreign": foreign_xz,
}
# Awkward names holding what the slot legitimately takes (nothing yet, for outputs).
NAMES = {"space": "my results.db", "quotes": "it's \"q\".db", "question": "a?b=1.db",
         "percent": "100%25 %s.db", "hash": "a#b.db", "newline": "line\nbreak.db"}
KINDS = [*CONTENTS, "readonly", "readonly_folder", *(f"name_{k}" for k in NAMES), *XZ_CONTENTS]


def expected(role: str, kind: str) -> str:
    """'ok' or 'error' for one case."""
    if kind.startswith("name_"):
        return "ok"
    if kind in ("readonly", "readonly_folder"):
        return "ok" if role == READ else "error"
    if role == WRITE_DB and kind == "empty":
        return "ok"  # an empty file becomes a new database (db/README.md, "Opening")
    if role == WRITE_FOLDER and kind == "directory":
        return "ok"
    return "error"


def make(c: Ctx, slot: str, kind: str) -> tuple[Path, list[Path]]:
    """X for one case, and the read-only paths to make writable again afterwards."""
    role = SLOTS[slot][0]
    folder_slot = role == WRITE_FOLDER
    good = good_content(c, role, slot)
    if kind.startswith("name_"):
        # a report folder not yet made may not be named like a database (issue 24, R2 2)
        x = c.target / (NAMES[kind[5:]].removesuffix(".db") if folder_slot else NAMES[kind[5:]])
        put(x, None if role in (WRITE_FILE, WRITE_FOLDER) else good, folder_slot)
        return x, []
    if kind == "readonly":
        x = c.target / "readonly.db"
        put(x, good, folder_slot)
        x.chmod(0o555 if x.is_dir() else 0o444)
        return x, [x]
    if kind == "readonly_folder":
        folder = c.target / "ro"
        folder.mkdir()
        x = folder / "results.db"
        put(x, good, False)
        folder.chmod(0o555)
        return x, [folder]
    x = c.target / ("recording.db.xz" if kind in XZ_CONTENTS else "results.db")
    (XZ_CONTENTS.get(kind) or CONTENTS[kind])(c, x)
    return x, []


def cases() -> list[object]:
    out = []
    for slot, (role, _) in SLOTS.items():
        for kind in KINDS:
            if kind in XZ_CONTENTS and "--replay" not in slot:
                continue
            marks = [pytest.mark.skipif(not XZ, reason="no .db.xz recording")] \
                if kind in XZ_CONTENTS else []
            out.append(pytest.param(slot, kind, id=f"{slot}|{kind}".replace(" ", "_"),
                                    marks=marks))
    return out


def snapshot(c: Ctx) -> dict[str, tuple[str, int]]:
    """Every path of the case but its scratch folder: (sha256 or 'dir', mode)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(c.target.parent):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if p == c.scratch or c.scratch in p.parents:
                continue
            st = p.lstat()
            what = "dir" if stat.S_ISDIR(st.st_mode) else \
                hashlib.sha256(p.read_bytes()).hexdigest()
            out[str(p)] = (what, stat.S_IMODE(st.st_mode))
    return out


def changes(before: dict[str, tuple[str, int]], after: dict[str, tuple[str, int]]) -> set[str]:
    """The paths created, removed, rewritten or re-moded between two snapshots."""
    return {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}


@pytest.fixture(scope="module")
def export_text(synthetic_db) -> dict[str, bytes]:
    from reducetune.store.results import export_header, export_json

    return {"header": export_header(synthetic_db).encode(),
            "json": export_json(synthetic_db).encode()}


def run_cli(capsys, argv: list[object]) -> tuple[int, str, str]:
    from reducetune.cli import main

    try:
        code = main([str(a) for a in argv])
        if argv[0] == "tune":
            gc.collect()  # closes the studies' storage, as the end of the process would
    except SystemExit as e:  # argparse
        code = e.code if isinstance(e.code, int) else 2
    except BaseException:  # noqa: BLE001 - a traceback is the failure this file looks for
        out, err = capsys.readouterr()
        pytest.fail(f"{argv[:3]} raised instead of a one-line error:\n{err}\n"
                    f"{traceback.format_exc()}")
    out, err = capsys.readouterr()
    return code, out, err


def normalised(text: str, c: Ctx, x: Path) -> str:
    """A command's output with the case's own paths named alike, so that two cases' outputs
    compare by what they say of the file (white space collapsed: a table centres and wraps
    its title by its length)."""
    for path, name in ((x, "<X>"), (c.scratch, "<scratch>"), (c.target.parent, "<case>")):
        text = text.replace(str(path), name)
    return " ".join(text.split())


def answers(capsys, c: Ctx, x: Path, argv: list[object]) -> tuple[int, str, dict[str, str]]:
    """(exit status, output, the report's text files) of a command, normalised."""
    code, out, _ = run_cli(capsys, argv)
    files = {str(f.relative_to(c.scratch)): normalised(f.read_text(), c, x)
             for f in sorted(c.scratch.rglob("*.md"))}
    return code, normalised(out, c, x), files


@pytest.mark.parametrize("slot,kind", cases())
def test_hostile_file(slot, kind, tmp_path, synthetic_db, export_text, capsys, monkeypatch):
    """Refused: one line, nothing touched. Accepted: nothing but X touched, and the answer is
    the one a plain file gives (what a reader prints and reports, what a writer puts in X),
    so a file read wrongly (another file, half of it, nothing) fails, not only a crash."""
    monkeypatch.chdir(tmp_path)  # a path cut short at '?' or '#' would land here
    c = Ctx(tmp_path, synthetic_db, export_text)
    role, argv_of = SLOTS[slot]
    x, readonly = make(c, slot, kind)
    before = snapshot(c)
    try:
        code, out, err = run_cli(capsys, argv_of(c, x))
        after = snapshot(c)
        if code == 0 and role == READ:  # read again for its report, before X is writable
            reports = {str(f.relative_to(c.scratch)): normalised(f.read_text(), c, x)
                       for f in sorted(c.scratch.rglob("*.md"))}
    finally:
        for p in readonly:
            p.chmod(0o755)
    want = expected(role, kind)
    lines = [line for line in err.splitlines() if line.strip()]
    if want == "error":
        assert code != 0, f"succeeded on a {kind} file:\n{out[-500:]}\n{err}"
        assert lines and lines[-1].startswith("reducetune: "), err
        assert "Traceback" not in err and len(lines) <= 2, err
        assert not changes(before, after), f"refused, but changed {changes(before, after)}"
        assert not any(c.scratch.iterdir()), "refused, but created its outputs"
        return
    assert code == 0, err
    changed = changes(before, after)
    allowed: set[str] = set()
    if role != READ:  # its job: X (and, for a folder, what is in it)
        allowed = {p for p in changed if p == str(x) or p.startswith(str(x) + os.sep)}
    if role == WRITE_DB:  # in this process, a connection may outlive the command (see below)
        allowed |= changed & {f"{x}-wal", f"{x}-shm"}
    assert changed == allowed, f"{slot} on {kind} changed {sorted(changed - allowed)}"
    if role != READ:
        assert x.exists(), f"{slot} did not write {x!r}"
        if str(x) in before:
            assert after[str(x)][1] == before[str(x)][1], "the mode of X changed"
    plain = tmp_path / "plain"  # the same command on the good file under a plain name
    plain.mkdir()
    ref = Ctx(plain, synthetic_db, export_text)
    if role == READ:  # the same answers as from a plain, writable copy of the same file
        want_answers = answers(capsys, ref, ref.good_db, argv_of(ref, ref.good_db))
        assert (0, normalised(out, c, x), reports) == want_answers
    if role == WRITE_FILE:  # the export itself, as from the plain file
        assert x.read_bytes() == export_text["header" if "header" in slot else "json"]
    if role == WRITE_FOLDER:
        assert (x / "report.md").read_text().strip()
    if role == WRITE_DB:  # the results and (tune) Optuna's studies went into X itself
        from reducetune import _core

        assert _core.check_file(str(x))["integrity"] == "ok"
        best = ["best", "--db", x, *WORKLOAD, "--n", "2^10"]
        code, best_out, err = run_cli(capsys, best)
        assert code == 0 and best_out.startswith("tunable.float32.sum."), err
        if slot.startswith("tune"):
            con = sqlite3.connect(x)
            assert con.execute("SELECT count(*) FROM studies").fetchone()[0] == 1
            con.close()
        else:  # db merge: X answers as the file merged into it
            assert best_out == run_cli(capsys, ["best", "--db", ref.good_db, *WORKLOAD,
                                                "--n", "2^10"])[1]


def test_a_real_process_leaves_nothing_beside_an_awkward_name(tmp_path, synthetic_db):
    """In this test process a connection may outlive tune (hence the -wal/-shm allowance
    above); a real process, tune and then a reading command, leaves only the file."""
    import subprocess
    import sys

    x = tmp_path / NAMES["newline"]
    run = [sys.executable, "-m", "reducetune"]
    for argv in (["tune", "--replay", synthetic_db, "--db", x, *WORKLOAD, *TUNE],
                 ["show", "--db", x, *WORKLOAD, "--limit", "1"]):
        proc = subprocess.run([*run, *map(str, argv)], capture_output=True, text=True,
                              cwd=tmp_path, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == [x.name]


def test_a_reader_beside_a_writer_reads_through_its_wal(cli, tmp_path, synthetic_db):
    """While another connection holds the file with frames in its WAL, a reading command
    sees them and leaves the writer's -wal/-shm to the writer."""
    x = tmp_path / "results.db"
    shutil.copyfile(synthetic_db, x)
    writer = sqlite3.connect(x)
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("UPDATE rt_devices SET name = 'renamed while writing'")
    writer.commit()
    assert Path(f"{x}-wal").stat().st_size > 0
    code, out, err = cli("devices", "--db", x)
    assert code == 0 and "renamed while writing" in out, err
    assert Path(f"{x}-wal").exists() and Path(f"{x}-shm").exists()
    writer.close()
