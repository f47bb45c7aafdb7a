"""The GPU worker sees its GPU alone (evaluate/gpu.py ``one_device``), and can be started ahead
of its GpuEvaluator (``prestart``), without a GPU.

Until 2026-11-26 the extension measured on CUDA's current device, 0, whatever ordinal a call
named, so the two workers of ``tune --devices 0,1`` both measured on GPU 0 (issue 25: each
point about twice as slow as alone). Each worker now runs with CUDA_VISIBLE_DEVICES naming its
GPU and asks for it as ordinal 0; the tuner still knows it by its own ordinal. A fake worker
process (the real WorkerClient, pipe and JSON) replies with what its environment said.
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from reducetune import errors
from reducetune.evaluate import gpu as _gpu

# A worker that answers query_device with the CUDA_VISIBLE_DEVICES it was started with (as the
# device's uuid) and evaluate with the ordinal it was asked, counting its query_device calls;
# with FAKE_SEES_NONE set, a worker given a list sees no device, as CUDA does for a list
# naming a GPU that does not exist. Other calls are answered with a ceiling and their name;
# with FAKE_LOG set, each call's name is appended to that file as the worker reads it.
FAKE = textwrap.dedent("""
    import json, os, sys
    asked = 0
    for line in sys.stdin:
        r = json.loads(line)
        a, env = r["args"], os.environ.get("CUDA_VISIBLE_DEVICES")
        if os.environ.get("FAKE_LOG"):
            with open(os.environ["FAKE_LOG"], "a") as log:
                log.write(r["call"] + "\\n")
        if r["call"] == "query_device":
            asked += 1
            if env is not None and os.environ.get("FAKE_SEES_NONE"):
                out = {"ok": False, "error": "DeviceError",
                       "message": "no usable CUDA device: no CUDA-capable device is detected"}
            elif env is None and a["ordinal"] >= 2:
                out = {"ok": False, "error": "DeviceError",
                       "message": f"device {a['ordinal']} does not exist (2 devices)"}
            else:
                out = {"ok": True, "result": {"name": "fake", "uuid": env, "ordinal": a["ordinal"],
                       "arch": "sm_90", "sm_count": 132, "max_threads_per_block": 1024,
                       "runtime_version": 12080, "asked": asked}}
        else:
            out = {"ok": True, "result": {"bytes_per_s": 1e12, "samples_s": [a.get("ordinal")],
                                          "call": r["call"]}}
        print(json.dumps(out), flush=True)
""")


class FakeWorker(_gpu.WorkerClient):
    started_here = 0

    def __init__(self, timeout_s: float = 60.0, argv: list[str] | None = None) -> None:
        super().__init__(timeout_s, [sys.executable, "-c", FAKE])
        FakeWorker.started_here += 1


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(_gpu, "WorkerClient", FakeWorker)
    monkeypatch.setattr(_gpu, "_STARTED", {})
    FakeWorker.started_here = 0
    return FakeWorker


@pytest.mark.parametrize("listed, ordinal, want", [
    (None, 1, ("1", 0)), (None, 0, ("0", 0)), ("3,5", 1, ("5", 0)), (" 3 , 5 ", 0, ("3", 0)),
    ("GPU-aa,GPU-bb", 1, ("GPU-bb", 0)), ("3,5", 2, (None, 2)), ("", 0, (None, 0))])
def test_the_worker_of_an_ordinal_sees_that_gpu_alone_as_device_0(listed, ordinal, want):
    environ = {"PATH": "/bin"} if listed is None else {"PATH": "/bin",
                                                        "CUDA_VISIBLE_DEVICES": listed}
    env, asked = _gpu.one_device(ordinal, environ)
    assert (env and env["CUDA_VISIBLE_DEVICES"], asked) == want
    if env is not None:
        assert env["PATH"] == "/bin"  # the rest of the environment kept


def test_a_gpu_evaluator_asks_its_worker_for_device_0_and_reports_its_own_ordinal(fake,
                                                                                  monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    ev = _gpu.GpuEvaluator(1)
    try:
        assert ev.device["uuid"] == "1"  # the worker saw GPU 1 alone
        assert ev.device["ordinal"] == 1
        assert ev.ceiling_bytes_per_s() == 1e12
        assert ev.ceiling_samples_s == [0]  # asked of the worker as its device 0
    finally:
        ev.close()


def test_a_prestarted_worker_is_taken_by_the_evaluator_with_its_one_query(fake, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,6")
    _gpu.prestart(1)
    _gpu.prestart(1)  # a second prestart of one ordinal starts nothing more
    assert fake.started_here == 1
    ev = _gpu.GpuEvaluator(1, timeout_s=30)
    try:
        assert fake.started_here == 1 and not _gpu._STARTED
        assert ev.device["uuid"] == "6" and ev.device["asked"] == 1
        assert ev._worker.timeout_s == 30  # the evaluator's own timeout from then on
    finally:
        ev.close()


def test_a_ceiling_asked_ahead_is_read_before_the_evaluators_next_call(fake, monkeypatch,
                                                                      tmp_path):
    """prestart(ceiling=True) (a --devices worker's tune run): the worker measures the ceiling
    right after its device, while the command opens its files; the evaluator takes both
    replies, so its next call's reply is its own, and the ceiling is not asked again."""
    log = tmp_path / "calls"
    monkeypatch.setenv("FAKE_LOG", str(log))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    _gpu.prestart(1, ceiling=True)
    ev = _gpu.GpuEvaluator(1)
    try:
        assert ev.compile_ahead([])["call"] == "compile_ahead"  # not the ceiling's reply
        assert ev.ceiling_bytes_per_s() == 1e12 and ev.ceiling_samples_s == [0]
        assert ev.ceiling_bytes_per_s() == 1e12
    finally:
        ev.close()
    assert log.read_text().split() == ["query_device", "streaming_ceiling", "compile_ahead"]


def test_a_gpu_the_list_cannot_show_is_reported_in_cudas_words_for_all_gpus(fake, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("FAKE_SEES_NONE", "1")
    with pytest.raises(errors.DeviceError, match="device 3 does not exist"):
        _gpu.GpuEvaluator(3)
    assert fake.started_here == 2  # the one-GPU worker, then one that sees them all


def test_a_ceiling_asked_ahead_of_the_evaluator_is_read_before_its_next_call(fake, monkeypatch,
                                                                            tmp_path):
    """ask_ceiling_ahead (tune, after its evaluator opens: the ceiling measured while it opens
    the results file and the storage): measured on a thread, read before the next call, whose
    reply is then its own; not asked again, nor where prestart measured it already."""
    log = tmp_path / "calls"
    monkeypatch.setenv("FAKE_LOG", str(log))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    ev = _gpu.GpuEvaluator(1)
    try:
        ev.ask_ceiling_ahead()
        assert ev.compile_ahead([])["call"] == "compile_ahead"
        assert ev.ceiling_bytes_per_s() == 1e12 and ev.ceiling_samples_s == [0]
        ev.ask_ceiling_ahead()  # known: nothing asked
        assert ev.ceiling_bytes_per_s() == 1e12
    finally:
        ev.close()
    assert log.read_text().split() == ["query_device", "streaming_ceiling", "compile_ahead"]
