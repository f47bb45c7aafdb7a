"""The axis benchmark's contenders beside reducetune, each timed as an application calls it
(hot data, one call between two CUDA events on the current stream; JAX by the wall clock, see
below), and the two ceilings of the same bytes.

- ``torch``: ``x.sum(dim)``, eager; ``torch_compile``: ``torch.compile`` of the same (Inductor
  and Triton), compiled for the shape before timing.
- ``jax``: ``jax.jit(jnp.sum(axis))`` where JAX imports; JAX runs on its own stream, so a call
  is timed by the host's clock around the call and ``block_until_ready`` (a few µs more than
  CUDA events would say).
- ``cupy_cub``: ``cupy.sum(axis)`` with CuPy's CUB accelerator on (CuPy uses CUB's segmented
  reduce where the reduced axes are contiguous, and its own kernel elsewhere).
- ``cub_segmented``: CUB's DeviceSegmentedReduce::Sum from C++ (tuner/tools/
  segmented_reduce.cu, loaded with ctypes; columns read through a strided iterator).
- ceilings, timed in the same rounds as every contender (not peers: never the fastest peer):
  ``memcpy``, cudaMemcpyAsync device to device moving as many bytes read + written as the
  reduction (a copy of (input + output) / 2 bytes); ``streaming``, the project's read-only
  streaming kernel (baseline/streaming_read) launched once over the input tensor itself
  (``_core.streaming_read``: its bytes rounded down to 16), in the read shape the tuner's
  protocol found fastest. Issue 26 asks for every target's timing as applications call
  them; the tuner's protocol of the streaming kernel (``streaming_protocol``:
  ``_core.streaming_ceiling``, the whole sequence queued behind a gate so that no launch
  latency is timed, L2 flushed before each sample, its own buffer) is kept as a reference:
  in the bfloat16 run of 2026-11-27 on an H200 (docs/results/h200x4_2026-11-27_axis_bench_
  2p28_rows_of_vectors), where r >= 1024 leaves little output, reducetune's one-launch points
  took 0.1-6.4 us more than it, its split column tiles 8.7-18.9 us: launch latency and a
  predecessor's L2 that the gated time never pays and the ceiling in the rounds now does.
- a reference beside the ceilings, in the same rounds: ``mixed``, the streaming read that also
  writes as many bytes as the reduction's output, spread along the input as a reduction writes
  them (``_core.streaming_mixed``): a plain stream with the reduction's own reads and writes.
  On the H200 a stream writing 1/2 to 1/128 of what it reads runs at 0.95-0.97 x the read-only
  rate (docs/results/h200_2026-11-28_write_stream), so the read-only ceiling is not like with
  like for short rows; the target still judges against the two ceilings.
"""

from __future__ import annotations

import ctypes
import functools
import os
import time
from typing import Any, Callable

from reducetune import _core
from reducetune.benchmarks._axis_ceilings import MIXED
from reducetune.benchmarks.runtime import _cupy_timer, _torch_timer

PEERS = ("torch", "torch_compile", "jax", "cupy_cub", "cub_segmented")
DEFAULT_SEGMENTED_LIB = "build/libreducetune_segmented.so"
# How the report's header says the ceilings are timed (the "Ceilings:" line of axis.md).
CEILINGS_TIMING = ("both timed as applications call them, in the same rounds as the contenders "
                   "(one call between two CUDA events, timed in C++ as reducetune's C++ call, the "
                   "GPU idle before it, hot data, its launch and what the call before it left in "
                   "L2 included, primed as every contender): memcpy, cudaMemcpyAsync device to "
                   "device of (input + output) / 2 bytes, so that it reads and writes as many "
                   "bytes as the reduction; streaming, the project's read-only streaming kernel "
                   "launched once over the input tensor itself (its bytes rounded down to 16), in "
                   "the shape fastest in the tuner's protocol. The target's ceiling is the faster "
                   "of the two by rate. For reference, the same kernel in the tuner's protocol "
                   "('streaming, tuner's protocol'): every read shape over a buffer of the input's"
                   " size, the whole sequence queued behind a gate (no launch latency timed), L2 "
                   "flushed (cold) before each sample, its fastest shape's median; measured once "
                   "per input size. A reference, not a ceiling of the target: 'mixed', the "
                   "streaming read of the input that also writes as many bytes as the output, "
                   "spread along the input as the reduction writes them (a plain stream with the "
                   "reduction's own reads and writes), timed in the same rounds")


