"""What a run compiles before it measures, and what it compiles while it measures (issue 25).

Before the first unit, in one parallel batch that the run waits for: what the first unit
measures first (its warm start or priors, and its base preset: tuning/warm_start.py
first_points); without a time limit and without a background compiler (replay, a test's
evaluator), every variant the run's studies may propose.

The rest, with or without a time limit (the README's 132 units: 9,456 variants, some 40 s of
a 16-core host's threads; until 2026-11-26 a GPU run without a limit compiled them all before
its first point, whatever its --max-evals), is compiled in the background by an evaluator
that can (``compile_ahead``: the GPU worker's low-priority threads, jit/compile_ahead.hpp)
while the units are measured,
in the order the run reaches them: first what the later units measure first, unit by unit
(the H200 run's 320 such variants were a 3.1 s batch before its first point), then the other
variants element type by element type as ``unit_order`` goes, the operators of one type
taken in turn. An evaluation whose variant is not compiled yet compiles
it itself (or joins the background thread compiling it): nothing waits for the queue, and
nothing is compiled twice. Before this, a 2-minute H200 run compiled none of the rest (the
batch cost more than the run could measure) and spent 47.6 s compiling its 1,011 evaluations'
variants one at a time on the measuring thread. An evaluator without it (replay, a test's)
compiles every unit's first points in one batch, and the rest in another when
precompile_rest says the limit allows, as before.

A grid (an exhaustive strategy) has no first points to wait for: everything goes to the
background at once, in the run's order.

Each space gives one point per distinct variant (``_core.variant_points``, enumerated in
C++): its 595,728 points as Python objects took 6-8 s of a run's start on the build machine.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import zip_longest
from typing import Any

from reducetune import _core
from reducetune._space import Point, Space
from reducetune.evaluate.base import Evaluator
from reducetune.tuning.budget import precompile_rest
from reducetune.tuning.config import TuneConfig
from reducetune.tuning.samplers import STRATEGY

__all__ = ["ahead_order", "precompile_run", "stop_ahead", "variant_points"]

Summary = Callable[[dict[str, Any]], None]


def variant_points(config: TuneConfig, space: Space) -> list[Point]:
    """One point per distinct variant the config's studies may propose, in enumeration
    order."""
    return list(_core.variant_points(space, config.allow_flagged, config.nondeterministic))


def ahead_order(configs: list[TuneConfig], spaces: list[Space]) -> list[Point]:
    """Every config's variants in the order the run reaches them: element types in the
    configs' order (tuning/run.py unit_order), and within one type its operators' variants
    taken in turn, since the run measures the operators of each size one after the other."""
    out: list[Point] = []
    for dtype in dict.fromkeys(c.dtype for c in configs):
        lists = [variant_points(c, s) for c, s in zip(configs, spaces, strict=True)
                 if c.dtype == dtype]
        out += [p for row in zip_longest(*lists) for p in row if p is not None]
    return out


def precompile_run(evaluator: Evaluator, configs: list[TuneConfig], spaces: list[Space],
                   first: Callable[[], list[list[Point]]], on_precompile: Summary | None,
                   end_left: Callable[[], float]) -> bool:
    """The run's compiles before its first unit (the module's rules); ``first`` gives what
    each unit measures first (its warm start or priors, then its base preset), unit by unit
    in the run's order. True when the rest was queued for the background (the run then ends
    with ``stop_ahead``). A failure is not fatal: that point fails when measured."""
    ahead = getattr(evaluator, "compile_ahead", None)
    if configs[0].time_limit_s is None and ahead is None:
        _batch(evaluator, [p for c, s in zip(configs, spaces, strict=True)
                           for p in variant_points(c, s)], on_precompile)
        return False
    if ahead is not None and STRATEGY[configs[0].strategy].exhaustive:
        # A grid measures no base preset first: each worker of a shared grid starts where its
        # walk does (tuning/grid_walk.py). The batch compiled a variant none of the 4 x H200
        # sweep's workers measured first, 0.10-0.14 s before each one's CUB baseline
        # (a200b82); the background is already compiling what the walk asks for.
        ahead(ahead_order(configs, spaces))
        return True
    units = first()
    now = units[0] if ahead is not None and units else [p for u in units for p in u]
    summary = _batch(evaluator, now, on_precompile)
    later = [p for u in units for p in u] if ahead is not None else []
    rest = _new_variants(later + ahead_order(configs, spaces), {p.variant_label for p in now})
    if rest and ahead is not None:
        ahead(rest)  # returns at once
        return True
    if rest and precompile_rest(configs[0].time_limit_s, end_left(), summary, len(rest)):
        _batch(evaluator, rest, on_precompile)
    return False


def _new_variants(points: list[Point], done: set[str]) -> list[Point]:
    """The points of variants not in ``done``, one per variant, at its first place."""
    out = []
    for p in points:
        if p.variant_label not in done:
            done.add(p.variant_label)
            out.append(p)
    return out


def _batch(evaluator: Evaluator, points: list[Point],
           on_precompile: Summary | None) -> dict[str, Any] | None:
    """One parallel batch the run waits for (typed points; compiled once per variant)."""
    if not points:
        return None
    summary = evaluator.precompile(points)
    if summary is not None and on_precompile:
        on_precompile(summary)
    return summary


def stop_ahead(evaluator: Evaluator) -> dict[str, Any]:
    """At the end of a run that queued its rest: drops what the background still had to
    compile (a later run in this process queues its own) and returns its counts ({queued,
    waiting, compiled, skipped, failed, dropped, busy_s, threads}, or {error, message})."""
    return dict(evaluator.compile_ahead([]))  # type: ignore[attr-defined]
