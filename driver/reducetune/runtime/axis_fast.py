"""The repeated axis call, resolved once: ``reducetune.reduce(x, op, axis=...)`` and an
``AxisReducer``'s call on a tensor whose type, shape and axis come back call after call.

Why: the GPU benchmarks (docs/results/*_2026-11-26_axis_bench_median_ci/, "Python call") put
the Python call at about four times the C++ call's host time, 20-60 us; each call went through
six layers (reduce, the determinism and file checks, the reducer's look-up, the library's
dispatch, the custom operator's wrapper, the eager path) that answered the same questions again.
Here the first call of a key goes that slow way (every check and message is there), then
``remember`` keeps what it resolved to: the reducer's C++ ``reduce_axis``, the view
(outer, r, inner), the result's shape and whether a mean divides by r. A repeat (``call``) does
what must be asked on each call and nothing else: the eager gate (nothing compiles, traces or
records a gradient; runtime/eager.py), contiguity, the device and stream, the result's
allocation, the launch. With ``out=`` nothing is allocated: out's type, shape, element type,
device, contiguity and memory apart from x's are checked with one tuple compare and a few reads,
and anything that does not fit goes the slow way, which says what is wrong.

The key is (array type, element type, shape, axis, keepdims, source): ``source`` names the
reducer, (op, determinism, db, table) for reducetune.reduce, the reducer's id for an
AxisReducer. The device is not in it: the C++ reducer takes the device with each launch. A
table or results file is read once per process, when its reducer is made (runtime/axis.py, as
reducetune.reduce keeps its whole-array reducers); ``runtime.axis.release(table=PATH)`` drops
that reducer and what is kept here for it, so that the next call reads the file again.

torch.compile: ``call`` and ``remember`` ask the eager gate before anything else of a tensor
(after a comparison of its type with CuPy's array), which Dynamo folds to false, so a traced call
sees no kept entry and keeps none; before a PyTorch tensor's first real launch
(``bind_torch``, from the reducer look-up, which never runs while tracing) the gate answers
false for every call.
"""

from __future__ import annotations

from typing import Any, Callable

from reducetune.runtime import torch_op
from reducetune.runtime.arrays import raw_stream_query
from reducetune.runtime.axis_args import axis_call, overlaps
from reducetune.runtime.eager import make_gate

__all__ = ["bind_cupy", "bind_torch", "call", "forget", "remember"]

# (the reducer's C++ reduce_axis, outer, r, inner, the result's shape, divide by r, reducer id)
Resolved = tuple[Callable[..., None], int, int, int, tuple[int, ...], bool, int]

# Errors are raised by the slow path, never kept. Cleared when it grows past CALLS_MAX, so that
# a program of ever-new shapes keeps a bounded dict.
_calls: dict[tuple, Resolved] = {}
CALLS_MAX = 4096


def _never(x: Any) -> bool:
    return False


_plain: Callable[[Any], bool] = _never  # the eager gate, once a PyTorch tensor was launched
_raw: Callable[[int], int] = int  # the current stream's raw handle, set with the gate
_cupy_array: type | None = None
_cupy: Any = None


def bind_torch(torch: Any) -> None:
    """Takes the PyTorch side: the operator's eager gate and raw stream query (torch_op makes
    them when it registers the operator, before any launch that calls this); made here only
    where the operator was not."""
    global _plain, _raw
    if _plain is _never:
        _raw = torch_op._raw if torch_op._gate is not None else raw_stream_query(torch)
        _plain = torch_op._gate or make_gate(torch)


def bind_cupy(cupy: Any) -> None:
    global _cupy_array, _cupy
    _cupy_array, _cupy = cupy.ndarray, cupy


def _key(x: Any, axis: Any, keepdims: Any, source: Any) -> tuple | None:
    """The key of a call, or None where it must not be kept: True == 1 and hashes alike, so an
    axis of bools or a keepdims of 1 would find the entry of a call that passed the checks that
    refuse them."""
    t = type(axis)
    if type(keepdims) is not bool or not (
            t is int or (t is tuple and all(type(a) is int for a in axis))):
        return None
    return (type(x), x.dtype, x.shape, axis, keepdims, source)


