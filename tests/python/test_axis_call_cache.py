"""The axis call's resolved-call cache (runtime/axis_fast.py) and the file reducers' public
handles (runtime/axis.py release, choice), without a GPU or PyTorch: the stand-ins of
axis_call_standin.py (a torch module whose gate answers are flags, a core Reducer that records
what it was made from and each launch) run every Python layer of reducetune.reduce and leave
out only the C++ launch.

Checked here: a repeat resolves nothing (the resolving function and the checked path are not
called) and launches what the first call did; another shape, type, axis, keepdims, operator or
file resolves again; a table file is read once per process, and release(table=PATH) makes the
next call read it again; release closes the reducer and drops what the cache keeps for it;
refused arguments, views with gaps, traced and gradient-recording calls never take a kept
entry; a repeat runs a handful of Python functions. tests/python/test_reduce_eager_gpu.py and
scripts/device-jobs/axis_call_overhead.py check the same path on a GPU."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import reducetune
from reducetune import InvalidConfiguration
from reducetune.runtime import axis, axis_fast, torch_op
from reducetune.runtime.axis_args import axis_call
from axis_call_standin import FakeCore, Tensor, install, table_file
from conftest import NO_GPU
from test_reduce_eager import Dtype, Out, World


@pytest.fixture
def world(monkeypatch) -> World:
    monkeypatch.setattr(FakeCore, "made", [])
    monkeypatch.setattr(axis, "_tuned", {})
    monkeypatch.setattr(axis, "_reducers", {})
    monkeypatch.setattr(axis.AxisReducer, "_by_id", [])  # ids from 0: the caches here are new
    return install(monkeypatch.setattr)


@pytest.fixture
def counted(monkeypatch) -> dict[str, int]:
    """How often the checked path ran and the resolving function was called."""
    counts = {"checked": 0, "resolved": 0}
    for name, module, attr in (("checked", axis, "_reduce_axis"),
                               ("resolved", axis_fast, "remember")):
        real = getattr(module, attr)

        def wrapped(*args: Any, _real: Any = real, _name: str = name) -> Any:
            counts[_name] += 1
            return _real(*args)

        monkeypatch.setattr(module, attr, wrapped)
    return counts


@pytest.fixture
def operator_calls(monkeypatch) -> list[tuple]:
    """The custom operator's calls (the wrapper's path for what the eager path refuses)."""
    calls: list[tuple] = []

    class Flat(Out):
        def reshape(self, shape: tuple[int, ...]) -> Out:
            return Out(shape, self.dtype, self.device)

    def operator_call(x: Any, op: str, reducer_id: int, outer: int, r: int, inner: int) -> Out:
        calls.append((op, reducer_id, outer, r, inner))
        return Flat((outer * inner,), x.dtype, x.device)

    monkeypatch.setattr(torch_op, "operator", lambda: operator_call)
    return calls


def _launches() -> list[tuple]:
    """Every launch of every stand-in core reducer made in this test, by reducer."""
    return [c for r in axis.AxisReducer._by_id if isinstance(r._core, FakeCore)
            for c in r._core.launches]


def test_a_repeat_resolves_nothing_and_launches_what_the_first_call_did(world, counted,
                                                                        tmp_path):
    x = Tensor((6, 7, 5), world.float32)
    path = table_file(tmp_path, (6, 7, 5))
    first = reducetune.reduce(x, "mean", axis=1, table=path)
    assert counted == {"checked": 1, "resolved": 1}
    for _ in range(5):
        out = reducetune.reduce(x, "mean", axis=1, table=path)
    assert counted == {"checked": 1, "resolved": 1}, "a repeat went through the checks again"
    assert out.shape == first.shape == (6, 5) and out.divided == first.divided == 7
    launches = _launches()
    assert len(launches) == 6 and len(set(launches)) == 1, launches
    assert launches[0] == (0x7000, 6, 7, 5, 0x9000, 501, 1)  # pointers, view, stream, device
    assert len(FakeCore.made) == 1, "the file's reducer is made once"


@pytest.mark.parametrize("change", ["shape", "dtype", "axis", "keepdims", "op", "table",
                                    "determinism"])
def test_another_shape_type_axis_or_source_resolves_again(world, counted, tmp_path, change):
    x = Tensor((8, 4, 3), world.float32)
    path = table_file(tmp_path, (8, 4, 3))
    base = {"x": x, "op": "sum", "axis": 1, "keepdims": False, "table": path}
    other = tmp_path / "other"
    other.mkdir()
    changed = {"shape": {"x": Tensor((8, 4, 6), world.float32)},
               "dtype": {"x": Tensor((8, 4, 3), Dtype("float64"))},
               "axis": {"axis": (1, 2)}, "keepdims": {"keepdims": True}, "op": {"op": "max"},
               "table": {"table": table_file(other, (8, 4, 3))},
               "determinism": {"determinism": "batch_invariant"}}[change]

    def call(args: dict) -> Any:
        args = dict(args)
        return reducetune.reduce(args.pop("x"), **args)

    call(base)
    call(base)
    assert counted["resolved"] == 1
    out = call({**base, **changed})
    assert counted == {"checked": 2, "resolved": 2}, f"a new {change} must be resolved"
    call({**base, **changed})
    call(base)
    assert counted["resolved"] == 2, "both keys are kept"
    if change == "shape":
        assert _launches()[2][1:4] == (8, 4, 6) and out.shape == (8, 6)
    if change == "axis":
        assert _launches()[2][1:4] == (8, 12, 1) and out.shape == (8,)


def test_a_table_file_is_read_once_and_release_reads_it_again(world, counted, tmp_path):
    x = Tensor((16, 32), world.float32)
    path = table_file(tmp_path, (16, 32, 1), variant="first")
    reducetune.reduce(x, "sum", axis=1, table=path)
    table_file(tmp_path, (16, 32, 1), variant="second")  # the file changes on disk
    reducetune.reduce(x, "sum", axis=1, table=path)
    assert [m[9][0][3] for m in FakeCore.made] == ["first"], "read once per process"
    assert axis.choice("float32", "sum", (16, 32, 1), table=path)["variant"] == "first"
    old = axis._tuned[("float32", "sum", "run_to_run", None, path)]

    assert axis.release(table=Path(path)) == 1
    assert isinstance(old._core, axis._Closed), "released: closed, its device memory freed"
    assert not [v for v in axis_fast._calls.values() if v[-1] == old.id], "and forgotten"
    reducetune.reduce(x, "sum", axis=1, table=path)
    assert [m[9][0][3] for m in FakeCore.made] == ["first", "second"]
    assert counted["resolved"] == 2
    assert axis.choice("float32", "sum", (16, 32, 1), table=path)["variant"] == "second"
    assert axis.choice("float32", "sum", (16, 64, 1), table=path)["source"] == "rule"
    assert len(FakeCore.made) == 2, "choice asks the reducer reduce() uses"


def test_release_takes_only_the_named_files_reducers(world, tmp_path):
    x = Tensor((4, 4), world.float32)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = table_file(tmp_path / "a", (4, 4, 1)), table_file(tmp_path / "b", (4, 4, 1))
    for path in (a, b):
        reducetune.reduce(x, "sum", axis=1, table=path)
        reducetune.reduce(x, "max", axis=0, table=path)
    assert axis.release(table=str(tmp_path / "nothing.json")) == 0
    assert axis.release(table=a) == 2, "every operator's reducer of the file"
    assert sorted(k[4] for k in axis._tuned) == [b, b]
    with pytest.raises(InvalidConfiguration, match="the file whose reducers"):
        axis.release()


def test_refused_arguments_never_take_a_kept_entry(world, counted, operator_calls):
    x = Tensor((4, 6), world.float32)
    reducetune.reduce(x, "sum", axis=1)
    reducetune.reduce(x, "sum", axis=(0, 1), keepdims=False)
    # True == 1 and (True, 1) == (0 + 1, 1) as keys: the checks must still see them
    with pytest.raises(InvalidConfiguration, match="axis must be|each axis is an int"):
        reducetune.reduce(x, "sum", axis=True)
    with pytest.raises(InvalidConfiguration, match="each axis is an int"):
        reducetune.reduce(x, "sum", axis=(False, 1))
    with pytest.raises(InvalidConfiguration, match="keepdims must be True or False"):
        reducetune.reduce(x, "sum", axis=1, keepdims=0)
    with pytest.raises(InvalidConfiguration, match=r"non-contiguous.*x.contiguous\(\)"):
        reducetune.reduce(Tensor((4, 6), world.float32, contiguous=False), "sum", axis=1)
    with pytest.raises(InvalidConfiguration, match="takes file paths"):
        reducetune.reduce(x, "sum", axis=1, table=[{"outer": 4}])
    assert len(_launches()) == 2 and operator_calls == []


def test_traced_and_gradient_recording_calls_take_the_operator_and_keep_nothing(
        world, counted, operator_calls):
    x = Tensor((4, 6), world.float32)
    world.compiling = True  # as Dynamo answers while it traces
    reducetune.reduce(x, "sum", axis=1)
    reducetune.reduce(x, "sum", axis=1)
    assert len(operator_calls) == 2 and axis_fast._calls == {}, "nothing kept while tracing"
    world.compiling = False
    reducetune.reduce(x, "sum", axis=1)
    assert axis_fast._calls and len(_launches()) == 1
    needs_grad = Tensor((4, 6), world.float32, grad=True)
    reducetune.reduce(needs_grad, "sum", axis=1)
    assert len(operator_calls) == 3, "autograd records the operator: the kept entry is not used"
    world.compiling = True
    reducetune.reduce(x, "sum", axis=1)
    assert len(operator_calls) == 4 and len(_launches()) == 1


def test_with_the_eager_path_off_the_operator_answers(world, operator_calls, monkeypatch):
    x = Tensor((4, 6), world.float32)
    reducetune.reduce(x, "sum", axis=1)
    monkeypatch.setattr(torch_op, "_eager", None)  # as test_reduce_eager_gpu compares them
    reducetune.reduce(x, "sum", axis=1)
    assert len(operator_calls) == 1


def test_an_axis_reducers_repeats_are_kept_until_it_is_closed(world, counted):
    x = Tensor((4, 6), world.float32)
    red = reducetune.AxisReducer("float32", "min")
    for _ in range(3):
        red(x, 0)
    assert counted["resolved"] == 1 and _launches()[-1][1:4] == (1, 4, 6)
    with pytest.raises(InvalidConfiguration, match="reduces float32, not float64"):
        red(Tensor((4, 6), Dtype("float64")), 0)
    red.close()
    assert not [v for v in axis_fast._calls.values() if v[-1] == red.id]
    with pytest.raises(InvalidConfiguration, match="was closed"):
        red(x, 0)


def test_the_kept_calls_are_bounded(world, counted, monkeypatch):
    monkeypatch.setattr(axis_fast, "CALLS_MAX", 2)
    for n in (3, 4, 5):
        reducetune.reduce(Tensor((n, 2), world.float32), "sum", axis=1)
    assert len(axis_fast._calls) == 1, "cleared when full, then the new call kept"


def test_a_repeat_runs_a_handful_of_python_functions(world, tmp_path):
    """The per-call Python work, counted rather than timed (timings on this shared machine are
    noise; axis_call_standin.py prints them): the checked path runs 9 of reducetune's Python
    functions per call with a table file (reduce, reduce_axis, check_determinism,
    _tuned_reducer, _dispatch, torch_op.reduce_axis, the eager call, its gate, view_of); a
    repeat runs reduce, reduce_axis, the kept call, the gate and the key."""
    x = Tensor((64, 128), world.float32)
    path = table_file(tmp_path, (64, 128, 1))
    reducetune.reduce(x, "sum", axis=1, table=path)
    package = str(Path(axis.__file__).parents[1])
    ran: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(package):
            ran.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        reducetune.reduce(x, "sum", axis=1, table=path)
    finally:
        sys.setprofile(None)
    print(f"reducetune's Python functions in a repeated call: {ran}")
    assert ran[:3] == ["reduce", "reduce_axis", "call"] and "_reduce_axis" not in ran
    assert len(ran) <= 5, ran


class _CupyDtype:
    def __init__(self, name: str) -> None:
        self.name = name


class _Array:
    """What the axis runtime reads of a CuPy array (shape, dtype, flags, device, data)."""

    __module__ = "cupy"

    def __init__(self, shape: tuple[int, ...], dtype: _CupyDtype, device: int = 0,
                 contiguous: bool = True) -> None:
        self.shape, self.dtype, self.divided = shape, dtype, None
        self.flags = type("Flags", (), {"c_contiguous": contiguous})()
        self.device = type("Device", (), {"id": device})()
        self.data = type("Data", (), {"ptr": 0x5000 + device})()

    def __itruediv__(self, r: int) -> "_Array":
        self.divided = r
        return self


def _fake_cupy(current: list[int]) -> Any:
    """The cupy module as runtime/axis.py and axis_fast.py call it; `current` holds the
    current device, which cupy.cuda.Device(i) sets inside its block."""

    class Device:
        def __init__(self, i: int) -> None:
            self.i = i

        def __enter__(self) -> None:
            self.before, current[0] = current[0], self.i

        def __exit__(self, *exc: Any) -> None:
            current[0] = self.before

    stream = type("Stream", (), {"ptr": 700})()
    cuda = type("cuda", (), {"Device": Device, "get_current_stream": staticmethod(lambda: stream),
                             "runtime": type("rt", (), {"getDevice": staticmethod(
                                 lambda: current[0])})})
    return type("cupy", (), {
        "ndarray": _Array, "cuda": cuda,
        "empty": staticmethod(lambda shape, dtype: _Array(shape, dtype, current[0])),
        "full": staticmethod(lambda shape, value, dtype: _Array(shape, dtype, current[0]))})


def test_cupy_repeats_are_kept_and_another_devices_array_takes_the_checked_path(
        world, counted, monkeypatch):
    current = [0]
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(current))
    f32 = _CupyDtype("float32")
    x = _Array((5, 9), f32)
    for _ in range(3):
        out = reducetune.reduce(x, "mean", axis=0)
    assert counted == {"checked": 1, "resolved": 1}
    assert out.shape == (9,) and out.divided == 5
    assert set(_launches()) == {(0x5000, 1, 5, 9, 0x5000, 700, 0)}
    on_1 = _Array((5, 9), f32, device=1)
    out = reducetune.reduce(on_1, "mean", axis=0)
    assert counted["checked"] == 2, "the result must be made within device 1: the checked path"
    assert _launches()[-1][4:] == (0x5001, 700, 1) and current == [0]
    with pytest.raises(InvalidConfiguration, match="ascontiguousarray"):
        reducetune.reduce(_Array((5, 9), f32, contiguous=False), "mean", axis=0)


GPU_CASES = [("float32", (64, 1000), 1, False, "sum"),
             ("bfloat16", (4000, 300), 0, False, "mean"),
             ("float32", (2, 3, 40, 5), (1, 2), True, "max"),
             ("int32", (3, 300_007), -1, False, "sum")]


@pytest.mark.gpu
@pytest.mark.skipif(NO_GPU is not None, reason=NO_GPU or "")
@pytest.mark.parametrize("dtype,shape,axis_,keepdims,op", GPU_CASES)
def test_on_a_gpu_a_repeat_is_kept_and_gives_the_checked_paths_bits(counted, tmp_path, dtype,
                                                                     shape, axis_, keepdims, op):
    """A real tensor's repeat (PyTorch's gate, new_empty, the raw stream, the C++ launch) takes
    the kept call and gives the first call's bits, with the built-in rule and with a table file
    naming the rule's point; choice and release on the GPU."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    g = torch.Generator(device="cuda").manual_seed(sum(shape))
    x = torch.randint(-9, 10, shape, device="cuda", generator=g).to(getattr(torch, dtype))
    red = reducetune.AxisReducer(dtype, op)
    view = axis_call(shape, axis_, keepdims)[:3]
    path = tmp_path / "table.json"
    point = red.choice(*view)  # the rule's point, named by a table file
    path.write_text(json.dumps([{"outer": view[0], "r": view[1], "inner": view[2],
                                 "variant": point["variant"], "launch": point["launch"]}]))
    for kwargs in ({}, {"table": str(path)}):
        first = reducetune.reduce(x, op, axis=axis_, keepdims=keepdims, **kwargs)
        checked = counted["checked"]
        again = reducetune.reduce(x, op, axis=axis_, keepdims=keepdims, **kwargs)
        assert counted["checked"] == checked, "the repeat took the checked path"
        assert again.shape == first.shape and again.dtype == x.dtype
        assert torch.equal(again, first), f"{kwargs}: the kept call's bits differ"
    assert axis.choice(dtype, op, view, table=str(path))["source"] == "table"
    assert axis.release(table=str(path)) == 1
    got = red(x, axis_, keepdims)
    assert torch.equal(red(x, axis_, keepdims), got)
