"""What the replay tests share: the H200 grid recording most of them replay (its marks and its
``tune --replay`` command line), ``--restrict`` arguments, and reading a results file a replay
wrote, read-only (a test never writes to one it checks)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from conftest import RECORDED, recording_meta

# The H200 grid recording, which most replay tests replay (None when it is absent).
H200_GRID = next((p for p in RECORDED if p.name == "h200_float32_sum_grid.db"), None)


def needs_h200_grid(what: str) -> list[pytest.MarkDecorator]:
    """A replay module's marks: ``replay``, and a skip saying what goes untested when the H200
    grid recording is absent."""
    return [pytest.mark.replay, pytest.mark.skipif(H200_GRID is None, reason=(
        f"tests/data/recorded/h200_float32_sum_grid.db.xz is absent: {what}"))]


def grid_copy(folder: Path) -> tuple[Path, str]:
    """A writable copy of the H200 grid recording in ``folder`` and its device's UUID (for the
    tests that write into a recording: calibrate, stored points)."""
    import shutil

    from reducetune import _core

    path = folder / "grid.db"
    shutil.copyfile(H200_GRID, path)
    return path, _core.Store(str(path), read_only=True).devices()[0]["uuid"]


def restrict_args(restrict: dict[str, list[str]]) -> list[str]:
    """The command line's ``--restrict KEY=V1,V2`` for each key of ``restrict``."""
    return [a for k, v in restrict.items() for a in ("--restrict", f"{k}={','.join(v)}")]


def h200_grid_replay(db: Path | str, *, restricted: bool = True,
                     all_sizes: bool = False) -> list[str]:
    """``tune --replay`` of the H200 grid recording into ``db`` (seed 1, quiet): its type and
    operator, its smallest size (or all of them), under its sidecar's ``--restrict`` (the corner
    it holds) or none (so that most proposals are not in it)."""
    assert H200_GRID is not None
    m = recording_meta(H200_GRID)
    assert m is not None and m["restrict"], "the recording was made under a --restrict"
    sizes = [str(n) for n in m["sizes"]] if all_sizes else [str(min(m["sizes"]))]
    return ["tune", "--replay", str(H200_GRID), "--db", str(db), "--dtype", m["dtype"], "--op",
            m["op"], "--sizes", *sizes, "--seed", "1", "--quiet",
            *(restrict_args(m["restrict"]) if restricted else [])]


def read_rows(db: Path | str, sql: str, params: tuple = ()) -> list[tuple]:
    """The rows of one query of a results file, opened read-only (never written by a test)."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        return con.execute(sql, params).fetchall()
