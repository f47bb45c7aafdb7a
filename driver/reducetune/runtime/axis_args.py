"""The arguments of ``reducetune.reduce(x, op, axis=..., keepdims=...)``, checked without a GPU.

A contiguous tensor reduced over one axis, or over several adjacent axes, is the middle axis of
the same memory viewed as ``(outer, r, inner)`` (DESIGN.md, "Problems and their shapes"):
``outer`` the product of the extents before the axes, ``r`` of the axes, ``inner`` of those
after. Non-adjacent axes have no such view (their elements are not one run per output), so
they are refused rather than copied behind the caller's back.

An empty axis (r = 0) gives what the whole-array call gives an empty array: the sum 0 and the
product 1 (the identities), the mean NaN (0 / 0, as NumPy and PyTorch answer), and an error for
min and max, which have no identity.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from reducetune import _core
from reducetune._space import DTYPES
from reducetune.errors import InvalidConfiguration

__all__ = ["AXIS_OPS", "AxisCall", "axis_call", "check_determinism", "check_dtype", "check_out",
           "check_out_type", "core_op", "empty_fill", "overlaps"]

# mean is the sum divided by r: the core reduces with sum (element.hpp has no mean operator)
AXIS_OPS = ("sum", "mean", "min", "max", "prod")
_FLOATING = ("float16", "bfloat16", "float32", "float64")


class AxisCall(NamedTuple):
    """One reduction along axes: the view (outer, r, inner) and the result's shape. A named
    tuple and plain loops (no dataclass, no math.prod), so that torch.compile traces the
    wrapper's arithmetic without a graph break."""

    outer: int
    r: int
    inner: int
    shape: tuple[int, ...]  # the result's shape (keepdims or not)

    @property
    def outputs(self) -> int:
        return self.outer * self.inner


def _axes(axis: int | tuple[int, ...] | list[int], ndim: int) -> tuple[int, ...]:
    if isinstance(axis, bool) or not isinstance(axis, (int, tuple, list)):
        raise InvalidConfiguration(f"axis must be an int or a tuple of adjacent ints, not "
                                   f"{type(axis).__name__}")
    given = (axis,) if isinstance(axis, int) else tuple(axis)
    if not given:
        raise InvalidConfiguration("axis=() names no axis: pass axis=None to reduce every element")
    out = []
    for a in given:
        if isinstance(a, bool) or not isinstance(a, int):
            raise InvalidConfiguration(f"axis holds {a!r}: each axis is an int")
        if not -ndim <= a < ndim:
            raise InvalidConfiguration(f"axis {a} is out of range for a tensor of {ndim} "
                                       f"dimension{'s' if ndim != 1 else ''} (valid: "
                                       f"{-ndim} to {ndim - 1})")
        out.append(a % ndim)
    axes = tuple(sorted(out))
    if len(set(axes)) != len(axes):
        raise InvalidConfiguration(f"axis {given} names an axis twice")
    if axes[-1] - axes[0] + 1 != len(axes):
        raise InvalidConfiguration(
            f"axes {given} are not adjacent: reducetune reduces one run of adjacent axes (the "
            "middle axis of (outer, r, inner)); reduce them one call at a time, or move them "
            "together first (x.movedim(...).contiguous())")
    return axes


def axis_call(shape: tuple[int, ...], axis: int | tuple[int, ...] | list[int],
              keepdims: bool = False) -> AxisCall:
    """The view and result shape of reducing `axis` of a C-contiguous tensor of `shape`;
    InvalidConfiguration for an axis out of range, repeated, or not adjacent to the others."""
    shape = tuple(int(e) for e in shape)
    if not isinstance(keepdims, bool):  # a truthy 'no', a 1 or None would pass silently
        raise InvalidConfiguration(f"keepdims must be True or False, not {keepdims!r}")
    if not shape:
        raise InvalidConfiguration("a 0-d tensor has no axis to reduce: pass axis=None")
    axes = _axes(axis, len(shape))
    first, last = axes[0], axes[-1] + 1
    if keepdims:
        result = shape[:first] + (1,) * len(axes) + shape[last:]
    else:
        result = shape[:first] + shape[last:]
    return AxisCall(_product(shape[:first]), _product(shape[first:last]), _product(shape[last:]),
                    result)


