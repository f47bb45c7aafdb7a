"""The evaluators a command measures with, in one table: adding an evaluator is one entry here.

Each entry says which of the command's options choose it and how it opens from them; the
first entry whose ``chosen`` holds is used (``--replay DB``: the recording; else the GPU).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reducetune.evaluate.base import Evaluator
from reducetune.evaluate.gpu import GpuEvaluator
from reducetune.evaluate.replay import ReplayEvaluator

__all__ = ["EVALUATORS", "EvaluatorEntry", "open_evaluator"]


@dataclass(frozen=True)
class EvaluatorEntry:
    name: str
    chosen: Callable[[dict[str, Any]], bool]  # the command's options -> this one?
    open: Callable[[dict[str, Any]], Evaluator]  # the command's options -> the evaluator


EVALUATORS: tuple[EvaluatorEntry, ...] = (
    EvaluatorEntry("replay", lambda o: o.get("replay") is not None,
                   lambda o: ReplayEvaluator(o["replay"], o.get("device"))),
    EvaluatorEntry("gpu", lambda o: True,
                   lambda o: GpuEvaluator(o.get("device") or 0, timeout_s=o.get("timeout", 60.0),
                                          in_process=bool(o.get("in_process")))),
)


def open_evaluator(options: dict[str, Any]) -> Evaluator:
    """The first evaluator of EVALUATORS that the options choose, opened from them."""
    return next(e for e in EVALUATORS if e.chosen(options)).open(options)
