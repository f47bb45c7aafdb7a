"""The search-efficiency experiment's journal: every finished (size, strategy, seed) run as one
JSON line in OUT/runs.jsonl, written as soon as the run ends.

A long experiment (the gp strategy takes minutes per run) that is interrupted or runs out of
time keeps what it finished; the same command again reads the journal and runs only what is
missing. A line is reused only for the same recording, family, dtype, operator, restriction,
size, strategy, seed and budget, so a changed command never mixes in foreign runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["Journal"]

# (n, strategy, seed, max_evals): one run of the experiment.
Task = tuple[int, str, int, int]


class Journal:
    def __init__(self, path: Path, context: dict[str, Any]) -> None:
        self.path = path
        self._context = context
        self._cut_short = False
        self._done: dict[Task, tuple[list[float], float]] = {}
        for line in self._lines():
            if line.get("context") == context:
                task = (line["n"], line["strategy"], line["seed"], line["max_evals"])
                self._done[task] = (line["curve"], line["seconds"])

    def _lines(self) -> list[dict[str, Any]]:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return []
        # cut short by a kill: the next line written must start on a line of its own
        self._cut_short = bool(text) and not text.endswith("\n")
        out = []
        for raw in text.splitlines():
            try:
                out.append(json.loads(raw))
            except ValueError:  # a line cut short by a killed run: that run is redone
                continue
        return out

    def get(self, task: Task) -> tuple[list[float], float] | None:
        return self._done.get(task)

    def add(self, task: Task, curve: list[float], seconds: float) -> None:
        n, strategy, seed, max_evals = task
        line = {"context": self._context, "n": n, "strategy": strategy, "seed": seed,
                "max_evals": max_evals, "curve": curve, "seconds": seconds}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as f:
            if self._cut_short:
                f.write("\n")
                self._cut_short = False
            f.write(json.dumps(line) + "\n")  # inf (no ok point yet) is written as Infinity
        self._done[task] = (curve, seconds)
