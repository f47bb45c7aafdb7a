"""``torch.ops.reducetune.reduce_axis``: the axis call as a PyTorch custom operator
(torch.library), so that ``torch.compile`` keeps a call to ``reducetune.reduce(x, op, axis=...)``
inside its graph (a fake implementation gives the result's shape without running it) and
CUDA-graph capture records it (the C++ call allocates nothing on the captured stream and never
synchronises; the result comes from PyTorch's own allocator, which captures).
A plain eager call skips the operator's dispatch (0.12-0.26 ms on an H100): reduce_axis asks
eager.py's path first, which answers None wherever the operator or the checks here must decide.

Only the wrapper's checks and shape arithmetic run when a program is traced; the reducer is
found (or made) inside the operator, where tracing never looks. Autograd: the gradient of a sum
is the output's gradient broadcast along r, of a mean the same divided by r; min, max and prod
record none here and say so. ``out=`` (the result written into a given tensor) is eager only
(_into): a traced, compiled or gradient-recording call with out= is refused, saying to call
without it.

PyTorch is imported only once a tensor is reduced, or here when the program has imported it
already (so that the operator exists before a first call is traced).
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from reducetune.errors import InvalidConfiguration
from reducetune.runtime.arrays import raw_stream_query, torch_dtype
from reducetune.runtime.axis_args import (axis_call, check_dtype, check_out, check_out_type,
                                          core_op, empty_fill)
from reducetune.runtime.eager import make_call, make_gate

__all__ = ["bind_reducers", "forget_reducer", "operator", "reduce_axis"]

# (dtype, op, reducer_id) -> the reducer: set by runtime/axis.py, which owns the reducers
_reducer_for: Callable[[str, str, int], Any] | None = None
_operator: Any = None
# the eager call without the operator (eager.py), made with the operator: None until then
_eager: Callable[..., Any] | None = None
# the eager gate (eager.make_gate), made with the operator: an out= call is eager only
_gate: Callable[[Any], bool] | None = None
_raw: Callable[[int], int] = int  # the current stream's raw handle, set with the gate


def bind_reducers(lookup: Callable[[str, str, int], Any]) -> None:
    global _reducer_for
    _reducer_for = lookup


def _register() -> Any:
    import torch  # optional and heavy: only for PyTorch tensors

    # the schema in words: the annotations below are strings (postponed), which
    # torch.library cannot read back
    @torch.library.custom_op("reducetune::reduce_axis", mutates_args=(), device_types="cuda",
                             schema="(Tensor x, str op, int reducer_id, int outer, int r, "
                                    "int inner) -> Tensor")
    def reduce_axis_op(x: torch.Tensor, op: str, reducer_id: int, outer: int, r: int,
                       inner: int) -> torch.Tensor:
        assert _reducer_for is not None, "runtime/axis.py binds the reducers on import"
        reducer = _reducer_for(str(x.dtype).removeprefix("torch."), op, reducer_id)
        out = torch.empty((outer * inner,), dtype=x.dtype, device=x.device)
        device = x.device.index if x.device.index is not None else torch.cuda.current_device()
        stream = torch.cuda.current_stream(x.device).cuda_stream
        reducer.launch(x.data_ptr(), (outer, r, inner), out.data_ptr(), stream, device)
        if op == "mean":
            out.div_(r)
        return out

    @reduce_axis_op.register_fake
    def _(x: torch.Tensor, op: str, reducer_id: int, outer: int, r: int,
          inner: int) -> torch.Tensor:
        return x.new_empty((outer * inner,))

    reduce_axis_op.register_autograd(_backward, setup_context=_setup_context)
    global _eager, _gate, _raw
    _gate = make_gate(torch)
    _raw = raw_stream_query(torch)
    _eager = make_call(torch, lambda *key: _reducer_for(*key), _gate)
    return torch.ops.reducetune.reduce_axis


def _setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
    x, op, _, outer, r, inner = inputs
    ctx.shape, ctx.op, ctx.view = x.shape, op, (outer, r, inner)


def _backward(ctx: Any, grad: Any) -> tuple:
    if ctx.op not in ("sum", "mean"):
        raise InvalidConfiguration(f"reducetune records no gradient for {ctx.op}: use torch's "
                                   "own reduction where a gradient is needed")
    outer, r, inner = ctx.view
    g = grad.reshape(outer, 1, inner).expand(outer, r, inner)
    if ctx.op == "mean":
        g = g / r
    return g.reshape(ctx.shape), None, None, None, None, None


def forget_reducer(reducer_id: int) -> None:
    """The eager path lets go of a closed reducer (AxisReducer.close)."""
    if _eager is not None:
        _eager.forget(reducer_id)  # type: ignore[attr-defined]


def operator() -> Any:
    """torch.ops.reducetune.reduce_axis, registered on first use."""
    global _operator
    if _operator is None:
        _operator = _register()
    return _operator


def reduce_axis(x: Any, op: str, axis: Any, keepdims: bool, reducer_id: int = -1,
                expected: str | None = None, out: Any = None) -> Any:
    """The checks and the view, then the operator. `reducer_id` -1: the built-in rule's
    reducer for (type, op); `expected`: the type a caller's reducer reduces; `out`: a tensor
    the result is written into (_into). A plain eager call goes around the operator (eager.py),
    which answers None for what it leaves to the checks below."""
    if out is not None:
        return _into(x, op, axis, keepdims, reducer_id, expected, out)
    if _eager is not None:
        out = _eager(x, op, axis, keepdims, reducer_id, expected)
        if out is not None:
            return out
    dtype = torch_dtype(x)  # a host tensor or a view with gaps: refused, saying what to do
    check_dtype(dtype, expected or dtype, "x.float() or x.double()")
    core_op(op, dtype)  # an unknown operator, or the mean of integers, fails here
    call = axis_call(tuple(x.shape), axis, keepdims)
    if call.outer * call.inner == 0:
        return x.new_empty(call.shape)
    if call.r == 0:
        return x.new_full(call.shape, empty_fill(op))
    out = operator()(x, op, reducer_id, call.outer, call.r, call.inner)
    return out.reshape(call.shape)


OUT_EAGER = ("out= is for an eager call: under torch.compile, tracing, a dispatch mode or a "
             "transform, or while autograd records a gradient of x or out, call without out= "
             "(the operator returns a new tensor, which torch.compile can fuse into a copy)")


def _into(x: Any, op: str, axis: Any, keepdims: bool, reducer_id: int, expected: str | None,
          out: Any) -> Any:
    """reduce_axis into `out`, every check first (axis_args.check_out). Eager calls only: a
    custom operator that writes its argument needs ``mutates_args`` and has no autograd
    formula, so out= is refused wherever the operator must be seen (OUT_EAGER)."""
    dtype = torch_dtype(x)  # a host tensor or a view with gaps: refused, saying what to do
    check_dtype(dtype, expected or dtype, "x.float() or x.double()")
    core_op(op, dtype)
    call = axis_call(tuple(x.shape), axis, keepdims)
    operator()  # makes the gate (and imports torch) where the program has not yet
    if _gate is None or not _gate(x):
        raise InvalidConfiguration(OUT_EAGER)
    hint = "a new tensor, x.new_empty(shape) (torch.empty(shape, dtype=x.dtype, device=x.device))"
    check_out_type(out, x, hint)
    size = x.element_size()
    check_out((tuple(out.shape), out.dtype, out.device), (call.shape, x.dtype, x.device),
              out.is_contiguous(), (x.data_ptr(), call.outer * call.r * call.inner * size,
                                    out.data_ptr(), call.outer * call.inner * size), hint)
    if not _gate(out):  # out passed the checks above: it needs a gradient, which is not kept
        raise InvalidConfiguration(OUT_EAGER)
    if call.outer * call.inner == 0:
        return out
    if call.r == 0:
        return out.fill_(empty_fill(op))
    assert _reducer_for is not None, "runtime/axis.py binds the reducers on import"
    device = x.get_device()
    _reducer_for(dtype, op, reducer_id).launch(x.data_ptr(), (call.outer, call.r, call.inner),
                                               out.data_ptr(), _raw(device), device)
    if op == "mean":
        out.div_(call.r)
    return out


if "torch" in sys.modules:  # the program uses PyTorch already: the operator costs nothing now
    operator()
