"""The journey of one tuning parameter, ``elements_per_thread`` of the tunable family, from its
declaration (kernel_templates/tunable/family.json) to a launch on the tuning route (issue 23,
item 1; docs/architecture.md, "The journey of a point").

The rule: a file counts when one of its functions receives the value or passes it on, in any
form: a typed point (C++ ``point``, ``_core.Point``), its parameters by name, its JSON form,
a label, or the launch plan whose grid rule the value is bound into; from the file that reads
the declaration to the one planner (``space/reduction_plan``), where the value becomes the
launch's grids (past it, the launch holds numbers, not the value). A function that takes the
point only to decide something about it off the route (validity, flags, the store's key, the
best so far) receives it but does not carry it to the launch; the route is what carries it:

- Python, measured as the code runs: one tune over a GPU evaluator whose worker is faked here.
  Every function of the package on the stack when the worker is asked to evaluate (the
  delivery), and every function that returned the evaluated point or its parameters by name
  (its making: the sampler's choice decoded, the base preset), counts its file.
- The worker process and C++, which no Python profiler sees: ``NATIVE`` below, each file with
  the functions that carry the value; each name is checked to stand in its file, so a renamed
  or moved hop fails here until the list (and the docs) say where it went.

The test fails when the route enters more files than ``ROUTE_FILES``: a new wrapper, shim or
conversion on the way to the launch must take another off, or raise the count here in plain
view. It also fails when a listed native hop is gone, or when a hop's definition comes back to
a file the route left (``LEFT``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import reducetune
from reducetune import _core
from reducetune.evaluate import gpu as _gpu
from reducetune.tuning.config import TuneConfig
from reducetune.tuning.run import tune

REPO = Path(__file__).resolve().parents[2]
PACKAGE = Path(reducetune.__file__).resolve().parent

# Files past the Python process: (file, the names that carry the value there).
NATIVE: dict[str, tuple[str, ...]] = {
    # the parameter's values and the presets' (the base point's) are read in one file
    "tuner/reducetune/space/family_json_parameters.cpp": ("family_reader::read_parameters",
                                                          '"values"', "p.label",
                                                          "family_reader::read_presets"),
    # Space.point and Space.base make the point (base: the preset the tune tries first, from
    # search_space::presets); its parameters by name, both ways, are converted beside them
    # (point.cpp keeps the labels), and scope_for binds its values as identifiers
    "tuner/reducetune/space/space_points.cpp": ("search_space::point_of", "search_space::base",
                                                "search_space::presets", "point_from",
                                                "all_parameters", "search_space::scope_for"),
    "driver/src/bind_point.cpp": ("point_of_dict", "dict_of", '"to_dict"'),  # the JSON form
    # the pipe's far end: the worker process serves the point's plain form to _core.evaluate;
    # the tuner's end (GpuEvaluator.evaluate, measured) is the same file, one protocol
    "driver/reducetune/evaluate/gpu.py": ("def serve", "getattr(_core, name)"),
    "driver/src/bind_device.cpp": ("point_arg", "evaluate_point", "rt::evaluate(space, pr, p"),
    # the runner asks the planner and hands measure/launch_sequence the steps (grids as
    # numbers) and the plan without its grid rule: the sequence does not carry the value
    "tuner/reducetune/measure/evaluate.cpp": ("run_whole_array", "plan_launch",
                                              "plan_reduction_steps(plan.proto, plan.grid_for",
                                              "kernels.grid_for = nullptr"),
    # the one planner: the point's launch plan (its values bound into the grid rule), then
    # the steps at n, where the value becomes grids
    "tuner/reducetune/space/reduction_plan.cpp": ("search_space::plan_launch", "grid_for",
                                                  "plan_reduction_steps", "grid_of"),
}

# Files the value no longer passes, each with the definition that carried it there: a
# definition back in its old file fails here until this list and the docs say the route grew.
LEFT: dict[str, tuple[str, ...]] = {
    "tuner/reducetune/space/space.cpp": ("launch_plan search_space::plan_launch(",
                                         "scope search_space::scope_for(",
                                         "search_space::presets() const"),
    "tuner/reducetune/space/family_json.cpp": ("void family_reader::read_presets(",),
    "tuner/reducetune/space/point.cpp": ("point point_from(", "parameter_map all_parameters("),
    # the worker's end of the pipe, now beside the tuner's in evaluate/gpu.py (file removed)
    "driver/reducetune/evaluate/worker.py": ("def serve",),
}

# Files the route enters today (Python measured + NATIVE); docs/architecture.md lists them
# and says why the one above issue 23's target of 8 stays.
ROUTE_FILES = 9


class _Worker:
    """The worker's calls answered here; an evaluate call records who handed the point on."""

    def __init__(self, timeout_s: float = 60.0, argv: list[str] | None = None) -> None:
        self.running = True

    def call(self, name: str, timeout_s: float | None = None, **args: Any) -> dict[str, Any]:
        if name == "evaluate":
            ROUTE.delivered.append((args["point"], _carriers()))
        return {"ok": True, "result": getattr(self, "_" + name)(**args)}

    def _query_device(self, ordinal: int) -> dict[str, Any]:
        return {"name": "fake", "uuid": "GPU-journey", "cc_major": 9, "cc_minor": 0, "arch": 90,
                "sm_count": 132, "max_threads_per_block": 1024, "runtime_version": 13000,
                "driver_version": 13000}

    def _precompile(self, **_: Any) -> dict[str, Any]:
        return {"requested": 0, "compiled": 0, "cached": 0, "failed": 0, "failures": {}}

    def _compile_ahead(self, **_: Any) -> dict[str, Any]:  # the run's rest, in the background
        return {"queued": 0, "waiting": 0, "compiled": 0, "skipped": 0, "failed": 0,
                "dropped": 0}

    def _evaluate(self, point: dict, problem: dict, data: dict, ordinal: int,
                  options: dict) -> dict[str, Any]:
        t = 1e-5 * (1 + point["params"]["elements_per_thread"] % 7)
        return {"status": "ok", "kind": "", "reason": "", "samples_s": [t] * 10,
                "median_s": t, "rel_stddev": 0.0, "gbps": 1.0, "pct_of_peak": 1.0}

    def _evaluate_cub(self, **_: Any) -> dict[str, Any]:
        return {"status": "ok", "samples_s": [1e-5] * 10, "median_s": 1e-5, "gbps": 1.0}

    def _streaming_ceiling(self, ordinal: int) -> dict[str, Any]:
        return {"bytes_per_s": 3.0e12, "samples_s": [1e-3] * 10}

    def close(self) -> None:
        pass