def jax_module() -> Any | None:
    """jax.numpy, or None; JAX must not take most of the GPU's memory at import, which
    PyTorch needs (XLA_PYTHON_CLIENT_PREALLOCATE)."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax  # optional: a peer where installed

        return jax
    except ImportError:
        return None


def segmented_lib(path: str | None) -> Any | None:
    """The CUB segmented-reduce helper (ctypes), or None where it was not built."""
    path = path or os.environ.get("REDUCETUNE_SEGMENTED_LIB", DEFAULT_SEGMENTED_LIB)
    if not os.path.isfile(path):
        return None
    lib = ctypes.CDLL(os.path.abspath(path))
    lib.rt_segmented_make.restype = ctypes.c_void_p
    lib.rt_segmented_make.argtypes = [ctypes.c_void_p, ctypes.c_void_p] + [ctypes.c_longlong] * 3
    lib.rt_segmented_run.restype = ctypes.c_int
    lib.rt_segmented_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.rt_segmented_time.restype = ctypes.c_int
    lib.rt_segmented_time.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                      ctypes.POINTER(ctypes.c_double)]
    lib.rt_segmented_free.argtypes = [ctypes.c_void_p]
    return lib


def torch_of(a: Any) -> Any:
    import torch  # optional: only for PyTorch tensors

    return torch.from_dlpack(a)


def _wall_timer(call: Callable[[], Any]) -> Callable[[], float]:
    def once() -> float:
        t0 = time.perf_counter()
        call().block_until_ready()
        return time.perf_counter() - t0

    return once


def cxx_axis_timer(reducer: Any, x: Any, view: tuple[int, int, int],
                   host: list[float] | None = None) -> Callable[[], float]:
    """The reducer's C++ axis call on x's pointer and stream (what a C++ application calls:
    reducer::reduce_axis), its output allocated once, timed in C++
    (_core.app_time_axis_call: the events around the C++ call, no Python between them, as the
    runtime benchmark times the Reducer); each call's host time appended to `host`. The tune
    ranks its candidates by the timer the benchmark reports them with."""
    import torch  # optional: only for PyTorch tensors

    out = torch.empty(view[0] * view[2], device=x.device, dtype=x.dtype)
    args = (x.data_ptr(), *view, out.data_ptr(), torch.cuda.current_stream().cuda_stream,
            x.device.index or 0)
    timed, core = _core.app_time_axis_call, reducer._core

    def once() -> float:
        seconds, host_s = timed(core, *args)
        if host is not None:
            host.append(host_s)
        return float(seconds)

    once.keep = out  # type: ignore[attr-defined]  # the output lives as long as the timer
    return once


def _in_out_bytes(x: Any, axis: int) -> tuple[int, int]:
    """The bytes of x and of its sum over `axis` (the same element type): what memcpy and the
    streams move."""
    return x.numel() * x.element_size(), x.numel() // x.shape[axis] * x.element_size()


class Peers:
    """The contenders' timers for one input tensor x reduced over `axis`; close() frees what
    the C++ helper allocated. `outputs` keeps one answer of each, for the correctness check."""

    def __init__(self, x: Any, axis: int, jax: Any | None, lib: Any | None,
                 streaming_shape: str | None = None) -> None:
        import torch  # optional: only for PyTorch tensors

        self.x, self.axis, self._lib, self._handle = x, axis, lib, None
        self._mixed_out: Any = None
        self.timers: dict[str, Callable[[], float]] = {}
        self.outputs: dict[str, Any] = {}
        self.timers["torch"] = _torch_timer(lambda: x.sum(dim=axis))
        torch._dynamo.reset()  # one compiled graph per shape, never a recompile limit reached
        compiled = torch.compile(lambda t: t.sum(dim=axis), dynamic=False)
        self.outputs["torch_compile"] = compiled(x)
        self.timers["torch_compile"] = _torch_timer(lambda: compiled(x))
        self._cupy(x, axis)
        if jax is not None:
            # torch exports only from the tensor's own device as current; on a machine of two
            # GPUs the peers' setup left GPU 1 current (BufferError, 2 x H200, 2026-11-26)
            with torch.cuda.device(x.device):
                xj = jax.dlpack.from_dlpack(x)
            f = jax.jit(lambda a: jax.numpy.sum(a, axis=axis))
            self.outputs["jax"] = torch_of(f(xj).block_until_ready())
            self.timers["jax"] = _wall_timer(lambda: f(xj))
        if lib is not None and x.dtype == torch.float32:
            self._segmented(x, axis)
        self._memcpy(x, axis)
        if streaming_shape is not None:
            self._streaming(x, streaming_shape)
            self._mixed(x, axis)

    def _cupy(self, x: Any, axis: int) -> None:
        if str(x.dtype) == "torch.bfloat16":  # CuPy has no bfloat16
            return
        try:
            import cupy  # optional: a peer where installed
        except ImportError:
            return
        cupy._core.set_routine_accelerators(["cub"])
        xc = cupy.from_dlpack(x)
        self.outputs["cupy_cub"] = torch_of(xc.sum(axis=axis))
        self.timers["cupy_cub"] = _cupy_timer(lambda: xc.sum(axis=axis))

    def _segmented(self, x: Any, axis: int) -> None:
        import torch  # optional: only for PyTorch tensors

        outer, r, inner = (1, x.shape[0], x.shape[1]) if axis == 0 else (x.shape[0], x.shape[1], 1)
        out = torch.empty(outer * inner, device=x.device, dtype=x.dtype)
        self._handle = self._lib.rt_segmented_make(x.data_ptr(), out.data_ptr(), outer, r, inner)
        if not self._handle:
            return
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        lib, handle = self._lib, self._handle
        lib.rt_segmented_run(handle, stream)
        self.outputs["cub_segmented"] = out
        seconds = ctypes.c_double()

        def once() -> float:  # timed in C++ (rt_segmented_time), as the C++ axis call
            if lib.rt_segmented_time(handle, stream, ctypes.byref(seconds)) != 0:
                raise RuntimeError("CUB's segmented reduce failed (rt_segmented_time)")
            return seconds.value

        self.timers["cub_segmented"] = once

    def _memcpy(self, x: Any, axis: int) -> None:
        import torch  # optional: only for PyTorch tensors

        moved = sum(_in_out_bytes(x, axis))
        src = torch.empty(moved // 2, dtype=torch.uint8, device=x.device)
        dst = torch.empty_like(src)
        args = (dst.data_ptr(), src.data_ptr(), src.numel(),
                torch.cuda.current_stream().cuda_stream, x.device.index or 0)
        copy = _core.app_time_memcpy  # one cudaMemcpyAsync, timed in C++ (lone_call.hpp)
        self.timers["memcpy"] = lambda: copy(*args)[0]
        self._copy_buffers = (src, dst)

    def _streaming(self, x: Any, shape: str) -> None:
        """The streaming kernel over x's own bytes (rounded down to its 16-byte loads; torch
        allocates x aligned), one launch on the current stream like the C++ axis call's: the
        extension's call with its arguments fixed here."""
        import torch  # optional: only for PyTorch tensors

        size = x.numel() * x.element_size()
        args = (x.data_ptr(), size - size % 16, torch.cuda.current_stream().cuda_stream, shape,
                x.device.index or 0)
        _core.streaming_read(*args)  # the device's sink and the shape's grid, made before any
        read = _core.app_time_streaming_read  # timed call; timed in C++ (lone_call.hpp)
        self.timers["streaming"] = lambda: read(*args)[0]

    def _mixed(self, x: Any, axis: int) -> None:
        """The mixed stream (a reference, never a ceiling of the target): the streaming read
        of x's own bytes that also writes as many bytes as the reduction's output, along the
        input as the reduction writes them (_core.streaming_mixed), one launch on the current
        stream; timed in C++ as the streaming kernel."""
        import torch  # optional: only for PyTorch tensors

        size, out_bytes = _in_out_bytes(x, axis)
        out = torch.empty(out_bytes + 4, dtype=torch.uint8, device=x.device)
        args = (x.data_ptr(), size - size % 16, out.data_ptr(), min(out_bytes, size - size % 16),
                torch.cuda.current_stream().cuda_stream, x.device.index or 0)
        mix = _core.app_time_streaming_mixed  # timed in C++ (lone_call.hpp)
        self.timers[MIXED] = lambda: mix(*args)[0]
        self._mixed_out = out

    def close(self) -> None:
        if self._handle:
            self._lib.rt_segmented_free(self._handle)
            self._handle = None
        self._copy_buffers = self._mixed_out = None


@functools.lru_cache(maxsize=None)  # one measurement per input size: shapes of a total share it
def streaming_protocol(input_bytes: int) -> dict[str, Any] | None:
    """The project's read-only streaming kernel in the tuner's protocol (_core.streaming_ceiling:
    gated, L2 flushed before each sample, its own buffer) over as many bytes as the input (rounded
    down to its 16-byte loads): the seconds those bytes take at its fastest shape's rate
    (``s``) and that shape's name (``shape``: the shape the rounds' ``streaming`` launches)."""
    r = _core.streaming_ceiling(0, input_bytes - input_bytes % 16)
    rate = float(r["bytes_per_s"])
    return {"s": input_bytes / rate, "shape": str(r["shape"])} if rate > 0 else None
