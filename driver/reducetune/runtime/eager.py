"""The eager path of ``reducetune.reduce(tensor, op, axis=...)``: the C++ axis call without the
custom operator, when nothing needs the operator.

Why: on an H100 (2^28 float32 in rows of 8192) the C++ call took 0.36 ms, torch.sum 0.38 ms and
reducetune.reduce 0.52 ms; the difference is torch.library's Python dispatch of
``torch.ops.reducetune.reduce_axis`` and the wrapper's checks run on every call. The operator
is needed only by whoever looks inside the call: torch.compile (Dynamo), torch.jit and FX
tracing, dispatch modes (fake tensors, make_fx, functionalisation), functorch transforms,
tensor subclasses, and autograd when it records a gradient. ``plain(x)`` (the one gate) is
true when none of them is there; then ``call(...)`` launches directly:

- the reducer's bound ``reduce_axis`` is found in a dict keyed by (torch dtype, op, reducer id),
  filled on first use by the checks the operator's wrapper runs (check_dtype, core_op), so a
  type or operator refused there is refused here with the same words, once per key;
- the view (outer, r, inner) and the result's shape come from ``axis_call`` (the same checks
  and messages), kept per (shape, axis, keepdims) so that a repeated shape costs one look-up;
- the result is ``torch.empty`` on the tensor's device (PyTorch's caching allocator, which
  CUDA-graph capture records), the stream the raw handle of the current one; no
  synchronisation and no read of device data, so a captured call replays.

Anything else (a view with gaps, an empty axis or result, a host tensor) returns None and the
operator's wrapper decides, with its messages. The reducer is device-blind (the device is an
argument of each call), so the key needs no device.
"""

from __future__ import annotations

from typing import Any, Callable

from reducetune.runtime.arrays import raw_stream_query
from reducetune.runtime.axis_args import AxisCall, axis_call, check_dtype, core_op

__all__ = ["make_call", "make_gate", "view_of"]

Entry = tuple[Callable[..., None], bool]  # (the reducer's C++ reduce_axis, divide by r)

# (shape, axis, keepdims) -> AxisCall; errors are raised, never kept. Cleared when it grows
# past _VIEWS_MAX, so that a program of ever-new shapes keeps a bounded dict.
_views: dict[tuple, AxisCall] = {}
_VIEWS_MAX = 4096


def view_of(shape: tuple[int, ...], axis: Any, keepdims: Any) -> AxisCall:
    """axis_call(shape, axis, keepdims), kept for a hashable axis of plain ints and a bool
    keepdims: True == 1 and hash alike, so a looser key would let axis=True or keepdims=1
    skip the check that refuses them."""
    t = type(axis)
    if type(keepdims) is not bool or not (
            t is int or (t is tuple and all(type(a) is int for a in axis))):
        return axis_call(shape, axis, keepdims)
    key = (shape, axis, keepdims)
    call = _views.get(key)
    if call is None:
        call = axis_call(shape, axis, keepdims)
        if len(_views) >= _VIEWS_MAX:
            _views.clear()
        _views[key] = call
    return call


def make_gate(torch: Any) -> Callable[[Any], bool]:
    """plain(x): x is a plain CUDA tensor that nothing traces, compiles, transforms or records a
    gradient of. `torch` is the module (a stand-in in the CPU tests). Dynamo folds
    is_compiling() to True while it traces, so it is asked first and the rest is never
    traced."""
    tensor = torch.Tensor
    compiling = torch.compiler.is_compiling
    grad_enabled = torch.is_grad_enabled
    c = torch._C
    jit_tracing = getattr(c, "_is_tracing", None) or torch.jit.is_tracing
    modes = getattr(c, "_len_torch_dispatch_stack", None) or (lambda: 0)
    functorch = getattr(c, "_are_functorch_transforms_active", None) or (lambda: False)
    fx = getattr(getattr(getattr(torch, "fx", None), "_symbolic_trace", None), "is_fx_tracing",
                 None) or (lambda: False)

    def plain(x: Any) -> bool:
        return (not compiling() and type(x) is tensor and x.is_cuda
                and not (x.requires_grad and grad_enabled())
                and not jit_tracing() and not fx() and not modes() and not functorch())

    return plain


def make_call(torch: Any, reducer_for: Callable[[str, str, int], Any],
              plain: Callable[[Any], bool]) -> Callable[..., Any]:
    """call(x, op, axis, keepdims, reducer_id, expected): the result, or None where the
    operator's wrapper must decide (see the module's docstring)."""
    raw = raw_stream_query(torch)
    empty = torch.empty
    entries: dict[tuple, Entry] = {}

    def entry(x: Any, op: str, reducer_id: int, expected: str | None) -> Entry:
        dtype = str(x.dtype).removeprefix("torch.")  # as arrays.torch_dtype names it
        check_dtype(dtype, expected or dtype, "x.float() or x.double()")
        core_op(op, dtype)  # an unknown operator, or the mean of integers
        found = entries[(x.dtype, op, reducer_id)] = (
            reducer_for(dtype, op, reducer_id)._core.reduce_axis, op == "mean")
        return found

    def call(x: Any, op: str, axis: Any, keepdims: Any, reducer_id: int,
             expected: str | None) -> Any:
        if not plain(x) or not x.is_contiguous():
            return None
        launch, mean = entries.get((x.dtype, op, reducer_id)) or entry(x, op, reducer_id,
                                                                        expected)
        outer, r, inner, shape = view_of(x.shape, axis, keepdims)
        if outer * inner == 0 or r == 0:
            return None  # an empty result or axis: the wrapper's values and errors
        out = empty(shape, dtype=x.dtype, device=x.device)
        device = x.get_device()
        launch(x.data_ptr(), outer, r, inner, out.data_ptr(), raw(device), device)
        if mean:
            out.div_(r)  # as the operator does: the same bits
        return out

    def forget(reducer_id: int) -> None:
        """Drops the launches kept for a reducer (AxisReducer.close): they hold its C++
        reducer, and with it the device memory the reducer would free."""
        for key in [k for k in entries if k[2] == reducer_id]:
            del entries[key]

    call.forget = forget  # type: ignore[attr-defined]
    return call
