"""When a size's study stops: its budget of distinct points (--max-evals), its share of the
run's time (--time-limit, split evenly over the sizes) and its target (--target, within P% of
the streaming ceiling). The sampler running out of points is the proposal's to say."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

__all__ = ["Budget", "deadlines"]


@dataclass(frozen=True)
class Budget:
    max_evals: int | None = None  # distinct valid points, served ones included
    deadline: float | None = None  # time.monotonic() at which the size stops
    target_pct: float | None = None  # stop once the best is within P% of the ceiling

    def stop(self, result: Any) -> str:
        """Why the size stops now (``max-evals``, ``time-limit``, ``target``), or ""."""
        if self.max_evals is not None and result.points >= self.max_evals:
            return "max-evals"
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "time-limit"
        if self.target_pct is not None and _reached(result.best, self.target_pct):
            return "target"
        return ""


def _reached(best: dict[str, Any] | None, target_pct: float) -> bool:
    """Within target_pct of the streaming ceiling (of the peak where no ceiling is known)."""
    if best is None:
        return False
    pct = best.get("pct_of_ceiling") or best.get("pct_of_peak")
    return pct is not None and float(pct) >= 100.0 - target_pct


def deadlines(time_limit_s: float | None, start: float, sizes: int) -> list[float | None]:
    """Each size's deadline when the time left from start is split evenly over the sizes
    (None for each without a time limit)."""
    if time_limit_s is None:
        return [None] * sizes
    return [start + time_limit_s * (i + 1) / sizes for i in range(sizes)]
