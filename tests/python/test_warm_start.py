"""Warm start from other GPUs (issue 12), on SYNTHETIC databases (conftest.py): a new study
measures other devices' bests for the same workload first, then the base preset, only those
valid and selected here; and the transfer experiment that measures what this buys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import RESTRICT, RESTRICT_ARGS, SYNTHETIC_DEVICE

from reducetune import _core
from reducetune.evaluate.base import workload
from reducetune.evaluate.replay import ReplayEvaluator
from reducetune._space import Point, Space, limits_for_arch

N = 1 << 10
SPACE = Space("tunable", "float32", "sum", limits_for_arch("sm_90"), RESTRICT)
# Wider than the runs' restriction: a foreign best outside it must be skipped.
WIDE = Space("tunable", "float32", "sum", limits_for_arch("sm_90"),
             {**RESTRICT, "block_size": ["128", "256", "512"]})


def _device(n: int, name: str, cc: tuple[int, int] = (9, 0)) -> dict[str, Any]:
    return {**SYNTHETIC_DEVICE, "name": f"SYNTHETIC {name} (not a measurement)",
            "uuid": f"GPU-00000000-0000-0000-0000-{n:012d}", "cc_major": cc[0],
            "cc_minor": cc[1]}


def _record(store: Any, device: dict[str, Any], n: int, points: list[tuple[Point, float]]) -> None:
    """SYNTHETIC rows: each point ok with this median (not a measurement)."""
    dev_id = store.register_device(device)
    w = {k: v for k, v in workload("float32", "sum", n).items() if k != "pattern"}
    th = _core.template_hash("tunable")
    for p, t in points:
        store.record_measurement(p, {
            "device_id": dev_id, **w, "template_hash": th, "driver_version": 13000,
            "toolkit_version": 13000, "samples_s": [t] * 10, "status": "ok", "reason": "",
            "gbps": n * 4 / t / 1e9, "pct_of_peak": 1.0})


def _pick(**params: Any) -> Point:
    """The first valid point of the runs' space with these parameters."""
    return next(p for p in SPACE.points()
                if all(str(p.params[k]) == str(v) for k, v in params.items()))


BASE = SPACE.preset("good").point
TWIN = _pick(block_size=128, unroll=1, vec=1, finish="two_pass", elements_per_thread=64)
ATOMIC = _pick(block_size=128, unroll=4, finish="atomic")  # nondeterministic for a float sum
OLDER = _pick(block_size=256, unroll=1, vec=1, finish="two_pass", elements_per_thread=4)
OUTSIDE = next(p for p in WIDE.points() if p.params["block_size"] == 512
               and p.params["finish"] == "two_pass")


@pytest.fixture
def foreign_db(tmp_path: Path) -> Path:
    """A results database with four other SYNTHETIC devices' results at N (or near it):
    - older (cc 8.0, registered first): best OLDER;
    - twin (cc 9.0, as the recording's device): fastest ATOMIC (nondeterministic), then TWIN;
    - wide: best OUTSIDE, a block size the runs' --restrict leaves out (invalid here);
    - neighbour: a best at 2N only (another workload)."""
    assert len({BASE, TWIN, ATOMIC, OLDER}) == 4
    path = tmp_path / "results.db"
    store = _core.Store(str(path))
    _record(store, _device(1, "older", (8, 0)), N, [(OLDER, 2e-6), (BASE, 5e-6)])
    _record(store, _device(2, "twin"), N, [(ATOMIC, 1e-6), (TWIN, 1.5e-6), (BASE, 4e-6)])
    _record(store, _device(3, "wide"), N, [(OUTSIDE, 0.5e-6), (TWIN, 3e-6)])
    _record(store, _device(4, "neighbour"), 2 * N, [(OLDER, 1e-6)])
    store.close()
    return path


def _tune(cli: Any, recording: Path, db: Path, *extra: str) -> dict[str, Any]:
    code, out, err = cli("tune", "--replay", recording, "--db", db, "--sizes", "2^10",
                         "--max-evals", "5", "--seed", "0", "--json", "--quiet",
                         *RESTRICT_ARGS, *extra)
    assert code == 0, err
    return dict(json.loads(out)["sizes"][0])


def _names(warm: dict[str, int]) -> dict[str, int]:
    return {k.split()[1]: v for k, v in warm.items()}


def test_new_study_measures_other_devices_bests_first(cli, asked, synthetic_db, foreign_db):
    size = _tune(cli, synthetic_db, foreign_db)
    # twin first (this device's compute capability), then older; wide's best is outside the
    # restriction and neighbour has no best at this n; twin's fastest is nondeterministic
    assert _names(size["warm"]) == {"twin": 1, "older": 1}
    first = [(v, lab) for v, lab, _ in asked[:3]]
    assert first == [TWIN.labels, OLDER.labels, BASE.labels]
    assert OUTSIDE.labels not in [(v, lab) for v, lab, _ in asked]
    assert size["invalid"] == 0 and size["nondeterministic"] == 0  # none was even proposed

    asked.clear()  # the same study resumed: not new, nothing enqueued again
    again = _tune(cli, synthetic_db, foreign_db, "--max-evals", "7")
    assert again["warm"] == {} and again["points"] == 7


