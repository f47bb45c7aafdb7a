"""The eager axis path on a GPU (runtime/eager.py): a plain tensor's reducetune.reduce(x, op,
axis=...) goes around the custom operator and gives the operator's result bit for bit; autograd
and torch.compile still take the operator; CUDA-graph capture records the eager call and its
replays reduce new data. The operator's use is counted by wrapping torch_op.operator, which the
wrapper calls once per reduction it hands to the operator."""

from __future__ import annotations

from typing import Any

import pytest

import reducetune
from conftest import NO_GPU
from reducetune.runtime import torch_op

pytestmark = [pytest.mark.skipif(NO_GPU is not None, reason=NO_GPU or ""), pytest.mark.gpu]


def _torch() -> Any:
    return pytest.importorskip("torch", reason="PyTorch is not installed")


@pytest.fixture
def operator_calls(monkeypatch) -> list[int]:
    """How many reductions went through torch.ops.reducetune.reduce_axis."""
    torch = _torch()
    reducetune.reduce(torch.ones(2, 2, device="cuda"), axis=0)  # registers it, and the path
    assert torch_op._eager is not None, "the eager path is made with the operator"
    real, calls = torch_op.operator, []

    def counted() -> Any:
        calls.append(1)
        return real()

    monkeypatch.setattr(torch_op, "operator", counted)
    return calls


CASES = [((64, 1000), 1, False), ((3, 300_007), 1, False), ((4000, 300), 0, False),
         ((2, 3, 40, 5), (1, 2), True), ((1 << 12, 8192), -1, False)]


def _data(torch: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    g = torch.Generator(device="cuda").manual_seed(sum(shape))
    if dtype.is_floating_point:
        return torch.randn(shape, device="cuda", generator=g, dtype=torch.float32).to(dtype)
    return torch.randint(-9, 10, shape, device="cuda", generator=g, dtype=dtype)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "float64", "int32"])
@pytest.mark.parametrize("shape,axis,keepdims", CASES)
def test_the_eager_path_gives_the_operators_bits(operator_calls, monkeypatch, dtype, shape,
                                                 axis, keepdims):
    torch = _torch()
    x = _data(torch, shape, getattr(torch, dtype))
    ops = ["sum", "min", "max"] + (["mean"] if x.dtype.is_floating_point else [])
    for op in ops:
        got = reducetune.reduce(x, op, axis=axis, keepdims=keepdims)
        assert operator_calls == [], f"{op}: a plain eager call went through the operator"
        with monkeypatch.context() as m:
            m.setattr(torch_op, "_eager", None)
            want = reducetune.reduce(x, op, axis=axis, keepdims=keepdims)
        assert operator_calls == [1], "with the eager path off, the operator answers"
        operator_calls.clear()
        assert got.shape == want.shape and got.dtype == want.dtype and got.device == want.device
        assert torch.equal(got, want), f"{op} {dtype} {shape} axis={axis}: bits differ"


def test_autograd_and_compile_take_the_operator_and_no_grad_does_not(operator_calls,
                                                                     monkeypatch):
    torch = _torch()
    x = torch.randn(64, 100, device="cuda", requires_grad=True)
    reducetune.reduce(x, "sum", axis=1).sum().backward()
    assert operator_calls == [1] and torch.equal(x.grad, torch.ones_like(x))
    with torch.no_grad():  # no gradient recorded: the eager path is right
        got = reducetune.reduce(x, "sum", axis=1)
    assert operator_calls == [1]
    assert torch.allclose(got, x.detach().sum(dim=1), atol=1e-4)
    monkeypatch.undo()  # Dynamo traces the wrapper as applications have it, uncounted
    graphs: list[str] = []

    def backend(gm: Any, inputs: Any) -> Any:  # keeps what Dynamo captured, runs it eagerly
        graphs.append(str(gm.graph))
        return gm.forward

    compiled = torch.compile(lambda t: reducetune.reduce(t * 2, "mean", axis=0) + 1,
                             backend=backend, fullgraph=True)  # a graph break would raise
    y = torch.randn(4_000, 300, device="cuda")
    assert float((compiled(y).double() - ((y.double() * 2).mean(dim=0) + 1)).abs().max()) <= 1e-4
    assert any("reducetune.reduce_axis" in g for g in graphs), graphs


@pytest.mark.parametrize("op", ["sum", "mean"])
def test_a_captured_eager_call_replays_on_new_data(operator_calls, op):
    torch = _torch()
    x = torch.randn(1024, 8192, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up as PyTorch's documentation says
        reducetune.reduce(x, op, axis=1)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = reducetune.reduce(x, op, axis=1)
    assert operator_calls == [], "captured through the eager path"
    for round_ in range(3):
        x.copy_(torch.randn_like(x) + round_)
        graph.replay()
        torch.cuda.synchronize()
        want = reducetune.reduce(x, op, axis=1)  # eager, bit-identical to the operator above
        assert torch.equal(out, want), f"replay {round_}"
        # a tree of 8192 float32 sums errs by at most 13 roundings of the sum of magnitudes
        scale = 8192 if op == "mean" else 1
        ref, bound = x.double().sum(dim=1) / scale, x.double().abs().sum(dim=1) / scale * 1e-5
        assert bool(((out.double() - ref).abs() <= bound).all()), f"replay {round_} vs float64"


def test_the_eager_path_runs_on_the_current_stream(operator_calls):
    torch = _torch()
    x = torch.randn(4096, 4096, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        x2 = x * 3  # written on side: read correctly only if the reduction runs on side too
        got = reducetune.reduce(x2, "sum", axis=1)
    side.synchronize()
    assert operator_calls == []
    assert float((got.double() - (x.double() * 3).sum(dim=1)).abs().max()) <= 1e-1


def test_close_frees_a_split_points_partials_and_refuses_later_calls():
    """A 512-way split of 2^16 columns keeps 128 MiB of partials per stream: close() gives it
    back (the axis benchmark ran an H200 out of memory before its reducers were closed), and
    the eager path no longer reaches the closed reducer."""
    from reducetune.errors import InvalidConfiguration
    from reducetune.runtime.axis import AxisReducer

    torch = _torch()
    x = torch.randn(1024, 1 << 16, device="cuda")
    from reducetune import _core

    limits = reducetune.limits_for_arch(_core.query_device(0)["arch"])
    p = next(p for p in reducetune.Space("axis", "float32", "sum", limits).presets()
             if p.name == "tile_tall_columns")
    red = AxisReducer("float32", "sum", table=[{"outer": 1, "r": 1024, "inner": 1 << 16,
                                                 "variant": p.variant_label,
                                                 "launch": p.launch_label}])
    got = red(x, 0)
    assert red.choice(1, 1024, 1 << 16)["split"] == 512
    torch.testing.assert_close(got.double(), x.double().sum(0), rtol=1e-5, atol=1e-3)
    torch.cuda.synchronize()
    held = torch.cuda.mem_get_info()[0]
    red.close()
    torch.cuda.synchronize()
    assert torch.cuda.mem_get_info()[0] - held >= (1 << 16) * 512 * 4  # its partials at least
    with pytest.raises(InvalidConfiguration, match="closed"):
        red(x, 0)
