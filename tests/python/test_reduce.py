"""reducetune.reduce and reducetune.Reducer (issue 13).

Without a GPU: every bad input gets its clear error (host arrays, views with gaps,
unsupported types and operators, missing, corrupt or foreign tables and databases).
On a GPU (skipped with the reason otherwise): on CuPy arrays and PyTorch tensors, for every
type x operator, on random, cancelling and misaligned (offset view) data and odd n, the
result matches a float64 / exact host reference within the tuner's bound, through a table
whose rules use every finish protocol; the result is a 0-d array of the input's library;
a deterministic point gives identical bits over 100 calls.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import reducetune
from reducetune import InvalidConfiguration, _core
from reducetune.runtime.arrays import _dense

from conftest import NO_GPU

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


# ---- without a GPU: the errors -------------------------------------------------------------

def test_a_host_array_is_refused_with_what_to_do():
    with pytest.raises(InvalidConfiguration, match="host array.*np.sum"):
        reducetune.reduce(np.arange(10, dtype=np.float32))


def test_a_dlpack_host_object_is_read_by_nanobind_and_refused():
    class Wrapped:  # not numpy by its module: only its __dlpack__ says where it lives
        def __init__(self, a):
            self._a = a

        def __dlpack__(self, **kw):
            return self._a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self._a.__dlpack_device__()

    with pytest.raises(InvalidConfiguration, match="host array"):
        reducetune.reduce(Wrapped(np.ones(8, dtype=np.float32)))


class _FakeCuda:
    """An object with __cuda_array_interface__ and nothing behind it: refused before use."""

    def __init__(self, typestr: str, shape=(8,), strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "strides": strides,
                                         "data": (1 << 20, False), "version": 3}


@pytest.mark.parametrize("typestr, why", [("<c8", "complex64"), ("|b1", "bool"), ("<u4", "uint32")])
def test_unsupported_types_are_named(typestr, why):
    with pytest.raises(InvalidConfiguration, match=f"float32, float64.*{why}"):
        reducetune.reduce(_FakeCuda(typestr))


def test_a_view_with_gaps_is_refused():
    with pytest.raises(InvalidConfiguration, match="non-contiguous"):
        reducetune.reduce(_FakeCuda("<f4", shape=(8,), strides=(8,)))


def test_dense_layouts_are_told_from_views():
    assert _dense((4, 3), (12, 4), 4)      # C order
    assert _dense((4, 3), (4, 16), 4)      # Fortran order: every element once
    assert _dense((1, 5), (999, 4), 4)     # a unit extent's stride does not matter
    assert not _dense((4, 3), (24, 8), 4)  # every other element
    assert not _dense((4,), (-4,), 4)      # reversed


@pytest.mark.parametrize("kwargs, match", [
    ({"dtype": "float8"}, "unknown dtype 'float8'"),
    ({"dtype": "float32", "op": "mean"}, "unknown operator 'mean'"),
    ({"dtype": "float32", "db": "/nonexistent/results.db"}, "no results database"),
    ({"dtype": "float32", "table": "/nonexistent/best.json"}, "no results table"),
    ({"dtype": "float32", "ranking": "fastest"}, "unknown ranking 'fastest'"),
])
def test_bad_reducer_arguments(kwargs, match):
    with pytest.raises(InvalidConfiguration, match=match):
        reducetune.Reducer(**kwargs)


def test_corrupt_and_foreign_tables_are_refused(tmp_path: Path):
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text("{not json")
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(InvalidConfiguration, match="is not JSON"):
        reducetune.Reducer("float32", table=corrupt)
    with pytest.raises(InvalidConfiguration, match="reducetune export json"):
        reducetune.Reducer("float32", table=foreign)
    assert corrupt.read_text() == "{not json"  # read, never written


def test_a_foreign_database_is_refused_and_left_alone(tmp_path: Path):
    import sqlite3

    path = tmp_path / "other.db"
    with sqlite3.connect(path) as c:
        c.execute("create table t (x)")
    before = path.read_bytes()
    with pytest.raises(reducetune.Error):
        reducetune.Reducer("float32", db=path)
    assert path.read_bytes() == before


@pytest.mark.skipif(NO_GPU is None, reason="checks the no-GPU message; this machine has a GPU")
def test_without_a_gpu_the_reducer_says_so(tmp_path: Path):
    r = reducetune.Reducer("float32", cache_dir=tmp_path)
    with pytest.raises(reducetune.DeviceError, match="no CUDA device"):
        r.choice(1000)


# ---- on a GPU --------------------------------------------------------------------------------

gpu = pytest.mark.skipif(NO_GPU is not None, reason=NO_GPU or "")
TYPES = ("float32", "float64", "int32", "int64")
OPS = ("sum", "min", "max", "prod")
SIZES = (1, 7, 1000, 4097, (1 << 20) + 3)


def _table(path: Path) -> Path:
    """A dispatch table whose rules take every finish the selection admits (ticket at small
    n, two_pass in the middle, the seeds' recursive multipass or the atomic finish where
    valid at large n), so that one test runs the reducer through each launch protocol."""
    dev = _core.query_device(0)
    limits = reducetune.limits_for_arch(dev["cc_major"] * 10 + dev["cc_minor"])
    tables = []
    for dtype in TYPES:
        for op in OPS:
            rules = []
            for bucket, family, names in (
                    (1 << 10, "tunable", ("one_pass",)), (1 << 14, "tunable", ("good", "good_8byte")),
                    (1 << 20, "seeds", ("harris6", "harris5"))):
                space = reducetune.Space(family, dtype, op, limits)
                for preset in space.presets():
                    if preset.name in names and not preset.reasons and space.selected(preset.point):
                        rules.append({"bucket_n": bucket, "family": family,
                                      "variant": preset.variant_label,
                                      "launch": preset.launch_label,
                                      "determinism": "run_to_run", "flags": []})
                        break
            tables.append({"dtype": dtype, "op": op, "rules": rules})
    doc = {"format": "reducetune-dispatch", "devices": [
        {"name": dev["name"], "uuid": dev["uuid"],
         "compute_capability": dev["cc_major"] * 10 + dev["cc_minor"], "tables": tables}]}
    path.write_text(json.dumps(doc))
    return path


def _data(dtype: str, op: str, n: int, pattern: str, rng) -> np.ndarray:
    if op == "prod":  # mostly ones, a few exact factors: the product is exact and finite
        x = np.ones(n, dtype=dtype)
        idx = rng.choice(n, size=min(n, 20), replace=False)
        x[idx] = rng.choice([2, -1, 3] if dtype.startswith("int") else [2.0, -0.5, 1.5], size=len(idx))
        return x
    if dtype.startswith("int"):
        return rng.integers(-1000, 1000, size=n).astype(dtype)
    x = rng.normal(0.0, 100.0, size=n)
    if pattern == "cancelling":
        x[1::2] = -x[0::2][: n // 2] + rng.normal(0, 1e-3, size=n // 2)
    return x.astype(dtype)


def _reference(x: np.ndarray, op: str):
    if op in ("min", "max"):
        return getattr(x, op)()
    if x.dtype.kind == "i":  # exact, wrapped to the type's width as the GPU's integers wrap
        exact = sum(int(v) for v in x) if op == "sum" else int(np.prod(x.astype(object)))
        bits = x.dtype.itemsize * 8
        exact &= (1 << bits) - 1
        return exact - (1 << bits) if exact >= 1 << (bits - 1) else exact
    return float(np.sum(x.astype(np.float64))) if op == "sum" else float(np.prod(x.astype(np.float64)))


def _check(got, x: np.ndarray, op: str):
    ref = _reference(x, op)
    if x.dtype.kind == "i" or op in ("min", "max"):
        assert got == ref
        return
    eps = np.finfo(x.dtype).eps
    bound = 2 * len(x) * eps * float(np.abs(x.astype(np.float64)).sum()) + eps * abs(ref)
    if op == "prod":
        bound = 4 * len(x) * eps * abs(ref) + 1e-300
    assert abs(float(got) - ref) <= bound, (float(got), ref, bound)


def _libraries():
    libs = []
    try:
        import cupy

        libs.append(("cupy", cupy.asarray, lambda r: r.get().item()))
    except ImportError:
        pass
    try:
        import torch

        libs.append(("torch", lambda a: torch.as_tensor(a, device="cuda"), lambda r: r.item()))
    except ImportError:
        pass
    return libs


@gpu
@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("op", OPS)
def test_reduce_matches_the_host_reference(tmp_path: Path, dtype: str, op: str):
    libs = _libraries()
    if not libs:
        pytest.skip("neither CuPy nor PyTorch is installed")
    table = _table(tmp_path / "t.json")
    r = reducetune.Reducer(dtype, op, table=table, cache_dir=tmp_path / "cache")
    rng = np.random.default_rng(7)
    protocols = set()
    for name, upload, value in libs:
        for n in SIZES:
            for pattern in ("random", "cancelling"):
                x = _data(dtype, op, n + 1, pattern, rng)
                dev = upload(x)
                whole, offset = dev[: n], dev[1:]  # offset: misaligned by one element
                for view, host in ((whole, x[:n]), (offset, x[1:])):
                    got = r(view)
                    assert type(got).__module__.split(".")[0] == name
                    assert got.shape == () and str(got.dtype).endswith(dtype)
                    _check(value(got), host, op)
            protocols |= {r.choice(n)["protocol"] for n in SIZES}
    assert r.fallbacks == [], r.fallbacks  # every rule of the table ran as tuned
    assert len(protocols) >= 2, protocols


@gpu
def test_a_deterministic_point_gives_the_same_bits_100_times(tmp_path: Path):
    cupy = pytest.importorskip("cupy")
    x = cupy.asarray(np.random.default_rng(3).normal(0, 1e3, size=1 << 24).astype(np.float32))
    r = reducetune.Reducer("float32", "sum", cache_dir=tmp_path)
    assert r.choice(x.size)["determinism"] == "run_to_run"
    bits = {r(x).view(cupy.uint32).item() for _ in range(100)}
    assert len(bits) == 1


@gpu
def test_empty_arrays_and_views_with_gaps_on_the_gpu():
    torch = pytest.importorskip("torch")
    empty = torch.empty(0, device="cuda")
    assert reducetune.reduce(empty).item() == 0.0
    assert reducetune.reduce(empty, "prod").item() == 1.0
    with pytest.raises(InvalidConfiguration, match="no identity"):
        reducetune.reduce(empty, "min")
    with pytest.raises(InvalidConfiguration, match="non-contiguous"):
        reducetune.reduce(torch.ones(10, device="cuda")[::2])
    with pytest.raises(InvalidConfiguration, match="host"):
        reducetune.reduce(torch.ones(10))


@gpu
def test_threads_on_their_own_streams_share_one_reducer(tmp_path: Path):
    """Each thread reduces its own array on its own stream 200 times through one Reducer:
    scratch belongs to (device, stream), so no thread sees another's partials."""
    cupy = pytest.importorskip("cupy")
    import threading

    r = reducetune.Reducer("float32", "sum", table=_table(tmp_path / "t.json"),
                           cache_dir=tmp_path / "cache")
    rng = np.random.default_rng(11)
    hosts = [rng.normal(0, 10, size=(1 << 20) + 7 * i).astype(np.float32) for i in range(4)]
    got: dict[int, set[int]] = {}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            with cupy.cuda.Stream(non_blocking=True):
                x = cupy.asarray(hosts[i])
                results = [r(x) for _ in range(200)]
                got[i] = {int(v.view(cupy.uint32).item()) for v in results}
                _check(results[0].item(), hosts[i], "sum")
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert all(len(bits) == 1 for bits in got.values()), got  # deterministic on every stream


