"""What reducetune.reduce needs to know of a device array, whatever library made it.

PyTorch tensors and CuPy arrays are read through their own attributes (the fastest way, and
the way to learn their current stream); anything else through ``__cuda_array_interface__``
or DLPack (read by nanobind, ``_core.array_info``). The result is allocated by the input's
library, so that it composes with the caller's code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from reducetune import _core
from reducetune._space import DTYPES as SUPPORTED  # (the types the core reduces)
from reducetune.errors import InvalidConfiguration
_DLPACK_CUDA = 2  # DLPack's kDLCUDA


@dataclass(frozen=True)
class DeviceArray:
    ptr: int
    n: int
    dtype: str
    device: int
    stream: int
    empty: Callable[[], Any]  # a new 0-d array of the input's library, dtype and device
    full: Callable[[int | float], Any]  # a 0-d array holding a value (empty reductions)


def _unsupported(dtype: str, hint: str) -> InvalidConfiguration:
    return InvalidConfiguration(
        f"reducetune reduces {', '.join(SUPPORTED)}; this array holds {dtype or 'another type'}"
        f" ({hint})")


def raw_stream_query(torch: Any) -> Callable[[int], int]:
    """The current stream's raw handle (an int) of a device ordinal, without a Stream object per
    call; the public call where a PyTorch build lacks the private one. One lookup for every
    fast path (fast_call, eager, axis_fast, torch_op)."""
    return getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
        lambda i: torch.cuda.current_stream(i).cuda_stream)


def torch_dtype(x: Any) -> str:
    """The type name of a PyTorch tensor on the GPU and contiguous; InvalidConfiguration, saying
    what to do instead, for a host tensor or a view with gaps (the whole-array and the axis
    calls both need one run of device memory)."""
    if not x.is_cuda:
        raise InvalidConfiguration("a host (CPU) tensor: reducetune reduces GPU memory; move it "
                                   "with x.cuda(), or use torch.sum for host data")
    if not x.is_contiguous():
        raise InvalidConfiguration("a non-contiguous tensor view: reduce x.contiguous() (a copy) "
                                   "instead")
    return str(x.dtype).removeprefix("torch.")


def _torch(x: Any) -> DeviceArray:
    import torch  # optional: only for PyTorch tensors

    dtype = torch_dtype(x)
    if dtype not in SUPPORTED:
        raise _unsupported(dtype, "convert with x.float() or x.double()")
    dev = x.device
    return DeviceArray(x.data_ptr(), x.numel(), dtype, dev.index or 0,
                       torch.cuda.current_stream(dev).cuda_stream,
                       lambda: torch.empty((), dtype=x.dtype, device=dev),
                       lambda v: torch.full((), v, dtype=x.dtype, device=dev))


def _cupy(x: Any) -> DeviceArray:
    import cupy  # optional: only for CuPy arrays

    if not (x.flags.c_contiguous or x.flags.f_contiguous):
        raise InvalidConfiguration("a non-contiguous array view: reduce cupy.ascontiguousarray(x)"
                                   " (a copy) instead")
    dtype = x.dtype.name
    if dtype not in SUPPORTED:
        raise _unsupported(dtype, "convert with x.astype(cupy.float32)")
    dev = x.device.id
    def on_device(make: Callable[[], Any]) -> Any:
        with cupy.cuda.Device(dev):
            return make()
    return DeviceArray(x.data.ptr, x.size, dtype, dev, cupy.cuda.get_current_stream(dev).ptr,
                       lambda: on_device(lambda: cupy.empty((), dtype=x.dtype)),
                       lambda v: on_device(lambda: cupy.full((), v, dtype=x.dtype)))


def _dense(shape: tuple[int, ...], strides: tuple[int, ...] | None, itemsize: int) -> bool:
    if strides is None:
        return True
    expect = itemsize
    for extent, stride in sorted(zip(shape, strides), key=lambda p: p[1]):
        if extent > 1 and stride != expect:
            return False
        expect *= extent
    return True


def _cupy_result(dtype: str) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    try:
        import cupy  # optional: only for CuPy arrays
    except ImportError as e:
        raise InvalidConfiguration("reducetune returns a PyTorch tensor or a CuPy array; for "
                                   "another library's array install CuPy (the result is a 0-d "
                                   "CuPy array)") from e
    return (lambda: cupy.empty((), dtype=dtype), lambda v: cupy.full((), v, dtype=dtype))


def _interface(x: Any) -> DeviceArray:
    cai = x.__cuda_array_interface__
    shape = tuple(cai["shape"])
    typestr = cai["typestr"]
    import numpy as np  # optional: only for NumPy's own types

    dt = np.dtype(typestr)
    if dt.name not in SUPPORTED:
        raise _unsupported(dt.name, "convert it to one of these first")
    if not _dense(shape, cai.get("strides"), dt.itemsize):
        raise InvalidConfiguration("a non-contiguous array view: make a contiguous copy first")
    n = int(np.prod(shape)) if shape else 1
    import cupy  # optional: only for CuPy arrays

    empty, full = _cupy_result(dt.name)
    return DeviceArray(int(cai["data"][0]), n, dt.name, cupy.cuda.Device().id,
                       cupy.cuda.get_current_stream().ptr, empty, full)


def _dlpack(x: Any) -> DeviceArray:
    ptr, shape, strides, dtype, device_type, device_id = _core.array_info(x)
    if device_type != _DLPACK_CUDA:
        raise InvalidConfiguration("a host array: reducetune reduces GPU memory (numpy: use "
                                   "np.sum, or move the data with cupy.asarray / torch.as_tensor"
                                   "(..., device='cuda'))")
    if dtype not in SUPPORTED:
        raise _unsupported(dtype, "convert it to one of these first")
    if not _dense(tuple(shape), tuple(strides), 1) and shape:
        raise InvalidConfiguration("a non-contiguous array view: make a contiguous copy first")
    n = 1
    for extent in shape:
        n *= extent
    empty, full = _cupy_result(dtype)
    return DeviceArray(ptr, n, dtype, device_id, 0, empty, full)


def describe(x: Any) -> DeviceArray:
    """The array's pointer, size, type, device, current stream and result allocators;
    InvalidConfiguration for a host array, a view with gaps or an unsupported type."""
    module = type(x).__module__
    if module.startswith("torch"):
        return _torch(x)
    if module.startswith("cupy"):
        return _cupy(x)
    if module.startswith("numpy") or isinstance(x, (list, tuple, int, float)):
        raise InvalidConfiguration("a host array: reducetune reduces GPU memory (numpy: use "
                                   "np.sum, or move the data with cupy.asarray first)")
    if hasattr(x, "__cuda_array_interface__"):
        return _interface(x)
    if hasattr(x, "__dlpack__"):
        return _dlpack(x)
    raise InvalidConfiguration(f"cannot reduce a {type(x).__name__}: pass a CuPy array, a "
                               "PyTorch tensor, or an object with __cuda_array_interface__ or "
                               "__dlpack__")
