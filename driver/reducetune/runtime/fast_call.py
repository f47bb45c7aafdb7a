"""The per-call path of reducetune.reduce for PyTorch tensors and CuPy arrays, kept lean.

Why a separate path: the first benchmark (H100, docs/results/h100_2026-11-23_runtime/) put
15–40 µs of Python between the events around ``reduce(tensor)`` when the C++ Reducer itself
took 7 µs: ``torch.cuda.current_stream()`` builds a Stream object, a dataclass and closures
were made per call, and CuPy's result was allocated inside a ``Device`` context. Here each
call reads plain attributes, asks for the raw stream handle, and allocates the result
directly; anything unusual (an empty array, a host tensor, a view, another type) falls back
to ``runtime.arrays.describe``, which says what is wrong.

``prepare(x)`` returns (data pointer, n, dtype name, device, stream, result, result pointer),
or None when the slow path must decide.
"""

from __future__ import annotations

from typing import Any, Callable

from reducetune._space import DTYPES
from reducetune.runtime.arrays import raw_stream_query

Prepared = tuple[int, int, str, int, int, Any, int]
_by_type: dict[type, Callable[[Any], Prepared | None]] = {}

# Result tensors per (device, dtype, stream): 0-d views of one buffer of SLOTS elements, each
# handed out once (never reused, so two results never share an element). Allocating a 0-d
# tensor costs PyTorch 3-5 µs of host time per call, as much as the rest of the call; one
# buffer per SLOTS calls costs about 0.1 µs a call. The buffer is allocated on the stream it
# is then written on, so PyTorch's caching allocator orders its reuse after the last write.
SLOTS = 256
_results: dict[tuple[int, Any, int], list[tuple[Any, int]]] = {}


def _refill(x: Any, key: tuple[int, Any, int]) -> list[tuple[Any, int]]:
    import torch  # optional: only for PyTorch tensors

    buf = torch.empty(SLOTS, dtype=x.dtype, device=x.device)
    base, size = buf.data_ptr(), buf.element_size()
    slots = [(v, base + i * size) for i, v in enumerate(buf.unbind())]
    slots.reverse()  # pop() hands them out in address order
    _results[key] = slots
    return slots


def _torch_path() -> Callable[[Any], Prepared | None]:
    import torch  # optional: only for PyTorch tensors

    names = {getattr(torch, d): d for d in DTYPES}
    raw = raw_stream_query(torch)

    def prepare(x: Any) -> Prepared | None:
        dtype = names.get(x.dtype)
        n = x.numel()
        if dtype is None or n == 0 or not x.is_cuda or not x.is_contiguous() or x.requires_grad:
            return None
        dev = x.get_device()
        stream = raw(dev)
        key = (dev, x.dtype, stream)
        slots = _results.get(key) or _refill(x, key)
        out, out_ptr = slots.pop()
        return x.data_ptr(), n, dtype, dev, stream, out, out_ptr

    return prepare


def names_by_char(dtype_of: Callable[[str], Any]) -> dict[str, str]:
    """{an array library's type character: the core's dtype name} for the core's types that
    the library has (``dtype_of`` is ``cupy.dtype``, NumPy's rules): bfloat16 is the core's but
    not NumPy's, so it is left out rather than failing the first CuPy call."""
    out = {}
    for d in DTYPES:
        try:
            out[dtype_of(d).char] = d
        except TypeError:
            continue
    return out


def _cupy_path() -> Callable[[Any], Prepared | None]:
    import cupy  # optional: only for CuPy arrays

    names = names_by_char(cupy.dtype)
    get_device = cupy.cuda.runtime.getDevice
    current_stream = cupy.cuda.get_current_stream

    def prepare(x: Any) -> Prepared | None:
        dtype = names.get(x.dtype.char)
        n = x.size
        flags = x.flags
        if dtype is None or n == 0 or not (flags.c_contiguous or flags.f_contiguous):
            return None
        dev = x.device.id
        if dev != get_device():
            return None  # the slow path allocates the result on the array's device
        out = cupy.empty((), dtype=x.dtype)
        return x.data.ptr, n, dtype, dev, current_stream().ptr, out, out.data.ptr

    return prepare


def prepare(x: Any) -> Prepared | None:
    t = type(x)
    path = _by_type.get(t)
    if path is None:
        module = t.__module__
        if module.startswith("torch"):
            path = _torch_path()
        elif module.startswith("cupy"):
            path = _cupy_path()
        else:
            path = _none
        _by_type[t] = path
    return path(x)


def _none(x: Any) -> None:
    return None
