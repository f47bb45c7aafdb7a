"""A replay that proposes points its recording lacks says so (issue 10, item 7): they are
counted as not in the recording, never as measured, and nothing is stored for them. Against
the real H200 recording (tests/data/recorded), replayed WITHOUT the --restrict it was recorded
under, so that most of the points a sampler proposes are not in it."""

from __future__ import annotations

import json
from collections import Counter

import optuna

from conftest import recording_meta
from replay_support import (H200_GRID, h200_grid_replay, needs_h200_grid, read_rows,
                            restrict_args)

pytestmark = needs_h200_grid("the honest-count replay test needs a real recording")

EVALS = 40


def replay_without_restriction(cli, db, *extra):
    return cli(*h200_grid_replay(db, restricted=False), "--strategy", "tpe",
               "--max-evals", str(EVALS), *extra)


def stored_points(db) -> list[tuple[str, str]]:
    return read_rows(db, "SELECT v.label, m.launch_label FROM rt_measurements m "
                     "JOIN rt_variants v ON v.id = m.variant_id")


def outcomes(db) -> Counter[str]:
    (summary,) = optuna.get_all_study_summaries(storage=f"sqlite:///{db}")
    study = optuna.load_study(study_name=summary.study_name, storage=f"sqlite:///{db}")
    return Counter(str(t.user_attrs.get("outcome")) for t in study.trials)


def test_points_the_recording_lacks_are_counted_apart_from_the_measured_ones(
        cli, tmp_path, asked):
    db = tmp_path / "r.db"
    code, out, err = replay_without_restriction(cli, db, "--json")
    assert code == 0, err
    size = json.loads(out)["sizes"][0]
    assert (size["points"], size["stopped"]) == (EVALS, "max-evals")
    # the base preset lies inside the recording's restriction; most of the rest does not
    assert size["evaluated"] >= 1 and size["not_recorded"] > EVALS // 2
    assert size["evaluated"] + size["not_recorded"] == size["points"]  # nothing to serve
    assert size["failed"] == 0 and size["served"] == 0

    stored = stored_points(db)
    assert len(stored) == size["evaluated"]  # "measured" is what the database holds
    assert len(asked) == size["evaluated"] + size["not_recorded"]  # each asked for once
    assert len(set(asked)) == len(asked)

    trials = outcomes(db)
    assert trials["measured"] == size["evaluated"]
    assert trials["not_recorded"] == size["not_recorded"]
    assert trials["invalid"] == size["invalid"] + size["flagged"]
    assert sum(trials.values()) == (size["evaluated"] + size["not_recorded"] + size["invalid"]
                                    + size["flagged"] + trials["repeat"])


def test_the_table_says_how_many_points_are_not_in_the_recording(cli, tmp_path):
    code, out, err = replay_without_restriction(cli, tmp_path / "t.db")
    assert code == 0, err
    flat = " ".join(out.split())
    stored = len(stored_points(tmp_path / "t.db"))
    missing = EVALS - stored
    assert f"{missing} not in the recording h200_float32_sum_grid.db" in flat
    assert "not recorded" in flat  # the table's column
    # a resumed run measures nothing again, and says nothing is missing from what it did
    code, out, err = replay_without_restriction(cli, tmp_path / "t.db", "--json")
    assert code == 0, err
    size = json.loads(out)["sizes"][0]
    assert (size["points"], size["evaluated"], size["not_recorded"]) == (EVALS, 0, 0)


def test_a_replay_within_the_restriction_has_nothing_missing(cli, tmp_path):
    assert H200_GRID is not None
    m = recording_meta(H200_GRID)
    assert m is not None
    code, out, err = replay_without_restriction(cli, tmp_path / "r.db",
                                                *restrict_args(m["restrict"]))
    assert code == 0, err
    assert "not in the recording" not in out and "not recorded" not in out
