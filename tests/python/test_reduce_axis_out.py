"""``reducetune.reduce(x, op, axis=..., out=...)`` and ``AxisReducer(x, axis, out=...)`` without
a GPU or PyTorch (issue 26, item 5): the stand-ins of axis_call_standin.py run every Python
layer and record the C++ launch, so that here a call with out= launches into out's pointer and
returns out itself, a repeat takes the kept call without allocating, and every out that does not
fit (library, shape, element type, device, contiguity, memory shared with x, a traced or
gradient-recording call) is refused with its message, on a first call and on a repeat (the
kept call leaves it to the checked path). The GPU test at the end checks the same bits, the
identity of the returned tensor and that no allocation happens, with PyTorch and CuPy."""

from __future__ import annotations

import sys
from typing import Any

import pytest

import reducetune
from reducetune import InvalidConfiguration
from reducetune.runtime import axis, eager, torch_op
from axis_call_standin import FakeCore, Tensor, install
from conftest import NO_GPU
from test_axis_call_cache import _Array, _CupyDtype, _fake_cupy
from test_reduce_eager import Dtype, Plain, World

X_PTR = 0x10000  # x's first byte; an out placed past x's last byte shares none


@pytest.fixture
def world(monkeypatch) -> World:
    monkeypatch.setattr(FakeCore, "made", [])
    monkeypatch.setattr(axis, "_tuned", {})
    monkeypatch.setattr(axis, "_reducers", {})
    monkeypatch.setattr(axis.AxisReducer, "_by_id", [])
    world = install(monkeypatch.setattr)
    # what the out= path reads of a tensor beyond the stand-in's: its own pointer and device,
    # its element size, and the in-place fill and division
    monkeypatch.setattr(Plain, "data_ptr", lambda self: getattr(self, "ptr", X_PTR))
    monkeypatch.setattr(Plain, "get_device", lambda self: int(self.device[-1]))
    monkeypatch.setattr(Tensor, "element_size", lambda self: 4, raising=False)
    monkeypatch.setattr(Tensor, "div_", _record("divided"), raising=False)
    monkeypatch.setattr(Tensor, "fill_", _record("filled"), raising=False)
    monkeypatch.setattr(Tensor, "new_empty", _no_allocation)
    monkeypatch.setattr(torch_op, "operator", _no_operator)
    monkeypatch.setattr(torch_op, "_gate", eager.make_gate(world))
    monkeypatch.setattr(torch_op, "_raw", world._C._cuda_getCurrentRawStream)
    return world


def _record(name: str) -> Any:
    def method(self: Any, value: Any) -> Any:
        setattr(self, name, value)
        return self

    return method


def _no_allocation(self: Any, shape: tuple[int, ...]) -> Any:
    raise AssertionError("a call with out= allocated its result")


def _no_operator() -> Any:
    def operator_call(*args: Any) -> Any:
        raise AssertionError("a call with out= went through the custom operator")

    return operator_call


def _out(shape: tuple[int, ...], world: World, ptr: int = 0x900000, **kw: Any) -> Tensor:
    out = Tensor(shape, kw.pop("dtype", world.float32), **kw)
    out.ptr = ptr
    return out


def _launches() -> list[tuple]:
    return [c for r in axis.AxisReducer._by_id if isinstance(r._core, FakeCore)
            for c in r._core.launches]


@pytest.mark.parametrize("op,keepdims,shape", [("sum", False, (6, 5)), ("mean", True, (6, 1, 5))])
def test_out_receives_the_launch_and_is_returned_and_a_repeat_allocates_nothing(
        world, op, keepdims, shape):
    x = Tensor((6, 7, 5), world.float32)
    out = _out(shape, world)
    for _ in range(3):  # the checked call, then the kept one (new_empty would raise)
        assert reducetune.reduce(x, op, axis=1, keepdims=keepdims, out=out) is out
    assert _launches() == [(X_PTR, 6, 7, 5, 0x900000, 501, 1)] * 3, "into out's pointer"
    assert getattr(out, "divided", None) == (7 if op == "mean" else None), "mean: out / r"
    assert axis.AxisReducer._by_id[0]._core.args[1] == "sum", "mean reduces with sum"


def test_an_axis_reducer_writes_into_out(world):
    red = axis.AxisReducer("float32", "max")
    x = Tensor((4, 9), world.float32)
    out = _out((9,), world)
    assert red(x, 0, out=out) is out and red(x, 0, out=out) is out
    assert red._core.launches == [(X_PTR, 1, 4, 9, 0x900000, 501, 1)] * 2


