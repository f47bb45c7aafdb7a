"""Where a worker's time goes (issue 25): each phase of the tuning loop timed with
``time.perf_counter``, exclusively (a phase inside another pauses it), so that the phases and
the loop's own remainder add up to the run's wall time.

Phases (PHASES):

- ``measuring``: the evaluator's measurements (GPU worker, or a recording's row in replay),
  CUB and the streaming ceiling included;
- ``compiling``: the evaluator's precompile (NVRTC; nothing in replay);
- ``lock_wait``: waiting for the study's claim lock (the results file's ``PATH.lock``, the
  journal's, a PostgreSQL advisory lock): what serialises the workers of one study;
- ``storage_read``, ``storage_write``: the Optuna storage's calls (``get_*`` reads; ``create_*``,
  ``set_*`` writes), whatever asked them (the sampler, the study share, the loop);
- ``sampler``: ``study.ask`` and ``study.tell`` less their storage calls (the sampler and
  Optuna's bookkeeping);
- ``results``: the results file's own reads and writes (points served, measurements recorded,
  CUB baselines, the study's row): the C++ store;
- ``tuner``: the rest of the run (checking points, the budget, opening studies): wall time
  less the phases above.

Measuring's parts (MEASURING_PARTS, the ``measuring_parts`` of ``to_json``): what the
evaluator's results say of their own time (``times`` of a result: measure/measurement.hpp,
evaluation_times), summed over the run's evaluations: ``compile_s`` (NVRTC or the build cache's
lookup), ``prepare_s`` (input data, reference, buffers, module, graphs; CUB's call, the first
of each unit, is where a unit's data, reference and input copies are made), ``sampling_s`` (the
timed loops, L2 flushes and syncs included), ``verify_s`` (each copy run and checked before and
after sampling); ``other_s`` is measuring less those (the worker's round trip and the point's
decoding, the streaming ceiling, a recording's rows in replay); ``evaluations`` counts the
results that had times. ``prepare_parts`` (PREPARE_PARTS) splits ``prepare_s``: ``workload_s``
(the unit's data from the evaluator's cache, or made), ``setup_s`` (the point's module, scratch
buffers and stream; an axis point's reference), ``graphs_s`` (its CUDA graphs),
``teardown_s`` (all of it destroyed), ``other_s`` the rest.

A ``--devices`` run adds ``idle`` per worker: the command's wall time less the worker's, and
splits it into ``start_s`` (from the command's start to the worker's run: its process, imports,
the results file and the studies' storage opened) and ``wait_s`` (from its end to the last
worker's). ``first_point_s`` and ``last_point_s`` say when, in the run, its first and last
points were measured, and ``first_unit`` when (seconds into the loop) the first unit's CUB
baseline (its data made), its study and its warm start were ready. ``startup`` says when, in
seconds after this process started, each step before the loop ended (mark(): the CLI reached,
the configs checked (their spaces), the results file and the studies' storage opened, the
evaluator's GPU worker answering, the streaming ceiling measured, the precompile done and its
rest queued; a GPU worker started ahead (cli/tune.py) answers after the files, a recording or
--in-process's device before them): the part of a command's wall time that more GPUs do not
divide.

Cost: two perf_counter calls and a list push per timed call (about a microsecond), against
the milliseconds of a storage round-trip; only the thread that runs the loop is timed (the
heartbeat thread's storage calls are not the loop's time).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["MEASURING_PARTS", "PHASES", "PREPARE_PARTS", "Breakdown", "TimedEvaluator",
           "TimedStore", "current", "begin_marks", "mark", "measured", "phase", "timed_lock",
           "timed_storage", "running", "unit_step"]

PHASES = ("measuring", "compiling", "lock_wait", "storage_read", "storage_write", "sampler",
          "results", "tuner")
# The parts of measuring an evaluator's result reports (its "times"), in the order they happen.
MEASURING_PARTS = ("compile_s", "prepare_s", "sampling_s", "verify_s")
PREPARE_PARTS = ("workload_s", "setup_s", "graphs_s", "teardown_s")  # inside prepare_s

# Optuna's storage API (optuna.storages.BaseStorage) by what each call does to the storage.
_WRITES = ("create_new_study", "delete_study", "set_study_user_attr", "set_study_system_attr",
           "create_new_trial", "set_trial_param", "set_trial_state_values",
           "set_trial_intermediate_value", "set_trial_user_attr", "set_trial_system_attr",
           "record_heartbeat")
_READS = ("get_study_id_from_name", "get_study_name_from_id", "get_study_directions",
          "get_study_user_attrs", "get_study_system_attrs", "get_all_studies", "get_trial",
          "get_all_trials", "get_n_trials", "get_best_trial", "get_trial_id_from_study_id_trial_number",
          "get_trial_number_from_id", "get_trial_param", "get_trial_params",
          "get_trial_user_attrs", "get_trial_system_attrs", "check_trial_is_updatable",
          "get_stale_trial_ids")
_MARK = "_reducetune_timed"  # set on a storage whose calls are timed already


class _Phase:
    """One timed phase of a Breakdown (a context manager, cheaper than a generator's)."""

    __slots__ = ("b", "name")

    def __init__(self, b: Breakdown, name: str) -> None:
        self.b, self.name = b, name

    def __enter__(self) -> None:
        self.b.enter(self.name)

    def __exit__(self, *exc: object) -> None:
        self.b.leave()


class Breakdown:
    """Seconds per phase of one process's run, each phase's time exclusive of the phases
    timed inside it."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(PHASES[:-1], 0.0)
        self.calls = dict.fromkeys(PHASES[:-1], 0)
        self.began: float | None = None
        self.began_at = 0.0  # time.time() at the start: a --devices run lines its workers up
        self.points_s: list[float] = []  # when the first and the last point were measured
        self.wall_s = 0.0
        self.thread = threading.get_ident()
        self._stack: list[list[Any]] = []  # [phase, when it (last) resumed]
        self.parts = dict.fromkeys(MEASURING_PARTS, 0.0)  # summed over the results' times
        self.prepare = dict.fromkeys(PREPARE_PARTS, 0.0)  # prepare_s's parts, summed alike
        self.timed_results = 0
        # what the evaluator compiled in the background (tuning/precompile.py stop_ahead)
        self.compile_ahead: dict[str, Any] | None = None
        # the first unit's steps before its first point, seconds into the loop (unit_step)
        self.first_unit: dict[str, float] = {}

    def phase(self, name: str) -> _Phase:
        return _Phase(self, name)

    def enter(self, name: str) -> None:
        now = time.perf_counter()
        if self._stack:  # the enclosing phase pauses
            top = self._stack[-1]
            self.seconds[top[0]] += now - top[1]
        self._stack.append([name, now])
        self.calls[name] += 1

    def leave(self) -> None:
        now = time.perf_counter()
        name, since = self._stack.pop()
        self.seconds[name] += now - since
        if self._stack:  # the enclosing phase resumes
            self._stack[-1][1] = now

    def start(self) -> None:
        self.began, self.began_at = time.perf_counter(), time.time()

    def measured(self) -> None:
        """A point was measured now (the loop's evaluator call)."""
        if self.began is not None:
            now = time.perf_counter() - self.began
            self.points_s = [self.points_s[0] if self.points_s else now, now]

    def note_times(self, result: Any) -> None:
        """Adds an evaluator result's own times (its ``times``: compile, prepare, sampling,
        verify) to measuring's parts; a result without them (a recording's row, a worker's
        crash) adds nothing."""
        times = result.get("times") if isinstance(result, dict) else None
        if not isinstance(times, dict):
            return
        for part in MEASURING_PARTS:
            self.parts[part] += float(times.get(part) or 0.0)
        for part in PREPARE_PARTS:  # absent from an older worker's or a recording's times
            self.prepare[part] += float(times.get(part) or 0.0)
        self.timed_results += 1

    def measuring_parts(self) -> dict[str, Any]:
        """Measuring's parts, ``other_s`` (measuring less them) and ``evaluations``."""
        parts: dict[str, Any] = dict(self.parts)
        parts["other_s"] = max(0.0, self.seconds["measuring"] - sum(self.parts.values()))
        parts["evaluations"] = self.timed_results
        prepare: dict[str, float] = dict(self.prepare)
        prepare["other_s"] = max(0.0, self.parts["prepare_s"] - sum(self.prepare.values()))
        parts["prepare_parts"] = prepare
        return parts

    def stop(self) -> None:
        if self.began is not None:
            self.wall_s = time.perf_counter() - self.began

    def to_json(self, points: int = 0) -> dict[str, Any]:
        """{"wall_s", "points", "points_per_s", "phases": {phase: seconds}, "calls": {...},
        "measuring_parts": {part: seconds, "other_s", "evaluations"}}: ``tuner`` is the wall
        time the other phases leave."""
        phases = dict(self.seconds)
        phases["tuner"] = max(0.0, self.wall_s - sum(self.seconds.values()))
        first, last = self.points_s or (None, None)
        return {"wall_s": self.wall_s, "points": points,
                "points_per_s": points / self.wall_s if self.wall_s else 0.0,
                "phases": phases, "calls": dict(self.calls),
                "measuring_parts": self.measuring_parts(), "began_at": self.began_at,
                "first_point_s": first, "last_point_s": last,
                "first_unit": {k: round(v, 4) for k, v in self.first_unit.items()},
                "compile_ahead": self.compile_ahead, "startup": startup()}


_CURRENT: list[Breakdown | None] = [None]
_MARKS: dict[str, float] = {}  # step -> time.time() when it ended (mark), the first time


def _process_started_at() -> float:
    """time.time() when this process started: Linux's /proc (its start in clock ticks after
    boot); elsewhere, when this module was imported."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return time.time() - uptime + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return _IMPORTED_AT


_IMPORTED_AT = time.time()


def mark(step: str) -> None:
    """Notes that ``step`` of the command's start ended now (the first time only)."""
    _MARKS.setdefault(step, time.time())


def unit_step(step: str) -> None:
    """Notes that ``step`` of a unit's setup ended now, the first unit's only (seconds into the
    loop): where its first point's wait goes (its CUB baseline and data, its study), the part
    of a run before the first point that startup() does not cover."""
    b = current()
    if b is not None and b.began is not None:
        b.first_unit.setdefault(step, time.perf_counter() - b.began)


def begin_marks() -> None:
    """A command begins: the steps of an earlier one in this process (a test's) are dropped."""
    _MARKS.clear()
    mark("cli")


def startup() -> dict[str, float]:
    """Each marked step's end, in seconds after this process started."""
    t0 = _process_started_at()
    return {k: round(v - t0, 4) for k, v in _MARKS.items()}


def current() -> Breakdown | None:
    """The breakdown of the run in progress in this process (``running``), if any."""
    return _CURRENT[0]


class running:  # noqa: N801 (used as a context, like contextlib's)
    """Makes ``b`` the process's current breakdown for the run, and times the run's wall."""

    def __init__(self, b: Breakdown) -> None:
        self.b = b
        self.before: Breakdown | None = None

    def __enter__(self) -> Breakdown:
        self.before, _CURRENT[0] = _CURRENT[0], self.b
        self.b.start()
        return self.b

    def __exit__(self, *exc: object) -> None:
        self.b.stop()
        _CURRENT[0] = self.before


class _Untimed:
    """No phase: outside a run, or on another thread than the run's."""

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        pass


_UNTIMED = _Untimed()


def phase(name: str) -> _Phase | _Untimed:
    """A context timed as phase ``name`` of the current breakdown, on its thread only: for a
    call timed where it is made (the loop's evaluate: no wrapper between the loop and the
    evaluator that would hand the point on)."""
    b = _CURRENT[0]
    if b is None or threading.get_ident() != b.thread:
        return _UNTIMED
    return b.phase(name)


def measured(result: Any = None) -> None:
    """Notes, in the current breakdown, that a point was measured now, and the evaluator's
    result's own times (measuring's parts)."""
    b = _CURRENT[0]
    if b is not None:
        b.measured()
        b.note_times(result)


def _noting_times(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (an evaluator call returning a result) whose result's times are added to the
    current breakdown's measuring parts, on its thread only."""

    def call(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        b = _CURRENT[0]
        if b is not None and threading.get_ident() == b.thread:
            b.note_times(result)
        return result

    return call


def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` timed as phase ``name`` of the current breakdown, on its thread only."""

    def call(*args: Any, **kwargs: Any) -> Any:
        b = _CURRENT[0]
        if b is None or threading.get_ident() != b.thread:
            return fn(*args, **kwargs)
        b.enter(name)
        try:
            return fn(*args, **kwargs)
        finally:
            b.leave()

    return call


def timed_storage(storage: Any) -> Any:
    """Times the Optuna storage's reads and writes (its instance's methods replaced; the
    object stays what it is, for Optuna's isinstance checks). Returns the storage."""
    if storage is None or getattr(storage, _MARK, False):
        return storage
    for names, phase in ((_READS, "storage_read"), (_WRITES, "storage_write")):
        for name in names:
            fn = getattr(storage, name, None)
            if fn is not None:
                setattr(storage, name, timed(phase, fn))
    setattr(storage, _MARK, True)
    return storage


class _TimedLock:
    """A lock context whose acquisition is timed as lock_wait (what it guards is not)."""

    def __init__(self, lock: Any) -> None:
        self.lock = lock

    def __enter__(self) -> Any:
        b = _CURRENT[0]
        if b is None or threading.get_ident() != b.thread:
            return self.lock.__enter__()
        with b.phase("lock_wait"):
            return self.lock.__enter__()

    def __exit__(self, *exc: Any) -> Any:
        return self.lock.__exit__(*exc)


def timed_lock(make: Callable[[], Any]) -> Callable[[], Any]:
    """A lock factory whose locks time their acquisition (lock_wait)."""
    return lambda: _TimedLock(make())


class TimedEvaluator:
    """An Evaluator whose CUB baseline, streaming ceiling and precompile are timed; everything
    else passes through. Its ``evaluate`` is the inner one itself: the loop times that call as
    ``measuring`` where it makes it (``phase``; tuning/loop.py)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.cub = _noting_times(timed("measuring", inner.cub))
        self.ceiling_bytes_per_s = timed("measuring", inner.ceiling_bytes_per_s)
        self.precompile = timed("compiling", inner.precompile)
        if hasattr(inner, "compile_ahead"):  # its queue handed over (it returns at once)
            self.compile_ahead = timed("compiling", inner.compile_ahead)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class TimedStore:
    """A results store (reducetune.store.results) whose calls are timed as ``results``."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        return timed("results", value) if callable(value) else value
