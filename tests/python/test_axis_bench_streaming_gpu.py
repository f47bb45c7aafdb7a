"""The streaming kernel launched as an application launches it (``_core.streaming_read``, the
axis benchmark's ``streaming`` ceiling in the rounds) on the GPU (skipped without one; torch
needed for the buffers and events). One launch over 1 GiB, far beyond any L2, reads it: its
rate stays at or under the HBM peak (a launch that skipped the reads would take a few
microseconds, hundreds of TB/s) and near the rate the tuner's protocol measures for the same
shape, and it takes far longer than a launch over 1 MiB; the data is left as it was; a
misaligned pointer or a size not of whole 16-byte loads is refused."""

from __future__ import annotations

import statistics

import pytest

from conftest import NO_GPU
from reducetune import _core
from reducetune.errors import InvalidConfiguration

pytestmark = pytest.mark.skipif(NO_GPU is not None, reason=NO_GPU or "")
torch = pytest.importorskip("torch", reason="no torch: the buffers and the events are PyTorch's")

BIG, SMALL = 1 << 30, 1 << 20


def _median_s(ptr: int, size: int, shape: str, calls: int = 20) -> float:
    """The median of `calls` single launches between two events, the GPU idle before each."""
    stream = torch.cuda.current_stream().cuda_stream
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    _core.streaming_read(ptr, size, stream, shape)  # the sink and the grid, made once
    times = []
    for _ in range(calls):
        start.record()
        _core.streaming_read(ptr, size, stream, shape)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return statistics.median(times)


def test_one_launch_reads_its_bytes_at_no_more_than_the_hbm_peak():
    peak = _core.query_device(0)["peak_bytes_per_s"]
    protocol = _core.streaming_ceiling(0, BIG)
    shape = str(protocol["shape"])
    data = torch.arange(BIG // 4, dtype=torch.int32, device="cuda")
    before = int(data[-1])
    big = _median_s(data.data_ptr(), BIG, shape)
    small = _median_s(data.data_ptr(), SMALL, shape)
    rate = BIG / big
    assert rate <= 1.02 * peak, (rate, peak)  # it read the bytes, from HBM
    # hot data, a launch's latency: within a third of the gated, cold-L2 protocol's rate
    assert rate >= 0.67 * protocol["bytes_per_s"], (rate, protocol)
    # 1024 x the bytes take far longer than a launch; the shape's grid is the device's, not the
    # bytes': over 1 MiB most of a wide grid's blocks read nothing, and still launch (17.5 us
    # against 247 us for 1 GiB on an H200, 2026-11-27, the fastest shape then a wide one)
    assert big > 5 * small, (big, small)
    assert int(data[-1]) == before and int(data[7]) == 7  # read only


def test_every_named_shape_launches_and_a_bad_pointer_or_size_is_refused():
    data = torch.zeros(1 << 16, dtype=torch.uint8, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    for shape in ("grid-stride 256x4", "grid-stride 256x8", "even-share 256x4",
                  "even-share 256x8", "even-share 512x8", "even-share 256x16",
                  "even-share 256x4 x5 waves", "even-share 512x4", "even-share 1024x4",
                  "grid-stride 1024x4 x4 waves"):
        _core.streaming_read(data.data_ptr(), data.numel(), stream, shape)
    torch.cuda.synchronize()
    with pytest.raises(InvalidConfiguration, match="16-byte aligned"):
        _core.streaming_read(data.data_ptr() + 8, 1024, stream, "grid-stride 256x4")
    with pytest.raises(InvalidConfiguration, match="multiple of 16 bytes"):
        _core.streaming_read(data.data_ptr(), 1000, stream, "grid-stride 256x4")


@pytest.mark.parametrize("r", [2, 16, 128, 3000])
def test_the_mixed_stream_writes_exactly_its_words_and_reads_no_faster_than_the_peak(r: int):
    """``_core.streaming_mixed`` (the axis benchmark's reference): 1 GiB read, 1/r of it written,
    every word of the output written and not one past it (r = 3000: words that do not divide
    evenly among the tiles), the input left as it was, and the bytes read + written moved at
    no more than the HBM peak."""
    peak = _core.query_device(0)["peak_bytes_per_s"]
    data = torch.arange(BIG // 4, dtype=torch.int32, device="cuda")
    out_bytes = BIG // r // 4 * 4 + 2  # 2 bytes more: rounded down to whole words
    out = torch.full((out_bytes // 4 + 16,), -1, dtype=torch.int32, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    args = (data.data_ptr(), BIG, out.data_ptr(), out_bytes, stream)
    _core.streaming_mixed(*args)
    torch.cuda.synchronize()
    words = out_bytes // 4
    # each word is its thread's xor of 16-byte loads of arange: never -1 for these data
    assert int((out[:words] == -1).sum()) == 0
    assert bool((out[words:] == -1).all())  # nothing past the output
    times = [_core.app_time_streaming_mixed(*args)[0] for _ in range(10)]
    assert (BIG + words * 4) / statistics.median(times) <= 1.02 * peak
    assert int(data[-1]) == BIG // 4 - 1 and int(data[7]) == 7  # read only
