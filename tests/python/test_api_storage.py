"""reducetune.tune() with a store keeps its Optuna studies in the store's own SQLite file, as
the command line does, so either resumes the other's study (SYNTHETIC sweep, see conftest.py);
the file's URL is built by SQLAlchemy, so an odd path names exactly that file."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

import optuna
import pytest

import reducetune
from reducetune.store.study_storage import storage_url
from reducetune.tuning.config import study_name

from conftest import RESTRICT, RESTRICT_ARGS, SYNTHETIC_DEVICE

pytestmark = pytest.mark.replay

N = 1 << 10


def api_tune(db: Path, replay: Path, evals: int = 3) -> tuple[reducetune.TuneConfig, list]:
    config = reducetune.TuneConfig(sizes=[N], max_evals=evals, seed=1, restrict=RESTRICT)
    ev = reducetune.ReplayEvaluator(replay)
    store = reducetune.open_store(db)
    try:
        return config, reducetune.tune(ev, config, store=store)
    finally:
        store.close()
        ev.close()


def study_names_in(db: Path) -> list[str]:
    """Read with sqlite3 alone, whatever URL Optuna was given."""
    with contextlib.closing(sqlite3.connect(db)) as c:
        return [r[0] for r in c.execute("SELECT study_name FROM studies")]


def test_the_api_keeps_its_study_in_the_store_file_and_the_cli_resumes_it(
        cli, tmp_path, synthetic_db, asked):
    db = tmp_path / "results.db"
    config, (result,) = api_tune(db, synthetic_db)
    assert (result.points, result.evaluated) == (3, 3)
    name = study_name(config, N, SYNTHETIC_DEVICE["uuid"])
    study = optuna.load_study(study_name=name, storage=f"sqlite:///{db}")
    assert sum(t.user_attrs.get("outcome") == "measured" for t in study.trials) == 3

    code, out, err = cli("tune", "--replay", synthetic_db, "--db", db, "--sizes", "2^10",
                         "--max-evals", "3", "--seed", "1", "--json", "--quiet", *RESTRICT_ARGS)
    assert code == 0, err
    size = json.loads(out)["sizes"][0]
    assert (size["points"], size["evaluated"], size["served"]) == (3, 0, 0)
    assert len(asked) == 3 and study_names_in(db) == [name]


def test_a_path_with_a_question_mark_and_percent_writes_exactly_that_file(tmp_path,
                                                                          synthetic_db):
    folder = tmp_path / "odd"
    folder.mkdir()
    db = folder / "results?mode=memory%20x.db"
    config, (result,) = api_tune(db, synthetic_db, evals=2)
    assert result.evaluated == 2
    written = {p.name.removesuffix("-wal").removesuffix("-shm").removesuffix("-journal")
               for p in folder.iterdir()}
    assert written == {db.name}, f"other files written: {sorted(written - {db.name})}"
    assert study_names_in(db) == [study_name(config, N, SYNTHETIC_DEVICE["uuid"])]
    # and the URL names that file for Optuna too
    assert optuna.get_all_study_summaries(storage=storage_url(db))[0].n_trials >= 2


@pytest.mark.parametrize("name", ["plain.db", "a?b.db", "100%.db", "x%20y.db", "{braces}.db",
                                  "hash#tag.db"])
def test_storage_urls_name_the_file_they_were_built_from(tmp_path, name):
    from sqlalchemy.engine import make_url

    url = storage_url(tmp_path / name)
    filled = url.format()  # what Optuna does to its URL before SQLAlchemy reads it
    assert make_url(filled).database == str((tmp_path / name).resolve())
