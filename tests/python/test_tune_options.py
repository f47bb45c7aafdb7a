"""The tune command's sampling options and its precompile step, without a GPU: a FAKE worker
stands in for ``python -m reducetune.evaluate.gpu`` (its "measurements" are a formula, never
presented as measurements) so that what the command sends to the worker can be checked."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

import reducetune
from reducetune.evaluate import base, gpu as _evaluators
from reducetune.evaluate.gpu import GpuEvaluator
from reducetune.evaluate.replay import ReplayEvaluator
from reducetune.tuning.config import TuneConfig
from reducetune.tuning.loop import variant_labels
from reducetune.tuning.run import tune

from conftest import RESTRICT, RESTRICT_ARGS, SYNTHETIC_DEVICE, synthetic_median

DEFAULT_SAMPLING = {"hot": False, "min_samples": 10, "max_samples": 200, "max_noise": 0.01,
                    "time_cap_s": 0.1}


class FakeWorker:
    """Answers the worker's calls from a formula and remembers every request."""

    instances: list["FakeWorker"] = []
    precompile_reply: dict[str, Any] | None = None  # None: a successful precompile

    def __init__(self, timeout_s: float = 60.0, argv: list[str] | None = None) -> None:
        self.timeout_s = timeout_s
        self.requests: list[tuple[str, float | None, dict[str, Any]]] = []
        self.running = True
        FakeWorker.instances.append(self)

    def calls(self, name: str) -> list[dict[str, Any]]:
        return [args for n, _, args in self.requests if n == name]

    def call(self, name: str, timeout_s: float | None = None, **args: Any) -> dict[str, Any]:
        self.requests.append((name, timeout_s, args))
        self.running = True
        return getattr(self, "_" + name)(**args)

    def _query_device(self, ordinal: int) -> dict[str, Any]:
        dev = {**SYNTHETIC_DEVICE, "ordinal": ordinal, "arch": 90, "runtime_version": 13000,
               "max_threads_per_block": 1024}
        return {"ok": True, "result": dev}

    def _precompile(self, points: list[dict], arch: str, threads: int,
                    **share: Any) -> dict[str, Any]:  # workers, shared_dir: a --devices run's
        if FakeWorker.precompile_reply is not None:
            return FakeWorker.precompile_reply
        return {"ok": True, "result": {"requested": len(points), "compiled": 1290,
                                       "cached": 0, "failed": 0, "failures": {},
                                       "seconds": 4.1, "threads": 16}}

    def _compile_ahead(self, points: list[dict], arch: str, threads: int,
                       **share: Any) -> dict[str, Any]:  # workers, shared_dir: a --devices run's
        # what the worker's background threads are handed (tuning/precompile.py); compiled
        # nothing yet when the reply comes
        return {"ok": True, "result": {"queued": len(points), "waiting": len(points),
                                       "compiled": 0, "skipped": 0, "failed": 0, "dropped": 0,
                                       "busy_s": 0.0, "threads": 15}}

    def _evaluate(self, point: dict, problem: dict, data: dict, ordinal: int,
                  options: dict) -> dict[str, Any]:
        # the point arrives as Point.to_dict(), the problem as its plain form (what crosses
        # the worker's JSON pipe)
        p = point_of(point)
        outer, n, inner = problem["shape"]
        assert outer == inner == 1, "the tuner measures whole arrays"
        return _ok(synthetic_median(p.variant_label, p.launch_label, n), n)

    def _evaluate_cub(self, workload: dict, ordinal: int, options: dict) -> dict[str, Any]:
        return _ok(workload["n"] * 4 / 3.0e12 + 3e-6, workload["n"])

    def _streaming_ceiling(self, ordinal: int) -> dict[str, Any]:
        return {"ok": True, "result": {"bytes_per_s": 3.0e12, "samples_s": [1 / 3.0e3] * 10}}

    def close(self) -> None:
        pass


def _ok(t: float, n: int) -> dict[str, Any]:
    gbps = n * 4 / t / 1e9
    return {"ok": True, "result": {"status": "ok", "kind": "", "reason": "",
                                   "samples_s": [t] * 10, "median_s": t, "rel_stddev": 0.0,
                                   "gbps": gbps, "pct_of_peak": gbps / 33.5,
                                   "pct_of_ceiling": gbps / 30.0}}


