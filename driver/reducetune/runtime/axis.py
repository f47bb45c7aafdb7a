"""``reducetune.reduce(x, op, axis=..., keepdims=...)`` and ``AxisReducer``: a reduction along
adjacent axes of a contiguous PyTorch tensor or CuPy array (issue 26, item 5).

The C++ runtime (tuner/reducetune/runtime/reducer_axis.hpp) launches, for the view
``(outer, r, inner)`` of the memory, the point of the caller's per-shape table when one of its
entries answers the shape, else its built-in rule by shape (runtime/axis_dispatch.hpp), on the
tensor's current stream: no copy, no synchronisation, scratch kept per stream. A PyTorch tensor
goes through the custom operator ``torch.ops.reducetune.reduce_axis`` (torch_op.py), so that
``torch.compile`` keeps it in its graph and CUDA graphs capture it; a plain eager call (nothing
traces it or records its gradient) goes around the operator to the same C++ call (eager.py).

``determinism="batch_invariant"`` (opt-in; default ``"run_to_run"``) promises more than the
same bits on a rerun: a row's result does not depend on how many rows are reduced with it. The
rule then chooses from r and inner alone, and a table entry that is not batch_invariant (the
family's let) is skipped for the rule, said once in ``fallbacks``.

Tuned points come as the whole-array reducer's do: ``db=`` a results database, or ``table=`` its
``reducetune export json`` file; the table of this GPU (the Catalog's device rule) answers each
shape with the tuned shape db/shape_rule.hpp names (the exact shape, else the nearest of the
same kind, rows or columns), taking only batch_invariant points under that level; a shape with
no tuned entry of its kind, or a tuned point it makes invalid, gets the built-in rule. A caller's
own per-shape ``table`` is still taken, and answers before the file's: a list of
``{outer, r, inner, variant, launch}`` (or a JSON file holding one, or ``{"entries": [...]}``),
for example what ``python -m reducetune.benchmarks.axis`` measured. Without any of them, the
built-in rule answers every shape.

The result keeps the input's type and device. A repeated call (the same array type, element
type, shape, axis and source) is resolved once and then launched directly (runtime/axis_fast.py).
A results database or table file is read once per process, when reduce() first needs its
reducer; ``release(table=PATH)`` (or ``db=``) closes that reducer, so that the next call reads
the file again. ``choice(dtype, op, view, table=PATH)`` says which point reduce() launches for a
view and why.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Iterable

from reducetune import _core
from reducetune.errors import InvalidConfiguration
from reducetune.runtime import axis_fast, torch_op
from reducetune.runtime.arrays import SUPPORTED
from reducetune.runtime.axis_args import (axis_call, check_determinism, check_dtype, check_out,
                                          check_out_type, core_op, empty_fill)

__all__ = ["AxisReducer", "choice", "default_reducer", "read_table", "reduce_axis", "release"]

Table = list[tuple[int, int, int, str, str]]


def read_table(table: str | os.PathLike | Iterable[dict] | dict | None) -> Table:
    """A per-shape table as the core takes it: rows (outer, r, inner, variant, launch);
    InvalidConfiguration, in one line, for a file that is missing or not such a table."""
    if table is None:
        return []
    if isinstance(table, (str, os.PathLike)):
        table = _table_file(Path(table))
    if isinstance(table, dict):
        if "entries" not in table:
            raise InvalidConfiguration(f"not an axis table: a dict with no 'entries' (it holds "
                                       f"{', '.join(map(str, table)) or 'nothing'}); {_SHAPE}")
        table = table["entries"]
    try:
        rows = [(int(e["outer"]), int(e["r"]), int(e["inner"]), str(e["variant"]),
                 str(e.get("launch", ""))) for e in table]
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise InvalidConfiguration(f"an axis table entry needs outer, r, inner, variant and "
                                   f"launch: {e!r}") from e
    for row in rows:  # the core takes extents as unsigned sizes: a negative one is no shape
        if min(row[:3]) < 1:
            raise InvalidConfiguration(f"an axis table entry's outer, r and inner are at least "
                                       f"1: {row[:3]}")
    return rows


_SHAPE = ('an axis table is a list of {"outer", "r", "inner", "variant", "launch"} or '
          '{"entries": [...]}, as python -m reducetune.benchmarks.axis writes')


def _table_file(path: Path) -> Any:
    """The JSON document of an axis table's file."""
    if not path.is_file():
        what = "a folder" if path.is_dir() else "no such file"
        raise InvalidConfiguration(f"no axis table at {path} ({what}); {_SHAPE}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InvalidConfiguration(f"{path} is not JSON ({e}); {_SHAPE}") from None


def _is_export(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("format") == "reducetune-dispatch"


def _sources(db: str | os.PathLike | None, table: Any) -> tuple[str | None, str | None, Table]:
    """(results database, exported JSON table, the caller's entries) as the core takes them."""
    if db is not None:
        if not Path(db).is_file():
            raise InvalidConfiguration(f"no results database at {db} (reducetune tune writes "
                                       "one; pass its path)")
        db = os.fspath(db)
    if _is_export(table):
        raise InvalidConfiguration("an exported table is read from its file: pass the path "
                                   "`reducetune export json` wrote, as table=PATH")
    if isinstance(table, (str, os.PathLike)) and _is_export(_table_file(Path(table))):
        if db is not None:
            raise InvalidConfiguration("give a results database or an exported table, not both")
        return None, os.fspath(table), []
    return db, None, read_table(table)


class _Closed:
    """A closed AxisReducer's core: any call says so."""

    def __getattr__(self, name: str) -> Any:
        raise InvalidConfiguration("this AxisReducer was closed (close() freed its device "
                                   "memory): make a new one to reduce again")


class AxisReducer:
    """Reductions along axes of one element type and operator (sum, mean, min, max, prod);
    ``db``: a results database, or ``table``: its exported JSON table (the tuned point of each
    shape on this GPU), or ``table``: the caller's own points per shape (read_table); shapes
    none of them answers get the rule; ``determinism``: "run_to_run" or "batch_invariant"
    (see the module's docstring)."""

    _by_id: list["AxisReducer"] = []  # the custom operator names a reducer by its index

    def __init__(self, dtype: str, op: str = "sum", *, db: str | os.PathLike | None = None,
                 table: str | os.PathLike | Iterable[dict] | None = None,
                 cache_dir: str | os.PathLike | None = None,
                 determinism: str = "run_to_run") -> None:
        if dtype not in SUPPORTED:
            raise InvalidConfiguration(f"unknown dtype {dtype!r}: one of {', '.join(SUPPORTED)}")
        self.dtype, self.op = dtype, op
        self.determinism = check_determinism(determinism)
        database, export, entries = _sources(db, table)
        self._core = _core.Reducer(dtype, core_op(op, dtype), database, export, False, False,
                                   None if cache_dir is None else os.fspath(cache_dir), True,
                                   None, entries, determinism)
        self.id = len(AxisReducer._by_id)  # reducers live as long as the process, as reduce()'s
        AxisReducer._by_id.append(self)

    def close(self) -> None:
        """Frees what this reducer holds on the device (its modules and each stream's partials:
        outputs x split accumulators for a point that splits r, gigabytes over many columns)
        before the process ends. A call after close() raises InvalidConfiguration; a CUDA graph
        that captured one of its calls must not be replayed after it."""
        torch_op.forget_reducer(self.id)
        axis_fast.forget(self.id)
        self._core = _Closed()

    def choice(self, outer: int, r: int, inner: int) -> dict:
        """What a call on the view (outer, r, inner) launches on the current GPU, and why."""
        return dict(self._core.axis_choice(outer, r, inner))

    @property
    def fallbacks(self) -> list[str]:
        return list(self._core.fallbacks())

    def launch(self, ptr: int, view: tuple[int, int, int], out_ptr: int, stream: int,
               device: int) -> None:
        """Enqueues the reduction of the view (outer, r, inner) into `out_ptr`."""
        self._core.reduce_axis(ptr, *view, out_ptr, stream, device)

    def __call__(self, x: Any, axis: int | tuple[int, ...], keepdims: bool = False, *,
                 out: Any = None) -> Any:
        """The reduction of `axis`; with `out` (the result's shape, x's type and device,
        contiguous, apart from x) written into out, which is returned."""
        result = axis_fast.call(x, axis, keepdims, self.id, out)
        if result is None:  # a first call of its key, or one the checks below must see
            result = _dispatch(x, self.op, axis, keepdims, self, out)
            axis_fast.remember(x, axis, keepdims, self.id, lambda: self, self.op)
        return result


def _cupy_reduce(reducer: AxisReducer, x: Any, axis: Any, keepdims: bool, out: Any) -> Any:
    import cupy  # optional: only for CuPy arrays

    axis_fast.bind_cupy(cupy)
    if not x.flags.c_contiguous:
        raise InvalidConfiguration("a non-contiguous (or Fortran-ordered) array: reduce "
                                   "cupy.ascontiguousarray(x) (a copy) instead")
    call = axis_call(x.shape, axis, keepdims)
    if out is not None:
        hint = "a new array, cupy.empty(shape, dtype=x.dtype) made on x's device"
        check_out_type(out, x, hint)
        check_out((tuple(out.shape), out.dtype, out.device.id), (call.shape, x.dtype, x.device.id),
                  out.flags.c_contiguous, (x.data.ptr, x.nbytes, out.data.ptr, out.nbytes), hint)
    with cupy.cuda.Device(x.device.id):
        if call.outputs == 0:
            return cupy.empty(call.shape, dtype=x.dtype) if out is None else out
        if call.r == 0:
            if out is None:
                return cupy.full(call.shape, empty_fill(reducer.op), dtype=x.dtype)
            out.fill(empty_fill(reducer.op))
            return out
        if out is None:
            out = cupy.empty(call.shape, dtype=x.dtype)
        stream = cupy.cuda.get_current_stream()
        reducer.launch(x.data.ptr, (call.outer, call.r, call.inner), out.data.ptr, stream.ptr,
                       x.device.id)
        if reducer.op == "mean":
            out /= call.r
        return out


_reducers: dict[tuple[str, str, str], AxisReducer] = {}


def default_reducer(dtype: str, op: str, determinism: str = "run_to_run") -> AxisReducer:
    """The reducer reduce() uses for (type, operator, determinism): no table, the rule."""
    key = (dtype, op, determinism)
    r = _reducers.get(key)
    if r is None:
        r = _reducers[key] = AxisReducer(dtype, op, determinism=determinism)
    return r


def _reducer_for(dtype: str, op: str, reducer_id: int) -> AxisReducer:
    """The reducer of a tensor's launch (torch_op.py): asked only by a real launch, never while
    torch.compile traces, so the fast path's gate is made here (axis_fast.py says why)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        axis_fast.bind_torch(torch)
    return AxisReducer._by_id[reducer_id] if reducer_id >= 0 else default_reducer(dtype, op)


torch_op.bind_reducers(_reducer_for)


def _dispatch(x: Any, op: str, axis: Any, keepdims: bool, reducer: AxisReducer | None,
              out: Any = None) -> Any:
    module = type(x).__module__
    if module.startswith("torch"):
        return torch_op.reduce_axis(x, op, axis, keepdims, -1 if reducer is None else reducer.id,
                                    None if reducer is None else reducer.dtype, out)
    if module.startswith("cupy"):
        dtype = x.dtype.name
        check_dtype(dtype, dtype if reducer is None else reducer.dtype, "x.astype(cupy.float32)")
        return _cupy_reduce(reducer or default_reducer(dtype, op), x, axis, keepdims, out)
    raise InvalidConfiguration(f"reduce along an axis takes a PyTorch tensor or a CuPy array, "
                               f"not a {type(x).__name__}")


_tuned: dict[tuple, AxisReducer] = {}


def _tuned_reducer(dtype: str, op: str, determinism: str, db: Any, table: Any) -> AxisReducer:
    """The reducer of a results database or exported table, one per (type, operator, level,
    file), as reduce() keeps the whole-array ones."""
    for given in (db, table):
        if given is not None and not isinstance(given, (str, os.PathLike)):
            raise InvalidConfiguration(f"reduce(x, axis=..., db=..., table=...) takes file paths, "
                                       f"not a {type(given).__name__}: pass a per-shape list to "
                                       "AxisReducer(dtype, op, table=...)")
    key = (dtype, op, determinism, None if db is None else os.fspath(db),
           None if table is None else os.fspath(table))
    r = _tuned.get(key)
    if r is None:
        r = _tuned[key] = AxisReducer(dtype, op, db=db, table=table, determinism=determinism)
    return r


def _file_reducer(dtype: str, op: str, determinism: str, db: Any, table: Any) -> AxisReducer:
    """reduce()'s reducer for a tensor of `dtype`: the file's when one is given, else the
    rule's (at this determinism)."""
    if db is None and table is None:
        return default_reducer(dtype, op, determinism)
    return _tuned_reducer(dtype, op, determinism, db, table)


def _dtype_name(x: Any) -> str:
    return getattr(x.dtype, "name", None) or str(x.dtype).removeprefix("torch.")


def reduce_axis(x: Any, op: str, axis: int | tuple[int, ...], keepdims: bool = False,
                determinism: str = "run_to_run", db: str | os.PathLike | None = None,
                table: str | os.PathLike | None = None, out: Any = None) -> Any:
    """reducetune.reduce with an axis: per (type, operator, determinism), the reducer of the
    results database or exported table when one is given, else the built-in rule's; a call
    like one before it is launched as resolved then (axis_fast.py). `out`: see
    AxisReducer.__call__."""
    source = (op, determinism, db, table)
    result = axis_fast.call(x, axis, keepdims, source, out)
    if result is None:  # a first call of its key, or one the checks below must see
        result = _reduce_axis(x, op, axis, keepdims, determinism, db, table, out)
        axis_fast.remember(x, axis, keepdims, source,
                           lambda: _file_reducer(_dtype_name(x), op, determinism, db, table), op)
    return result


def _reduce_axis(x: Any, op: str, axis: Any, keepdims: Any, determinism: str, db: Any,
                 table: Any, out: Any) -> Any:
    """Every check, then the launch."""
    if check_determinism(determinism) == "run_to_run" and db is None and table is None:
        return _dispatch(x, op, axis, keepdims, None, out)
    # the level and the file live in the reducer: the one of this tensor's type (torch_op
    # checks it)
    dtype = _dtype_name(x)
    if dtype not in SUPPORTED:
        return _dispatch(x, op, axis, keepdims, None, out)  # refused there, saying how
    return _dispatch(x, op, axis, keepdims, _file_reducer(dtype, op, determinism, db, table),
                     out)


def release(*, db: str | os.PathLike | None = None,
            table: str | os.PathLike | None = None) -> int:
    """Closes the reducers reduce() keeps for a results database or exported table (of every
    type, operator and level; with both, of that pair) and drops them: their device memory is
    freed (a point that splits r keeps partials) and the next call with that file reads it
    again. The number of reducers released."""
    if db is None and table is None:
        raise InvalidConfiguration("release(db=PATH or table=PATH): the file whose reducers "
                                   "to release")
    gone = [k for k in _tuned if _same_file(k[3], db) and _same_file(k[4], table)]
    for key in gone:
        _tuned.pop(key).close()
    return len(gone)


def _same_file(kept: str | None, given: str | os.PathLike | None) -> bool:
    """`given` is None (any), or names the path `kept` names."""
    if given is None:
        return True
    return kept is not None and os.path.abspath(kept) == os.path.abspath(given)


def choice(dtype: str, op: str, view: tuple[int, int, int], *,
           db: str | os.PathLike | None = None, table: str | os.PathLike | None = None,
           determinism: str = "run_to_run") -> dict:
    """What reduce(x, op, axis=..., db=..., table=..., determinism=...) launches on the current
    GPU for a tensor of `dtype` whose call is the view (outer, r, inner), and why (the file's
    tuned point, "source": "table", or the built-in rule's; AxisReducer.choice). Makes and
    keeps the reducer reduce() would use, as reduce() does."""
    check_determinism(determinism)
    return _file_reducer(dtype, op, determinism, db, table).choice(*view)
