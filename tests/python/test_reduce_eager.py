"""The eager axis path (runtime/eager.py) without a GPU or PyTorch: a stand-in module gives the
gate its answers (compiling, tracing, gradients, modes) and a fake reducer records the C++ call,
so that the gate's decisions, the call's arguments, the refusals and the host code's cost are
checked here; tests/python/test_reduce_eager_gpu.py checks the same path on a GPU against the
custom operator."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest

from reducetune import InvalidConfiguration
from reducetune.runtime import eager
from reducetune.runtime.axis_args import axis_call


class Dtype:
    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return f"torch.{self.name}"


class Plain:
    """What the eager path reads of a tensor, as a PyTorch CUDA tensor answers it."""

    def __init__(self, shape: tuple[int, ...], dtype: Dtype, *, cuda: bool = True,
                 grad: bool = False, contiguous: bool = True) -> None:
        self.shape, self.dtype, self.is_cuda = shape, dtype, cuda
        self.requires_grad, self._contiguous, self.device = grad, contiguous, "cuda:1"

    def is_contiguous(self) -> bool:
        return self._contiguous

    def get_device(self) -> int:
        return 1

    def data_ptr(self) -> int:
        return 0x7000


class Sub(Plain):
    """A tensor subclass (as FakeTensor or a user's subclass is): never on the eager path."""


class Out:
    def __init__(self, shape: tuple[int, ...], dtype: Dtype, device: str) -> None:
        self.shape, self.dtype, self.device, self.divided = tuple(shape), dtype, device, None

    def data_ptr(self) -> int:
        return 0x9000

    def div_(self, r: int) -> "Out":
        self.divided = r
        return self


class World:
    """The stand-in torch module; its flags are what the gate asks."""

    def __init__(self) -> None:
        self.compiling = self.jit = self.functorch = self.fx_tracing = False
        self.grad, self.modes = True, 0
        self.float32, self.int32, self.uint8 = Dtype("float32"), Dtype("int32"), Dtype("uint8")
        self.Tensor = Plain
        self.compiler = SimpleNamespace(is_compiling=lambda: self.compiling)
        self.is_grad_enabled = lambda: self.grad
        self._C = SimpleNamespace(_is_tracing=lambda: self.jit,
                                  _len_torch_dispatch_stack=lambda: self.modes,
                                  _are_functorch_transforms_active=lambda: self.functorch,
                                  _cuda_getCurrentRawStream=lambda device: 500 + device)
        self.fx = SimpleNamespace(_symbolic_trace=SimpleNamespace(
            is_fx_tracing=lambda: self.fx_tracing))
        self.empty = Out


class FakeReducer:
    def __init__(self) -> None:
        self.calls: list[tuple[int, ...]] = []
        self._core = SimpleNamespace(reduce_axis=lambda *a: self.calls.append(a))


def _setup() -> tuple[World, FakeReducer, Any, list[tuple[str, str, int]]]:
    world, reducer, asked = World(), FakeReducer(), []

    def reducer_for(dtype: str, op: str, reducer_id: int) -> FakeReducer:
        asked.append((dtype, op, reducer_id))
        return reducer

    return world, reducer, eager.make_call(world, reducer_for, eager.make_gate(world)), asked


def test_the_gate_passes_only_a_plain_eager_cuda_tensor():
    world = World()
    plain = eager.make_gate(world)
    x = Plain((4, 5), world.float32)
    assert plain(x)
    assert not plain(Sub((4, 5), world.float32)), "a subclass (FakeTensor, ...) takes the operator"
    assert not plain(Plain((4, 5), world.float32, cuda=False)), "a host or meta tensor"
    needs_grad = Plain((4, 5), world.float32, grad=True)
    assert not plain(needs_grad), "autograd records the operator's backward"
    world.grad = False
    assert plain(needs_grad), "under no_grad no gradient is recorded: eager is right"
    for flag in ("compiling", "jit", "fx_tracing", "functorch"):
        setattr(world, flag, True)
        assert not plain(x), f"{flag}: the operator must be what is traced"
        setattr(world, flag, False)
    world.modes = 1
    assert not plain(x), "a dispatch mode (make_fx, fake tensors) sees only the operator"


def test_the_call_launches_the_view_on_the_current_stream_and_divides_a_mean():
    world, reducer, call, asked = _setup()
    x = Plain((3, 7, 5), world.float32)
    out = call(x, "sum", 1, False, -1, None)
    assert reducer.calls == [(0x7000, 3, 7, 5, 0x9000, 501, 1)]
    assert out.shape == (3, 5) and out.dtype is world.float32 and out.divided is None
    out = call(x, "mean", (1, 2), True, -1, None)
    assert reducer.calls[-1][1:4] == (3, 35, 1) and out.shape == (3, 1, 1)
    assert out.divided == 35
    call(x, "sum", -1, False, -1, None)
    assert asked == [("float32", "sum", -1), ("float32", "mean", -1)], "one look-up per key"


def test_what_the_wrapper_decides_is_left_to_it():
    world, reducer, call, _ = _setup()
    assert call(Plain((4, 5), world.float32, contiguous=False), "sum", 0, False, -1, None) is None
    assert call(Plain((4, 0), world.float32), "sum", 1, False, -1, None) is None  # empty axis
    assert call(Plain((0, 5), world.float32), "max", 1, False, -1, None) is None  # no outputs
    world.compiling = True
    assert call(Plain((4, 5), world.float32), "sum", 1, False, -1, None) is None
    assert reducer.calls == []


def test_refusals_use_the_wrappers_checks_and_words():
    world, reducer, call, asked = _setup()
    x = Plain((2, 3, 4), world.float32)
    for axis, words in ((3, "out of range"), ((0, 2), "not adjacent"), (True, "each axis|int")):
        with pytest.raises(InvalidConfiguration, match=words):
            call(x, "sum", axis, False, -1, None)
    with pytest.raises(InvalidConfiguration, match="holds uint8"):
        call(Plain((4, 4), world.uint8), "sum", 0, False, -1, None)
    with pytest.raises(InvalidConfiguration, match="mean of int32"):
        call(Plain((4, 4), world.int32), "mean", 0, False, -1, None)
    with pytest.raises(InvalidConfiguration, match="unknown operator"):
        call(x, "median", 0, False, -1, None)
    with pytest.raises(InvalidConfiguration, match="reduces float64, not float32"):
        call(x, "sum", 0, False, 3, "float64")
    assert reducer.calls == []
    assert asked == [("float32", "sum", -1)], "only a type and operator that pass are kept"


def test_kept_views_never_let_a_refused_argument_through():
    shape = (6, 7)
    assert eager.view_of(shape, 1, True) == axis_call(shape, 1, True)
    assert eager.view_of(shape, 1, True) is eager.view_of(shape, 1, True), "kept"
    with pytest.raises(InvalidConfiguration, match="keepdims must be True or False"):
        eager.view_of(shape, 1, 1)  # 1 == True and hashes alike: must not hit the kept view
    with pytest.raises(InvalidConfiguration, match="each axis is an int|axis must be"):
        eager.view_of(shape, (True,), False)
    assert eager.view_of(shape, [0, 1], False) == axis_call(shape, [0, 1], False)


def test_the_host_code_of_an_eager_call_is_a_few_microseconds():
    world, reducer, call, _ = _setup()
    x = Plain((1 << 15, 8192), world.float32)
    calls = 10_000
    call(x, "sum", 1, False, -1, None)
    start = time.perf_counter()
    for _ in range(calls):
        call(x, "sum", 1, False, -1, None)
    per_call_us = (time.perf_counter() - start) / calls * 1e6
    print(f"eager axis call, host code with a stand-in torch and reducer: {per_call_us:.2f} us")
    assert len(reducer.calls) == calls + 1
    # generous (a shared 2-core machine): the operator's dispatch alone cost 120-260 us
    assert per_call_us < 40, f"{per_call_us:.1f} us per call"


def test_the_wrapper_asks_the_eager_path_first_and_the_operator_otherwise(monkeypatch):
    from reducetune.runtime import torch_op

    world, reducer, call, _ = _setup()
    ran: list[tuple] = []

    class Flat(Out):
        def reshape(self, shape: tuple[int, ...]) -> "Out":
            return Out(shape, self.dtype, self.device)

    def operator_call(x: Any, op: str, reducer_id: int, outer: int, r: int, inner: int) -> Out:
        ran.append((op, reducer_id, outer, r, inner))
        return Flat((outer * inner,), x.dtype, x.device)

    monkeypatch.setattr(torch_op, "_eager", call)
    monkeypatch.setattr(torch_op, "operator", lambda: operator_call)
    out = torch_op.reduce_axis(Plain((4, 6), world.float32), "sum", 1, False)
    assert out.shape == (4,) and len(reducer.calls) == 1 and ran == []
    out = torch_op.reduce_axis(Plain((4, 6), world.float32, grad=True), "mean", 0, True)
    assert out.shape == (1, 6) and ran == [("mean", -1, 1, 4, 6)], "autograd: the operator"
    assert len(reducer.calls) == 1
    with pytest.raises(InvalidConfiguration, match=r"x.contiguous\(\)"):
        torch_op.reduce_axis(Plain((4, 6), world.float32, contiguous=False), "sum", 1, False)
    with pytest.raises(InvalidConfiguration, match="host"):
        torch_op.reduce_axis(Plain((4, 6), world.float32, cuda=False), "sum", 1, False)


def test_a_forgotten_reducer_is_looked_up_again_and_only_its_own_launches_go():
    """AxisReducer.close() makes the eager path let go of the closed reducer's launches (they
    hold its C++ reducer, and the device memory close() frees), and of no one else's."""
    world, reducer, call, asked = _setup()
    x = Plain((3, 7, 5), world.float32)
    call(x, "sum", 1, False, 4, None)
    call(x, "sum", 1, False, 9, None)
    call.forget(4)
    call(x, "sum", 1, False, 4, None)
    call(x, "sum", 1, False, 9, None)
    assert asked == [("float32", "sum", 4), ("float32", "sum", 9), ("float32", "sum", 4)]


def test_a_closed_axis_reducer_says_so_on_every_use(monkeypatch):
    """close() swaps the C++ reducer for one that refuses every use with a clear message (no
    AttributeError on None), and tells the eager path to forget it."""
    from reducetune.errors import InvalidConfiguration
    from reducetune.runtime import axis as axis_module
    from reducetune.runtime import torch_op

    forgotten = []
    monkeypatch.setattr(torch_op, "forget_reducer", forgotten.append)
    red = axis_module.AxisReducer.__new__(axis_module.AxisReducer)
    red.id, red.dtype, red.op = 7, "float32", "sum"
    red._core = FakeReducer()._core
    red.close()
    assert forgotten == [7]
    with pytest.raises(InvalidConfiguration, match="closed"):
        red.launch(0, (1, 2, 1), 0, 0, 0)
    with pytest.raises(InvalidConfiguration, match="make a new one"):
        red.choice(1, 2, 1)