def install_worker(monkeypatch, cls: type) -> type:
    """`cls` (FakeWorker or a subclass) answers the GPU evaluator's worker calls, from a clean
    record of instances and precompile replies."""
    FakeWorker.instances = []
    FakeWorker.precompile_reply = None
    monkeypatch.setattr(_evaluators, "WorkerClient", cls)
    return cls


@pytest.fixture
def fake_worker(monkeypatch):
    return install_worker(monkeypatch, FakeWorker)


def gpu_tune(cli, db, *extra):
    return cli("tune", "--db", db, "--sizes", "2^10", "2^20", "--max-evals", "4", "--seed", "1",
               *RESTRICT_ARGS, *extra)


def sampling_of(options: dict) -> dict:
    """A variant's evaluate options less racing's per-call bound (test_race.py checks it):
    the rule every point and CUB share. CUB's calls are compared whole: never raced."""
    return {k: v for k, v in options.items() if k != "outpaced_above_s"}


def point_of(d: dict) -> reducetune.Point:
    """The Point of a Point.to_dict(), as the worker's _core.evaluate reads it."""
    space = reducetune.Space(d["family"], d["dtype"], d["op"], reducetune.limits_for_arch("sm_90"))
    return space.point(d["params"])


def labels_of(points: list) -> list[str]:
    return [(point_of(p) if isinstance(p, dict) else p).variant_label for p in points]


def restricted_labels() -> set[str]:
    limits = reducetune.limits_for_arch("sm_90")
    limits.sm_count = SYNTHETIC_DEVICE["sm_count"]
    space = reducetune.Space("tunable", "float32", "sum", limits, RESTRICT)
    # what a default run may propose: neither flagged nor nondeterministic variants
    return set(variant_labels(space, allow_flagged=False, nondeterministic=False))


def test_tune_samples_briefly_and_cold_only_by_default(fake_worker, cli, tmp_path):
    code, _, err = gpu_tune(cli, tmp_path / "r.db", "--quiet")
    assert code == 0, err
    (worker,) = fake_worker.instances
    assert len(worker.calls("evaluate")) == 8 and len(worker.calls("evaluate_cub")) == 2
    for args in worker.calls("evaluate"):
        assert sampling_of(args["options"]) == {**DEFAULT_SAMPLING, "ceiling_bytes_per_s": 3.0e12}
    for args in worker.calls("evaluate_cub"):  # × CUB compares points measured alike
        assert args["options"] == DEFAULT_SAMPLING


def test_the_sampling_flags_reach_every_variant_and_cub_call(fake_worker, cli, tmp_path):
    code, _, err = gpu_tune(cli, tmp_path / "r.db", "--quiet", "--sample-time", "250ms",
                            "--max-samples", "64", "--hot")
    assert code == 0, err
    (worker,) = fake_worker.instances
    expected = {"hot": True, "min_samples": 10, "max_samples": 64, "max_noise": 0.01,
                "time_cap_s": 0.25}
    assert worker.calls("evaluate") and worker.calls("evaluate_cub")
    assert all(sampling_of(a["options"]) == {**expected, "ceiling_bytes_per_s": 3.0e12}
               for a in worker.calls("evaluate"))
    assert all(a["options"] == expected for a in worker.calls("evaluate_cub"))


def test_the_study_records_the_sampling_it_measured_with(fake_worker, cli, tmp_path):
    db = tmp_path / "r.db"
    code, _, err = gpu_tune(cli, db, "--quiet", "--sample-time", "0.5", "--max-samples", "30")
    assert code == 0, err
    with sqlite3.connect(db) as c:
        configs = [json.loads(r[0]) for r in c.execute("SELECT config FROM rt_studies")]
    assert len(configs) == 2
    for config in configs:
        assert config["sampling"] == {**DEFAULT_SAMPLING, "max_samples": 30, "time_cap_s": 0.5}
        assert config["restrict"] == RESTRICT