def _hashable(key: tuple) -> bool:
    try:
        hash(key)
    except TypeError:
        return False
    return True


def call(x: Any, axis: Any, keepdims: Any, source: Any, out: Any = None) -> Any:
    """The result of a call resolved before, or None: a first call, a traced, compiled or
    gradient-recording call (the operator must see it), a view with gaps or a tensor on another
    device than the current one (CuPy), an `out` that does not fit (_fits), anything the slow
    path decides with its messages."""
    if type(x) is _cupy_array:
        return _cupy_call(x, axis, keepdims, source, out)
    if _plain(x):
        if torch_op._eager is None or not x.is_contiguous():
            return None  # the eager path turned off (the operator answers), or a view: refused
        try:
            hit = _calls.get(_key(x, axis, keepdims, source))  # a key of None finds nothing
        except TypeError:  # an unhashable source (a list as table=): the slow path refuses it
            return None
        if hit is None:
            return None
        launch, outer, r, inner, shape, mean, _ = hit
        device = x.get_device()
        if out is None:
            out = x.new_empty(shape)  # x's type and device, from PyTorch's caching allocator
        elif not (type(out) is type(x) and (out.shape, out.dtype, out.get_device())
                  == (shape, x.dtype, device) and out.is_contiguous()
                  and not out.requires_grad and _apart(x, out, x.element_size(), hit)):
            return None  # the slow path says what is wrong, or answers (out under no_grad)
        launch(x.data_ptr(), outer, r, inner, out.data_ptr(), _raw(device), device)
        if mean:
            out.div_(r)  # as the operator does: the same bits
        return out
    return None


def _apart(x: Any, out: Any, size: int, hit: Resolved) -> bool:
    """x and out (of one element type, `size` bytes each) share no byte."""
    xp, op, outer, r, inner = x.data_ptr(), out.data_ptr(), hit[1], hit[2], hit[3]
    return not overlaps(xp, outer * r * inner * size, op, outer * inner * size)


def _cupy_call(x: Any, axis: Any, keepdims: Any, source: Any, out: Any) -> Any:
    try:
        hit = _calls.get(_key(x, axis, keepdims, source))
    except TypeError:
        return None
    if hit is None or not x.flags.c_contiguous:
        return None
    device = x.device.id
    if device != _cupy.cuda.runtime.getDevice():
        return None  # the slow path allocates the result within the array's device
    launch, outer, r, inner, shape, mean, _ = hit
    if out is None:
        out = _cupy.empty(shape, dtype=x.dtype)
    elif not (type(out) is _cupy_array and (out.shape, out.dtype, out.device.id)
              == (shape, x.dtype, device) and out.flags.c_contiguous
              and not overlaps(x.data.ptr, x.nbytes, out.data.ptr, out.nbytes)):
        return None  # the slow path says what is wrong
    launch(x.data.ptr, outer, r, inner, out.data.ptr, _cupy.cuda.get_current_stream().ptr,
           device)
    if mean:
        out /= r
    return out


def remember(x: Any, axis: Any, keepdims: Any, source: Any, reducer: Callable[[], Any],
             op: str) -> None:
    """Keeps what a call that the slow path just answered resolves to (`reducer()` gives its
    AxisReducer), for the next call of its key. Nothing for a call the gate refuses (traced,
    compiled, recording a gradient), an empty axis or result (the slow path's values and errors
    on every call), or a key that must not be kept (_key)."""
    if not (type(x) is _cupy_array or _plain(x)):
        return
    key = _key(x, axis, keepdims, source)
    if key is None or not _hashable(key):
        return
    view = axis_call(tuple(x.shape), axis, keepdims)
    if view.outer * view.inner == 0 or view.r == 0:
        return
    found = reducer()
    if len(_calls) >= CALLS_MAX:
        _calls.clear()
    _calls[key] = (found._core.reduce_axis, view.outer, view.r, view.inner, view.shape,
                   op == "mean", found.id)


def forget(reducer_id: int) -> None:
    """Drops what is kept for a reducer (AxisReducer.close): it holds the C++ reducer, and with
    it the device memory the reducer would free."""
    for key in [k for k, v in _calls.items() if v[-1] == reducer_id]:
        del _calls[key]
