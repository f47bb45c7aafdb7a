"""What a tuning run is asked (TuneConfig) and what each size gives back (SizeResult), and the
study's name: plain data shared by the tuner's units (_proposal, _evaluation, _budget)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from reducetune._space import Point
from reducetune.errors import InvalidConfiguration
from reducetune.evaluate.base import MIN_SAMPLES, percent_of, sampling_options
from reducetune.tuning.shapes import Shape, Unit, unit_text

__all__ = ["RACE_FACTOR", "SizeResult", "TuneConfig", "median_of", "study_name"]

# Racing's default bound over the unit's best (TuneConfig.race). 1.5: a point within 10 % of
# the best is cut only if two of its first three cold samples are each slowed by more than a
# third (1.5 / 1.1), far beyond the protocol's 1 % noise; and the median a cut point is stored
# with is above the best's, so it never becomes a best.
RACE_FACTOR = 1.5


@dataclass
class TuneConfig:
    dtype: str = "float32"
    op: str = "sum"
    sizes: list[int] = field(default_factory=lambda: [1 << 20])
    # An axis family's units (tuning/shapes.py): the shapes (outer, r, inner) it tunes, one
    # study each, instead of sizes (a whole-array family's are (1, n, 1)).
    shapes: list[Shape] = field(default_factory=list)
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
    # Points whose result changes from run to run (a float sum finished by atomics) are not
    # proposed unless this is set: CUB's DeviceReduce is run-to-run deterministic, and so are
    # the answers a tuner hands out by default (one rule: search_space::determinism_of).
    nondeterministic: bool = False
    # A new study first measures other devices' bests for the same workload (tuning/warm_start.py):
    # one evaluation each, often near this device's optimum (--no-warm-start turns it off).
    warm_start: bool = True
    # Where the results file holds no other device, the warm start's queue comes from a
    # priors table (store/priors.py; --priors): "auto" (the package's table when the GPU is
    # measured live, none in replay: the run decides, tuning/run.py), "on", "off" or a file.
    priors: str = "auto"
    # Studies keyed by the device model (name, SMs, memory clock) instead of its UUID, so that
    # GPUs of one model share them (--devices, --storage: store.study_share.study_device).
    by_model: bool = False
    # A grid's workers may include processes of other commands (--storage: other machines):
    # each walk then begins at a place taken from its pid (tuning/grid_walk.py grid_start).
    walk_apart: bool = False
    # Racing (issue 25): once the unit has an ok point, a point whose first cold samples
    # (measure/stopping_rule.hpp: the median of 3) are above race x its best run-to-run
    # deterministic median stops there ("outpaced"): it cannot be a best, and the time goes to
    # more points. None (--race off): every point gets the full protocol.
    race: float | None = RACE_FACTOR

    def units(self) -> list[Unit]:
        """What the run tunes, one study each: the shapes, else the sizes."""
        return list(self.shapes) if self.shapes else list(self.sizes)

    def sampling(self) -> dict[str, Any]:
        """The evaluator options of this run's stopping rule."""
        return sampling_options(self.sample_time_s, self.max_samples, self.hot)

    def race_options(self, result: SizeResult, live: bool) -> dict[str, float]:
        """The evaluator's per-call racing option for the unit's next point: race x the best
        deterministic median so far (the best × CUB compares; a nondeterministic best is only
        faster, so a point above the bound is no best at any level). Empty with racing off,
        before a first ok point, in a replay (it gives back what was stored: nothing to save)
        and for an axis shape (its export also picks the fastest batch_invariant point, which
        may be far slower than the shape's best: it must not be chosen from 3 samples)."""
        best = result.best_deterministic
        if self.race is None or not live or best is None or result.shape is not None:
            return {}
        return {"outpaced_above_s": self.race * float(best["median_s"])}

    def validate(self) -> None:
        """InvalidConfiguration for budgets and sampling that cannot work."""
        if self.race is not None and not (math.isfinite(self.race) and self.race > 1):
            raise InvalidConfiguration(  # at 1 or below, a raced point could be the best
                f"--race must be a factor above 1 or off, not {self.race}")
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


def study_name(config: TuneConfig, n: Unit, device_uuid: str) -> str:
    # The selection is part of the name: it changes the values a study proposes, and Optuna
    # refuses a parameter whose categorical choices change within one study. A shape's study
    # is "shape_OxRxI" where a size's is "n_N" (the names of whole-array studies unchanged).
    unit = f"n_{n}" if isinstance(n, int) else f"shape_{unit_text(n)}"
    name = f"{config.family}.{config.dtype}.{config.op}.{unit}.{config.strategy}"
    name += ".all" if config.nondeterministic else ".det"
    if config.allow_flagged:
        name += "+flagged"
    if config.restrict:  # another restriction is another space, hence another study
        name += "." + ",".join(f"{k}={'|'.join(map(str, v))}"
                               for k, v in sorted(config.restrict.items()))
    return f"{name}@{device_uuid}"