def _params(value: Any, depth: int = 0) -> list[dict[str, Any]]:
    """The parameters by name a value holds: a Point's, a dict naming elements_per_thread, a
    Point.to_dict(); looked for inside tuples and dict values (arguments, a returned pair),
    not lists (a list of every point is no route)."""
    if isinstance(value, _core.Point):
        return [dict(value.params)]
    if isinstance(value, dict):
        if "elements_per_thread" in value:
            return [value]
        if depth < 2:
            return [p for v in value.values() for p in _params(v, depth + 1)]
    if isinstance(value, tuple) and depth < 2:
        return [p for v in value for p in _params(v, depth + 1)]
    return []


def _in_package(filename: str) -> str | None:
    """The file as the repository names it, for a file of the package imported (from this
    tree, or a copy of its driver/ elsewhere); None for any other file."""
    path = Path(filename).resolve()
    if not path.is_relative_to(PACKAGE):
        return None
    return f"driver/reducetune/{path.relative_to(PACKAGE)}"


def _carriers() -> list[tuple[str, list[dict[str, Any]]]]:
    """(file, parameters held) of each package frame on the stack that holds a point."""
    out = []
    frame = sys._getframe(2)
    while frame is not None:
        name = _in_package(frame.f_code.co_filename)
        if name is not None:
            out.append((name, _params(tuple(frame.f_locals.values()))))
        frame = frame.f_back
    return out


def _is(params: dict[str, Any], point: dict[str, Any]) -> bool:
    return bool(params) and all(point.get(k) == v for k, v in params.items())


class _Route:
    """What one tune showed: who held each evaluated point when it was delivered, and who
    returned points or parameters (the makers)."""

    def __init__(self) -> None:
        self.delivered: list[tuple[dict[str, Any], list[tuple[str, list[dict]]]]] = []
        self.returned: list[tuple[str, dict[str, Any]]] = []

    def files(self) -> set[str]:
        out = set()
        for point, held in self.delivered:
            out |= {f for f, params in held if any(_is(p, point["params"]) for p in params)}
            out |= {f for f, p in self.returned if _is(p, point["params"])}
        return out


ROUTE = _Route()


@pytest.fixture(scope="module")
def route() -> _Route:
    """One tune's route (see the module's docstring), shared by this file's tests."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    global ROUTE
    ROUTE = _Route()

    def profile(frame, event, arg):
        if event == "return" and (name := _in_package(frame.f_code.co_filename)) is not None:
            ROUTE.returned.extend((name, p) for p in _params(arg))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_gpu, "WorkerClient", _Worker)
        ev = _gpu.GpuEvaluator(0)
        config = TuneConfig(sizes=[1 << 16], max_evals=4, seed=1, strategy="tpe")
        sys.setprofile(profile)
        try:
            tune(ev, config, storage=optuna.storages.InMemoryStorage())
        finally:
            sys.setprofile(None)
    assert len(ROUTE.delivered) == 4, "the tune evaluated its four points"
    return ROUTE


def test_every_native_hop_stands_where_the_route_says():
    for path, names in NATIVE.items():
        text = (REPO / path).read_text()
        for name in names:
            assert name in text, f"{path} no longer holds {name!r}: update NATIVE and the docs"


def test_the_files_the_route_left_hold_no_hop_again():
    for path, names in LEFT.items():
        text = (REPO / path).read_text() if (REPO / path).exists() else ""  # a removed file
        for name in names:
            assert name not in text, f"{path} holds {name!r} again: the route passes it"


def test_the_evaluator_gets_the_point_and_the_problem_typed_in_one_call(route):
    files = route.files()
    # the loop hands the Point and the Problem to the evaluator itself, not through the
    # evaluation's store-or-evaluate step
    assert "driver/reducetune/tuning/loop.py" in files
    assert "driver/reducetune/evaluate/gpu.py" in files
    assert "driver/reducetune/evaluate/evaluation.py" not in files
    for point, _ in route.delivered:
        assert set(point) == {"family", "dtype", "op", "params"}  # Point.to_dict(): no label


def test_elements_per_thread_enters_no_more_files_than_counted(route):
    files = route.files() | set(NATIVE)
    listed = "\n  ".join(sorted(files))
    assert len(files) <= ROUTE_FILES, (
        f"elements_per_thread now passes {len(files)} files (counted: {ROUTE_FILES}):\n  {listed}")
    # the count is a measurement, not a bound met by luck: it falls with the route too
    assert len(files) == ROUTE_FILES, f"fewer files ({len(files)}): lower ROUTE_FILES\n  {listed}"
