"""The tuning loop: an Optuna study per workload over one family's search space.

ask → parameters → check (invalid: FAIL with the reasons, never evaluated) → flags (a value
the family's declaration flags, e.g. a racy warp unroll: FAIL "flagged: ...", never
evaluated, unless allow_flagged) → labels → served from the database when this context
already measured the point, else evaluated (GPU worker or replay) and recorded → tell (the
median time, or FAIL with the reason).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from reducetune import _core
from reducetune._evaluators import (CEILING_WORKLOAD, MIN_SAMPLES, Evaluator, sampling_options,
                                    workload)
from reducetune._samplers import decode, distributions, encode, make_sampler
from reducetune._space import Space, describe_flags
from reducetune.errors import InvalidConfiguration

__all__ = ["TuneConfig", "SizeResult", "tune", "tune_size", "study_name"]

# Trials in a row that bring no new point before a study is declared stuck (a sampler that
# keeps proposing points it has already seen, or invalid ones).
STALL_LIMIT = 2000
# After this many trials in a row without a new point, the next trial is a random unseen valid
# point instead of the sampler's proposal. Model-based samplers (gp above all) otherwise keep
# proposing the same invalid or already measured point: a failed trial is invisible to their
# model, so nothing changes their mind, and each ask costs more as trials pile up.
STALL_ESCAPE = 10


@dataclass
class TuneConfig:
    dtype: str = "float32"
    op: str = "sum"
    sizes: list[int] = field(default_factory=lambda: [1 << 20])
    family: str = "tunable"
    strategy: str = "tpe"
    max_evals: int | None = None  # distinct valid points per size (served ones included)
    time_limit_s: float | None = None  # for the whole run, split evenly over the sizes
    target_pct: float | None = None  # stop a size once within P% of the ceiling
    seed: int | None = None
    base_preset: str = "good"
    pattern: str = "uniform"
    # Only these values of these parameters (a smaller space, e.g. for an exhaustive sweep).
    restrict: dict[str, list[Any]] = field(default_factory=dict)
    # How long each point is sampled (variants and CUB alike; driver/README.md says why):
    # cold samples stop at 1% noise, after sample_time_s or after max_samples.
    sample_time_s: float = 0.1
    max_samples: int = 200
    hot: bool = False  # also back-to-back samples (not stored: they only cost time here)
    # Points with a value the family flags (family.json "flags", e.g. warp=volatile_unsafe,
    # racy by construction) are skipped unless this is set: a tuner should not hand an
    # application a racy kernel because it happened to pass verification.
    allow_flagged: bool = False

    def sampling(self) -> dict[str, Any]:
        """The evaluator options of this run's stopping rule."""
        return sampling_options(self.sample_time_s, self.max_samples, self.hot)

    def validate(self) -> None:
        """InvalidConfiguration for budgets and sampling that cannot work."""
        if self.max_evals is not None and self.max_evals < 1:
            raise InvalidConfiguration("--max-evals must be at least 1")
        if self.target_pct is not None and not 0 <= self.target_pct < 100:
            raise InvalidConfiguration("--target is a percentage in [0, 100)")
        if not (math.isfinite(self.sample_time_s) and self.sample_time_s > 0):
            raise InvalidConfiguration(
                f"--sample-time must be a positive number of seconds, not {self.sample_time_s}")
        if self.max_samples < MIN_SAMPLES:
            raise InvalidConfiguration(
                f"--max-samples must be at least {MIN_SAMPLES} (every measurement takes at "
                f"least {MIN_SAMPLES} samples), not {self.max_samples}")


@dataclass
class SizeResult:
    n: int
    best: dict[str, Any] | None = None  # variant_label, launch_label, median_s, gbps, ...
    cub_gbps: float | None = None
    evaluated: int = 0  # evaluator calls in this run
    served: int = 0  # points taken from the database instead
    invalid: int = 0  # trials rejected by check(), never evaluated
    flagged: int = 0  # trials skipped for a flagged value (not allow_flagged), never evaluated
    failed: int = 0  # evaluated, not ok
    points: int = 0  # distinct valid points in the study (its budget)
    escapes: int = 0  # random unseen points enqueued after STALL_ESCAPE stalled trials
    stopped: str = ""

    @property
    def x_cub(self) -> float | None:
        if self.best and self.cub_gbps and self.best.get("gbps"):
            return float(self.best["gbps"]) / self.cub_gbps
        return None


