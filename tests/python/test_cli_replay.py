"""The command line end to end in replay mode, against a SYNTHETIC sweep (see conftest.py):
tune, best, export; budgets of every sampler; resume; invalid points; bad input."""

from __future__ import annotations

import json
import sqlite3

import pytest

import reducetune
from reducetune.evaluate.replay import ReplayEvaluator
from reducetune.tuning.samplers import STRATEGIES

from conftest import RESTRICT, RESTRICT_ARGS


def tune_args(db, replay, *extra):
    return ["tune", "--replay", replay, "--db", db, "--dtype", "float32", "--op", "sum",
            "--quiet", *RESTRICT_ARGS, *extra]


@pytest.fixture
def counted(monkeypatch):
    """Every point the replay evaluator is asked for, with a check that it is valid."""
    asked = []
    original = ReplayEvaluator.evaluate
    space = reducetune.Space("tunable", "float32", "sum", reducetune.limits_for_arch("sm_90"))

    def evaluate(self, point, problem, data=None):
        assert space.check(point) == [], f"invalid point evaluated: {point}"
        asked.append((point.variant_label, point.launch_label, problem.elements))
        return original(self, point, problem, data)

    monkeypatch.setattr(ReplayEvaluator, "evaluate", evaluate)
    return asked


def test_tune_best_and_export_work_end_to_end(cli, tmp_path, synthetic_db):
    db = tmp_path / "results.db"
    code, out, err = cli(*tune_args(db, synthetic_db, "--sizes", "2^10", "2^20",
                                    "--max-evals", "25", "--seed", "1"))
    assert code == 0, err
    assert "GB/s" in out and "CUB" in out and "tunable.float32.sum." in out

    code, out, err = cli("best", "--db", db, "--dtype", "float32", "--op", "sum",
                         "--n", "2^20", "--json")
    assert code == 0, err
    best = json.loads(out)  # the export's rule
    assert best["variant"].startswith("tunable.float32.sum.")

    code, out, _ = cli("export", "header", "--db", db)
    assert code == 0 and "constexpr" in out and best["variant"] in out
    code, out, _ = cli("export", "json", "--db", db)
    assert code == 0 and best["variant"] in out
    code, out, _ = cli("show", "--db", db, "--dtype", "float32", "--op", "sum", "--limit", "3")
    assert code == 0 and "tunable.float32.sum" in out


def test_the_base_variant_is_measured_first(counted, cli, tmp_path, synthetic_db):
    code, _, err = cli(*tune_args(tmp_path / "r.db", synthetic_db, "--sizes", "2^20",
                                  "--max-evals", "3", "--base", "good"))
    assert code == 0, err
    good = reducetune.Space("tunable", "float32", "sum",
                            reducetune.limits_for_arch("sm_90")).preset("good")
    if all(str(good.params[k]) in v for k, v in RESTRICT.items()):
        assert counted[0][:2] == (good.variant_label, good.launch_label)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_sampler_respects_the_evaluation_budget(strategy, counted, cli, tmp_path,
                                                      synthetic_db):
    code, out, err = cli(*tune_args(tmp_path / "r.db", synthetic_db, "--sizes", "2^10",
                                    "--strategy", strategy, "--max-evals", "12", "--seed", "3",
                                    "--json"))
    if code == 2 and "needs the Python package" in err:
        pytest.skip(err.strip())
    assert code == 0, err
    size = json.loads(out)["sizes"][0]
    assert size["points"] == 12 and size["stopped"] == "max-evals"
    assert len(counted) == len(set(counted)) == 12  # each point evaluated once


def test_grid_is_exhaustive_over_the_valid_points_only(counted, cli, tmp_path, synthetic_db):
    code, out, err = cli(*tune_args(tmp_path / "r.db", synthetic_db, "--sizes", "2^10",
                                    "--strategy", "grid", "--json"))
    assert code == 0, err
    space = reducetune.Space("tunable", "float32", "sum", reducetune.limits_for_arch("sm_90"),
                             RESTRICT)
    size = json.loads(out)["sizes"][0]
    assert size["stopped"] == "exhausted" and size["invalid"] == 0
    # every valid point the default selection admits (deterministic, unflagged), once each
    selected = [p for p in space.points() if space.selected(p)]
    assert len(selected) < len(space.points())  # the restriction holds fin_atomic points too
    assert sorted(counted) == sorted((p.variant_label, p.launch_label, 1024) for p in selected)