@gpu
def test_every_gpu_of_the_machine_reduces_its_own_arrays(tmp_path: Path):
    cupy = pytest.importorskip("cupy")
    count = cupy.cuda.runtime.getDeviceCount()
    if count < 2:
        pytest.skip(f"one GPU on this machine ({count}); the multi-GPU case needs two")
    r = reducetune.Reducer("int64", "sum", cache_dir=tmp_path)
    host = np.arange(1, 1 << 20, dtype=np.int64)
    for dev in list(range(count)) * 2:  # back and forth between the devices
        with cupy.cuda.Device(dev):
            x = cupy.asarray(host)
            out = r(x)
            assert out.device.id == dev
            assert int(out.item()) == int(host.sum())


@gpu
def test_torch_results_are_never_shared(tmp_path: Path):
    """PyTorch results come from a pool of 0-d views (reducetune/runtime/fast_call.py): hundreds of
    results held at once, over several refills and two streams, each keeps its own value."""
    torch = pytest.importorskip("torch")
    from reducetune.runtime import fast_call as _fast_call

    r = reducetune.Reducer("int64", "sum", cache_dir=tmp_path)
    xs = [torch.full((1000 + i,), i, dtype=torch.int64, device="cuda") for i in range(8)]
    held = []
    side = torch.cuda.Stream()
    for k in range(2 * _fast_call.SLOTS + 17):
        x = xs[k % len(xs)]
        if k % 3 == 0:
            with torch.cuda.stream(side):
                held.append((k, r(x)))
        else:
            held.append((k, r(x)))
    torch.cuda.synchronize()
    ptrs = {out.data_ptr() for _, out in held}
    assert len(ptrs) == len(held)  # no two results share an element
    for k, out in held:
        i = k % len(xs)
        assert out.shape == () and out.dtype == torch.int64
        assert int(out.item()) == i * (1000 + i), k