def _unseen_point(space: Space, seen: set[tuple[str, str]], config: TuneConfig,
                  points: int) -> dict[str, Any] | None:
    """A random valid point not in seen (nor flagged, unless allowed); None when none is left.
    Seeded by the study's seed and its point count, so a replayed study is deterministic."""
    import random

    unseen = [p for p in space.valid_points() if space.labels(p) not in seen
              and (config.allow_flagged or not space.flagged(p))]
    if not unseen:
        return None
    return random.Random(f"{config.seed}:{points}").choice(unseen)


def study_name(config: TuneConfig, n: int, device_uuid: str) -> str:
    name = f"{config.family}.{config.dtype}.{config.op}.n_{n}.{config.strategy}"
    if config.restrict:  # another restriction is another space, hence another study
        name += "." + ",".join(f"{k}={'|'.join(map(str, v))}"
                               for k, v in sorted(config.restrict.items()))
    return f"{name}@{device_uuid}"


def _row_value(row: dict[str, Any]) -> float | None:
    if row.get("status") != "ok":
        return None
    if row.get("median_s"):
        return float(row["median_s"])
    samples = sorted(row.get("samples_s") or [])
    return samples[len(samples) // 2] if samples else None


class _Context:
    """What a size's study shares with the store: the device, template and toolkit."""

    def __init__(self, evaluator: Evaluator, store: Any, family: str) -> None:
        self.store = store
        dev = evaluator.device
        self.template_hash = _core.template_hash(family)
        self.driver_version = int(dev.get("driver_version", 0))
        self.toolkit_version = int(dev.get("toolkit_version", 0))
        self.device_id = 0
        if store is not None:
            self.device_id = store.register_device(dev)
            store.register_template(family, self.template_hash)

    def key(self) -> dict[str, Any]:
        return {"device_id": self.device_id, "template_hash": self.template_hash,
                "driver_version": self.driver_version, "toolkit_version": self.toolkit_version}

    def known(self, w: dict) -> dict[tuple[str, str], dict[str, Any]]:
        """Points of this workload already measured in this exact context."""
        if self.store is None:
            return {}
        rows = self.store.history(self.device_id, w["dtype"], w["op"], w["n"])
        same = self.key()
        return {
            (r["variant_label"], r["launch_label"]): r
            for r in rows
            if all(r[k] == v for k, v in same.items())
            and r["data_pattern"] == w["data_pattern"] and r["seed"] == w["seed"]
        }


def _record(ctx: _Context, w: dict, labels: tuple[str, str], params: dict[str, Any],
            result: dict[str, Any], study_id: int | None) -> dict[str, Any]:
    row = {**ctx.key(), **w, "variant_label": labels[0], "launch_label": labels[1],
           "parameters_json": json.dumps(params, sort_keys=True), "study_id": study_id,
           "samples_s": list(result.get("samples_s") or []), "status": result["status"],
           "reason": result.get("reason", "") or result.get("kind", ""),
           "gbps": result.get("gbps"), "pct_of_peak": result.get("pct_of_peak"),
           "pct_of_ceiling": result.get("pct_of_ceiling") or None}
    if ctx.store is not None and result.get("kind") != "not_recorded":
        ctx.store.record_measurement(row)
    return {**row, "median_s": result.get("median_s"), "rel_stddev": result.get("rel_stddev")}


def _baselines(ctx: _Context, evaluator: Evaluator, w: dict, gpu: bool) -> float | None:
    """CUB's GB/s for this workload (from the store, else measured and recorded)."""
    found = ctx.store.find_baseline(ctx.device_id, w, "cub") if ctx.store is not None else None
    if found is None:
        found = evaluator.cub(w)
        if found and found.get("status") == "ok" and ctx.store is not None and gpu:
            ctx.store.record_baseline({**ctx.key(), **w, "kind": "cub",
                                       "samples_s": found["samples_s"], "gbps": found["gbps"]})
    if not found or found.get("status", "ok") != "ok":
        return None
    return float(found["gbps"])


def tune_size(evaluator: Evaluator, config: TuneConfig, n: int, *, store: Any = None,
              storage: Any = None, deadline: float | None = None,
              on_trial: Callable[[SizeResult], None] | None = None,
              ctx: _Context | None = None, space: Space | None = None,
              ceiling: float | None = None) -> SizeResult:
    """One workload's study. ``store`` (a reducetune Store) serves and records points;
    ``storage`` is Optuna's (None: in memory)."""
    import optuna

    ctx = ctx or _Context(evaluator, store, config.family)
    space = space or Space(config.family, config.dtype, config.op, evaluator.limits,
                           config.restrict)
    w = workload(config.dtype, config.op, n, config.pattern)
    result = SizeResult(n)
    gpu = not hasattr(evaluator, "table")
    evaluator.set_sampling(config.sampling())  # before CUB: both are measured alike
    result.cub_gbps = _baselines(ctx, evaluator, w, gpu)
    if ceiling is None and config.target_pct is not None:
        ceiling = evaluator.ceiling_bytes_per_s()

    choices = space.choices()
    dists = distributions(choices, config.strategy)
    multi = config.strategy == "nsga2"
    study = optuna.create_study(
        study_name=study_name(config, n, evaluator.device["uuid"]), storage=storage,
        sampler=make_sampler(config.strategy, config.seed), load_if_exists=True,
        directions=["minimize", "minimize"] if multi else ["minimize"])
    study_id = None
    if ctx.store is not None:  # a resumed study gets its existing row's id
        study_id = ctx.store.create_study({
            "name": study.study_name, "device_id": ctx.device_id, "dtype": config.dtype,
            "op": config.op, "strategy": config.strategy,
            "config_json": json.dumps(_study_config(config, n, gpu))})

    known = ctx.known(w)
    seen: set[tuple[str, str]] = set()
    for t in study.trials:  # a resumed study keeps its budget and its best
        if t.state.is_finished() and "variant_label" in t.user_attrs:
            key = (t.user_attrs["variant_label"], t.user_attrs["launch_label"])
            if not config.allow_flagged and space.flagged(
                    decode(t.params, choices, config.strategy)):
                continue  # measured by a run that allowed flagged values: not this run's
            seen.add(key)
            row = known.get(key)
            if row is not None:
                _consider(result, row, ceiling)
    result.points = len(seen)

    grid_queue: list[dict[str, Any]] = []
    if config.strategy == "grid":
        labels_of = space.labels
        grid_queue = [p for p in space.valid_points() if labels_of(p) not in seen
                      and (config.allow_flagged or not space.flagged(p))]
        grid_queue.reverse()
    elif not study.trials:
        base = space.preset(config.base_preset)
        if all(base.params[k] in v for k, v in choices.items()) and (
                config.allow_flagged or not space.flagged(base.params)):
            study.enqueue_trial(encode(base.params, choices, config.strategy))

    valid_total = None
    stall = 0
    while True:
        if config.max_evals is not None and result.points >= config.max_evals:
            result.stopped = "max-evals"
            break
        if deadline is not None and time.monotonic() >= deadline:
            result.stopped = "time-limit"
            break
        if config.target_pct is not None and _reached(result, config.target_pct, ceiling):
            result.stopped = "target"
            break
        if config.strategy == "grid":
            if not grid_queue:
                result.stopped = "exhausted"
                break
            study.enqueue_trial(grid_queue.pop())
        elif stall >= STALL_LIMIT:
            valid_total = valid_total or sum(
                1 for p in space.valid_points() if config.allow_flagged or not space.flagged(p))
            result.stopped = "exhausted" if result.points >= valid_total else "stalled"
            break
        elif stall and stall % STALL_ESCAPE == 0:
            escape = _unseen_point(space, seen, config, result.points)
            if escape is None:
                result.stopped = "exhausted"
                break
            study.enqueue_trial(encode(escape, choices, config.strategy))
            result.escapes += 1

        trial = study.ask(dists)
        params = decode(trial.params, choices, config.strategy)
        reasons = space.check(params)
        if reasons:
            trial.set_user_attr("outcome", "invalid")
            trial.set_user_attr("reason", "; ".join(why for _, why in reasons))
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            result.invalid += 1
            stall += 1
            continue
        flagged = [] if config.allow_flagged else space.flagged(params)
        if flagged:
            trial.set_user_attr("outcome", "invalid")
            trial.set_user_attr("reason", describe_flags(flagged) +
                                "; --allow-flagged to tune such points")
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            result.flagged += 1
            stall += 1
            continue
        labels = space.labels(params)
        outcome = ""
        if labels in seen:
            outcome = "repeat"
            stall += 1
        else:
            seen.add(labels)
            result.points += 1
            stall = 0
        row = known.get(labels)
        if row is None:
            row = _record(ctx, w, labels, params, evaluator.evaluate(*labels, w), study_id)
            known[labels] = row
            result.evaluated += 1
            outcome = "measured"
            if row["status"] != "ok":
                result.failed += 1
        elif outcome != "repeat":
            outcome = "served"
            result.served += 1
        # Only now: a trial interrupted mid-evaluation must not count as a point seen.
        trial.set_user_attr("variant_label", labels[0])
        trial.set_user_attr("launch_label", labels[1])
        trial.set_user_attr("outcome", outcome)
        value = _row_value(row)
        if value is None:
            trial.set_user_attr("reason", row.get("reason") or row["status"])
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
        else:
            noise = float(row.get("rel_stddev") or 0.0)
            study.tell(trial, [value, noise] if multi else value)
            _consider(result, row, ceiling)
        if on_trial:
            on_trial(result)
    return result


def _study_config(config: TuneConfig, n: int, gpu: bool) -> dict[str, Any]:
    """What rt_studies.config records. The sampling is the rule this study's points (the rows
    with its study_id) were measured with; null when they are copied from a replay recording,
    which kept its own protocol."""
    return {"n": n, "max_evals": config.max_evals, "seed": config.seed, "family": config.family,
            "restrict": config.restrict, "sampling": config.sampling() if gpu else None,
            "allow_flagged": config.allow_flagged}


def _consider(result: SizeResult, row: dict[str, Any], ceiling: float | None) -> None:
    value = _row_value(row)
    if value is None:
        return
    if result.best is None or value < result.best["median_s"]:
        gbps = row.get("gbps")
        pct_ceiling = row.get("pct_of_ceiling")
        if not pct_ceiling and ceiling and gbps:
            pct_ceiling = 100.0 * float(gbps) * 1e9 / ceiling
        result.best = {"variant_label": row["variant_label"], "launch_label": row["launch_label"],
                       "median_s": value, "gbps": gbps, "pct_of_peak": row.get("pct_of_peak"),
                       "pct_of_ceiling": pct_ceiling}


def _reached(result: SizeResult, target_pct: float, ceiling: float | None) -> bool:
    if result.best is None:
        return False
    pct = result.best.get("pct_of_ceiling") or result.best.get("pct_of_peak")
    return pct is not None and float(pct) >= 100.0 - target_pct


def variant_labels(space: Space, allow_flagged: bool = True) -> list[str]:
    """The distinct variant labels of every valid point of the (restricted) space, in
    enumeration order: what a study of that space may compile (without the flagged points
    unless allow_flagged)."""
    return list(dict.fromkeys(space.labels(p)[0] for p in space.valid_points()
                              if allow_flagged or not space.flagged(p)))


def tune(evaluator: Evaluator, config: TuneConfig, *, store: Any = None, storage: Any = None,
         on_trial: Callable[[SizeResult], None] | None = None,
         on_size: Callable[[int, SizeResult | None], None] | None = None,
         on_precompile: Callable[[dict[str, Any]], None] | None = None) -> list[SizeResult]:
    """Every size of the config, in ascending order; the time limit (which includes
    precompiling) is split evenly. ``on_precompile`` gets the precompile summary."""
    config.validate()
    ctx = _Context(evaluator, store, config.family)
    space = Space(config.family, config.dtype, config.op, evaluator.limits, config.restrict)
    space.preset(config.base_preset)  # an unknown base preset fails before any measurement
    # The streaming ceiling, once per run: % of ceiling in the results, and --target.
    ceiling = evaluator.ceiling_bytes_per_s()
    samples = getattr(evaluator, "ceiling_samples_s", None)
    if store is not None and ceiling and samples:
        store.record_baseline({**ctx.key(), **CEILING_WORKLOAD, "kind": "ceiling",
                               "samples_s": samples, "gbps": ceiling / 1e9})
    start = time.monotonic()
    # Every variant of the space, compiled in parallel once for all sizes, instead of one at a
    # time when first measured. A failure here is not fatal: that point fails when measured.
    summary = evaluator.precompile(variant_labels(space, config.allow_flagged))
    if summary is not None and on_precompile:
        on_precompile(summary)
    left = config.time_limit_s
    if left is not None:
        left = max(0.0, left - (time.monotonic() - start))
        start = time.monotonic()
    results = []
    for i, n in enumerate(config.sizes):
        deadline = None
        if left is not None:
            deadline = start + left * (i + 1) / len(config.sizes)
        if on_size:
            on_size(n, None)
        r = tune_size(evaluator, config, n, store=store, storage=storage, deadline=deadline,
                      on_trial=on_trial, ctx=ctx, space=space, ceiling=ceiling)
        if on_size:
            on_size(n, r)
        results.append(r)
    return results
