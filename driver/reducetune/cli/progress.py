"""The tune command's progress display (rich): one line for the whole run (sizes done of all,
elapsed, ETA) above one bar per size with its best so far."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Group
from rich.live import Live
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from reducetune.tuning.shapes import Unit, unit_text


class TuneProgress:
    def __init__(self, console: Any, configs: Any) -> None:
        self.configs = configs if isinstance(configs, list) else [configs]
        units = sum(len(c.units()) for c in self.configs)
        limit = self.configs[0].time_limit_s
        # With a time limit the run ends by then; otherwise rich's estimate from the pace.
        self._end = None if limit is None else time.monotonic() + limit
        self._run_progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("sizes"), TimeElapsedColumn(), TextColumn("ETA"),
            TextColumn("{task.fields[eta]}") if self._end else TimeRemainingColumn(),
            console=console, transient=False)
        self._sizes = Progress(
            TextColumn("  {task.fields[workload]} n={task.fields[n]:>11}"), BarColumn(),
            MofNCompleteColumn(), TextColumn("best {task.fields[best]}"), TimeElapsedColumn(),
            TextColumn("{task.fields[note]}"), console=console, transient=False)
        self._run = self._run_progress.add_task("tuning", total=units, eta="")
        self._task: Any = None
        self._config: Any = self.configs[0]

    def __enter__(self) -> TuneProgress:
        self._live = Live(Group(self._run_progress, self._sizes),
                          console=self._sizes.console, refresh_per_second=8)
        self._live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._live.__exit__(*exc)

    def _eta(self) -> str:
        if self._end is None:
            return ""
        left = max(0, int(self._end - time.monotonic()))
        return f"{left // 60}:{left % 60:02d} (time limit)"

    def size(self, config: Any, n: Unit, result: Any) -> None:
        if result is None:
            self._config = config
            self._task = self._sizes.add_task(
                "", total=config.max_evals, n=unit_text(n), best="-", note="",
                workload=f"{config.dtype} {config.op}")
        else:
            self._sizes.update(self._task, note=result.stopped)
            self._run_progress.advance(self._run)
        self._run_progress.update(self._run, eta=self._eta())

    def trial(self, result: Any) -> None:
        best = "-"
        if result.best and result.best.get("gbps"):
            best = f"{result.best['gbps']:.1f} GB/s"
        note = f"{result.evaluated} measured, {result.served} served"
        if result.rejected:
            note += f", {result.rejected} rejected"
        if result.not_recorded:
            note += f", {result.not_recorded} not in the recording"
        self._sizes.update(self._task, completed=result.points, best=best, note=note)
        self._run_progress.update(self._run, eta=self._eta())