def test_values_no_valid_point_takes_are_never_proposed(counted, cli, tmp_path, synthetic_db):
    # The restriction holds warp=redux (valid only for int32) and finish=atomic
    # (nondeterministic for a float sum): neither is proposed, so no trial is wasted on them.
    code, out, err = cli(*tune_args(tmp_path / "r.db", synthetic_db, "--sizes", "2^10",
                                    "--strategy", "random", "--max-evals", "40", "--seed", "5",
                                    "--json"))
    assert code == 0, err
    size = json.loads(out)["sizes"][0]
    assert size["invalid"] == size["nondeterministic"] == size["rejected"] == 0
    assert size["proposed"] >= 40 and size["rejected_rate"] == 0.0
    assert all(".warp_redux." not in v and ".fin_atomic" not in v for v, _, _ in counted)


def test_an_interrupted_run_resumed_re_measures_nothing(monkeypatch, counted, cli, tmp_path,
                                                        synthetic_db):
    db = tmp_path / "r.db"
    args = tune_args(db, synthetic_db, "--sizes", "2^20", "--strategy", "tpe", "--seed", "7",
                     "--max-evals", "20", "--json")
    wrapped = ReplayEvaluator.evaluate

    def interrupt_at_ninth(self, *a):
        if len(counted) == 8:
            raise KeyboardInterrupt
        return wrapped(self, *a)

    monkeypatch.setattr(ReplayEvaluator, "evaluate", interrupt_at_ninth)
    code, _, err = cli(*args)
    assert code == 130 and "resume" in err
    first = list(counted)
    assert len(first) == 8

    monkeypatch.setattr(ReplayEvaluator, "evaluate", wrapped)
    code, out, err = cli(*args)
    assert code == 0, err
    resumed = counted[8:]
    assert not set(resumed) & set(first), "a point measured before the interruption again"
    size = json.loads(out)["sizes"][0]
    assert size["points"] == 20 and len(resumed) == 20 - 8
    # the resumed run's points belong to the same study as the first run's
    with sqlite3.connect(db) as con:
        ids = con.execute("SELECT study_id, COUNT(*) FROM rt_measurements GROUP BY study_id"
                          ).fetchall()
        studies = con.execute("SELECT COUNT(*) FROM rt_studies").fetchone()[0]
    assert len(ids) == 1 and ids[0][0] is not None and ids[0][1] == 20, ids
    assert studies == 1

    code, out, _ = cli(*args)  # a finished study measures nothing more
    assert code == 0 and len(counted) == 20


def test_points_already_in_the_database_are_served_not_measured(counted, cli, tmp_path,
                                                                synthetic_db):
    db = tmp_path / "r.db"
    code, _, err = cli(*tune_args(db, synthetic_db, "--sizes", "2^10", "--strategy", "random",
                                  "--seed", "1", "--max-evals", "10"))
    assert code == 0, err
    first = list(counted)
    assert len(first) == 10
    # Another study (grid) over the same points: the ten are served from the database.
    code, out, err = cli(*tune_args(db, synthetic_db, "--sizes", "2^10", "--strategy", "grid",
                                    "--json"))
    assert code == 0, err
    size = json.loads(out)["sizes"][0]
    assert size["served"] == 10 and size["evaluated"] == size["points"] - 10
    assert not set(counted[10:]) & set(first)


@pytest.mark.parametrize("args, message", [
    (["--strategy", "annealing"], "unknown strategy 'annealing'"),
    (["--dtype", "float8"], "unknown element type 'float8'"),
    (["--op", "mean"], "unknown operator 'mean'"),
    (["--sizes", "2^x"], "is not an integer, 2^k, or a range"),
    (["--sizes", "2^30..2^10"], "is empty"),
    (["--restrict", "block_size=300"], "not a declared value"),
    (["--restrict", "nosuch=1"], "has no parameter 'nosuch'"),
])
def test_bad_input_gets_a_clear_message_and_exit_status_2(args, message, cli, tmp_path,
                                                          synthetic_db):
    db = tmp_path / "r.db"
    code, _, err = cli("tune", "--replay", synthetic_db, "--db", db, "--quiet", *args)
    assert code == 2 and message in err and "Traceback" not in err


