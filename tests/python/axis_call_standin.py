"""The axis call's Python path without a GPU or PyTorch: a stand-in torch module and tensor
(test_reduce_eager's, whose gate answers are flags) and a stand-in core reducer that records
what it was made from and each launch, so that everything the Python layers do per call runs
and only the C++ launch is left out. Used by tests/python/test_axis_call_cache.py, and run as
a script it prints the host time of one call each way (the per-call Python overhead):

    PYTHONPATH=driver python3 tests/python/axis_call_standin.py [--profile]

It runs against whichever reducetune PYTHONPATH names, so that the same script times a tree
before a change (say, ``git archive`` of an older commit, with the built extension copied in)
and after it.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from reducetune import _core
from reducetune.runtime import axis, eager, torch_op
from test_reduce_eager import Out, Plain, World

CALLS = 100_000


class FakeCore:
    """The core's Reducer as the axis runtime uses it: what it was made from, each launch."""

    made: list[tuple] = []

    def __init__(self, *args: Any) -> None:
        self.args, self.launches = args, []
        FakeCore.made.append(args)

    def reduce_axis(self, *args: Any) -> None:
        self.launches.append(args)

    def axis_choice(self, outer: int, r: int, inner: int, device: int = -1) -> dict:
        entries = self.args[9]  # the caller's per-shape table, as AxisReducer passes it
        hit = [e for e in entries if e[:3] == (outer, r, inner)]
        return {"source": "table", "variant": hit[0][3]} if hit else {"source": "rule"}


class Tensor(Plain):
    """A plain CUDA tensor of the stand-in torch (the gate's `type(x) is torch.Tensor`), in a
    module whose name says torch, as runtime/axis.py dispatches by it."""

    __module__ = "torch"

    def new_empty(self, shape: tuple[int, ...]) -> Out:
        return Out(shape, self.dtype, self.device)


def install(setattr_: Callable[[Any, str, Any], None]) -> World:
    """Puts the stand-ins in place with `setattr_` (pytest's monkeypatch.setattr, which undoes
    it, or the builtin): the core's Reducer, the eager path of torch_op, and where this tree
    has one, the fast path's torch binding. The stand-in torch module."""
    world = World()
    world.Tensor = Tensor
    setattr_(_core, "Reducer", FakeCore)
    setattr_(torch_op, "_eager", eager.make_call(world, lambda *k: torch_op._reducer_for(*k),
                                                 eager.make_gate(world)))
    try:
        from reducetune.runtime import axis_fast
    except ImportError:  # a tree before the fast path: nothing more to put in place
        return world
    for name in ("_plain", "_raw", "_cupy_array", "_cupy"):  # bound below: undone with the rest
        setattr_(axis_fast, name, getattr(axis_fast, name))
    setattr_(axis_fast, "_plain", axis_fast._never)
    setattr_(axis_fast, "_calls", {})
    axis_fast.bind_torch(world)
    return world


def table_file(folder: Path, view: tuple[int, int, int], variant: str = "v") -> str:
    path = folder / "table.json"
    path.write_text(json.dumps({"entries": [{"outer": view[0], "r": view[1], "inner": view[2],
                                             "variant": variant, "launch": ""}]}))
    return str(path)


def per_call_us(fn: Callable[[], Any], calls: int = CALLS, repeats: int = 7) -> float:
    """The fastest of `repeats` runs of calls / repeats calls each: on a shared machine the
    others' load only ever adds time."""
    fn()
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls // repeats):
            fn()
        runs.append((time.perf_counter() - start) / (calls // repeats) * 1e6)
    return min(runs)


def ways(world: World, folder: Path) -> dict[str, Callable[[], Any]]:
    """The calls an application makes, on a (4096, 4096) float32 tensor along axis 1."""
    import reducetune

    x = Tensor((4096, 4096), world.float32)
    path = table_file(folder, (4096, 4096, 1))
    red = axis.AxisReducer("float32", "sum")
    return {"reduce(x, 'sum', axis=1, table=FILE)":
            lambda: reducetune.reduce(x, "sum", axis=1, table=path),
            "reduce(x, 'sum', axis=1)": lambda: reducetune.reduce(x, "sum", axis=1),
            "reduce(x, 'mean', axis=(0, 1), keepdims=True)":
            lambda: reducetune.reduce(x, "mean", axis=(0, 1), keepdims=True),
            "AxisReducer(x, 1)": lambda: red(x, 1),
            "floor: the stand-ins' own work in a call": _floor(world, x)}


def _floor(world: World, x: Tensor) -> Callable[[], Any]:
    """What any call must do with the stand-in torch and core (the gate, the contiguity, the
    allocation, the device, the stream, the launch): subtracted from a row, reducetune's own
    Python."""
    plain, core, raw = eager.make_gate(world), FakeCore(), world._C._cuda_getCurrentRawStream

    def floor() -> Any:
        if plain(x) and x.is_contiguous():
            out = x.new_empty((4096,))
            device = x.get_device()
            core.reduce_axis(x.data_ptr(), 4096, 4096, 1, out.data_ptr(), raw(device), device)
            return out
        return None

    return floor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", action="store_true", help="cProfile the table call too")
    args = parser.parse_args()
    world = install(setattr)
    with tempfile.TemporaryDirectory() as folder:
        calls = ways(world, Path(folder))
        print(f"host time per call, {CALLS} calls, stand-in torch and core "
              f"({Path(axis.__file__).parents[2]}):")
        for name, fn in calls.items():
            print(f"  {name:48s} {per_call_us(fn):6.2f} us")
        if args.profile:
            prof = cProfile.Profile()
            fn = next(iter(calls.values()))
            prof.runcall(lambda: [fn() for _ in range(CALLS)])
            pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
