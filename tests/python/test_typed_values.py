"""A problem and a point cross the C++/Python boundary as typed values (issue 23, item 1):
``_core.Problem`` (type, operator, shape (outer, r, inner)) and ``_core.Point`` with its plain
form ``Point.to_dict()``, which the extension's evaluate() and precompile() take as they take
the Point (what a worker process receives over JSON: parameters by name, not a label).
Runs without a GPU (precompile only compiles)."""

from __future__ import annotations

import json

import pytest

from reducetune import InvalidConfiguration, _core


def _space(dtype="float32", op="sum"):
    return _core.Space("tunable", dtype, op, _core.limits_for_arch("sm_90"))


def test_the_whole_array_is_the_shape_1_n_1():
    p = _core.Problem.whole_array("float64", "max", 1000)
    assert (p.dtype, p.op, p.shape) == ("float64", "max", (1, 1000, 1))
    assert p.is_whole_array and p.elements == 1000 and p.outputs == 1
    assert p == _core.Problem("float64", "max", (1, 1000, 1))
    assert p != _core.Problem("float64", "max", (2, 500, 1))
    assert p != "float64.max.(1,1000,1)"  # no comparison with its label
    assert p.label == "float64.max.(1,1000,1)"
    rows = _core.Problem("float32", "sum", (64, 4096, 1))
    assert not rows.is_whole_array and rows.outputs == 64
    assert len({p, _core.Problem.whole_array("float64", "max", 1000), rows}) == 2


@pytest.mark.parametrize("shape", [(0, 8, 1), (1, 0, 1), (1, 8, 0), (1 << 33, 1 << 31, 2)])
def test_a_bad_shape_is_refused_in_one_line(shape):
    with pytest.raises(InvalidConfiguration) as e:
        _core.Problem("int32", "sum", shape)
    assert "\n" not in str(e.value) and "int32.sum." in str(e.value)


def test_a_point_s_plain_form_is_the_same_point():
    space = _space()
    p = space.point({"elements_per_thread": 64, "grid_cap": 2, "finish": "ticket"})
    d = p.to_dict()
    assert d == json.loads(json.dumps(d))  # plain values: it crosses a JSON pipe unchanged
    assert (d["family"], d["dtype"], d["op"]) == ("tunable", "float32", "sum")
    assert d["params"]["elements_per_thread"] == 64 and d["params"]["grid_cap"] == 2
    assert space.point(d["params"]) == p


def test_precompile_takes_points_and_their_plain_forms():
    space = _space()
    a = space.point({"block_size": 128})
    b = space.point({"block_size": 128, "elements_per_thread": 4})  # same variant
    got = _core.precompile([a, b.to_dict()], "sm_90", 1)
    assert got["requested"] == 1 and got["failed"] == 0
    assert got["compiled"] + got["cached"] == 1
    with pytest.raises(InvalidConfiguration, match="takes Points"):
        _core.precompile([a, 3], "sm_90", 1)


def test_evaluate_refuses_a_point_of_another_problem_before_any_device():
    p = _space().point({})
    problem = _core.Problem.whole_array("int32", "sum", 1 << 10)
    plain = {"dtype": "int32", "op": "sum", "shape": [1, 1 << 10, 1]}  # as over the JSON pipe
    for point in (p, p.to_dict()):
        for pr in (problem, plain):
            with pytest.raises(InvalidConfiguration,
                               match=r"not for the problem int32\.sum\.\(1,1024,1\)"):
                _core.evaluate(point, pr)
    with pytest.raises(InvalidConfiguration, match='needs "dtype"'):
        _core.evaluate({"family": "tunable", "params": {}}, problem)
    with pytest.raises(InvalidConfiguration, match='problem\'s dict needs "shape"'):
        _core.evaluate(p, {"dtype": "float32", "op": "sum"})
