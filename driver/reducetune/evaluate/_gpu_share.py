"""The GPU workers of one ``tune --devices`` run sharing the host and what they compile (issue
25): which of the run's workers this process is (``CompileShare``, set by cli/device_worker.py
through ``share_compiles``, read by each GpuEvaluator), the folder they share programs through
(``run_folder``, made and removed by cli/tune_devices.py), and the order in which each
worker's background threads take the run's variants (``CompileShare.order``).

Measured on 4 x H200 (a200b82, scripts/multi-gpu-sweep quad): every worker compiled all of the
sweep's 95 variants (4 x 95 NVRTC compiles, some 87 ms of a thread each) on hardware - 1
threads each, while the four measured. Now each worker's background takes its share of the
host's threads (jit/compile_ahead.hpp threads_for: the one place that number is decided; the
workers' count travels as ``workers``), and its compiler's cache stores every program in the
run's folder and loads what another worker stored there (jit/folder_cache.hpp), so that the
run compiles each variant once. Worker k of N starts its queue at its k-th share, so that the
N workers compile different variants first; a program another worker is compiling (its claim
in the folder) is left to it.

Why a folder beside the results file, not the results file's own build cache (jit/store_cache
.hpp, rt_builds): the file's write lock is what serialised the workers before (issue 25: three
quarters of a point's time went to the study's storage there); each program would be another
write transaction of its cubin, from every worker's threads. A folder takes whole files by
rename and claims by O_EXCL, without a lock; the run removes it at its end. A one-GPU run
shares nothing and keeps its memory cache, as before.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["ALONE", "CompileShare", "WINDOW_PER_WORKER", "compile_share", "run_folder",
           "share_compiles"]

T = TypeVar("T")

# Variants per worker in each window of the queue that the workers split: about what a
# worker's background takes in its first round (16 threads, 8 variants a program). A window,
# not the whole queue: a run of the README's 9,456 variants would otherwise have worker 3 of 4
# start three quarters of the way in, on variants its units reach last.
WINDOW_PER_WORKER = 128


@dataclass(frozen=True)
class CompileShare:
    """Worker ``worker`` of the run's ``workers`` GPU workers on this host, sharing programs
    through ``folder`` ("": none, a one-GPU run)."""

    worker: int = 0
    workers: int = 1
    folder: str = ""

    def ahead_args(self) -> dict[str, Any]:
        """_core.compile_ahead's arguments for this share (threads: compile_ahead decides)."""
        return {"workers": self.workers, "shared_dir": self.folder}

    def order(self, items: list[T]) -> list[T]:
        """``items`` (the queue, in the run's order) with each window of WINDOW_PER_WORKER x
        workers items started at this worker's share of it, the rest of the window after;
        unchanged for one worker."""
        if self.workers <= 1:
            return list(items)
        size = WINDOW_PER_WORKER * self.workers
        out: list[T] = []
        for begin in range(0, len(items), size):
            window = items[begin:begin + size]
            start = self.worker * len(window) // self.workers
            out += window[start:] + window[:start]
        return out


ALONE = CompileShare()
_this = ALONE  # this process's: ALONE outside a --devices worker


def share_compiles(share: CompileShare) -> None:
    """This process is ``share``'s worker: the GPU evaluators it opens from now on compile so."""
    global _this
    _this = share


def compile_share() -> CompileShare:
    """This process's share (ALONE unless share_compiles said otherwise)."""
    return _this


@contextmanager
def run_folder(db: Path) -> Iterator[str]:
    """A fresh folder beside the results file ``db`` for the run's programs, removed at the
    end whatever happens; "" where none can be made (then each worker compiles alone)."""
    try:
        folder = tempfile.mkdtemp(prefix=f".{db.name}.programs-", dir=db.resolve().parent)
    except OSError:
        folder = ""
    try:
        yield folder
    finally:
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
