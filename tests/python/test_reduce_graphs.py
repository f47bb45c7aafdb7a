"""reducetune.reduce where PyTorch programs put reductions (issue 24, section 5): captured in a
CUDA graph and replayed on new data, under torch.compile, and refused (not silently wrong) on a
tensor that records gradients. GPU only: the reasons are printed where there is none."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import reducetune
from conftest import NO_GPU
from test_reduce import _table

pytestmark = pytest.mark.skipif(NO_GPU is not None, reason=NO_GPU or "")
# n across the table's rules: the ticket finish (small n), two_pass, the seeds' multipass
SIZES = (1000, 10_000, (1 << 20) + 3)


def _torch():
    return pytest.importorskip("torch", reason="PyTorch is not installed")


def _close(got: float, x, what: str) -> None:
    exact = float(x.double().sum())
    bound = 2 * x.numel() * 2.0**-24 * float(x.double().abs().sum()) + 1e-6
    assert abs(got - exact) <= bound, (what, got, exact, bound)


def _capture(torch, fn):
    """fn captured in a CUDA graph the way PyTorch's documentation says: warmed up on a side
    stream, then recorded; returns (graph, the captured output)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn()
    return graph, out


@pytest.mark.gpu
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("ranking", ["application", "median"])
def test_a_captured_reduce_replays_on_new_data(tmp_path: Path, n: int, ranking: str):
    torch = _torch()
    table = _table(tmp_path / "table.json")
    gen = torch.Generator(device="cuda").manual_seed(n)
    x = torch.randn(n, device="cuda", generator=gen)
    graph, out = _capture(torch, lambda: reducetune.reduce(x, table=table, ranking=ranking))
    for round_ in range(3):
        x.copy_(torch.randn(n, device="cuda", generator=gen) + round_)
        graph.replay()
        torch.cuda.synchronize()
        _close(float(out), x, f"replay {round_}")


@pytest.mark.gpu
def test_the_first_call_may_be_the_captured_one(tmp_path: Path):
    """No warm-up: compiling, loading and allocating happen inside the capture, which must
    survive them (the reducer relaxes this thread's capture mode for what enqueues nothing)."""
    torch = _torch()
    table = _table(tmp_path / "fresh.json")
    x = torch.arange(1 << 16, device="cuda", dtype=torch.int32)
    reducer = reducetune.Reducer("int32", "max", table=table, ranking="median")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = reducer(x)
    graph.replay()
    torch.cuda.synchronize()
    assert int(out) == (1 << 16) - 1
    x[123] = 1 << 30
    graph.replay()
    torch.cuda.synchronize()
    assert int(out) == 1 << 30


@pytest.mark.gpu
def test_two_graphs_keep_their_own_scratch(tmp_path: Path):
    """Two captures of one reducer replayed back to back on one stream, then interleaved with
    eager calls of other sizes (which grow the eager scratch): each graph still reads its own."""
    torch = _torch()
    table = _table(tmp_path / "two.json")
    a = torch.ones(1 << 20, device="cuda")
    b = torch.full((4097,), 2.0, device="cuda")
    ga, out_a = _capture(torch, lambda: reducetune.reduce(a, table=table))
    gb, out_b = _capture(torch, lambda: reducetune.reduce(b, table=table))
    for _ in range(3):
        reducetune.reduce(torch.ones(1 << 24, device="cuda"), table=table)  # grows eager scratch
        ga.replay()
        gb.replay()
    torch.cuda.synchronize()
    assert float(out_a) == 1 << 20
    assert float(out_b) == 2 * 4097


@pytest.mark.gpu
def test_a_tensor_that_records_gradients_is_refused(tmp_path: Path):
    torch = _torch()
    table = _table(tmp_path / "grad.json")
    w = torch.ones(1000, device="cuda", requires_grad=True)
    with pytest.raises(reducetune.InvalidConfiguration, match="torch.no_grad"):
        reducetune.reduce(w, table=table)
    with torch.no_grad():  # no gradient asked for: the reduction is just a value
        assert float(reducetune.reduce(w, table=table)) == 1000.0
    assert float(reducetune.reduce(w.detach(), table=table)) == 1000.0


@pytest.mark.gpu
@pytest.mark.parametrize("fullgraph", [False, True])
def test_torch_compile_calls_it(tmp_path: Path, fullgraph: bool):
    torch = _torch()
    table = _table(tmp_path / "compiled.json")

    def f(t):
        return reducetune.reduce(t * 2, table=table)

    x = torch.ones(4097, device="cuda")
    try:
        got = torch.compile(f, fullgraph=fullgraph)(x)
    except Exception as e:  # noqa: BLE001 - report what torch.compile said, then fail
        pytest.fail(f"torch.compile(fullgraph={fullgraph}) failed: {type(e).__name__}: {e}")
    assert float(got) == 2 * 4097
    assert np.isfinite(float(got))
