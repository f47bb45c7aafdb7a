"""reducetune.reduce(x, op, axis=..., keepdims=...) without a GPU (issue 26, item 5): how axes
become the view (outer, r, inner) and the result's shape, every refusal with its message
(axis out of range, repeated or not adjacent, unknown operator, the mean of integers, min and
max of an empty axis, unsupported types, host and non-contiguous tensors), what an empty axis
gives, the per-shape table's reading, and the built-in rule by shape as the core states it
(runtime/axis_dispatch.cpp)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import reducetune
from reducetune import InvalidConfiguration, _core
from reducetune.runtime import torch_op
from reducetune.runtime.axis import read_table
from reducetune.runtime.axis_args import axis_call, check_dtype, core_op, empty_fill


@pytest.mark.parametrize("shape, axis, keepdims, view, result", [
    ((6, 5), -1, False, (6, 5, 1), (6,)),            # rows
    ((6, 5), 1, True, (6, 5, 1), (6, 1)),
    ((6, 5), 0, False, (1, 6, 5), (5,)),             # columns
    ((2, 3, 4, 5), (1, 2), False, (2, 12, 5), (2, 5)),  # adjacent axes folded into r
    ((2, 3, 4, 5), (2, -3), True, (2, 12, 5), (2, 1, 1, 5)),  # negative, any order
    ((2, 3, 4, 5), (0, 1, 2, 3), False, (1, 120, 1), ()),
    ((7,), 0, False, (1, 7, 1), ()),
    ((3, 0, 4), 1, False, (3, 0, 4), (3, 4)),        # an empty axis
    ((0, 5), 1, False, (0, 5, 1), (0,)),             # no outputs
])
def test_axes_become_the_view_and_the_result_shape(shape, axis, keepdims, view, result):
    c = axis_call(shape, axis, keepdims)
    assert (c.outer, c.r, c.inner) == view
    assert c.shape == result
    assert c.outputs == math.prod(result)


@pytest.mark.parametrize("shape, axis, message", [
    ((6, 5), 2, r"axis 2 is out of range for a tensor of 2 dimensions \(valid: -2 to 1\)"),
    ((6, 5), -3, "out of range"),
    ((2, 3, 4), (0, 2), r"not adjacent.*one call at a time.*movedim"),
    ((2, 3, 4), (1, -2), "names an axis twice"),
    ((2, 3), (), "axis=None"),
    ((2, 3), 1.0, "an int or a tuple"),
    ((2, 3), True, "an int or a tuple"),
    ((2, 3), (0, "1"), "each axis is an int"),
    ((), 0, "0-d tensor"),
])
def test_a_bad_axis_is_refused_with_what_is_wrong(shape, axis, message):
    with pytest.raises(InvalidConfiguration, match=message):
        axis_call(shape, axis)


def test_operators_mean_is_a_sum_and_integers_have_no_mean():
    assert core_op("mean", "float32") == "sum"
    assert core_op("max", "int32") == "max"
    with pytest.raises(InvalidConfiguration, match=r"mean of int64.*x.float\(\)"):
        core_op("mean", "int64")
    with pytest.raises(InvalidConfiguration, match="unknown operator 'median'"):
        core_op("median", "float32")


def test_an_empty_axis_gives_the_identity_nan_for_a_mean_and_an_error_for_min_and_max():
    assert empty_fill("sum") == 0.0
    assert empty_fill("prod") == 1.0
    assert math.isnan(empty_fill("mean"))
    for op in ("min", "max"):
        with pytest.raises(InvalidConfiguration, match="empty axis has no value"):
            empty_fill(op)


def test_an_unsupported_type_names_the_supported_ones_and_the_conversion():
    with pytest.raises(InvalidConfiguration, match=r"reduces .*float32.*holds uint8.*x.float\(\)"):
        check_dtype("uint8", "uint8", "x.float()")
    with pytest.raises(InvalidConfiguration, match="reduces float32, not float64"):
        check_dtype("float64", "float32", "")


class _FakeTensor:
    """What the PyTorch wrapper reads of a tensor before the operator runs (no PyTorch here)."""

    __module__ = "torch"

    def __init__(self, shape, *, cuda=True, contiguous=True, dtype="torch.float32"):
        self.shape, self.is_cuda, self._contiguous, self.dtype = shape, cuda, contiguous, dtype
        self.filled = None

    def is_contiguous(self):
        return self._contiguous

    def new_full(self, shape, value):
        self.filled = (shape, value)
        return self.filled

    def new_empty(self, shape):
        return ("empty", shape)


def test_the_torch_wrapper_refuses_host_non_contiguous_and_unsupported_tensors_in_order():
    with pytest.raises(InvalidConfiguration, match=r"host \(CPU\) tensor.*x.cuda\(\)"):
        torch_op.reduce_axis(_FakeTensor((4, 4), cuda=False), "sum", 0, False)
    with pytest.raises(InvalidConfiguration, match=r"non-contiguous.*x.contiguous\(\)"):
        torch_op.reduce_axis(_FakeTensor((4, 4), contiguous=False), "sum", 0, False)
    with pytest.raises(InvalidConfiguration, match="holds uint8"):
        torch_op.reduce_axis(_FakeTensor((4, 4), dtype="torch.uint8"), "sum", 0, False)
    with pytest.raises(InvalidConfiguration, match="out of range"):
        torch_op.reduce_axis(_FakeTensor((4, 4)), "sum", 5, False)


def test_the_torch_wrapper_answers_empty_axes_without_launching():
    x = _FakeTensor((3, 0, 2))
    assert torch_op.reduce_axis(x, "sum", 1, False) == ((3, 2), 0.0)
    shape, fill = torch_op.reduce_axis(x, "mean", 1, True)
    assert shape == (3, 1, 2) and math.isnan(fill)
    with pytest.raises(InvalidConfiguration, match="max along an empty axis"):
        torch_op.reduce_axis(x, "max", 1, False)
    assert torch_op.reduce_axis(_FakeTensor((0, 4)), "max", 1, False) == ("empty", (0,))


def test_reduce_with_an_axis_refuses_a_host_array():
    with pytest.raises(InvalidConfiguration, match="PyTorch tensor or a CuPy array"):
        reducetune.reduce(np.ones((4, 4), dtype=np.float32), axis=0)


@pytest.mark.parametrize("kwargs", [{"nondeterministic": True}, {"ranking": "median"}])
def test_whole_array_options_with_an_axis_are_refused_not_ignored(kwargs):
    with pytest.raises(InvalidConfiguration, match="whole-array points"):
        reducetune.reduce(_FakeTensor((4, 4)), "sum", axis=0, **kwargs)


@pytest.mark.parametrize("kwargs, words", [({"db": "r.db"}, "no results database at r.db"),
                                           ({"table": "t.json"}, "no such file"),
                                           ({"table": [{"outer": 1}]}, "takes file paths")])
def test_a_tuned_file_with_an_axis_is_read_not_ignored(kwargs, words):
    # db and table give the axis call the file's tuned points per shape (runtime/axis.py): a
    # missing file is said, not passed over for the built-in rule
    with pytest.raises(InvalidConfiguration, match=words):
        reducetune.reduce(_FakeTensor((4, 4)), "sum", axis=0, **kwargs)


def test_a_table_is_read_from_a_list_or_a_json_file(tmp_path: Path):
    entries = [{"outer": 1, "r": 1024, "inner": 4, "variant": "axis.float32.sum.x",
                "launch": ""}]
    assert read_table(entries) == [(1, 1024, 4, "axis.float32.sum.x", "")]
    (tmp_path / "t.json").write_text(json.dumps({"entries": entries}))
    assert read_table(tmp_path / "t.json") == read_table(entries)
    with pytest.raises(InvalidConfiguration, match="needs outer, r, inner"):
        read_table([{"outer": 1}])
    with pytest.raises(InvalidConfiguration, match="no axis table"):
        read_table(tmp_path / "missing.json")


@pytest.mark.parametrize("view, preset", [
    ((1 << 24, 4, 1), "staged_short_rows"),
    ((1 << 22, 16, 1), "staged_short_rows"),
    ((1 << 22, 17, 1), "group_short_rows"),
    ((1 << 21, 32, 1), "group_short_rows"),
    ((1 << 16, 1024, 1), "warp_rows"),
    ((1024, 1 << 16, 1), "block_rows"),
    ((16, 1 << 22, 1), "split_long_rows"),
    ((1, 64, 1 << 20), "thread_columns"),
    ((1, 1 << 14, 4096), "tile_columns_split"),
    ((1, 1 << 24, 4), "tile_few_columns"),
    ((4096, 512, 64), "tile_columns"),
])
def test_the_built_in_rule_by_shape(view, preset):
    got, why = _core.axis_rule(*view)
    assert got == preset and why


def test_a_table_entry_answers_its_log2_bucket_rows_and_columns_apart():
    assert _core.axis_bucket(1 << 16, 1024, 1) == (True, 10, 16)
    assert _core.axis_bucket(50000, 800, 1) == (True, 10, 16)   # half an octave away
    assert _core.axis_bucket(1 << 16, 1500, 1) == (True, 11, 16)
    assert _core.axis_bucket(1, 1024, 1 << 16) == (False, 10, 16)


def test_the_reducer_refuses_an_empty_extent_before_touching_a_device():
    r = reducetune.AxisReducer("float32", "sum")
    with pytest.raises(InvalidConfiguration, match="extent|0"):
        r.choice(4, 0, 1)