def test_an_empty_axis_fills_out_and_an_empty_result_returns_it(world):
    out = _out((3,), world)
    assert reducetune.reduce(Tensor((3, 0), world.float32), "prod", axis=1, out=out) is out
    assert out.filled == 1.0
    empty = _out((0,), world)
    assert reducetune.reduce(Tensor((0, 4), world.float32), "sum", axis=1, out=empty) is empty
    assert _launches() == []


def _misfits(world: World) -> list[tuple[str, Any, str]]:
    """(what, out, the message's words) for an out of x = (6, 7, 5) float32 along axis 1."""
    f64 = Dtype("float64")
    return [
        ("shape", _out((5, 6), world), r"out has shape \(5, 6\); the result's is \(6, 5\)"),
        ("keepdims", _out((6, 1, 5), world), r"shape \(6, 1, 5\); the result's is \(6, 5\)"),
        ("dtype", _out((6, 5), world, dtype=f64), "out has element type.*float64.*float32"),
        ("device", _out((6, 5), world, ptr=0x900000), "out has device cuda:0.*cuda:1"),
        ("library", _out((6, 5), world, ptr=0x900000), r"out is a cupy\._Array; the result is "
         r"a torch\.Tensor"),
        ("contiguity", _out((6, 5), world, contiguous=False), "out is not contiguous"),
        ("inside x", _out((6, 5), world, ptr=X_PTR + 40), "out shares memory with x"),
        ("over x's start", _out((6, 5), world, ptr=X_PTR - 8), "shares memory with x"),
    ]


@pytest.mark.parametrize("case", range(8))
@pytest.mark.parametrize("repeat", [False, True], ids=["first call", "after a kept call"])
def test_an_out_that_does_not_fit_is_refused_saying_why(world, case, repeat):
    x = Tensor((6, 7, 5), world.float32)
    if repeat:  # the call is kept: the kept call must leave the misfit to the checked path
        reducetune.reduce(x, "sum", axis=1, out=_out((6, 5), world))
    what, out, words = _misfits(world)[case]
    if what == "device":
        out.device = "cuda:0"
    if what == "library":
        out = _Array((6, 5), _CupyDtype("float32"))
    before = len(_launches())
    with pytest.raises(InvalidConfiguration, match=words):
        reducetune.reduce(x, "sum", axis=1, out=out)
    assert len(_launches()) == before, f"an out of the wrong {what} was written"
    out_past_x = _out((6, 5), world, ptr=X_PTR + 6 * 7 * 5 * 4)  # x's last byte, then out
    assert reducetune.reduce(x, "sum", axis=1, out=out_past_x) is out_past_x


@pytest.mark.parametrize("flag", ["compiling", "jit", "fx_tracing", "functorch", "modes",
                                  "x's gradient", "out's gradient"])
def test_out_is_refused_where_the_operator_must_be_seen(world, flag):
    x = Tensor((6, 7, 5), world.float32)
    out = _out((6, 5), world)
    reducetune.reduce(x, "sum", axis=1, out=out)  # kept: the refusal must come on a repeat too
    if flag == "x's gradient":
        x.requires_grad = True
    elif flag == "out's gradient":
        out.requires_grad = True
    else:
        setattr(world, flag, 1 if flag == "modes" else True)
    with pytest.raises(InvalidConfiguration, match="out= is for an eager call.*without out="):
        reducetune.reduce(x, "sum", axis=1, out=out)
    if "gradient" in flag:  # under torch.no_grad() nothing is recorded: out= is fine
        world.grad = False
        assert reducetune.reduce(x, "sum", axis=1, out=out) is out
    assert len(_launches()) == (2 if "gradient" in flag else 1)


def test_the_other_checks_come_before_outs():
    """A host tensor or an unknown operator is refused with its own words, out= or not."""
    world = World()
    host = Tensor((4, 5), world.float32, cuda=False)
    with pytest.raises(InvalidConfiguration, match="host"):
        torch_op.reduce_axis(host, "sum", 1, False, out=Tensor((4,), world.float32))


def test_the_whole_array_call_refuses_out(world):
    with pytest.raises(InvalidConfiguration, match="out= is for a reduction along an axis"):
        reducetune.reduce(Tensor((6, 5), world.float32), "sum", out=_out((), world))


class _Buffer(_Array):
    """A CuPy stand-in array with its own pointer and size (the overlap check reads them)."""

    __module__ = "cupy"

    def __init__(self, shape: tuple[int, ...], dtype: _CupyDtype, ptr: int, **kw: Any) -> None:
        super().__init__(shape, dtype, **kw)
        self.data = type("Data", (), {"ptr": ptr})()
        self.nbytes = 4 * _count(shape)

    def fill(self, value: float) -> None:
        self.filled = value


def _count(shape: tuple[int, ...]) -> int:
    n = 1
    for e in shape:
        n *= e
    return n