def test_replayed_studies_record_no_sampling_of_their_own(cli, tmp_path, synthetic_db):
    db = tmp_path / "r.db"
    code, _, err = cli("tune", "--replay", synthetic_db, "--db", db, "--sizes", "2^10",
                       "--max-evals", "3", "--quiet", *RESTRICT_ARGS)
    assert code == 0, err
    with sqlite3.connect(db) as c:
        (config,) = [json.loads(r[0]) for r in c.execute("SELECT config FROM rt_studies")]
    assert config["sampling"] is None


def test_the_worker_precompiles_the_space_once_before_measuring(fake_worker, cli, tmp_path):
    code, _, err = gpu_tune(cli, tmp_path / "r.db", "--timeout", "30")
    assert code == 0, err
    (worker,) = fake_worker.instances
    names = [name for name, _, _ in worker.requests]
    assert names.count("precompile") == 1
    assert names.index("precompile") < names.index("evaluate")
    _, timeout, args = next(r for r in worker.requests if r[0] == "precompile")
    sent = labels_of(args["points"])  # typed: Point.to_dict()s, one per variant
    # the first points before measuring, the rest of the space queued for the background
    # (compile-ahead, also without a time limit since 2026-11-26), each variant once
    queued = next(r for r in worker.requests if r[0] == "compile_ahead")
    ahead = labels_of(queued[2]["points"])
    assert set(sent) | set(ahead) == restricted_labels()
    assert len(sent) + len(ahead) == len(set(sent) | set(ahead))
    assert args["arch"] == "90" and timeout > 30  # compiling takes longer than one point
    n = len(sent)
    assert f"precompiled {n} variants in 4.1 s (16 threads)" in err


def test_quiet_hides_the_precompile_line(fake_worker, cli, tmp_path):
    code, _, err = gpu_tune(cli, tmp_path / "r.db", "--quiet")
    assert code == 0 and "precompiled" not in err


def test_a_failed_precompile_does_not_stop_the_run(fake_worker, cli, tmp_path):
    fake_worker.precompile_reply = {"ok": False, "error": "timed_out",
                                    "message": "no reply within 700 s (worker killed)"}
    code, out, err = gpu_tune(cli, tmp_path / "r.db", "--json")
    assert code == 0, err
    assert "precompile failed (timed_out" in err
    assert all(s["points"] == 4 for s in json.loads(out)["sizes"])


def test_failed_variants_are_reported_and_left_to_their_points(fake_worker, cli, tmp_path):
    result = {"requested": 2, "compiled": 1, "cached": 0, "failed": 1, "seconds": 0.2,
              "threads": 2, "failures": {"tunable.x": "broken.cuh(12): error: expected ';'"}}
    fake_worker.precompile_reply = {"ok": True, "result": result}
    code, _, err = gpu_tune(cli, tmp_path / "r.db")
    assert code == 0, err
    assert "1 failed, e.g. tunable.x: broken.cuh(12): error: expected ';'" in err


def test_a_replaced_worker_gets_the_variants_compiled_again(fake_worker):
    ev = GpuEvaluator(0)
    worker = fake_worker.instances[0]
    space = reducetune.Space("tunable", "float32", "sum", reducetune.limits_for_arch("sm_90"))
    a = space.point({"block_size": 256, "elements_per_thread": 4})
    a2 = space.point({"block_size": 256, "elements_per_thread": 8})  # a's variant, launched alike
    b = space.point({"block_size": 128})
    ev.precompile([a, b, a2, a])
    assert worker.calls("precompile")[-1]["points"] == [a.to_dict(), b.to_dict()]
    problem = reducetune._core.Problem.whole_array("float32", "sum", 1024)
    ev.evaluate(a, problem)
    call = worker.calls("evaluate")[-1]
    assert call["point"] == a.to_dict()  # typed over JSON: parameters by name, and the shape
    assert call["problem"] == {"dtype": "float32", "op": "sum", "shape": [1, 1024, 1]}
    assert len(worker.calls("precompile")) == 1
    worker.running = False  # as after a crash or a timeout: a fresh worker, an empty cache
    ev.evaluate(a, problem)
    assert len(worker.calls("precompile")) == 2


def test_set_sampling_keeps_the_other_options(fake_worker):
    ev = GpuEvaluator(0, options={"hot": True, "time_cap_s": 5.0, "extra": 1})
    ev.set_sampling(TuneConfig(max_samples=50).sampling())
    assert ev.options == {**DEFAULT_SAMPLING, "max_samples": 50, "extra": 1}


