"""Racing (issue 25): the tuning loop passes each live evaluation a bound, race x the unit's
best deterministic median so far, once the unit has an ok point; a point whose first cold
samples are above it is stored with fewer samples and the reason "outpaced", and is never
the best. Without a GPU: a fake worker process behind the real GpuEvaluator (test_tune_options'
FakeWorker), applying the bound as measure/stopping_rule.hpp does (the C++ rule
itself: tests/cpp/measure/test_outpaced.cpp). On a GPU: test_race_gpu.py."""

from __future__ import annotations

from typing import Any

import optuna
import pytest
from conftest import RESTRICT
from test_tune_options import FakeWorker

from reducetune.cli import build_parser
from reducetune.cli.tune import _configs
from reducetune.errors import InvalidConfiguration
from reducetune.evaluate import gpu as _gpu
from reducetune.evaluate.base import OUTPACED
from reducetune.evaluate.replay import ReplayEvaluator
from reducetune.store.measurements import measurement_rows
from reducetune.store.results import open_store
from reducetune.tuning.config import RACE_FACTOR, TuneConfig
from reducetune.tuning.loop import tune_size

N = 1 << 16


class _Worker(FakeWorker):
    """test_tune_options' fake worker (every request remembered, its options included) whose
    first point is wrong (so the bound waits for a first ok one), the others taking a time
    from their elements_per_thread; a time above the call's bound stops after 3 samples."""

    times: list[float | None] = []  # each evaluate's time; None for the wrong first point

    def _evaluate(self, point: dict, problem: dict, data: dict, ordinal: int,
                  options: dict) -> dict[str, Any]:
        if not _Worker.times:
            _Worker.times.append(None)
            return {"ok": True, "result": {"status": "wrong", "kind": "wrong_result",
                                           "reason": "the first is wrong"}}
        t = 1e-5 * (1 + point["params"]["elements_per_thread"] % 7)
        _Worker.times.append(t)
        bound = options.get("outpaced_above_s", 0)
        samples, stopped = ([t] * 3, OUTPACED) if bound and t > bound else ([t] * 10, "converged")
        return {"ok": True, "result": {"status": "ok", "kind": "", "reason": "",
                                       "samples_s": samples, "median_s": t, "rel_stddev": 0.0,
                                       "stopped": stopped, "gbps": N * 4 / t / 1e9,
                                       "pct_of_peak": 1.0}}


def _tune(monkeypatch, config: TuneConfig, store: Any = None) -> Any:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    FakeWorker.instances, _Worker.times = [], []
    monkeypatch.setattr(_gpu, "WorkerClient", _Worker)
    return tune_size(_gpu.GpuEvaluator(0), config, N, store=store,
                     storage=optuna.storages.InMemoryStorage())


def _bounds() -> list[float | None]:
    """Each evaluate call's racing bound, in order (None: none passed)."""
    (worker,) = FakeWorker.instances
    return [args["options"].get("outpaced_above_s") for args in worker.calls("evaluate")]


def test_each_point_is_raced_against_the_best_so_far_once_there_is_one(monkeypatch):
    _tune(monkeypatch, TuneConfig(sizes=[N], max_evals=12, seed=3, priors="off"))
    bounds = _bounds()
    assert len(bounds) >= 6, "the tune measured its points"
    # the first point is wrong: the second call still has no best to race against
    assert bounds[0] is None and bounds[1] is None
    for i, bound in enumerate(bounds):
        ok_before = [t for t in _Worker.times[:i] if t is not None]
        expected = RACE_FACTOR * min(ok_before) if ok_before else None
        assert (bound is None) if expected is None else bound == pytest.approx(expected), i
    assert any(b is not None for b in bounds)


def test_race_off_passes_no_bound(monkeypatch):
    _tune(monkeypatch, TuneConfig(sizes=[N], max_evals=8, seed=3, priors="off", race=None))
    bounds = _bounds()
    assert len(bounds) >= 4 and bounds == [None] * len(bounds)


def test_a_replay_is_never_raced(monkeypatch, synthetic_db):
    asked: list[Any] = []
    original = ReplayEvaluator.evaluate

    def evaluate(self, point, problem, data=None, **race):
        asked.append(race)
        return original(self, point, problem, data, **race)

    monkeypatch.setattr(ReplayEvaluator, "evaluate", evaluate)
    with ReplayEvaluator(synthetic_db) as ev:
        config = TuneConfig(sizes=[1 << 20], max_evals=6, seed=1, priors="off",
                            restrict=RESTRICT)  # the recording's corner
        r = tune_size(ev, config, 1 << 20, storage=optuna.storages.InMemoryStorage())
    assert r.best is not None and len(asked) >= 2
    assert asked == [{}] * len(asked)  # a replay gives back what was stored: nothing to save


def test_an_outpaced_point_is_stored_with_its_reason_and_is_never_the_best(monkeypatch,
                                                                          tmp_path):
    db = tmp_path / "race.db"
    store = open_store(db, create=True)
    try:
        r = _tune(monkeypatch, TuneConfig(sizes=[N], max_evals=12, seed=3, priors="off"),
                  store=store)
    finally:
        store.close()
    rows = [row for row in measurement_rows(db, samples=True) if row["status"] == "ok"]
    raced = [row for row in rows if row["reason"].startswith(OUTPACED)]
    full = [row for row in rows if not row["reason"]]
    assert raced and full, "the tune stored raced and fully measured points"
    for row in raced:
        assert row["sample_count"] == 3
        assert row["reason"].startswith(f"{OUTPACED}: 3 cold samples, median above ")
        assert row["median_s"] > RACE_FACTOR * min(f["median_s"] for f in full)
    assert all(f["sample_count"] == 10 for f in full)
    assert r.best["median_s"] == min(row["median_s"] for row in rows)
    assert (r.best["variant_label"], r.best["launch_label"]) not in {
        (row["variant_label"], row["launch_label"]) for row in raced}


def test_race_off_on_the_command_line_and_its_refusals():
    def config(*argv: str) -> TuneConfig:
        (c,) = _configs(build_parser().parse_args(["tune", *argv]))
        return c

    assert config().race == RACE_FACTOR
    assert config("--race", "off").race is None
    assert config("--race", "2").race == 2.0
    with pytest.raises(InvalidConfiguration, match="above 1"):
        config("--race", "1").validate()
    with pytest.raises(SystemExit):
        build_parser().parse_args(["tune", "--race", "fast"])


def test_the_race_bound_is_the_best_deterministic_median_times_the_factor():
    from reducetune.tuning.config import SizeResult

    result = SizeResult(N)
    config = TuneConfig(race=2.0)
    assert config.race_options(result, live=True) == {}  # no best yet
    result.best_deterministic = {"median_s": 3e-6}
    result.best = {"median_s": 1e-6}  # a nondeterministic best is only faster
    assert config.race_options(result, live=True) == {"outpaced_above_s": 6e-6}
    assert config.race_options(result, live=False) == {}
    assert TuneConfig(race=None).race_options(result, live=True) == {}
    shaped = SizeResult((4, 16, 1))  # an axis shape: its batch_invariant pick is never raced
    shaped.best_deterministic = {"median_s": 3e-6}
    assert config.race_options(shaped, live=True) == {}