def _product(extents: tuple[int, ...]) -> int:
    out = 1
    for e in extents:
        out *= e
    return out


def core_op(op: str, dtype: str) -> str:
    """The core's operator for `op` on `dtype` (mean: sum, then a division by r);
    InvalidConfiguration for an unknown operator or the mean of an integer type."""
    if op not in AXIS_OPS:
        raise InvalidConfiguration(f"unknown operator {op!r} for an axis reduction: one of "
                                   f"{', '.join(AXIS_OPS)}")
    if op == "mean":
        if dtype not in _FLOATING:
            raise InvalidConfiguration(f"the mean of {dtype} has no {dtype} value: convert to a "
                                       "floating type first (x.float())")
        return "sum"
    return op


def empty_fill(op: str) -> float:
    """The value of every output when r = 0; InvalidConfiguration for min and max."""
    fills = {"sum": 0.0, "prod": 1.0, "mean": math.nan}
    if op not in fills:
        raise InvalidConfiguration(f"the {op} along an empty axis has no value (no identity)")
    return fills[op]


def overlaps(a: int, a_bytes: int, b: int, b_bytes: int) -> bool:
    """The byte ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte."""
    return a < b + b_bytes and b < a + a_bytes


def check_out_type(out: Any, x: Any, hint: str) -> None:
    """InvalidConfiguration for an ``out=`` of another library or class than x's (before
    check_out reads what only x's kind of array has)."""
    if type(out) is not type(x):
        name = (lambda t: f"{t.__module__.split('.')[0]}.{t.__name__}")
        raise InvalidConfiguration(f"out is a {name(type(out))}; the result is a "
                                   f"{name(type(x))}, as x is: pass {hint}")


def check_out(got: tuple, want: tuple, contiguous: bool, spans: tuple[int, int, int, int],
              hint: str) -> None:
    """InvalidConfiguration, one line, for an ``out=`` that the result cannot be written into:
    `got` and `want` are (shape, element type, device) of out and of the result (the input's
    type and device, the shape keepdims gives); `spans` the input's and out's (pointer, bytes);
    `hint` how to make a fitting out."""
    for name, g, w in zip(("shape", "element type", "device"), got, want):
        if g != w:
            raise InvalidConfiguration(f"out has {name} {g}; the result's is {w} (x's type "
                                       f"and device, the shape keepdims gives): pass {hint}")
    if not contiguous:
        raise InvalidConfiguration(f"out is not contiguous: the result is written as one run of "
                                   f"memory; pass {hint}")
    if overlaps(*spans):
        raise InvalidConfiguration("out shares memory with x: the kernel reads x while it writes "
                                   "out, so the result would depend on the order of the writes; "
                                   f"pass {hint}")


def check_dtype(dtype: str, expected: str, hint: str) -> None:
    """InvalidConfiguration for a type the core does not reduce (saying how to convert), or
    not the one a reducer was made for."""
    if dtype not in DTYPES:
        raise InvalidConfiguration(f"reducetune reduces {', '.join(DTYPES)}; this tensor holds "
                                   f"{dtype} (convert with {hint})")
    if dtype != expected:
        raise InvalidConfiguration(f"this reducer reduces {expected}, not {dtype}")


# The levels the core accepts, the default first, asked once at import: torch.compile cannot
# trace a call into the extension (a graph break under fullgraph=True, seen on an H200), so a
# traced call checks its level here.
LEVELS: tuple[str, ...] = tuple(_core.axis_levels())


def check_determinism(determinism: str) -> str:
    """`determinism` itself when it is a level the core accepts (LEVELS: run_to_run, the
    default, or batch_invariant), else InvalidConfiguration in one line naming them."""
    if determinism not in LEVELS:
        raise InvalidConfiguration(f"unknown axis determinism {determinism!r}: {LEVELS[0]} (the "
                                   f"default) or {' or '.join(LEVELS[1:])}")
    return determinism