def median_of(row: dict[str, Any]) -> float | None:
    """A status-ok row's median time (what the study minimizes); None otherwise."""
    if row.get("status") != "ok":
        return None
    if row.get("median_s"):
        return float(row["median_s"])
    samples = sorted(row.get("samples_s") or [])
    return samples[len(samples) // 2] if samples else None


@dataclass
class SizeResult:
    """One size's best and its counts. Every trial lands in exactly one count: ``evaluated``
    (measured and stored), ``not_recorded`` (a replay's recording lacks the point: nothing
    measured, nothing stored), ``served`` (from the database), ``invalid``, ``flagged``, or a
    repeat of a point already seen (no count). A shape's result (an axis unit) is built
    from its shape (outer, r, inner): ``n`` is then r and ``shape`` the shape; a size's has
    no shape."""

    n: int
    best: dict[str, Any] | None = None  # variant_label, launch_label, median_s, gbps, ...
    # The best run-to-run deterministic point: what × CUB compares (CUB's sum is deterministic);
    # the same as best unless the run admits nondeterministic points.
    best_deterministic: dict[str, Any] | None = None
    cub_gbps: float | None = None
    cub_failure: str | None = None  # why CUB's call failed, where it was measured and failed
    evaluated: int = 0  # points measured (GPU) or copied from a recording, and stored
    not_recorded: int = 0  # replayed points the recording lacks: not measured, not stored
    served: int = 0  # points taken from the database instead
    invalid: int = 0  # trials rejected by check(), never evaluated
    flagged: int = 0  # trials skipped for a flagged value (not allow_flagged), never evaluated
    nondeterministic: int = 0  # trials skipped as nondeterministic (not asked for), never evaluated
    failed: int = 0  # evaluated, not ok
    points: int = 0  # distinct valid points in the study (its budget)
    proposed: int = 0  # trials asked in this run, whatever became of them
    escapes: int = 0  # random unseen points enqueued after STALL_ESCAPE stalled trials
    # other devices' bests enqueued first (warm start): device name -> points
    warm: dict[str, int] = field(default_factory=dict)
    stopped: str = ""
    shape: Shape | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.n, int):  # the unit of an axis study: a shape
            self.shape = (int(self.n[0]), int(self.n[1]), int(self.n[2]))
            self.n = self.shape[1]

    @property
    def unit(self) -> Unit:
        """The unit this result answers: its shape, else its size."""
        return self.shape if self.shape is not None else self.n

    @property
    def rejected(self) -> int:
        """Proposals turned away before compiling: the waste the space's proposable values
        are there to avoid."""
        return self.invalid + self.flagged + self.nondeterministic

    @property
    def rejected_rate(self) -> float:
        """Rejected proposals per trial of this run."""
        return self.rejected / self.proposed if self.proposed else 0.0

    @property
    def x_cub(self) -> float | None:
        """The best deterministic point's GB/s over CUB's: like against like."""
        return _ratio(self.best_deterministic, self.cub_gbps)

    @property
    def x_cub_any(self) -> float | None:
        """The best point's, nondeterministic ones included when the run admitted them."""
        return _ratio(self.best, self.cub_gbps)

    def consider(self, point: Point, row: dict[str, Any], ceiling: float | None) -> None:
        """Takes the point as the best when its row is ok and faster than the best so far."""
        value = median_of(row)
        if value is None:
            return
        gbps = row.get("gbps")
        pct_ceiling = row.get("pct_of_ceiling")
        if not pct_ceiling and ceiling and gbps:
            pct_ceiling = percent_of(float(gbps) * 1e9, ceiling)  # ceiling in bytes/s
        entry = {"variant_label": point.variant_label, "launch_label": point.launch_label,
                 "median_s": value, "gbps": gbps, "pct_of_peak": row.get("pct_of_peak"),
                 "pct_of_ceiling": pct_ceiling, "determinism": point.determinism}
        if self.best is None or value < self.best["median_s"]:
            self.best = entry
        if point.deterministic and (self.best_deterministic is None
                                    or value < self.best_deterministic["median_s"]):
            self.best_deterministic = entry


def _ratio(best: dict[str, Any] | None, cub_gbps: float | None) -> float | None:
    if best and cub_gbps and best.get("gbps"):
        return float(best["gbps"]) / cub_gbps
    return None
