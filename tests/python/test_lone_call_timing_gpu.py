"""The axis benchmark's C++ contenders timed in C++ (driver/src/lone_call.hpp: two events
around the call, no Python between them), on the GPU (skipped without one; torch needed for
the buffers and the reference). Each timer runs its call for real: the axis call's output is
the sum, the copy copies, the read reads at no more than the HBM peak; and a call timed in
C++ takes no longer than the same call timed with events around its Python call, which adds
the interpreter's time before the launch."""

from __future__ import annotations

import statistics

import pytest

from conftest import NO_GPU
from reducetune import _core
from reducetune.runtime.axis import AxisReducer

pytestmark = pytest.mark.skipif(NO_GPU is not None, reason=NO_GPU or "")
torch = pytest.importorskip("torch", reason="no torch: the buffers and the events are PyTorch's")

BIG = 1 << 30


def _stream() -> int:
    return torch.cuda.current_stream().cuda_stream


def _python_timed_s(call, calls: int = 20) -> float:
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(calls):
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return statistics.median(times)


def test_the_axis_call_timed_in_cxx_reduces_and_reports_both_clocks():
    x = torch.randn(64, 1000, 3, device="cuda", dtype=torch.float32)
    out = torch.zeros(64 * 3, device="cuda", dtype=torch.float32)
    reducer = AxisReducer("float32", "sum")
    reducer.choice(64, 1000, 3)  # the point compiled and loaded: a first call's cost, not a call's
    seconds, host_s = _core.app_time_axis_call(reducer._core, x.data_ptr(), 64, 1000, 3,
                                               out.data_ptr(), _stream(), 0)
    want = x.double().sum(dim=1).reshape(-1)
    assert torch.allclose(out.double(), want, rtol=1e-5, atol=1e-3)
    assert 0 < seconds < 0.1 and 0 < host_s < 0.1, (seconds, host_s)


def test_the_copy_timed_in_cxx_copies_at_no_more_than_the_peak():
    peak = _core.query_device(0)["peak_bytes_per_s"]
    src = torch.arange(BIG // 4, dtype=torch.int32, device="cuda")
    dst = torch.zeros_like(src)
    times = [_core.app_time_memcpy(dst.data_ptr(), src.data_ptr(), BIG, _stream(), 0)[0]
             for _ in range(5)]
    assert torch.equal(dst, src)
    assert 2 * BIG / statistics.median(times) <= 1.02 * peak  # read and written, from HBM


def test_the_read_timed_in_cxx_is_no_slower_than_the_same_read_timed_around_python():
    peak = _core.query_device(0)["peak_bytes_per_s"]
    shape = str(_core.streaming_ceiling(0, BIG)["shape"])
    data = torch.zeros(BIG // 4, dtype=torch.int32, device="cuda")
    args = (data.data_ptr(), BIG, _stream(), shape)
    _core.streaming_read(*args)
    python = _python_timed_s(lambda: _core.streaming_read(*args))
    cxx = statistics.median(_core.app_time_streaming_read(*args)[0] for _ in range(20))
    assert BIG / cxx <= 1.02 * peak, (cxx, peak)
    assert cxx <= 1.02 * python, (cxx, python)  # no interpreter between the events
