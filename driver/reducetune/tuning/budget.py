"""When a size's study stops, and how a run's time is shared among its sizes.

A size stops at its budget of distinct points (--max-evals), at its deadline (its share of
--time-limit) or at its target (--target, within P% of the streaming ceiling); the sampler
running out of points is the proposal's to say. A deadline never leaves a size without an
answer: it applies once the size has an ok point, or after ANSWER_ATTEMPTS points all failed.

The time is shared by cost, not evenly (``Schedule``): every size first gets what it cannot
do without (its workload prepared, CUB and its base point measured), reserved for the sizes
still to come; what is left is divided so that each size gets about the same number of
evaluations, each size's share scaled by what one evaluation costs there. Both costs are
measured as the run goes (``CostModel``): a 4 GiB workload takes seconds to generate, upload
and verify against, a 4 KiB one a millisecond.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ANSWER_ATTEMPTS", "MIN_SHARE", "Budget", "CostModel", "Schedule", "deadlines",
           "precompile_rest"]

# Points a size may try past its deadline while none of them has succeeded.
ANSWER_ATTEMPTS = 8

# The least part of its share of the time left, were nothing reserved for the later units'
# fixed costs, that a unit gets (Schedule).
MIN_SHARE = 0.25


@dataclass
class Budget:
    max_evals: int | None = None  # distinct valid points, served ones included
    # time.monotonic() at which the size stops; or a function that says it, asked once the size
    # is answered (its fixed part spent), so that a share is not computed from a guess of it
    deadline: float | Callable[[], float | None] | None = None
    target_pct: float | None = None  # stop once the best is within P% of the ceiling

    def stop(self, result: Any) -> str:
        """Why the size stops now (``max-evals``, ``time-limit``, ``target``), or ""."""
        if self.max_evals is not None and result.points >= self.max_evals:
            return "max-evals"
        if self.deadline is not None and _answered(result):
            if callable(self.deadline):
                self.deadline = self.deadline()
            if self.deadline is not None and time.monotonic() >= self.deadline:
                return "time-limit"
        if self.target_pct is not None and _reached(result.best, self.target_pct):
            return "target"
        return ""


def _answered(result: Any) -> bool:
    return result.best is not None or result.points >= ANSWER_ATTEMPTS


def _reached(best: dict[str, Any] | None, target_pct: float) -> bool:
    """Within target_pct of the streaming ceiling (of the peak where no ceiling is known)."""
    if best is None:
        return False
    pct = best.get("pct_of_ceiling") or best.get("pct_of_peak")
    return pct is not None and float(pct) >= 100.0 - target_pct


def precompile_rest(time_limit_s: float | None, end_left_s: float, first: dict[str, Any] | None,
                    rest: int) -> bool:
    """Whether to compile the rest of the run's spaces (``rest`` variants) in one parallel
    batch now, after the points each unit measures first (its warm start and base preset):
    always without a time limit; else when the batch costs less than compiling, one at a
    time as they are measured, the variants the ``end_left_s`` seconds left can measure (each
    costing an evaluation, CostModel's prior, and its own compile), at the rate and threads
    of the first batch (``first``, the evaluator's precompile summary). Why: the README's 132
    units are 9,456 variants, 41.6 s on an H100 machine's 16 threads (70 ms each on one;
    docs/results/h100_2026-11-23_issue12.md): 12 % of 6 minutes, most of one, where a few
    hundred points are measured."""
    if time_limit_s is None or not first or "error" in first:
        return True
    compiled = int(first.get("requested", 0)) - int(first.get("cached", 0))
    if compiled <= 0 or float(first.get("seconds", 0.0)) <= 0:
        return True  # nothing to learn the rate from: as before
    batch_s = float(first["seconds"]) / compiled  # per variant, in a parallel batch
    alone_s = batch_s * max(1, int(first.get("threads", 1)))  # per variant, one at a time
    measurable = max(0.0, end_left_s) / (CostModel().per_eval(0) + alone_s)
    return rest * batch_s <= min(rest, measurable) * alone_s


def deadlines(time_limit_s: float | None, start: float, sizes: int) -> list[float | None]:
    """Each size's deadline when the time left from start is split evenly over the sizes
    (None for each without a time limit)."""
    if time_limit_s is None:
        return [None] * sizes
    return [start + time_limit_s * (i + 1) / sizes for i in range(sizes)]


@dataclass
class _Line:
    """seconds ≈ fixed + per_byte * bytes, fitted to what was observed: a prior until the first
    observation; the slope is the least-squares one through the fixed part.

    The fixed part is never above the cheapest unit seen (more bytes never cost less) nor below
    0. With ``fit_fixed`` it is the least-squares intercept within those bounds; without, it is
    the prior's unless a cheaper unit was seen. Why the second, for the fixed costs that are
    reserved for every later unit: the run goes largest first, so while they are estimated only
    units of GiBs were seen, and those cannot tell what a unit of KiBs costs. On an H100 (issue
    12, docs/results/h100_2026-11-23_issue12_rerun) the fit then in use, floored at the
    cheapest unit seen, read its fixed part from float32 sum at 2^28 (1.83 s, a compensated
    reference over 1 GiB included; min and max at 2^28 took 0.64 s) and reserved 1.83 s for
    each of the 127 units still to come, 4 KiB ones included (they took 0.03-0.1 s): about 284
    of the 291 s left, so float32 min at 2^28 got a share of 0.06 s, less than one evaluation,
    and 1 point where the median unit got 22."""

    fixed: float
    per_byte: float
    fit_fixed: bool = True
    seen: list[tuple[float, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.prior_fixed = self.fixed

    def add(self, nbytes: float, seconds: float) -> None:
        self.seen.append((float(nbytes), max(0.0, float(seconds))))
        xs = [x for x, _ in self.seen]
        ys = [y for _, y in self.seen]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        var = sum((x - mx) ** 2 for x in xs)
        if self.fit_fixed and var > 0:
            slope = sum((x - mx) * (y - my) for x, y in self.seen) / var
            self.fixed = min(min(ys), max(0.0, my - max(0.0, slope) * mx))
        else:
            self.fixed = min(self.prior_fixed, min(ys))
        sxx = sum(x * x for x in xs)
        self.per_byte = max(0.0, sum(x * (y - self.fixed) for x, y in self.seen) / sxx) \
            if sxx > 0 else 0.0

    def __call__(self, nbytes: float) -> float:
        return self.fixed + self.per_byte * float(nbytes)


class CostModel:
    """What a unit costs as a function of its input bytes: its fixed part (``mandatory``: CUB
    and its base point measured, its reference computed; ``prepare`` for the first unit of an
    element type, which also generates and uploads that type's data) and one further
    evaluation (``per_eval``). The priors are a GPU's (a few seconds to generate and verify a
    GiB of host data; 0.1 s of sampling per point)."""

    def __init__(self) -> None:
        self.prepare = _Line(fixed=0.5, per_byte=3e-9, fit_fixed=False)
        self.mandatory = _Line(fixed=0.5, per_byte=3e-10, fit_fixed=False)
        self.per_eval = _Line(fixed=0.15, per_byte=0.0)

    def fixed(self, nbytes: int, first: bool) -> float:
        return (self.prepare if first else self.mandatory)(nbytes)

    def observe(self, nbytes: int, mandatory_s: float, evals: int, evals_s: float,
                first: bool = False) -> None:
        (self.prepare if first else self.mandatory).add(nbytes, mandatory_s)
        if evals > 0:
            self.per_eval.add(nbytes, evals_s / evals)


class Schedule:
    """The deadlines of a run's units (one (dtype, op, n) study each) under one time limit.

    ``deadline(i)`` is asked when unit i starts: the time left, less the fixed cost of the
    units after it, shared among unit i and those after it in proportion to their cost of one
    evaluation (so that each gets about as many evaluations). ``first[i]``: unit i is the
    first of its element type (it generates the data the later ones of that type reuse).

    The reserve for the later units is an estimate from a few units, and one slow unit can
    inflate it (see _Line); it never takes more than 1 - MIN_SHARE of the time left, so that
    a unit's share never falls below MIN_SHARE of what that time shared by cost alone would
    give it. Where the later units' fixed costs truly exceed the time left, the run overruns
    its limit anyway (every unit is answered), and starving this unit would save a second.
    """

    def __init__(self, time_limit_s: float | None, unit_bytes: list[int],
                 start: float | None = None, first: list[bool] | None = None) -> None:
        self.end = None if time_limit_s is None else (
            time.monotonic() if start is None else start) + time_limit_s
        self.unit_bytes = list(unit_bytes)
        self.first = list(first) if first is not None else [False] * len(unit_bytes)
        self.costs = CostModel()

    def deadline(self, i: int, now: float | None = None,
                 fixed_spent: bool = False) -> float | None:
        """Unit i's deadline; with fixed_spent, asked once its fixed part is done (the tuner
        asks then: a guess of that part would otherwise skew the share)."""
        if self.end is None:
            return None
        now = time.monotonic() if now is None else now
        own = 0.0 if fixed_spent else self.costs.fixed(self.unit_bytes[i], self.first[i])
        reserve = sum(self.costs.fixed(b, f) for b, f in
                      zip(self.unit_bytes[i + 1:], self.first[i + 1:], strict=True))
        weights = [self.costs.per_eval(b) for b in self.unit_bytes[i:]]
        left = max(0.0, self.end - now - own)
        share = (left - min(reserve, (1.0 - MIN_SHARE) * left)) * weights[0] / sum(weights)
        return now + own + share

    def observe(self, i: int, mandatory_s: float, evals: int, evals_s: float) -> None:
        self.costs.observe(self.unit_bytes[i], mandatory_s, evals, evals_s, self.first[i])