def test_cupy_out_is_written_checked_and_refused_saying_why(world, monkeypatch):
    cupy = _fake_cupy([0])
    cupy.ndarray = _Buffer
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setattr(cupy, "empty", staticmethod(_no_allocation))
    f32 = _CupyDtype("float32")
    x = _Buffer((5, 9), f32, X_PTR)
    out = _Buffer((9,), f32, 0x900000)
    for _ in range(3):  # the checked call, then the kept one (cupy.empty would raise)
        assert reducetune.reduce(x, "mean", axis=0, out=out) is out
    assert _launches() == [(X_PTR, 1, 5, 9, 0x900000, 700, 0)] * 3 and out.divided == 5
    for bad, words in ((_Buffer((5,), f32, 0x900000), r"shape \(5,\)"),
                       (_Buffer((9,), _CupyDtype("int32"), 0x900000), "element type"),
                       (_Buffer((9,), f32, 0x900000, device=1), "out has device 1"),
                       (_Buffer((9,), f32, 0x900000, contiguous=False), "not contiguous"),
                       (_Buffer((9,), f32, X_PTR + 4), "shares memory with x")):
        with pytest.raises(InvalidConfiguration, match=words):
            reducetune.reduce(x, "mean", axis=0, out=bad)
    empty_axis = _Buffer((9,), f32, 0x900000)
    assert reducetune.reduce(_Buffer((0, 9), f32, X_PTR), "sum", axis=0,
                             out=empty_axis) is empty_axis and empty_axis.filled == 0.0
    assert len(_launches()) == 3


GPU_CASES = [("float32", (64, 1000), 1, False, "sum"),
             ("bfloat16", (4000, 300), 0, False, "mean"),
             ("float32", (2, 3, 40, 5), (1, 2), True, "max")]


@pytest.mark.gpu
@pytest.mark.skipif(NO_GPU is not None, reason=NO_GPU or "")
@pytest.mark.parametrize("dtype,shape,axis_,keepdims,op", GPU_CASES)
def test_on_a_gpu_out_gives_the_same_bits_returns_out_and_allocates_nothing(
        dtype, shape, axis_, keepdims, op):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    g = torch.Generator(device="cuda").manual_seed(sum(shape))
    x = torch.randn(shape, device="cuda", generator=g).to(getattr(torch, dtype))
    want = reducetune.reduce(x, op, axis=axis_, keepdims=keepdims)
    out = torch.full_like(want, float("nan"))
    assert reducetune.reduce(x, op, axis=axis_, keepdims=keepdims, out=out) is out  # checked
    torch.cuda.synchronize()
    allocs = torch.cuda.memory_stats()["allocation.all.allocated"]
    for _ in range(5):  # the kept call
        assert reducetune.reduce(x, op, axis=axis_, keepdims=keepdims, out=out) is out
    torch.cuda.synchronize()
    assert torch.cuda.memory_stats()["allocation.all.allocated"] == allocs, "out= allocated"
    assert torch.equal(out.view(torch.int16 if out.element_size() == 2 else torch.int32),
                       want.view(torch.int16 if want.element_size() == 2 else torch.int32))
    with pytest.raises(InvalidConfiguration, match="shares memory with x"):
        reducetune.reduce(x, op, axis=axis_, keepdims=keepdims, out=x.view(-1)[:want.numel()]
                          .view(want.shape))
    # torch.compile: the traced call is refused (is_compiling); Dynamo may then run the frame
    # eagerly after a graph break, where out= is an eager call: either way no wrong result
    compiled = torch.compile(lambda t, o: reducetune.reduce(t, op, axis=axis_,
                                                            keepdims=keepdims, out=o))
    out.fill_(float("nan"))
    try:
        got = compiled(x, out)
    except InvalidConfiguration as e:
        assert "without out=" in str(e)
    else:
        assert got is out and torch.equal(out, want)


@pytest.mark.gpu
@pytest.mark.skipif(NO_GPU is not None, reason=NO_GPU or "")
def test_on_a_gpu_cupy_out_gives_the_same_bits_and_is_returned():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    x = cupy.arange(3 * 1000 * 7, dtype=cupy.float32).reshape(3, 1000, 7) / 7
    want = reducetune.reduce(x, "sum", axis=1)
    out = cupy.full((3, 7), cupy.nan, dtype=cupy.float32)
    for _ in range(3):
        assert reducetune.reduce(x, "sum", axis=1, out=out) is out
    assert (out.view(cupy.int32) == want.view(cupy.int32)).all()
    with pytest.raises(InvalidConfiguration, match="element type"):
        reducetune.reduce(x, "sum", axis=1, out=cupy.empty((3, 7), dtype=cupy.float64))
