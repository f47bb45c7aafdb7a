"""Where a grid worker's walk begins (tuning/grid_walk.py grid_start): at the variant its
compile queue begins with (evaluate/_gpu_share.CompileShare.order), so that its first points
find their programs compiled; 0 for one GPU; apart by pid where other commands share the
study (--storage)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from reducetune.evaluate._gpu_share import ALONE, CompileShare
from reducetune.tuning.grid_walk import grid_start


@dataclass(frozen=True)
class FakePoint:
    variant_label: str
    launch: int


def points(variants: int, launches: int) -> list[FakePoint]:
    """Enumeration order: each variant's launch points together, as the spaces enumerate."""
    return [FakePoint(f"v{v}", k) for v in range(variants) for k in range(launches)]


def test_one_gpu_walks_from_the_start_where_its_compile_queue_begins():
    assert grid_start(points(96, 8), ALONE, apart=False) == 0


def test_each_worker_begins_at_the_first_point_of_its_queue_s_first_variant():
    pts = points(96, 8)
    variants = list(dict.fromkeys(p.variant_label for p in pts))
    starts = []
    for k in range(4):
        share = CompileShare(worker=k, workers=4, folder="")
        start = grid_start(pts, share, apart=False)
        assert pts[start].variant_label == share.order(variants)[0]
        assert start == 0 or pts[start - 1].variant_label != pts[start].variant_label
        starts.append(start)
    assert starts == [0, 24 * 8, 48 * 8, 72 * 8]  # four quarters: the workers start apart


def test_a_long_queue_s_windows_start_each_worker_within_the_first_window():
    # 1,000 variants: the queue is split in windows of WINDOW_PER_WORKER x workers, so worker 1
    # of 2 begins half-way into the first window, not half-way into the whole grid
    pts = points(1000, 2)
    share = CompileShare(worker=1, workers=2, folder="")
    start = grid_start(pts, share, apart=False)
    variants = list(dict.fromkeys(p.variant_label for p in pts))
    assert pts[start].variant_label == share.order(variants)[0]
    assert start < len(pts) // 2


def test_walkers_of_other_commands_start_apart_by_pid():
    pts = points(96, 8)
    assert grid_start(pts, ALONE, apart=True) == os.getpid() * 2654435761 % len(pts)
    assert grid_start([], ALONE, apart=True) == 0
