"""Sizes on the command line, and the search space seen from Python (no GPU)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import reducetune
from reducetune import InvalidConfiguration, parse_sizes


@pytest.mark.parametrize("text, sizes", [
    ("1048576", [1 << 20]),
    ("2^20", [1 << 20]),
    ("2^10..2^13", [1 << 10, 1 << 11, 1 << 12, 1 << 13]),
    ("2^10..2^30:10", [1 << 10, 1 << 20, 1 << 30]),
    ("100..400:100", [100, 200, 300, 400]),
    ("2^4,1000 2^4", [16, 1000]),
])
def test_sizes_are_parsed_from_powers_ranges_and_integers(text, sizes):
    assert parse_sizes(text) == sizes


@pytest.mark.parametrize("text", ["", "2^", "2**20", "1e6", "2^30..2^10", "2^10..1000",
                                  "2^10..2^20:0", "0", "-5", "2^10..", "abc"])
def test_malformed_sizes_are_refused_with_a_reason(text):
    with pytest.raises(InvalidConfiguration):
        parse_sizes(text)


def test_families_are_read_from_their_declarations():
    names = [f["name"] for f in reducetune.families()]
    assert "tunable" in names
    tunable = reducetune.family("tunable")
    assert [p["name"] for p in tunable["parameters"]][:2] == ["block_size", "unroll"]


def test_a_point_that_breaks_a_constraint_gets_its_reasons():
    space = reducetune.Space("tunable", "float32", "sum", reducetune.limits_for_arch("sm_90"))
    good = space.preset("good")
    assert space.check(good.point) == []
    reasons = space.check(space.point({**good.params, "warp": "redux"}))
    assert reasons and any("redux" in expr for expr, _ in reasons)


def test_labels_are_stable_and_name_the_type_and_operator():
    """Labels key every stored measurement, the committed recordings included: one point's
    labels are exactly these (family, type, operator, then each parameter in declaration
    order), and read back to the same point."""
    params = {"block_size": 256, "unroll": 4, "vec": 4, "warp": "shuffle",
              "block_strategy": "warp_partials", "finish": "two_pass",
              "elements_per_thread": 16, "grid_cap": 0}
    for dtype, op in (("int32", "max"), ("float32", "sum")):
        space = reducetune.Space("tunable", dtype, op, reducetune.limits_for_arch("sm_90"))
        point = space.point(params)
        assert point.labels == (
            f"tunable.{dtype}.{op}.bs_256.u_4.v_4.warp_shuffle.blk_warp_partials.fin_two_pass",
            "ept_16.cap_0")
        assert space.parse(*point.labels) == point and point.params == params


def test_unknown_names_raise_the_python_form_of_the_cpp_exception():
    limits = reducetune.limits_for_arch("sm_90")
    with pytest.raises(InvalidConfiguration, match="float8|known|valid"):
        reducetune.Space("tunable", "float8", "sum", limits).sizes()
    with pytest.raises(InvalidConfiguration, match="unknown template family"):
        reducetune.Space("nosuch", "float32", "sum", limits)
    with pytest.raises(InvalidConfiguration):
        reducetune.limits_for_arch("sm_1")


def test_a_restricted_space_holds_only_the_chosen_values():
    limits = reducetune.limits_for_arch("sm_90")
    space = reducetune.Space("tunable", "float32", "sum", limits, {"block_size": ["256"]})
    assert space.choices()["block_size"] == [256]
    assert all(p.params["block_size"] == 256 for p in space.points())
    with pytest.raises(InvalidConfiguration, match="not a declared value"):
        reducetune.Space("tunable", "float32", "sum", limits, {"block_size": ["300"]})


def test_compile_error_carries_its_log():
    """A point that does not compile comes back with NVRTC's log (the test-only broken family:
    its file, the line after the missing ';', the undeclared name), and CompileError, built as
    the extension's exception translator builds it (message, log), keeps the log apart. No
    binding raises a compile error today (compiles report failures as data), so the log is
    read from the failure."""
    from reducetune import _core

    templates = Path(__file__).resolve().parents[1] / "data" / "templates"
    try:
        _core.set_templates(str(templates))
        [result] = reducetune.compile_points("broken", "float32", "sum", 90, [{}])
    finally:
        _core.set_templates("")  # the embedded templates again, for the other tests
    assert not result["ok"]
    assert re.search(r"broken\.cuh\(1[12]\): error", result["error"]), result["error"]
    assert "this_identifier_does_not_exist" in result["error"], result["error"]
    e = reducetune.CompileError("NVRTC could not compile", result["error"])
    assert isinstance(e, reducetune.Error) and str(e) == "NVRTC could not compile"
    assert e.log == result["error"]


def cuda_devices() -> int:
    """How many devices the CUDA driver reports, asked through libcuda itself (ctypes), not
    through the extension under test; 0 without a driver."""
    import ctypes

    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    count = ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


def test_without_a_gpu_query_device_raises_device_error():
    """Whether a GPU is present is decided by the driver, not by query_device: a query_device
    that stopped raising would otherwise turn this test into a skip."""
    if cuda_devices():
        pytest.skip("the CUDA driver reports a GPU: the no-GPU error cannot be shown here")
    with pytest.raises(reducetune.DeviceError, match="^no usable CUDA device: ") as e:
        reducetune.query_device(0)
    assert "\n" not in str(e.value)


def test_a_points_grid_is_the_familys_expression_on_the_spaces_device():
    """Point.grid(n) asks the C++ space (the family's "grid"): uncapped, then capped at
    grid_cap x the device's SMs."""
    from reducetune._space import Space, limits_for_arch

    limits = limits_for_arch("sm_90")
    limits.sm_count = 132
    space = Space("tunable", "float32", "sum", limits)
    base = dict(space.base("good").params)
    uncapped = space.point({**base, "block_size": 256, "elements_per_thread": 16, "grid_cap": 0})
    capped = space.point({**base, "block_size": 256, "elements_per_thread": 16, "grid_cap": 4})
    assert uncapped.grid(1 << 20) == (1 << 20) // (256 * 16)
    assert uncapped.grid(1000) == 1
    assert capped.grid(1 << 30) == 4 * 132
    assert capped.grid(1 << 16) == 16
