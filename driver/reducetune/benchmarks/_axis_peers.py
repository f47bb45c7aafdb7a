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
- ceilings: ``memcpy``, cudaMemcpyAsync device to device moving as many bytes read + written
  as the reduction (a copy of (input + output) / 2 bytes), timed in the same rounds; and the
  project's read-only streaming kernel over as many bytes as the input
  (baseline/streaming_read, ``_core.streaming_ceiling``: its best shape, cold L2).
"""

from __future__ import annotations

import ctypes
import functools
import os
import time
from typing import Any, Callable

from reducetune import _core
from reducetune.benchmarks.runtime import _cupy_timer, _torch_timer

PEERS = ("torch", "torch_compile", "jax", "cupy_cub", "cub_segmented")
DEFAULT_SEGMENTED_LIB = "build/libreducetune_segmented.so"


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


class Peers:
    """The contenders' timers for one input tensor x reduced over `axis`; close() frees what
    the C++ helper allocated. `outputs` keeps one answer of each, for the correctness check."""

    def __init__(self, x: Any, axis: int, jax: Any | None, lib: Any | None) -> None:
        import torch  # optional: only for PyTorch tensors

        self.x, self.axis, self._lib, self._handle = x, axis, lib, None
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
        self.timers["cub_segmented"] = _torch_timer(lambda: lib.rt_segmented_run(handle, stream))

    def _memcpy(self, x: Any, axis: int) -> None:
        import torch  # optional: only for PyTorch tensors

        moved = x.numel() * x.element_size() + x.numel() // x.shape[axis] * x.element_size()
        src = torch.empty(moved // 2, dtype=torch.uint8, device=x.device)
        dst = torch.empty_like(src)
        # contiguous, same type and device: PyTorch's copy_ is one cudaMemcpyAsync
        self.timers["memcpy"] = _torch_timer(lambda: dst.copy_(src))
        self._copy_buffers = (src, dst)

    def close(self) -> None:
        if self._handle:
            self._lib.rt_segmented_free(self._handle)
            self._handle = None
        self._copy_buffers = None


@functools.lru_cache(maxsize=None)  # one measurement per input size: shapes of a total share it
def streaming_ceiling_s(input_bytes: int) -> float | None:
    """Seconds the project's read-only streaming kernel takes over as many bytes as the input
    (its fastest shape; the bytes rounded down to its 16-byte loads)."""
    r = _core.streaming_ceiling(0, input_bytes - input_bytes % 16)
    rate = float(r["bytes_per_s"])
    return input_bytes / rate if rate > 0 else None