def test_replay_tunes_call_precompile_once_per_space(monkeypatch, tmp_path, synthetic_db):
    events: list[Any] = []
    evaluate = ReplayEvaluator.evaluate
    monkeypatch.setattr(ReplayEvaluator, "precompile",
                        lambda self, points: events.append(list(points)))
    monkeypatch.setattr(ReplayEvaluator, "evaluate",
                        lambda self, *a: events.append("evaluate") or evaluate(self, *a))
    ev = ReplayEvaluator(synthetic_db)
    try:
        tune(ev, TuneConfig(sizes=[1 << 10, 1 << 20], max_evals=3, restrict=RESTRICT))
    finally:
        ev.close()
    assert isinstance(events[0], list) and events[1:] == ["evaluate"] * 6
    # typed points, every selected one: the evaluator compiles one program per variant
    assert set(labels_of(events[0])) == restricted_labels()
    assert all(isinstance(p, reducetune.Point) for p in events[0])


def test_replay_precompile_is_a_no_op(synthetic_db):
    ev = ReplayEvaluator(synthetic_db)
    try:
        assert ev.precompile([]) is None
        ev.set_sampling(DEFAULT_SAMPLING)
    finally:
        ev.close()


@pytest.mark.parametrize("args, message", [
    (["--max-samples", "5"], "--max-samples must be at least 10"),
    (["--sample-time", "0"], "--sample-time must be a positive number of seconds"),
    (["--sample-time", "-1"], "--sample-time must be a positive number of seconds"),
    (["--sample-time", "nan"], "--sample-time must be a positive number of seconds"),
])
def test_bad_sampling_values_are_refused_before_anything_runs(args, message, fake_worker, cli,
                                                              tmp_path):
    db = tmp_path / "r.db"
    code, _, err = cli("tune", "--db", db, "--quiet", *args)
    assert code == 2 and message in err and "Traceback" not in err
    # the GPU worker is started first (cli/app.py main, issue 25), then ended: nothing measured
    assert not db.exists() and not _evaluators._STARTED
    assert not any(w.calls("evaluate") for w in fake_worker.instances)


@pytest.mark.parametrize("args, message", [
    (["--max-samples", "many"], "argument --max-samples: 'many' is not an integer"),
    (["--max-samples", "0"], "argument --max-samples: '0' must be at least 1"),
    (["--sample-time", "soon"], "argument --sample-time: 'soon' is not a duration"),
    (["--hot", "yes"], "unrecognized arguments: yes"),
])
def test_argparse_refuses_malformed_sampling_flags(args, message, cli, tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        cli("tune", "--db", tmp_path / "r.db", *args)
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_sampling_config_validates_for_api_callers():
    with pytest.raises(reducetune.errors.InvalidConfiguration, match="at least 10"):
        TuneConfig(max_samples=9).validate()
    assert TuneConfig().sampling() == DEFAULT_SAMPLING
    assert TuneConfig(hot=True, sample_time_s=2).sampling()["time_cap_s"] == 2.0


def test_cub_is_recorded_from_a_live_evaluator_only(fake_worker, cli, tmp_path, synthetic_db):
    """Evaluator.live (evaluate/base.py) decides whether CUB's baseline is recorded: measured
    on a GPU it is; a replay's is the recording's, not measured here, so it is not."""
    gpu_db, replay_db = tmp_path / "gpu.db", tmp_path / "replay.db"
    code, _, err = gpu_tune(cli, gpu_db, "--quiet")
    assert code == 0, err
    code, _, err = cli("tune", "--replay", synthetic_db, "--db", replay_db, "--sizes", "2^10",
                       "--max-evals", "3", "--quiet", *RESTRICT_ARGS)
    assert code == 0, err

    def cub_rows(db) -> int:
        with sqlite3.connect(db) as c:
            return c.execute("SELECT count(*) FROM rt_baselines WHERE kind = 'cub'").fetchone()[0]

    assert (cub_rows(gpu_db), cub_rows(replay_db)) == (2, 0)  # the GPU run's two sizes
    assert GpuEvaluator.live and not ReplayEvaluator.live