def test_nondeterministic_run_takes_the_nondeterministic_best(cli, asked, synthetic_db,
                                                               foreign_db):
    size = _tune(cli, synthetic_db, foreign_db, "--nondeterministic")
    assert _names(size["warm"]) == {"twin": 1, "older": 1}
    assert [(v, lab) for v, lab, _ in asked[:3]] == [ATOMIC.labels, OLDER.labels, BASE.labels]


def test_no_warm_start_enqueues_none(cli, asked, synthetic_db, foreign_db):
    size = _tune(cli, synthetic_db, foreign_db, "--no-warm-start")
    assert size["warm"] == {}
    assert asked[0][:2] == BASE.labels
    assert [(v, lab) for v, lab, _ in asked[1:3]] != [TWIN.labels, OLDER.labels]


def test_warm_points_rules(foreign_db):
    from reducetune.store.results import open_store
    from reducetune.tuning.config import TuneConfig
    from reducetune.tuning.warm_start import warm_counts, warm_points

    store = open_store(foreign_db)
    me = SYNTHETIC_DEVICE["uuid"]
    # unknown to the store: no compute capability to prefer, the database's order
    assert [w.point for w in warm_points(store, SPACE, TuneConfig(), N, me)] == [OLDER, TWIN]
    store.register_device(SYNTHETIC_DEVICE)  # as a run does before its first study
    got = warm_points(store, SPACE, TuneConfig(), N, me)
    assert [w.point for w in got] == [TWIN, OLDER] and got[0].median_s == 1.5e-6
    # a point already queued (the base preset, another device's same best) is not repeated
    assert [w.point for w in warm_points(store, SPACE, TuneConfig(), N, me, {TWIN})] == [OLDER]
    # the wide restriction admits wide's best; this device's own results are never taken
    wide = warm_points(store, WIDE, TuneConfig(), N, me)
    assert OUTSIDE in [w.point for w in wide]
    twin = _device(2, "twin")["uuid"]
    assert TWIN not in [w.point for w in warm_points(store, SPACE, TuneConfig(), N, twin)]
    assert warm_points(store, SPACE, TuneConfig(warm_start=False), N, me) == []
    assert warm_points(None, SPACE, TuneConfig(), N, me) == []
    assert _names(warm_counts(got)) == {"twin": 1, "older": 1}
    store.close()


def test_warm_note_in_the_table_caption():
    from reducetune.cli.report import warm_note
    from reducetune.tuning.config import SizeResult

    assert warm_note([SizeResult(N)]) == ""
    note = warm_note([SizeResult(N, warm={"A": 1}), SizeResult(2 * N, warm={"A": 1, "B": 1})])
    assert note.startswith("warm start: 3 points") and "A: 2, B: 1" in note


def _optimum(recording: Path) -> Point:
    """The recording's fastest ok deterministic point of SPACE at N."""
    with ReplayEvaluator(recording) as ev:
        table = ev.table("float32", "sum", N)
    ok = [(r["median_s"], p) for p in SPACE.points() if SPACE.selected(p)
          for r in [table.get(p.labels)] if r is not None and r["status"] == "ok"]
    return min(ok, key=lambda x: x[0])[1]


def test_transfer_experiment_warm_start_from_the_optimum(cli, tmp_path, synthetic_db):
    best = _optimum(synthetic_db)
    source = tmp_path / "other-gpu.db"
    store = _core.Store(str(source))  # B's best is A's optimum (SYNTHETIC)
    _record(store, _device(7, "other GPU"), N, [(best, 1e-6), (OLDER, 9e-6)])
    store.close()
    out = tmp_path / "transfer"
    code, _, err = cli("experiment", "transfer", "--recording", synthetic_db, "--from", source,
                       "--n", "2^10", "--seeds", "3", "--max-evals", "20", *RESTRICT_ARGS,
                       "--out", out)
    assert code == 0, err
    report = json.loads((out / "transfer.json").read_text())
    e = report["sizes"][str(N)]
    assert [p["fraction_here"] for p in e["from_points"]] == [1.0]
    cold, warm = e["modes"]["cold"], e["modes"]["warm"]
    assert warm["reached"] == 3 and all(k is not None and k <= 2 for k in warm["k"])
    assert e["paired"]["warm_more"] == 0
    assert all(c is None or w <= c for c, w in zip(cold["k"], warm["k"]))
    assert warm["median"] <= (cold["median"] or float("inf"))
    assert warm["warm_enqueued"] == [1, 1, 1] and cold["warm_enqueued"] == [0, 0, 0]
    assert warm["mean_fraction"][1] == 1.0 >= cold["mean_fraction"][1]
    assert "| warm | 3/3 |" in (out / "report.md").read_text()
    if (out / "transfer.png").exists():
        assert (out / "transfer.png").stat().st_size > 0

    # B must be another GPU: the recording itself is refused before any run
    code, _, err = cli("experiment", "transfer", "--recording", synthetic_db, "--from",
                       synthetic_db, "--n", "2^10", "--seeds", "1", *RESTRICT_ARGS,
                       "--out", tmp_path / "same")
    assert code == 2 and "holds the device of --recording" in err
