"""The tune command's progress bar (rich): one bar per size with the best so far."""

from __future__ import annotations

from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class TuneProgress:
    def __init__(self, console: Any, config: Any) -> None:
        self.config = config
        self._progress = Progress(
            TextColumn("[bold]n={task.fields[n]:>11}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("best {task.fields[best]}"), TimeElapsedColumn(),
            TextColumn("{task.fields[note]}"), console=console, transient=False)
        self._task: Any = None

    def __enter__(self) -> "TuneProgress":
        self._progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._progress.__exit__(*exc)

    def size(self, n: int, result: Any) -> None:
        if result is None:
            self._task = self._progress.add_task(
                "", total=self.config.max_evals, n=n, best="-", note="")
        else:
            self._progress.update(self._task, note=result.stopped)

    def trial(self, result: Any) -> None:
        best = "-"
        if result.best and result.best.get("gbps"):
            best = f"{result.best['gbps']:.1f} GB/s"
        note = f"{result.evaluated} measured, {result.served} served, {result.invalid} invalid"
        if getattr(result, "flagged", 0):
            note += f", {result.flagged} flagged"
        if getattr(result, "not_recorded", 0):
            note += f", {result.not_recorded} not in the recording"
        self._progress.update(self._task, completed=result.points, best=best, note=note)
