"""Replay against databases recorded on a GPU by an exhaustive sweep (tests/data/recorded/:
NAME.db.xz with its sidecar NAME.json, decompressed once per session by conftest.py).
Skipped, with the reason, when no recording is present.

Every replay uses the sidecar's restriction: the recording holds only that corner of the
space, and a replay over the full space would mostly sample points it lacks.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import reducetune
from reducetune.evaluate.replay import ReplayEvaluator

from conftest import RECORDED, RECORDED_DIR, recording_meta
from header_rules import header_rules

pytestmark = pytest.mark.skipif(
    not RECORDED, reason="no recorded database in tests/data/recorded/ (made on a GPU with "
    "`reducetune tune --strategy grid`, see its README.md); replay tests on real data skipped")

# Only recordings that say what they hold (the sidecar) are tested against it.
DESCRIBED = [p for p in RECORDED if recording_meta(p) is not None]


def meta(recorded: Path) -> dict[str, Any]:
    m = recording_meta(recorded)
    assert m is not None, f"{recorded.name}: no sidecar {recorded.stem}.json"
    return m


def restrict_args(m: dict[str, Any]) -> list[str]:
    return [a for k, v in m["restrict"].items() for a in ("--restrict", f"{k}={','.join(v)}")]


def space_of(recorded: Path) -> reducetune.Space:
    m = meta(recorded)
    dev = ReplayEvaluator(recorded)
    try:
        return reducetune.Space(m["family"], m["dtype"], m["op"], dev.limits, m["restrict"])
    finally:
        dev.close()


def selected_points(space: reducetune.Space) -> set[tuple[str, str]]:
    """The points a grid sweep over the sidecar's restriction records: valid, deterministic
    and unflagged (tune's default selection). A restriction that leaves warp or finish free
    admits racy or atomic points that the sweep never visits."""
    return {p.labels for p in space.points() if space.selected(p)}


def fastest_in_file(path: Path, dtype: str, op: str, n: int) -> tuple[str, str, float]:
    """The recording's fastest status-ok point, read with SQL alone (not through reducetune):
    lowest median, then the lower row id (the store's documented tie rule)."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as c:
        row = c.execute(
            "SELECT v.label, m.launch_label, m.median_s FROM rt_measurements m "
            "JOIN rt_variants v ON v.id = m.variant_id JOIN rt_workloads w ON w.id = m.workload_id "
            "WHERE m.status = 'ok' AND w.dtype = ? AND w.op = ? AND w.n = ? "
            "ORDER BY m.median_s, m.id LIMIT 1", (dtype, op, n)).fetchone()
    assert row is not None, f"{path.name} holds no ok {dtype} {op} n={n} point"
    return row[0], row[1], row[2]


def recorded_points(path: Path, dtype: str, op: str, n: int) -> set[tuple[str, str]]:
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as c:
        return set(c.execute(
            "SELECT v.label, m.launch_label FROM rt_measurements m "
            "JOIN rt_variants v ON v.id = m.variant_id JOIN rt_workloads w ON w.id = m.workload_id "
            "WHERE w.dtype = ? AND w.op = ? AND w.n = ?", (dtype, op, n)).fetchall())


@pytest.fixture(scope="module")
def grid_replays(tmp_path_factory) -> dict[Path, dict[str, Any]]:
    """Per described recording: an exhaustive grid replay over its restriction into a new
    database, with the points it asked the evaluator for. The study is in memory (given
    explicitly: with a store, tune() keeps it in the store's file, as the CLI does, which costs
    ~40 ms a trial)."""
    import optuna

    from reducetune.store.results import open_store

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    out = {}
    for recorded in DESCRIBED:
        m = meta(recorded)
        db = tmp_path_factory.mktemp("replayed") / "replayed.db"
        ev = ReplayEvaluator(recorded)
        calls: list[tuple[str, str, int]] = []
        original = ev.evaluate

        def evaluate(point, problem, data=None, original=original, calls=calls):
            calls.append((point.variant_label, point.launch_label, problem.elements))
            return original(point, problem, data)

        ev.evaluate = evaluate  # type: ignore[method-assign]
        store = open_store(db)
        try:
            results = reducetune.tune(ev, reducetune.TuneConfig(
                dtype=m["dtype"], op=m["op"], sizes=list(m["sizes"]), family=m["family"],
                strategy="grid", restrict=m["restrict"]), store=store,
                storage=optuna.storages.InMemoryStorage())
        finally:
            store.close()
            ev.close()
        out[recorded] = {"db": db, "results": results, "calls": calls}
    return out


@pytest.mark.parametrize("recorded", DESCRIBED, ids=lambda p: p.name)
def test_the_recording_is_the_one_its_sidecar_describes(recorded):
    import hashlib

    m = meta(recorded)
    packed = RECORDED_DIR / (recorded.name + ".xz")
    if packed.exists():
        assert hashlib.sha256(packed.read_bytes()).hexdigest() == m["sha256"]["db.xz"], (
            f"{packed.name} is not the file {recorded.stem}.json describes: update the sidecar")
    with contextlib.closing(sqlite3.connect(f"file:{recorded}?mode=ro", uri=True)) as c:
        devices = c.execute("SELECT uuid, name, sm_count FROM rt_devices").fetchall()
        statuses = c.execute(
            "SELECT w.n, m.status, count(*) FROM rt_measurements m JOIN rt_workloads w "
            "ON w.id = m.workload_id GROUP BY 1, 2").fetchall()
    d = m["device"]
    assert devices == [(d["uuid"], d["name"], d["sm_count"])]
    assert {str(n): {} for n in m["sizes"]} | {
        str(n): {st: k for nn, st, k in statuses if nn == n} for n, _, _ in statuses
    } == m["status"]


@pytest.mark.parametrize("recorded", DESCRIBED, ids=lambda p: p.name)
def test_every_point_of_the_restricted_space_is_recorded_and_nothing_else(recorded):
    m = meta(recorded)
    space = space_of(recorded)
    valid = selected_points(space)
    for n in m["sizes"]:
        points = recorded_points(recorded, m["dtype"], m["op"], n)
        assert len(points) == m["points"][str(n)], f"n={n}: the sidecar's count is wrong"
        assert points == valid, (f"n={n}: {len(valid - points)} points of the space missing, "
                                 f"{len(points - valid)} recorded outside it")


@pytest.mark.parametrize("recorded", DESCRIBED, ids=lambda p: p.name)
def test_grid_replay_evaluates_each_point_of_the_restriction_once_and_nothing_outside(
        recorded, grid_replays):
    m = meta(recorded)
    space = space_of(recorded)
    valid = selected_points(space)
    calls = grid_replays[recorded]["calls"]
    for n in m["sizes"]:
        at_n = [(v, launch) for v, launch, k in calls if k == n]
        assert len(at_n) == len(set(at_n)), f"n={n}: a point was evaluated twice"
        assert set(at_n) == valid, f"n={n}: {len(set(at_n) - valid)} points outside the space"
    assert {k for _, _, k in calls} == set(m["sizes"])
    for r in grid_replays[recorded]["results"]:
        assert (r.points, r.evaluated, r.failed, r.stopped) == (
            m["points"][str(r.n)], m["points"][str(r.n)], 0, "exhausted")


@pytest.mark.parametrize("recorded", DESCRIBED, ids=lambda p: p.name)
def test_grid_replay_finds_exactly_the_recordings_fastest_point(recorded, grid_replays):
    m = meta(recorded)
    for r in grid_replays[recorded]["results"]:
        label, launch, median = fastest_in_file(recorded, m["dtype"], m["op"], r.n)
        assert r.best is not None
        assert (r.best["variant_label"], r.best["launch_label"]) == (label, launch), f"n={r.n}"
        assert r.best["median_s"] == median


@pytest.mark.parametrize("recorded", DESCRIBED, ids=lambda p: p.name)
def test_best_and_export_of_a_replayed_database_give_the_fastest_variant(recorded, grid_replays,
                                                                         cli):
    m = meta(recorded)
    db = grid_replays[recorded]["db"]
    code, header, err = cli("export", "header", "--db", db)
    assert code == 0, err
    choices = {r["bucket_n"]: (r["variant"], r["launch"]) for r in header_rules(header)}
    assert set(choices) == set(m["sizes"])
    for n in m["sizes"]:
        label, launch, median = fastest_in_file(recorded, m["dtype"], m["op"], n)
        code, out, err = cli("best", "--db", db, "--dtype", m["dtype"], "--op", m["op"],
                             "--n", str(n), "--json")
        assert code == 0, err
        best = json.loads(out)  # the export's rule
        assert (best["variant"], best["launch"], best["bucket_n"]) == (label, launch, n)
        assert choices[n] == (label, launch), f"n={n}: the header's choice is not the best"
        api = reducetune.best(m["dtype"], m["op"], n, db=db)
        assert api is not None and (api["variant"], api["launch"]) == (label, launch)
        assert median == pytest.approx(best["median_s"])


@pytest.mark.parametrize("recorded", DESCRIBED, ids=lambda p: p.name)
def test_tpe_with_a_fixed_seed_is_deterministic(recorded, cli, tmp_path, asked):
    m = meta(recorded)
    n = max(m["sizes"])

    def run(name: str, seed: str, evals: int) -> tuple[list[tuple[str, str, int]], Any]:
        start = len(asked)
        code, out, err = cli("tune", "--replay", recorded, "--db", tmp_path / name, "--dtype",
                             m["dtype"], "--op", m["op"], "--sizes", str(n), "--max-evals",
                             str(evals), "--seed", seed, "--json", "--quiet", *restrict_args(m))
        assert code == 0, err
        return asked[start:], json.loads(out)["sizes"][0]["best"]

    # 24 points: past TPE's 10 random startup trials, so its model chooses the rest
    first, best1 = run("a.db", "11", 24)
    second, best2 = run("b.db", "11", 24)
    other, _ = run("c.db", "12", 6)
    assert len(first) == 24
    assert first == second and best1 == best2  # the same points in the same order
    assert other != first[:6]  # and the seed is what fixes them


@pytest.mark.parametrize("recorded", DESCRIBED, ids=lambda p: p.name)
def test_a_resumed_replay_study_re_measures_nothing(recorded, cli, tmp_path, asked):
    m = meta(recorded)
    n = min(m["sizes"])
    db = tmp_path / "resumed.db"

    def run(evals: str) -> dict[str, Any]:
        code, out, err = cli("tune", "--replay", recorded, "--db", db, "--dtype", m["dtype"],
                             "--op", m["op"], "--sizes", str(n), "--max-evals", evals,
                             "--seed", "5", "--json", "--quiet", *restrict_args(m))
        assert code == 0, err
        return json.loads(out)["sizes"][0]

    first = run("25")
    assert (first["points"], first["evaluated"], len(asked)) == (25, 25, 25)
    again = run("25")  # the same command: the study is complete
    assert (again["points"], again["evaluated"], again["served"]) == (25, 0, 0)
    assert len(asked) == 25 and again["best"] == first["best"]
    more = run("35")  # a larger budget continues the same study: only the new points
    assert (more["points"], more["evaluated"]) == (35, 10)
    assert len(asked) == 35 and len(set(asked)) == 35
    assert more["best"]["median_s"] <= first["best"]["median_s"]
