"""On the GPU: ten points of int32 sum, one after another through the real worker process
(GpuEvaluator, fault isolation on), with the test-only `faulting` family fifth (a write through
a wild pointer: an illegal address that poisons the CUDA context). The faulting point is a
failure whose reason names the fault; the nine others are verified measurements, those after
it from a fresh worker. Skips with the reason where there is no GPU.

The faulting family lives in tests/data/templates, laid over the embedded templates by
REDUCETUNE_TEMPLATE_DIR: the worker inherits the variable, and this process reloads its
templates from the same variable, so the points are labelled by the library the worker uses.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import reducetune
from reducetune import _core
from reducetune.evaluate.base import data_of, problem_of, sampling_options, workload
from reducetune.evaluate.gpu import GpuEvaluator, WorkerClient

pytestmark = pytest.mark.gpu

TEMPLATES = Path(__file__).resolve().parents[1] / "data" / "templates"
N = (1 << 20) + 3  # not a multiple of any block or vector width
SAMPLES = 10  # min = max: a short, fixed count per point
FAULT_WORDS = ("illegal", "launch failure", "SIG")  # CUDA's words, or the signal that killed it
SEED_PRESETS = ("harris1", "harris3", "harris5_shfl")


def skip_without_a_gpu() -> None:
    # Asked of a worker, so that this process never creates a CUDA context. Only the core's
    # DeviceError skips: a worker that cannot start or answer is a failure, not "no GPU".
    probe = WorkerClient(timeout_s=300)
    try:
        reply = probe.call("query_device", ordinal=0)
    finally:
        probe.close()
    if not reply["ok"] and reply["error"] == "DeviceError":
        pytest.skip(f"no GPU: {reply['message']}")
    assert reply["ok"], reply


@pytest.fixture
def evaluator(monkeypatch):
    skip_without_a_gpu()
    # Before the worker starts: it reads the variable when it first loads its templates.
    monkeypatch.setenv("REDUCETUNE_TEMPLATE_DIR", str(TEMPLATES))
    _core.set_templates("")  # this process too: reload from the variable
    options = dict(sampling_options(1.0, SAMPLES, hot=False), min_samples=SAMPLES)
    ev = GpuEvaluator(0, timeout_s=300, options=options)
    try:
        yield ev
    finally:
        ev.close()
        _core.set_templates("")  # reloaded lazily, after monkeypatch has unset the variable


def healthy(point) -> bool:
    # The seed-faithful unsafe warp unroll (flagged) may be wrong on Volta and later.
    return not point.flagged and "volatile_unsafe" not in point.params.values()


def ten_points(limits) -> list:
    """Nine healthy points (tunable presets, three seeds, seeded sampled tunable points) with
    the faulting preset inserted fifth; the spaces are the tuner's (the evaluator's limits)."""
    tunable = reducetune.Space("tunable", "int32", "sum", limits)
    points = [p.point for p in tunable.presets() if not p.reasons and healthy(p.point)]
    seeds = reducetune.Space("seeds", "int32", "sum", limits)
    for name in SEED_PRESETS:
        preset = seeds.preset(name)
        assert not preset.reasons, (name, preset.reasons)
        points.append(preset.point)
    choices = tunable.choices()
    rng = random.Random(_core.SPACE_SEED)
    for _ in range(10_000):
        if len(points) >= 9:
            break
        p = tunable.point({k: rng.choice(v) for k, v in choices.items()})
        if healthy(p) and not tunable.check(p) and p not in points:
            points.append(p)
    assert len(points) >= 9
    points = points[:9]
    faulting = reducetune.Space("faulting", "int32", "sum", limits).presets()[0]
    assert not faulting.reasons, faulting.reasons
    points.insert(4, faulting.point)
    return points


def test_a_faulting_variant_fifth_of_ten_fails_with_its_reason_and_the_nine_others_are_measured(
        evaluator):
    points = ten_points(evaluator.limits)
    assert len(points) == 10 and [p.family for p in points].count("faulting") == 1
    w = dict(workload("int32", "sum", N, seed=7), offset_elements=1)  # misaligned input too
    results = []
    for i, p in enumerate(points):
        results.append(evaluator.evaluate(p, problem_of(w), data_of(w)))
        if p.family == "faulting":
            assert evaluator.workers_started == 1, "the points before the fault shared a worker"
    for p, r in zip(points, results):
        where = f"{p.variant_label} / {p.launch_label}: {r}"
        if p.family == "faulting":
            assert r["status"] == "failed", where
            assert r["kind"] in ("launch_error", "LaunchError", "worker_crashed"), where
            assert any(word in r["reason"] for word in FAULT_WORDS), where
            continue
        assert r["status"] == "ok" and r["kind"] == "", where
        assert r["expected"] == r["got"], where  # int32: verified exactly
        assert len(r["samples_s"]) == SAMPLES and r["median_s"] > 0, where
        assert r["bytes_per_s"] > 0, where
    assert sum(r["status"] == "ok" for r in results) == 9
    assert evaluator.workers_started == 2  # one before the fault, a fresh one after it
