"""A tuning run: one or more workloads ((dtype, op) pairs, each over its units) under one time
limit, one study per (dtype, op, unit). A unit is a problem's shape: a whole-array family's
sizes n (the shape (1, n, 1)), an axis family's shapes (outer, r, inner) (tuning/shapes.py).

The run measures the streaming ceiling once, precompiles (tuning/precompile.py: every variant
its spaces can propose, or under a time limit what each unit measures first, the rest compiled
in the background while it measures), then tunes its units one after the other, each until its
budget says stop (tuning/budget.py). The time limit (from the moment tune_all is called) is shared
by cost (``Schedule``): every unit is answered, and a unit whose evaluations cost more (a
larger input) gets a longer share, not the same one.

The order of the units (``unit_order``) is element type by element type, largest first,
the operators of one size together: the evaluating process then generates each type's data
once, at its largest size, and every smaller size and every operator but a product takes a
prefix of it (measure/prepared_workload.hpp). Generating 2^30 elements and computing their
reference costs seconds; in ascending order, per (dtype, op), an H100 run of 12 workloads
spent most of a 6-minute limit preparing data.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from reducetune import _core
from reducetune._space import Point, Space
from reducetune.errors import InvalidConfiguration
from reducetune.evaluate.base import Evaluator
from reducetune.evaluate.evaluation import StoreContext
from reducetune.store.study_storage import open_storage
from reducetune.store.priors import chosen
from reducetune.tuning.budget import Schedule
from reducetune.tuning.config import SizeResult, TuneConfig
from reducetune.tuning.loop import tune_size
from reducetune.tuning.precompile import precompile_run, stop_ahead
from reducetune.tuning.shapes import (RULE_PRESET, Unit, base_preset_for, unit_elements,
                                     unit_shape)
from reducetune.tuning.timing import Breakdown, TimedEvaluator, TimedStore, current, mark, running
from reducetune.tuning.warm_start import first_points

__all__ = ["element_bytes", "tune", "tune_all", "unit_order"]

SizeCallback = Callable[[TuneConfig, Unit, SizeResult | None], None]


def element_bytes(dtype: str) -> int:
    """Bytes of one element (decided in C++: space/element.hpp)."""
    return int(_core.element_bytes(dtype))


def _largest_first(unit: Unit) -> tuple[int, tuple[int, int, int]]:
    """The sort key of unit_order: elements read, then the shape (a total order, so that
    shapes of equal size keep one order from run to run)."""
    return unit_elements(unit), unit_shape(unit)


def unit_order(configs: list[TuneConfig]) -> list[tuple[int, Unit]]:
    """(config index, unit) in the order the run tunes them (see the module's docstring)."""
    units: list[tuple[int, Unit]] = []
    for dtype in dict.fromkeys(c.dtype for c in configs):
        group = [k for k, c in enumerate(configs) if c.dtype == dtype]
        every = {u for k in group for u in configs[k].units()}
        for u in sorted(every, key=_largest_first, reverse=True):
            units += [(k, u) for k in group if u in configs[k].units()]
    return units


def unit_config(config: TuneConfig, unit: Unit) -> TuneConfig:
    """The config of one unit's study: an axis study's base preset resolved for its shape
    (tuning/shapes.py, RULE_PRESET)."""
    base = base_preset_for(config.base_preset, unit, config.dtype)
    return config if base == config.base_preset else replace(config, base_preset=base)


def _spaces(evaluator: Evaluator, configs: list[TuneConfig]) -> list[Space]:
    """Each config's space, checked (base preset, a non-empty selection) before anything is
    measured."""
    spaces = []
    for c in configs:
        c.validate()
        space = Space(c.family, c.dtype, c.op, evaluator.limits, c.restrict)
        _check_units(c)
        if c.base_preset != RULE_PRESET:  # the rule's presets are the family's own
            space.preset(c.base_preset)  # an unknown base preset fails here
        space.proposable(c.allow_flagged, c.nondeterministic)  # an empty selection fails here
        spaces.append(space)
    return spaces


def _check_units(c: TuneConfig) -> None:
    """An axis family takes shapes, a whole-array family sizes (its runner refuses any other
    shape): refused here rather than every point measured as a failure."""
    axis = _core.family(c.family).get("abi") == "axis"
    if axis and not c.shapes:
        raise InvalidConfiguration(f"family {c.family} is tuned per shape: give it shapes "
                                   "(TuneConfig.shapes; --shapes), not sizes")
    if c.shapes and not axis:
        raise InvalidConfiguration(f"family {c.family} reduces whole arrays: give it sizes, "
                                   "not shapes")


def _first_points(evaluator: Evaluator, configs: list[TuneConfig], spaces: list[Space],
                  store: Any) -> list[list[Point]]:
    """What each unit measures first (its warm start or priors, then its base preset), unit by
    unit in the run's order (unit_order)."""
    return [first_points(store, spaces[k], unit_config(configs[k], u), [u],
                         evaluator.device["uuid"]) for k, u in unit_order(configs)]


def tune_all(evaluator: Evaluator, configs: list[TuneConfig], *, store: Any = None,
             storage: Any = None, on_trial: Callable[[SizeResult], None] | None = None,
             on_size: SizeCallback | None = None,
             on_precompile: Callable[[dict[str, Any]], None] | None = None,
             breakdown: Breakdown | None = None) -> list[list[SizeResult]]:
    """Each config's SizeResults, in the configs' order. The first config's time limit is the
    run's (precompiling included). With a ``store`` and no ``storage``, the Optuna studies
    live in the store's file (``reducetune tune`` resumes them). ``breakdown`` gets where the
    run's time went (tuning/timing.py)."""
    with running(breakdown or Breakdown()):
        return _tune_all(TimedEvaluator(evaluator), configs,
                         store=None if store is None else TimedStore(store), storage=storage,
                         on_trial=on_trial, on_size=on_size, on_precompile=on_precompile)


def _tune_all(evaluator: Evaluator, configs: list[TuneConfig], *, store: Any,
              storage: Any, on_trial: Callable[[SizeResult], None] | None,
              on_size: SizeCallback | None,
              on_precompile: Callable[[dict[str, Any]], None] | None
              ) -> list[list[SizeResult]]:
    began = time.monotonic()
    # --priors auto: the package's table on a live GPU, none in replay (store/priors.py); none
    # for shapes: the priors tables hold whole-array sizes only
    configs = [replace(c, priors="off" if c.shapes else chosen(c.priors, evaluator.live) or "off")
               for c in configs]
    spaces = _spaces(evaluator, configs)
    contexts: dict[str, StoreContext] = {}
    for c in configs:
        contexts.setdefault(c.family, StoreContext(evaluator, store, c.family))
    if storage is None and store is not None:
        storage = open_storage(store.path)
    # The streaming ceiling, once per run: % of ceiling in the results, and --target.
    ceiling = evaluator.ceiling_bytes_per_s()
    next(iter(contexts.values())).record_ceiling(evaluator, ceiling)
    mark("ceiling")
    limit = configs[0].time_limit_s
    queued = precompile_run(evaluator, configs, spaces,
                   lambda: _first_points(evaluator, configs, spaces, store), on_precompile,
                   lambda: began + (limit or 0.0) - time.monotonic())
    mark("precompile")
    units = unit_order(configs)
    dtypes = [configs[k].dtype for k, _ in units]
    schedule = Schedule(configs[0].time_limit_s,
                        [unit_elements(u) * element_bytes(configs[k].dtype) for k, u in units],
                        start=began,
                        first=[i == dtypes.index(d) for i, d in enumerate(dtypes)])
    results: list[list[SizeResult]] = [[] for _ in configs]
    for i, (k, unit) in enumerate(units):
        c = configs[k]
        if on_size:
            on_size(c, unit, None)
        r = _unit(evaluator, c, unit, schedule, i, store=store, storage=storage,
                  ctx=contexts[c.family], space=spaces[k], ceiling=ceiling, on_trial=on_trial)
        if on_size:
            on_size(c, unit, r)
        results[k].append(r)
    b = current()
    if queued:  # what the background compiled for the run (tuning/precompile.py)
        ahead = stop_ahead(evaluator)
        if b is not None:
            b.compile_ahead = ahead
    return [sorted(rs, key=lambda r: (r.n, unit_shape(r.unit))) for rs in results]


def _unit(evaluator: Evaluator, config: TuneConfig, unit: Unit, schedule: Schedule, i: int, *,
          on_trial: Callable[[SizeResult], None] | None, **kw: Any) -> SizeResult:
    """One study under its share of the time; what it cost teaches the schedule."""
    t0 = time.monotonic()
    first: list[float] = []  # when the first trial ended, and how many evaluations it had seen

    def trial(r: SizeResult) -> None:
        if not first:
            first.extend((time.monotonic(), float(r.evaluated)))
        if on_trial:
            on_trial(r)

    # the deadline is asked once the unit is answered: its fixed part is then a fact
    r = tune_size(evaluator, unit_config(config, unit), unit, deadline=lambda: schedule.deadline(i, fixed_spent=True),
                  on_trial=trial, **kw)
    end = time.monotonic()
    mandatory = (first[0] if first else end) - t0
    evals = r.evaluated - int(first[1]) if first else 0
    schedule.observe(i, mandatory, evals, end - first[0] if first else 0.0)
    return r


def tune(evaluator: Evaluator, config: TuneConfig, *, store: Any = None, storage: Any = None,
         on_trial: Callable[[SizeResult], None] | None = None,
         on_size: Callable[[int, SizeResult | None], None] | None = None,
         on_precompile: Callable[[dict[str, Any]], None] | None = None) -> list[SizeResult]:
    """Every size of the config, in ascending order, under its time limit (precompiling
    included) shared by cost (``tune_all``). With a ``store`` and no ``storage``, the Optuna
    studies live in the store's file, as the command line keeps them (``reducetune tune``
    resumes them). ``on_precompile`` gets the precompile summary."""

    def size(_: TuneConfig, n: Unit, r: SizeResult | None) -> None:
        if on_size:
            on_size(n, r)

    return tune_all(evaluator, [config], store=store, storage=storage, on_trial=on_trial,
                    on_size=size, on_precompile=on_precompile)[0]
