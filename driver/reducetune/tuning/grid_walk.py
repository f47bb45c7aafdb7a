"""The order in which one of several workers sweeps a shared grid (``--strategy grid`` with
``--devices``, or several commands on one study).

Each worker walks the grid's points in enumeration order from its own start. Before, a worker
that ran into points another had measured skipped them and went on walking behind it: the
two then asked for the same points in turn, one of them failing a trial ("another process is
measuring this point") for almost every point the other measured (109 failed trials for 384
points in a two-worker replay, each costing the storage's writes of a trial). Here a worker
that runs into others' work instead jumps to the middle of the longest run of points nobody
has taken, as work stealing splits a range: the workers then meet only about log2(points)
times each, whatever their number, and none needs to know how many there are.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from reducetune._space import Point

__all__ = ["GridWalk", "grid_start"]


def grid_start(points: Sequence[Point], share: Any, apart: bool) -> int:
    """Where a worker's walk of ``points`` begins.

    - Worker k of N of one ``--devices`` run (``share``: evaluate/_gpu_share.CompileShare):
      at the first point of the variant its compile queue begins with (``share.order``), so
      that its first points find their programs compiled: the walk began at a place taken from
      the pid, its background compiler at its share of the queue, and each worker's first point
      compiled alone on the measuring thread while 16 background threads compiled others (the
      768-point sweep on an H200: 0.76 s of its compile waits, most of the 0.94 s before the
      first point).
    - ``apart`` (studies other commands may walk too: --storage): a place taken from the pid,
      as before, so that uncoordinated workers start apart.
    - Otherwise (one GPU): 0, where the compile queue begins too."""
    if apart and points:
        return os.getpid() * 2654435761 % len(points)
    if share.workers <= 1 or not points:
        return 0
    variants = list(dict.fromkeys(p.variant_label for p in points))
    first = share.order(variants)[0]
    return next(i for i, p in enumerate(points) if p.variant_label == first)


class GridWalk:
    """A grid's points (enumeration order) walked from ``start``, jumping over others' work."""

    def __init__(self, points: Sequence[Point], start: int = 0) -> None:
        self.points = list(points)
        self.pos = start % len(self.points) if self.points else 0

    def next(self, busy: Callable[[Point], bool]) -> Point | None:
        """The next point to try: the one after the last, unless ``busy`` (seen, or claimed by
        another worker); then the middle of the longest run of points that are not busy
        (the grid is a circle: a run may wrap). None when every point is busy."""
        n = len(self.points)
        if not n:
            return None
        if busy(self.points[self.pos]):
            run = _longest_free_run([not busy(p) for p in self.points])
            if run is None:
                return None
            first, length = run
            self.pos = (first + length // 2) % n
        p = self.points[self.pos]
        self.pos = (self.pos + 1) % n
        return p


def _longest_free_run(free: list[bool]) -> tuple[int, int] | None:
    """(first index, length) of the longest circular run of True; None when there is none."""
    n = len(free)
    if all(free):
        return 0, n
    # start just after a busy point, so that no run is cut in two by the end of the list
    origin = free.index(False) + 1
    best: tuple[int, int] | None = None
    first, length = 0, 0
    for i in range(origin, origin + n):
        if free[i % n]:
            if not length:
                first = i % n
            length += 1
            if best is None or length > best[1]:
                best = (first, length)
        else:
            length = 0
    return best
