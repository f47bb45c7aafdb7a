"""An experiment's recording belongs to a device model, not to one GPU: a run resumed on
another GPU of the model (the same name, SMs and memory clock; the GPU machine is lent anew
each time) measures only what the model lacks, and the report shows the model once.

The databases here are SYNTHETIC FIXTURES (test_experiment_cascading.build_cascading_fixture):
made-up times written through the real store API into a temporary folder."""

from __future__ import annotations

import json
import types
from pathlib import Path

from conftest import SYNTHETIC_DEVICE
from reducetune import _core
from reducetune.evaluate.base import workload
from test_experiment_cascading import build_cascading_fixture

SECOND_GPU = {**SYNTHETIC_DEVICE, "uuid": "GPU-00000000-0000-0000-0000-5y7the71c0b2"}
OTHER_MODEL = {**SYNTHETIC_DEVICE, "uuid": "GPU-00000000-0000-0000-0000-5y7the71c0c3",
               "memory_clock_khz": 3_201_000}
N = 1 << 20


def _limits():
    from reducetune._space import limits_for_arch

    limits = limits_for_arch("sm_90")
    limits.sm_count = SYNTHETIC_DEVICE["sm_count"]
    return limits


def _fixture(path: Path) -> None:
    build_cascading_fixture(path, SYNTHETIC_DEVICE, peak_at=64, sizes=(N,), passes=(1 << 10,))


def test_a_run_resumes_from_the_measurements_of_another_gpu_of_its_model(tmp_path):
    from reducetune.experiments._xp_run import Job, Runner
    from reducetune.experiments.cascading import sweep_points

    path = tmp_path / "a.db"
    _fixture(path)
    p, _, _ = sweep_points("float32", N, [256], _limits())[0]
    store = _core.Store(str(path))
    try:
        for device, served in ((SYNTHETIC_DEVICE, True), (SECOND_GPU, True),
                               (OTHER_MODEL, False)):
            runner = Runner(types.SimpleNamespace(device=device), store, path, "cascading")
            assert (runner.known(Job(p, N)) is not None) == served, device["uuid"]
            assert runner.known(Job(p, N // 2)) is None  # never measured by any GPU
    finally:
        store.close()


def test_the_report_shows_a_model_measured_by_two_gpus_once_the_newest_row_winning(cli,
                                                                                  tmp_path):
    from reducetune.experiments.cascading import sweep_points

    path = tmp_path / "a.db"
    _fixture(path)
    p, _, _ = sweep_points("float32", N, [256], _limits())[0]
    store = _core.Store(str(path))
    dev = store.register_device(SECOND_GPU)
    w = {k: v for k, v in workload(p.dtype, p.op, N).items() if k != "pattern"}
    store.record_measurement(p, {
        "device_id": dev, **w, "template_hash": _core.template_hash(p.family),
        "driver_version": 13000, "toolkit_version": 13000, "samples_s": [4e-6] * 10,
        "status": "ok", "reason": "", "gbps": 1234.5, "pct_of_peak": 1.0})
    store.close()

    out = tmp_path / "report"
    code, _, err = cli("experiment", "cascading", "--replay", path, "--out", out,
                       "--sizes", "2^20", "--passes-sizes", "2^10")
    assert code == 0, err
    report = json.loads((out / "report.json").read_text())
    assert len(report["devices"]) == 1
    d = report["devices"][0]
    assert d["gpus"] == [SYNTHETIC_DEVICE["uuid"], SECOND_GPU["uuid"]]
    f32 = next(w for w in d["sweep"] if w["dtype"] == "float32")
    cell = next(c for c in f32["points"] if c["variant"] == p.variant_label
                and c["launch"] == p.launch_label)
    assert cell["gbps"] == 1234.5  # the second GPU's own row
    assert not d["missing"]["sweep"]  # every other point from the first GPU
    assert "Measured on 2 GPUs of this model" in (out / "report.md").read_text()
