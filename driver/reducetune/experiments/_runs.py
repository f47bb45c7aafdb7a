"""Running the search-efficiency experiment: one (size, strategy, seed) run as a curve of the
best time after each evaluation, in this process or spread over worker processes (--jobs),
each finished run journaled (_journal.py) so that a rerun runs only what is missing."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from reducetune._space import Space
from reducetune.cli.args import SEEDS_MAX, integer, positive_int, sizes_text
from reducetune.errors import InvalidConfiguration
from reducetune.evaluate.replay import ReplayEvaluator, decompress_recording
from reducetune.experiments._journal import Journal, Task
from reducetune.tuning.config import TuneConfig
from reducetune.tuning.loop import tune_size

__all__ = ["add_replay_arguments", "curve_for", "curves_for", "all_curves", "default_budget",
           "plain_recording", "replayed_space"]



def add_replay_arguments(p: argparse.ArgumentParser, sizes_from: str, run_of: str) -> None:
    """The arguments every replay experiment (search_efficiency, transfer) takes alike: the
    problem and family replayed, the seeded runs and their budget, and the recording sweep's
    restriction. sizes_from says in --n's help which sizes are the default, run_of what a
    run is per."""
    p.add_argument("--dtype", default="float32")
    p.add_argument("--op", default="sum")
    p.add_argument("--n", nargs="+", default=None, type=sizes_text,
                   help=f"sizes (default: every size {sizes_from} for dtype/op)")
    p.add_argument("--family", default="tunable")
    p.add_argument("--seeds", type=integer(1, SEEDS_MAX), default=20,
                   help=f"runs per {run_of}, seeded 0, 1, ... (default 20)")
    p.add_argument("--max-evals", type=positive_int, default=None,
                   help="evaluations per run (default: 10%% of the valid space, at most 400)")
    p.add_argument("--restrict", action="append", default=[], metavar="NAME=V1,V2",
                   help="the recording sweep's restriction (repeatable)")


def default_budget(valid_points: int) -> int:
    """Evaluations per run when --max-evals is not given: a tenth of the valid space, at
    least 10 and at most 400 (the replay experiments' common budget)."""
    return max(10, min(400, valid_points // 10))


def replayed_space(evaluator: Any, recording: Path, family: str, dtype: str, op: str,
                   sizes: list[int] | None,
                   restrict: dict[str, list[Any]] | None) -> tuple[Space, set[Any], list[int]]:
    """The space a replayed search runs over, the labels of the points a tune proposes in it
    (valid, deterministic and unflagged: a grid sweep records only those, and a --restrict that
    leaves warp or finish free would otherwise count racy and atomic points it never visits),
    and the sizes to search (default: every size the recording holds)."""
    space = Space(family, dtype, op, evaluator.limits, restrict)
    valid = {p.labels for p in space.points() if space.selected(p)}
    if sizes is None:
        sizes = evaluator.sizes(dtype, op)
    if not sizes:
        raise InvalidConfiguration(f"{recording} holds no {dtype} {op} measurement")
    return space, valid, sizes


def curves_for(evaluator: Any, family: str, dtype: str, op: str, n: int, strategy: str,
               seeds: int, max_evals: int,
               restrict: dict[str, list[Any]] | None = None) -> list[list[float]]:
    """Per seed, the best median time after 1..max_evals evaluations (inf before any ok)."""
    return [curve_for(evaluator, family, dtype, op, n, strategy, seed, max_evals, restrict)
            for seed in range(seeds)]


def curve_for(evaluator: Any, family: str, dtype: str, op: str, n: int, strategy: str,
              seed: int, max_evals: int,
              restrict: dict[str, list[Any]] | None = None) -> list[float]:
    """One seed's best median time after 1..max_evals evaluations (inf before any ok)."""
    best_after: list[float] = []

    def on_trial(r: Any) -> None:
        while len(best_after) < r.points:
            best_after.append(r.best["median_s"] if r.best else float("inf"))

    # race=None: every point fully measured, so that the curves compare strategies, not
    # how early a point was cut (a replay never races anyway: TuneConfig.race_options)
    config = TuneConfig(dtype=dtype, op=op, sizes=[n], family=family, strategy=strategy,
                        max_evals=max_evals, seed=seed, restrict=dict(restrict or {}), race=None)
    tune_size(evaluator, config, n, on_trial=on_trial)
    while len(best_after) < max_evals:  # a strategy that ran out of points keeps its best
        best_after.append(best_after[-1] if best_after else float("inf"))
    return best_after[:max_evals]


# A worker process's evaluator, opened once by _open_worker (one per process, never shared).
_WORKER_EVALUATOR: Any = None
# Read by OpenMP/MKL (torch's GPSampler) when a worker loads them: 16 workers x 16 threads
# would oversubscribe the cores.
_WORKER_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _open_worker(db: str) -> None:
    global _WORKER_EVALUATOR
    import optuna  # heavy (about 0.5 s): only where a study is used

    try:  # only the gp strategy needs torch; import_module: no stubs needed for mypy
        importlib.import_module("torch").set_num_threads(1)
    except ImportError:
        pass
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    _WORKER_EVALUATOR = ReplayEvaluator(db)  # lives as long as the process


def _timed_curve(evaluator: Any, family: str, dtype: str, op: str, task: Task,
                 restrict: dict[str, list[Any]] | None) -> tuple[list[float], float]:
    n, strategy, seed, budget = task
    start = time.monotonic()
    curve = curve_for(evaluator, family, dtype, op, n, strategy, seed, budget, restrict)
    return curve, time.monotonic() - start


def _worker_curve(family: str, dtype: str, op: str, task: Task,
                  restrict: dict[str, list[Any]] | None) -> tuple[list[float], float]:
    return _timed_curve(_WORKER_EVALUATOR, family, dtype, op, task, restrict)


@contextlib.contextmanager
def _worker_env() -> Iterator[None]:
    """_WORKER_ENV set while worker processes start (they copy the parent's environment)."""
    saved = {k: os.environ.get(k) for k in _WORKER_ENV}
    os.environ.update(_WORKER_ENV)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _pooled_curves(db: Path, jobs: int, family: str, dtype: str, op: str, tasks: list[Task],
                   restrict: dict[str, list[Any]] | None, journal: Journal) -> None:
    """Every task run in jobs spawned processes, each result journaled as it arrives."""
    # spawn, not fork: the parent holds an open SQLite connection and maybe torch's threads
    ctx = multiprocessing.get_context("spawn")
    with _worker_env(), ProcessPoolExecutor(max_workers=jobs, mp_context=ctx,
                                            initializer=_open_worker,
                                            initargs=(str(db),)) as pool:
        futures = {pool.submit(_worker_curve, family, dtype, op, t, restrict): t for t in tasks}
        step = max(1, len(futures) // 10)
        for done, f in enumerate(as_completed(futures), 1):
            journal.add(futures[f], *f.result())
            if done % step == 0 or done == len(futures):
                print(f"search-efficiency: {done}/{len(futures)} runs done ({jobs} processes)",
                      file=sys.stderr)


def all_curves(evaluator: Any, db: Path, jobs: int, family: str, dtype: str, op: str,
                tasks: list[Task], restrict: dict[str, list[Any]] | None, journal: Journal
                ) -> list[tuple[list[float], float]]:
    """Every task's (curve, seconds) in the order of tasks; runs the journal already holds
    are not run again."""
    missing = [t for t in tasks if journal.get(t) is None]
    if len(missing) < len(tasks):
        print(f"search-efficiency: {len(tasks) - len(missing)} of {len(tasks)} runs taken from "
              f"{journal.path}", file=sys.stderr)
    if jobs == 1:  # in this process, on its evaluator: no start-up cost
        for t in missing:
            journal.add(t, *_timed_curve(evaluator, family, dtype, op, t, restrict))
    elif missing:
        _pooled_curves(db, jobs, family, dtype, op, missing, restrict, journal)
    return [journal.get(t) or ([], 0.0) for t in tasks]


@contextlib.contextmanager
def plain_recording(replay: Path) -> Iterator[Path]:
    """The recording as a plain database: a .xz one is decompressed once, here, so that
    worker processes open the copy instead of each decompressing it again."""
    if not replay.name.endswith(".xz"):
        yield replay
        return

    with tempfile.TemporaryDirectory(prefix="reducetune-replay-") as folder:
        yield decompress_recording(replay, folder)
