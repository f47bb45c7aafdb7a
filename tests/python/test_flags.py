"""Flagged values (family.json "flags", e.g. tunable warp=volatile_unsafe: racy by
construction) are skipped by tune, best and export unless --allow-flagged. Against a
SYNTHETIC sweep (see conftest.py) in which the flagged points are the fastest."""

from __future__ import annotations

import contextlib
import json
import sqlite3

import pytest

import reducetune
from reducetune.evaluate.replay import ReplayEvaluator
from reducetune.tuning.loop import variant_labels

from conftest import build_synthetic_db, synthetic_median
from header_rules import header_rules

# 2 block sizes x 3 warps x 2 block strategies x 2 elements per thread = 24 points a size,
# 8 of them warp=volatile_unsafe.
FLAG_RESTRICT = {
    "block_size": ["128", "256"], "unroll": ["4"], "vec": ["4"],
    "warp": ["shuffle", "volatile_sync", "volatile_unsafe"],
    "block_strategy": ["tree", "warp_partials"], "finish": ["two_pass"],
    "elements_per_thread": ["4", "16"], "grid_cap": ["0"],
}
FLAG_ARGS = [a for k, v in FLAG_RESTRICT.items() for a in ("--restrict", f"{k}={','.join(v)}")]
SIZES = [1 << 10, 1 << 20]
UNFLAGGED = 16


def racy_fastest(label: str, launch: str, n: int) -> float:
    """SYNTHETIC: the racy points are twice as fast as anything else (not a measurement)."""
    return synthetic_median(label, launch, n) * (0.5 if "warp_volatile_unsafe" in label else 1)


def racy(label: str) -> bool:
    return ".warp_volatile_unsafe." in label


@pytest.fixture(scope="module")
def flagged_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("flagged") / "racy-fastest.db"
    build_synthetic_db(path, SIZES, FLAG_RESTRICT, racy_fastest)
    return path


def fastest(db, n, allow_flagged: bool) -> tuple[str, str]:
    """The fastest ok point at n, from SQL and labels alone."""
    with contextlib.closing(sqlite3.connect(db)) as c:
        rows = c.execute(
            "SELECT v.label, m.launch_label FROM rt_measurements m JOIN rt_variants v "
            "ON v.id = m.variant_id JOIN rt_workloads w ON w.id = m.workload_id "
            "WHERE m.status = 'ok' AND w.n = ? ORDER BY m.median_s, m.id", (n,)).fetchall()
    return next((v, launch) for v, launch in rows if allow_flagged or not racy(v))


def tune(cli, db, replay, *extra):
    code, out, err = cli("tune", "--replay", replay, "--db", db, "--dtype", "float32", "--op",
                         "sum", "--json", "--quiet", *FLAG_ARGS, *extra)
    assert code == 0, err
    return json.loads(out)["sizes"]


def test_flags_are_decided_by_the_space_and_carried_by_the_point():
    space = reducetune.Space("tunable", "float32", "sum", reducetune.limits_for_arch("sm_90"))
    unsafe = space.preset("harris6_point").point
    assert [f[:2] for f in unsafe.flags] == [("warp", "volatile_unsafe")] and unsafe.flagged
    assert space.preset("good").point.flags == [] and not space.preset("good").point.flagged
    assert space.parse(*unsafe.labels).flags == unsafe.flags  # labels carry the same point
    seeds = reducetune.Space("seeds", "float32", "sum", reducetune.limits_for_arch("sm_90"))
    by_name = {p.name: p.point for p in seeds.presets()}
    assert by_name["harris6"].flagged and not by_name["harris3"].flagged


@pytest.mark.parametrize("strategy", ["tpe", "random"])
def test_tune_never_proposes_a_flagged_value_without_allow_flagged(
        strategy, cli, tmp_path, flagged_db, asked):
    import optuna

    db = tmp_path / "r.db"
    size = tune(cli, db, flagged_db, "--sizes", "2^20", "--strategy", strategy,
                "--max-evals", "10", "--seed", "2")[0]
    assert asked and not [a for a in asked if racy(a[0])]
    # the flagged value is not among the sampler's choices: no trial is spent on it
    assert size["points"] == 10 and size["flagged"] == 0 == size["rejected"]
    assert not racy(size["best"]["variant_label"])
    storage = f"sqlite:///{db}"
    (name,) = optuna.study.get_all_study_names(storage)
    trials = optuna.load_study(study_name=name, storage=storage).trials
    assert trials and all(t.params["warp"] != "volatile_unsafe" for t in trials)


