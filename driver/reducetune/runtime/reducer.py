"""reducetune.reduce and reducetune.Reducer: the tuned reduction on a GPU array.

The C++ runtime (tuner/reducetune/runtime/reducer.hpp) picks, for each n, the point tuned
on this GPU (deterministic unless asked), compiles it once (cubins cached in
``$REDUCETUNE_CACHE_DIR``, else ``~/.cache/reducetune/cubin``) and launches it on the array's
memory and its library's current stream: no copy of the input, no synchronisation. The
result is a new 0-d array of the input's library and type on the same device.

Decided here, and documented in the README:
- the result keeps the input's type (an int32 sum wraps as CUB's does; torch.sum promotes
  integers to int64);
- an empty array's sum is 0 and its product 1 (the identities, as NumPy and PyTorch answer);
  its min and max are errors, as in NumPy.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from reducetune import _core
from reducetune._space import OPS
from reducetune.errors import InvalidConfiguration
from reducetune.runtime.arrays import SUPPORTED, describe
from reducetune.runtime.axis import reduce_axis
from reducetune.runtime.fast_call import prepare
from reducetune.store.paths import default_db_path
_IDENTITY = {"sum": 0, "prod": 1}


class Reducer:
    """A reduction of one type and operator with the tuned kernels, for repeated calls.

    ``db``: a results database (default: reducetune's own, when it exists); ``table``: an
    exported JSON table instead. Sizes or GPUs the table does not answer get the default
    preset, said once on stderr and kept in ``fallbacks``. ``ranking``: "application" (the
    default) weighs a database's points at each size by what a lone call costs, launches
    included (an exported table carries that pick beside the median's winner); "median"
    takes the fastest replayed median, as ``reducetune best`` does, which suits a reduction
    captured in a CUDA graph (db/reducetune/db/application_ranking.hpp says why they differ)."""

    def __init__(self, dtype: str, op: str = "sum", *, db: str | os.PathLike | None = None,
                 table: str | os.PathLike | None = None, nondeterministic: bool = False,
                 allow_flagged: bool = False, cache_dir: str | os.PathLike | None = None,
                 ranking: str = "application") -> None:
        if dtype not in SUPPORTED:
            raise InvalidConfiguration(f"unknown dtype {dtype!r}: one of {', '.join(SUPPORTED)}")
        if op not in OPS:
            raise InvalidConfiguration(f"unknown operator {op!r}: one of {', '.join(OPS)}")
        if db is None and table is None and default_db_path().exists():
            db = default_db_path()
        if ranking not in ("application", "median"):
            raise InvalidConfiguration(f"unknown ranking {ranking!r}: application or median")
        for path, what in ((db, "database"), (table, "table")):
            if path is not None and not Path(path).is_file():
                raise InvalidConfiguration(f"no results {what} at {path}")
        self.dtype, self.op = dtype, op
        self._core = core = _core.Reducer(dtype, op, None if db is None else os.fspath(db),
                                   None if table is None else os.fspath(table), nondeterministic,
                                   allow_flagged, None if cache_dir is None else os.fspath(cache_dir),
                                   True, None if ranking == "application" else 0.0)
        self._launch = core.reduce  # bound once: one attribute look-up less per call

    def __call__(self, x: Any) -> Any:
        p = prepare(x)
        if p is not None and p[2] == self.dtype:
            ptr, n, _, device, stream, out, out_ptr = p
            self._launch(ptr, n, out_ptr, stream, device)
            return out
        _refuse_autograd(x)
        a = describe(x)  # the slow path: other libraries, empty arrays, and every error
        if a.dtype != self.dtype:
            raise InvalidConfiguration(f"this Reducer reduces {self.dtype}, not {a.dtype}")
        if a.n == 0:
            return _empty(a, self.op)
        out = a.empty()
        self._launch(a.ptr, a.n, _pointer(out), a.stream, a.device)
        return out

    def choice(self, n: int) -> dict:
        """What a call with n elements launches on the current GPU, and why (tuned or
        default): family, labels, determinism, protocol, launches, grid and block."""
        return dict(self._core.choice(n))

    @property
    def fallbacks(self) -> list[str]:
        return list(self._core.fallbacks())


def _refuse_autograd(x: Any) -> None:
    """A tensor that records gradients is refused: the result would carry no grad_fn, and a
    silent break of autograd is worse than an error (README, "Use")."""
    if getattr(x, "requires_grad", False):
        import torch  # only a PyTorch tensor has requires_grad

        if torch.is_grad_enabled():
            raise InvalidConfiguration(
                "this tensor requires grad, and reducetune.reduce records no backward: call it "
                "under torch.no_grad() or on x.detach(), or use torch.sum where a gradient "
                "is needed")


def _pointer(out: Any) -> int:
    return out.data_ptr() if hasattr(out, "data_ptr") else out.data.ptr


def _empty(a: Any, op: str) -> Any:
    if op not in _IDENTITY:
        raise InvalidConfiguration(f"the {op} of an empty array has no value (no identity)")
    return a.full(_IDENTITY[op])


_reducers: dict[tuple, Reducer] = {}


def reduce(x: Any, op: str = "sum", *, axis: int | tuple[int, ...] | None = None,
           keepdims: bool = False, db: str | os.PathLike | None = None,
           table: str | os.PathLike | None = None, nondeterministic: bool = False,
           ranking: str = "application", determinism: str = "run_to_run",
           out: Any = None) -> Any:
    """Reduces every element of a CuPy array, a PyTorch tensor or another CUDA array with the
    kernel tuned for this GPU, on the array's current stream; returns a 0-d array of the
    same library, type and device. Reducers are kept per (type, operator, database or
    exported table, ranking); see Reducer. Safe to capture in a CUDA graph
    (torch.cuda.graph): a captured call allocates nothing on the capturing stream, and each
    capture keeps its own scratch; ``ranking="median"`` picks the point that is fastest when
    replayed, as a graph replays it.

    ``axis`` (an int or a tuple of adjacent axes) reduces along those axes of a contiguous
    tensor instead (runtime/axis.py: sum, mean, min, max, prod; ``keepdims`` keeps them as
    extents of 1; ``determinism="batch_invariant"``: a row's result does not depend on how many
    rows are reduced with it); ``db`` or ``table`` give it the file's tuned point per shape
    (the nearest tuned shape, db/shape_rule.hpp), else the built-in rule answers; ``out``
    (a contiguous tensor or array of the result's shape, x's type and device, apart from x;
    eager calls only) receives the result and is returned, as torch.sum(..., out=) does."""
    if axis is not None:
        if nondeterministic or ranking != "application":
            raise InvalidConfiguration(
                "nondeterministic and ranking choose among whole-array points; an axis "
                "reduction is run_to_run or determinism='batch_invariant', its points per shape "
                "from db=..., table=... or the built-in rule")
        return reduce_axis(x, op, axis, keepdims, determinism, db, table, out)
    if out is not None:  # the whole-array call returns a 0-d array of its own scratch
        raise InvalidConfiguration("out= is for a reduction along an axis (axis=...); the "
                                   "whole-array call returns a new 0-d array")
    if determinism != "run_to_run":  # a whole-array call has one row: nothing to promise
        raise InvalidConfiguration("determinism applies to a reduction along an axis: pass "
                                   "axis=..., or nondeterministic=... for the whole array")
    key = (type(x), getattr(x, "dtype", None), op, db, table, nondeterministic, ranking)
    r = _reducers.get(key)
    if r is None:
        _refuse_autograd(x)
        a = describe(x)
        r = _reducers[key] = Reducer(a.dtype, op, db=db, table=table,
                                      nondeterministic=nondeterministic, ranking=ranking)
    return r(x)