def test_argparse_refuses_a_bad_budget(cli, tmp_path):
    with pytest.raises(SystemExit) as e:
        cli("tune", "--max-evals", "0", "--db", tmp_path / "r.db")
    assert e.value.code == 2


def test_a_corrupt_database_stops_the_run_before_anything_is_measured(counted, cli, tmp_path,
                                                                      synthetic_db):
    bad = tmp_path / "corrupt.db"
    content = b"this is not a database" * 100
    bad.write_bytes(content)
    code, _, err = cli(*tune_args(bad, synthetic_db, "--sizes", "2^10", "--max-evals", "5"))
    assert code == 1 and "reducetune: error:" in err
    assert bad.read_bytes() == content and counted == []


def test_a_missing_replay_database_is_an_error(cli, tmp_path):
    code, _, err = cli("tune", "--replay", tmp_path / "none.db", "--db", tmp_path / "r.db",
                       "--quiet")
    assert code == 1 and "does not exist" in err


def test_without_a_gpu_tune_asks_for_replay(cli, tmp_path):
    try:
        reducetune.query_device(0)
        pytest.skip("a GPU is present: the no-GPU message cannot be shown here")
    except reducetune.DeviceError:
        pass
    code, _, err = cli("tune", "--db", tmp_path / "r.db", "--quiet", "--max-evals", "1")
    assert code == 1 and "--replay" in err


def test_best_on_a_missing_database_says_so(cli, tmp_path):
    code, _, err = cli("best", "--db", tmp_path / "none.db", "--n", "2^20")
    assert code == 1 and "no database" in err


def test_db_merge_and_presets_and_devices(cli, tmp_path, synthetic_db):
    db = tmp_path / "m.db"
    code, out, err = cli("db", "merge", synthetic_db, "--db", db)
    assert code == 0 and "inserted" in out, err
    code, out, _ = cli("devices", "--db", db)
    assert code == 0 and "SYNTHETIC" in out
    code, out, _ = cli("presets", "--family", "tunable")
    assert code == 0 and "good" in out


@pytest.mark.parametrize("strategy", ["tpe", "random"])
def test_the_time_limit_is_split_over_the_sizes_and_respected(strategy, cli, tmp_path,
                                                              synthetic_db):
    import time

    start = time.monotonic()
    # Half a second for two sizes of the 96-point restricted space: the tuner replays about
    # 50-150 points a second here since the studies live in a journal (issue 25), so a longer
    # limit would let it exhaust the space before the limit could stop it.
    code, out, err = cli(*tune_args(tmp_path / "r.db", synthetic_db, "--sizes", "2^10", "2^20",
                                    "--strategy", strategy, "--time-limit", "0.5", "--json"))
    elapsed = time.monotonic() - start
    assert code == 0, err
    sizes = json.loads(out)["sizes"]
    assert [s["stopped"] for s in sizes] == ["time-limit", "time-limit"]
    assert all(s["evaluated"] >= 1 for s in sizes)  # every size is answered first
    assert elapsed < 0.5 + 10  # one trial past the deadline at most, plus start-up


def test_the_target_stops_a_size_within_p_percent_of_the_ceiling(cli, tmp_path, synthetic_db):
    code, out, err = cli(*tune_args(tmp_path / "r.db", synthetic_db, "--sizes", "2^20",
                                    "--target", "65", "--seed", "2", "--json"))
    assert code == 0, err
    size = json.loads(out)["sizes"][0]
    assert size["stopped"] == "target" and size["best"]["pct_of_ceiling"] >= 35


def test_a_compressed_recording_replays_like_the_plain_file(cli, tmp_path, synthetic_db):
    import lzma

    packed = tmp_path / "recording.db.xz"
    packed.write_bytes(lzma.compress(synthetic_db.read_bytes()))
    outs = []
    for name, replay in (("plain.db", synthetic_db), ("packed.db", packed)):
        code, out, err = cli(*tune_args(tmp_path / name, replay, "--sizes", "2^20",
                                        "--max-evals", "8", "--seed", "4", "--json"))
        assert code == 0, err
        outs.append(json.loads(out)["sizes"][0])
    assert outs[0] == outs[1]
    ev = ReplayEvaluator(packed)
    folder = ev._tmp
    assert folder and ev.table("float32", "sum", 1 << 20)
    ev.close()
    assert not __import__("os").path.exists(folder)  # the decompressed copy is removed