def test_grid_without_allow_flagged_is_exhaustive_over_the_unflagged_points(
        cli, tmp_path, flagged_db, asked):
    sizes = tune(cli, tmp_path / "r.db", flagged_db, "--sizes", "2^10", "2^20",
                 "--strategy", "grid")
    for s in sizes:
        assert (s["points"], s["evaluated"], s["stopped"]) == (UNFLAGGED, UNFLAGGED, "exhausted")
        assert (s["best"]["variant_label"], s["best"]["launch_label"]) == \
            fastest(flagged_db, s["n"], allow_flagged=False)
    assert len(asked) == 2 * UNFLAGGED and not [a for a in asked if racy(a[0])]


def test_allow_flagged_tunes_them_and_a_resumed_study_without_it_leaves_them_out(
        cli, tmp_path, flagged_db, asked):
    db = tmp_path / "r.db"
    (allowed,) = tune(cli, db, flagged_db, "--sizes", "2^20", "--strategy", "grid",
                      "--allow-flagged")
    assert (allowed["points"], allowed["flagged"]) == (24, 0)
    assert racy(allowed["best"]["variant_label"])
    assert len([a for a in asked if racy(a[0])]) == 24 - UNFLAGGED
    (resumed,) = tune(cli, db, flagged_db, "--sizes", "2^20", "--strategy", "grid")
    assert (resumed["points"], resumed["evaluated"]) == (UNFLAGGED, 0)
    assert (resumed["best"]["variant_label"], resumed["best"]["launch_label"]) == \
        fastest(flagged_db, 1 << 20, allow_flagged=False)


def test_only_unflagged_variants_are_precompiled(monkeypatch, tmp_path, flagged_db):
    asked_to_compile = []
    # precompile takes typed points (an evaluator compiles each distinct variant once):
    # compare the distinct variants they name
    monkeypatch.setattr(ReplayEvaluator, "precompile", lambda self, points: asked_to_compile.append(
        list(dict.fromkeys(p.variant_label for p in points))))
    space = reducetune.Space("tunable", "float32", "sum", reducetune.limits_for_arch("sm_90"),
                             FLAG_RESTRICT)
    for allow in (False, True):
        ev = ReplayEvaluator(flagged_db)
        reducetune.tune(ev, reducetune.TuneConfig(sizes=[1 << 10], strategy="grid",
                                                  restrict=FLAG_RESTRICT, allow_flagged=allow))
        ev.close()
    without, with_flagged = asked_to_compile
    assert without == variant_labels(space, allow_flagged=False)
    assert without and not [v for v in without if racy(v)]
    assert len([v for v in with_flagged if racy(v)]) == 4 and len(with_flagged) == 12


def test_best_and_export_leave_flagged_points_out_unless_allowed(cli, tmp_path, flagged_db):
    db = flagged_db  # the racy points are recorded, ok, and the fastest at every size
    with contextlib.closing(sqlite3.connect(db)) as c:
        rows_before = c.execute("SELECT count(*) FROM rt_measurements").fetchone()[0]
    for n in SIZES:
        for allow in (False, True):
            extra = ["--allow-flagged"] if allow else []
            want = fastest(db, n, allow)
            code, out, err = cli("best", "--db", db, "--dtype", "float32", "--op", "sum",
                                 "--n", str(n), "--json", *extra)
            assert code == 0, err
            b = json.loads(out)
            assert (b["variant"], b["launch"], b["bucket_n"]) == (*want, n)
            api = reducetune.best("float32", "sum", n, db=db, allow_flagged=allow)
            assert (api["variant"], api["launch"]) == want
    for allow in (False, True):
        extra = ["--allow-flagged"] if allow else []
        code, header, err = cli("export", "header", "--db", db, *extra)
        assert code == 0, err
        assert {r["bucket_n"]: (r["variant"], r["launch"]) for r in header_rules(header)} == \
            {n: fastest(db, n, allow) for n in SIZES}
        assert ("volatile_unsafe" in header) == allow
        code, text, err = cli("export", "json", "--db", db, *extra)
        assert code == 0, err
        assert ("volatile_unsafe" in text) == allow
        assert ("volatile_unsafe" in reducetune.export_header(db, allow_flagged=allow)) == allow
    with contextlib.closing(sqlite3.connect(db)) as c:  # the file itself is never modified
        assert c.execute("SELECT count(*) FROM rt_measurements").fetchone()[0] == rows_before


def test_best_says_when_only_flagged_points_are_measured(cli, tmp_path):
    db = tmp_path / "only-racy.db"
    build_synthetic_db(db, [1 << 10], {**FLAG_RESTRICT, "warp": ["volatile_unsafe"]})
    code, _, err = cli("best", "--db", db, "--dtype", "float32", "--op", "sum", "--n", "2^10")
    assert code == 1 and "--allow-flagged" in err
    code, out, err = cli("best", "--db", db, "--dtype", "float32", "--op", "sum", "--n", "2^10",
                         "--allow-flagged")
    assert code == 0 and "volatile_unsafe" in out
