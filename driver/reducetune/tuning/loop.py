"""The tuning loop: an Optuna study per workload over one family's search space.

Each size runs three separate units until one says stop: the proposal (tuning/proposal.py: the
sampler and its queue) gives a trial and its Point; the point is checked (invalid, including
outside --restrict: FAIL with the reasons, never evaluated) and its flags read (a value the
family flags, e.g. a racy warp unroll: FAIL "flagged: ...", never evaluated, unless
allow_flagged); the evaluation (evaluate/evaluation.py) serves it from the store when this context
already measured it, else the loop hands the Point and the size's Problem to the evaluator (GPU
worker or replay) in one call and the evaluation records the result; the study is told the
median time, or FAIL with the reason. The budget (tuning/budget.py) says when a size stops.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from reducetune._space import Point, Space, describe_flags
from reducetune.evaluate.base import Evaluator, workload
from reducetune.evaluate.evaluation import KNOWN, MEASURED, NOT_RECORDED, Evaluation, StoreContext
from reducetune.store.study_share import study_device
from reducetune.store.study_storage import open_storage
from reducetune.tuning.budget import Budget
from reducetune.tuning.config import SizeResult, TuneConfig, median_of, study_name
from reducetune.tuning.mirror import MirroredStorage
from reducetune.tuning.proposal import STALL_ESCAPE, STALL_LIMIT, Proposal, open_study
from reducetune.tuning.samplers import STRATEGY
from reducetune.tuning.timing import measured as point_measured
from reducetune.tuning.timing import phase, unit_step

__all__ = [
    "STALL_ESCAPE",
    "STALL_LIMIT",
    "SizeResult",
    "TuneConfig",
    "study_name",
    "tune_size",
    "variant_labels",
]


def _study_config(config: TuneConfig, n: int, gpu: bool) -> dict[str, Any]:
    """What rt_studies.config records. The sampling is the rule this study's points (the rows
    with its study_id) were measured with; null when they are copied from a replay recording,
    which kept its own protocol."""
    return {"n": n, "max_evals": config.max_evals, "seed": config.seed, "family": config.family,
            "restrict": config.restrict, "sampling": config.sampling() if gpu else None,
            "race": config.race if gpu else None,  # points cut short: their reason says so
            "allow_flagged": config.allow_flagged, "nondeterministic": config.nondeterministic}


def _rejection(space: Space, point: Point, config: TuneConfig) -> tuple[str, str] | None:
    """("invalid" | "flagged" | "nondeterministic", reason) for a point that must not be
    evaluated, else None."""
    reasons = space.check(point)
    if reasons:
        return "invalid", "; ".join(why for _, why in reasons)
    if point.flagged and not config.allow_flagged:
        return "flagged", describe_flags(point.flags) + "; --allow-flagged to tune such points"
    if not space.selected(point, config.allow_flagged, config.nondeterministic):
        return "nondeterministic", (f"determinism {point.determinism}: its result changes from "
                                    "run to run; --nondeterministic to tune such points")
    return None


def _trial(proposal: Proposal, evaluation: Evaluation, result: SizeResult,
           ceiling: float | None) -> None:
    """One trial: asked, checked, served or evaluated, told; its outcome counted once."""
    trial, point = proposal.ask()  # taken and stamped under the claim lock, sampled outside
    if proposal.mirrored is not None:  # and in the results file's copy (tuning/mirror.py)
        proposal.mirrored.began(proposal.study, trial)
    result.proposed += 1
    with proposal.share.beat(trial):  # a worker that dies stops beating: its trial is failed
        _answer(proposal, evaluation, result, ceiling, trial, point)


def _answer(proposal: Proposal, evaluation: Evaluation, result: SizeResult,
            ceiling: float | None, trial: Any, point: Point) -> None:
    """The trial checked, served or evaluated, and told."""
    config, finish = proposal.config, proposal.share.finish  # tells, even a trial failed under it
    rejected = _rejection(proposal.space, point, config)
    if rejected is not None:
        kind, reason = rejected
        finish(trial, {"outcome": "invalid", "reason": reason})
        setattr(result, kind, getattr(result, kind) + 1)
        proposal.rejected()
        return
    if proposal.share.taken(trial, point, config.max_evals):  # by another process
        proposal.rejected()
        return
    new = proposal.note(point)
    result.points += new
    if not new and evaluation.known(point) is None:  # seen in a study shared with another
        # device or machine: measured there
        finish(trial, {"outcome": "repeat", "reason": "measured by another worker of this study"})
        return
    source, row = KNOWN, evaluation.known(point)
    if row is None:  # the one evaluator call: the typed point and problem, handed straight
        race = config.race_options(result, evaluation.evaluator.live)  # racing: its bound
        with phase("measuring"):  # timed here, not by a wrapper the point would pass through
            measured = evaluation.evaluator.evaluate(point, evaluation.problem, evaluation.data,
                                                     **race)
        point_measured(measured)  # first and last points (a --devices run), its times
        source, row = evaluation.answer(point, measured)
    if source == KNOWN:
        outcome = "served" if new else "repeat"
        result.served += new
    elif source == NOT_RECORDED:
        outcome = NOT_RECORDED
        result.not_recorded += 1
    else:
        outcome = MEASURED
        result.evaluated += 1
        result.failed += row["status"] != "ok"
    # Only now: a trial interrupted mid-evaluation must not count as a point seen.
    # launch_label first: a trial with a variant_label has both, even if killed in between
    attrs = {"launch_label": point.launch_label, "variant_label": point.variant_label,
             "outcome": outcome}
    value = median_of(row)
    if value is None:
        finish(trial, {**attrs, "reason": row.get("reason") or row["status"]})
        return
    noise = float(row.get("rel_stddev") or 0.0)
    finish(trial, attrs, [value, noise] if STRATEGY[config.strategy].two_objectives else value)
    result.consider(point, row, ceiling)


def tune_size(evaluator: Evaluator, config: TuneConfig, n: int, *, store: Any = None,
              storage: Any = None, deadline: float | Callable[[], float | None] | None = None,
              on_trial: Callable[[SizeResult], None] | None = None,
              ctx: StoreContext | None = None, space: Space | None = None,
              ceiling: float | None = None) -> SizeResult:
    """One workload's study. ``store`` (a reducetune Store) serves and records points;
    ``storage`` is Optuna's (None: the store's file, in memory without a store)."""
    ctx = ctx or StoreContext(evaluator, store, config.family)
    space = space or Space(config.family, config.dtype, config.op, evaluator.limits,
                           config.restrict)
    if storage is None and ctx.store is not None:
        storage = open_storage(ctx.store.path)
    w = workload(config.dtype, config.op, n, config.pattern)
    result = SizeResult(n)
    gpu = evaluator.live  # measured now (CUB recorded), not replayed from a recording
    evaluator.set_sampling(config.sampling())  # before CUB: both are measured alike
    result.cub_gbps, result.cub_failure = ctx.cub_baseline(evaluator, w, gpu)
    unit_step("cub")
    if result.cub_failure:
        print(f"reducetune tune: CUB failed on {config.dtype} {config.op} n={n}: "
              f"{result.cub_failure}; this unit has no x CUB", file=sys.stderr)
    if ceiling is None and config.target_pct is not None:
        ceiling = evaluator.ceiling_bytes_per_s()

    study = open_study(config, n, study_device(evaluator.device, config.by_model), storage)
    study_id = ctx.create_study(study.study_name, config, _study_config(config, n, gpu))
    unit_step("study")
    evaluation = Evaluation(evaluator, ctx, w, study_id)
    proposal = Proposal(study, space, config)
    proposal.mirrored = storage if isinstance(storage, MirroredStorage) else None
    for p in proposal.resume():  # a resumed study keeps its budget and its best
        row = evaluation.known(p)
        if row is not None:
            result.consider(p, row, ceiling)
    result.points = len(proposal.seen)
    result.warm = proposal.start(ctx.store, n, evaluator.device["uuid"])
    unit_step("warm")

    budget = Budget(config.max_evals, deadline, config.target_pct)
    share = proposal.share  # a grid sweep goes on while a dead worker's point waits
    try:
        while not (stopped := share.stop(budget, result) or share.pending(proposal.prepare())):
            _trial(proposal, evaluation, result, ceiling)
            result.escapes = proposal.escapes
            if on_trial:
                on_trial(result)
    finally:  # the study's trials copied into the results file, an interrupted study's too
        if proposal.mirrored is not None:
            proposal.mirrored.mirror(study)
    result.stopped = stopped
    result.escapes = proposal.escapes
    return result


def variant_labels(space: Space, allow_flagged: bool = True,
                   nondeterministic: bool = True) -> list[str]:
    """The distinct variant labels of every valid point of the (restricted) space, in
    enumeration order: what a study of that space may compile (only the selection's points:
    without the flagged or nondeterministic ones unless allowed)."""
    return list(dict.fromkeys(p.variant_label for p in space.points()
                              if space.selected(p, allow_flagged, nondeterministic)))
