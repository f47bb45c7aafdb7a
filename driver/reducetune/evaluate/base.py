"""What every source of measurements shares: the Evaluator protocol, the workload and
sampling dicts the worker reads, and the protocol constants (defined in C++).

Every evaluator gives the same dicts: ``{"status": "ok", "samples_s", "median_s", "gbps",
"pct_of_peak", "pct_of_ceiling", ...}`` or ``{"status": "failed" | "invalid" | "wrong",
"kind", "reason"}``.
"""

from __future__ import annotations

from typing import Any, Protocol

from reducetune import _core
from reducetune._space import Point

__all__ = ["Evaluator", "CEILING_WORKLOAD", "MIN_SAMPLES", "MAX_NOISE", "OUTPACED",
           "WORKLOAD_SEED", "data_of", "outpaced_noted", "percent_of", "problem_of",
           "sampling_options", "workload"]

# The streaming ceiling is stored as a baseline under this conventional workload key (the
# read itself is 4 GiB, or an eighth of the device memory: baseline/streaming_ceiling.hpp).
CEILING_WORKLOAD = {"dtype": "float32", "op": "sum", "n": 1 << 28, "data_pattern": "uniform",
                    "seed": 0}


# The measurement protocol of issue 3, defined in C++ (measure/stopping_rule.hpp): at least
# MIN_SAMPLES cold samples, stop once their relative standard deviation, or the relative
# half-width of their median's 95 % interval, is MAX_NOISE or less.
# Tuning changes only the caps (time, count) and hot samples. WORKLOAD_SEED is the data seed of
# a workload that names none (verify/patterns.hpp). Kept here as names other modules import.
MIN_SAMPLES: int = _core.MIN_SAMPLES
MAX_NOISE: float = _core.MAX_NOISE
WORKLOAD_SEED: int = _core.WORKLOAD_SEED


def percent_of(achieved: float | None, reference: float | None) -> float | None:
    """100 × achieved / reference: the one "% of peak", "% of ceiling" (and "% of the optimum")
    in Python, as measure/bandwidth.hpp ``percent_of`` is in C++; None when either is unknown
    (missing, or a reference of 0). Both in the same unit (GB/s with GB/s, bytes/s with
    bytes/s)."""
    if achieved is None or not reference or reference <= 0:
        return None
    return 100.0 * float(achieved) / float(reference)


def sampling_options(time_cap_s: float, max_samples: int, hot: bool) -> dict[str, Any]:
    """The stopping rule the worker applies to cold (and, with hot, hot) samples: the keys
    ``_core.evaluate`` and ``_core.evaluate_cub`` read from their ``options``."""
    return {"hot": bool(hot), "min_samples": MIN_SAMPLES, "max_samples": int(max_samples),
            "max_noise": MAX_NOISE, "time_cap_s": float(time_cap_s)}


# Racing (issue 25): a point whose first cold samples are already above the bound the tuner
# passes (``outpaced_above_s``) stops there; the stopping rule says "outpaced"
# (measure/stopping_rule.hpp), and its stored row's reason starts with this word.
OUTPACED = "outpaced"


def outpaced_noted(result: dict[str, Any], outpaced_above_s: float | None) -> dict[str, Any]:
    """The evaluator's result, an outpaced one with its stop said first in its reason: the
    store keeps an ok row's reason (otherwise the verification's note, mostly empty), so that
    a raced measurement reads back as one, fewer samples and why."""
    if result.get("status") != "ok" or result.get("stopped") != OUTPACED:
        return result
    note = (f"{OUTPACED}: {len(result.get('samples_s') or [])} cold samples, median above "
            f"{outpaced_above_s or 0:.4g} s")
    return {**result, "reason": "; ".join(r for r in (note, result.get("reason")) if r)}


def workload(dtype: str, op: str, n: int | tuple[int, int, int], pattern: str = "uniform",
             seed: int = WORKLOAD_SEED) -> dict:
    """The store's key of a workload (and CUB's): problem and data together. n is a size (the
    whole array, (1, n, 1)) or a shape (outer, r, inner), a tune's unit either way; the key
    holds r as "n" (the store's column) and the shape's outer and inner."""
    outer, r, inner = (1, n, 1) if isinstance(n, int) else n
    return {"dtype": dtype, "op": op, "n": int(r), "outer": int(outer), "inner": int(inner),
            "data_pattern": pattern, "pattern": pattern, "seed": seed}


def problem_of(w: dict) -> _core.Problem:
    """The typed problem a workload dict names: its shape (outer, n, inner), the whole array
    (1, n, 1) where it has no outer and inner."""
    shape = (int(w.get("outer", 1)), int(w["n"]), int(w.get("inner", 1)))
    return _core.Problem(w["dtype"], w["op"], shape)


def data_of(w: dict) -> dict[str, Any]:
    """What a workload's input holds beside its problem: the keys ``_core.evaluate`` reads
    from its ``data`` (pattern, seed, and a misaligned start: offset_elements)."""
    return {"pattern": w.get("pattern", w.get("data_pattern", "uniform")),
            "seed": int(w.get("seed", WORKLOAD_SEED)),
            "offset_elements": int(w.get("offset_elements", 0))}


class Evaluator(Protocol):
    """What the tuner needs from a source of measurements."""

    device: dict[str, Any]  # name, uuid, cc_major, cc_minor, ..., driver/toolkit versions
    limits: Any  # DeviceLimits
    calls: int  # evaluate() calls so far (what "measured" means in tests)
    # True: measures on a device now (its CUB baseline is recorded); False: replays a
    # recording. Said by each evaluator, so that no caller guesses from its other attributes.
    live: bool

    def set_sampling(self, options: dict[str, Any]) -> None: ...
    # Points and problems are typed (_core.Point, _core.Problem): an evaluator never reads a
    # label back; ``data`` is the input's pattern and seed (``data_of``).
    def precompile(self, points: list[Point]) -> dict[str, Any] | None: ...
    # outpaced_above_s (seconds, racing): a live evaluator stops the point's cold samples once
    # their median is above it (OUTPACED); the tuner passes it only to a live one.
    def evaluate(self, point: Point, problem: _core.Problem, data: dict[str, Any] | None = None,
                 outpaced_above_s: float | None = None) -> dict[str, Any]: ...
    def cub(self, w: dict) -> dict[str, Any] | None: ...
    def ceiling_bytes_per_s(self) -> float | None: ...
    def close(self) -> None: ...
