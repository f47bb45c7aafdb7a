"""A unit whose CUB call fails says so (issue 25, after the H200 run of 2026-11-26 17:16).

A reuse bug (399a387) made CUB's first call fail for 120 of the 132 units of an H200 tune, and
the run went on with no x CUB for them and no word about it. Now each such unit prints one line
on stderr with CUB's reason and carries it in tune --json ("cub_failure"); a unit whose CUB is
fine, or whose replay recording simply has no CUB row, prints nothing."""

from __future__ import annotations

import reducetune
from reducetune.cli.report import results_json
from reducetune.evaluate.replay import ReplayEvaluator
from reducetune.tuning.run import tune_all


class _FailingMinCub(ReplayEvaluator):
    """The synthetic recording's device, whose CUB call fails for min (as a GPU's failed
    call is answered: status, kind, reason) and measures for sum."""

    def cub(self, w: dict) -> dict:
        if w["op"] == "min":
            return {"status": "failed", "kind": "invalid_configuration",
                    "reason": "prepared_workload: the device input is not this workload's"}
        t = w["n"] * 4 / 3.0e12 + 3e-6
        return {"status": "ok", "samples_s": [t] * 10, "median_s": t,
                "gbps": w["n"] * 4 / t / 1e9}


def _tune(db, ops):
    configs = [reducetune.TuneConfig(dtype="float32", op=o, sizes=[1 << 16, 1 << 20],
                                     strategy="random", seed=1, max_evals=3) for o in ops]
    with _FailingMinCub(db) as ev:
        return configs, tune_all(ev, configs)


def test_a_failed_cub_call_is_reported_per_unit(synthetic_db, capsys):
    configs, results = _tune(synthetic_db, ["sum", "min"])
    err = capsys.readouterr().err
    by_op = {c.op: rs for c, rs in zip(configs, results, strict=True)}
    for r in by_op["min"]:
        assert r.cub_gbps is None and r.x_cub is None
        assert r.cub_failure == "prepared_workload: the device input is not this workload's"
        assert f"CUB failed on float32 min n={r.n}" in err
    for r in by_op["sum"]:
        assert r.cub_failure is None and r.cub_gbps is not None
    assert "CUB failed on float32 sum" not in err
    sizes = results_json(by_op["min"], {"name": "synthetic"})["sizes"]
    assert [s["cub_failure"] for s in sizes] == [r.cub_failure for r in by_op["min"]]


def test_a_recording_without_cub_prints_nothing(synthetic_db, capsys):
    configs = [reducetune.TuneConfig(dtype="float32", op="max", sizes=[1 << 16],
                                     strategy="random", seed=1, max_evals=2)]
    with ReplayEvaluator(synthetic_db) as ev:
        (results,) = tune_all(ev, configs)
    assert "CUB failed" not in capsys.readouterr().err
    assert all(r.cub_failure is None for r in results)
