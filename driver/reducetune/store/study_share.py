"""One study run by several processes at once (two ``reducetune tune`` of the same command on
one results file, or a batch of jobs): they share its budget and never measure a point twice.

Each process keeps the points it has seen (``Proposal.seen``); on its own, it would count only
its points against --max-evals and measure whatever its sampler proposes (two processes on one
study measured 109 points against a budget of 60, 11 of them twice). So:

- before a trial (``stop``), the points of the study's finished trials, whoever ran them,
  join the seen set: the budget counts the study's distinct points, as a resumed run does. The
  trials come from Optuna's cached storage, which reads only the trials that are new or still
  running since its last read; still, a read costs a few milliseconds, so ``stop`` reads at
  most every SYNC_EVERY_S (a GPU trial takes longer: every trial; a replayed one less).
- before a new point is evaluated (``taken``), this process claims it: under the results
  file's lock (``store.study_storage.file_lock``) it reads the study's running trials, and gives
  the point up when another live process claims it, or when the points seen and those others
  are measuring already reach --max-evals; otherwise it writes its claim (the trial's user
  attribute ``claim``: the point's labels, host and pid) before releasing the lock. A point
  measured meanwhile is in the store, so it is served from there rather than measured again.
  This check, always read afresh, is what keeps the budget and the one measurement per point;
  ``stop`` only lets a process notice sooner that the others have spent the budget.

A claim of a process that died (same host, pid gone) no longer counts; one from another host
counts while its trial runs. Without a results file (Optuna in memory) nothing is shared.

Studies in a shared storage (``--storage``, several GPUs or machines; store/study_storage.py) use
the storage's lock for claims (the journal file's, a PostgreSQL advisory lock). A worker that
dies leaves its trial RUNNING: in an RDB storage its heartbeat stops and ``sync`` fails the
trial once it is stale, re-queuing its point (Optuna's RetryFailedTrialCallback); elsewhere
(the results file, a journal) a trial claimed by a dead process of this host is failed and
its point re-queued the same way, by whichever process sees it first. There each trial is also
stamped with its owner (host, pid) under the lock it is created or taken under (its
parameters are sampled after, outside the lock), so that a trial killed
before its claim (or one served from the store, which is never claimed) is failed too; a study
opened again (a resumed run) fails them before its first trial, so that none stays RUNNING.
A re-queued point is asked before any new one, and a grid sweep does not end while one waits
(``pending``).
"""

from __future__ import annotations

import contextlib
import copy
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reducetune import _core
from reducetune._space import Point
from reducetune.store.study_storage import claim_lock, file_lock
from reducetune.store.study_tell import tell

__all__ = ["CLAIM", "OWNER", "StudyShare", "left_by_dead", "study_device"]

CLAIM = "claim"  # the trial user attribute holding the point a running trial measures
OWNER = "owner"  # the trial user attribute naming the process that asked it (host, pid)
SYNC_EVERY_S = 0.25  # how stale the budget check before a trial may be
REAP_EVERY_S = 1.0  # how often dead workers' trials are looked for


def study_device(device: dict[str, Any], by_model: bool) -> str:
    """What a study's name says of the device: its UUID, or (``by_model``) its model, the same
    for GPUs of one model, which then share the study ("model:" and the core's model key,
    e.g. ``model:NVIDIA H200|132SM|2619000kHz``: db/reducetune/db/records.hpp)."""
    if not by_model:
        return str(device["uuid"])
    return f"model:{_core.device_model_key(device)}"


class StudyShare:
    """What the other processes running the same study have measured, and are measuring."""

    def __init__(self, study: Any, parse: Callable[[str, str], Point],
                 eligible: Callable[[Point], bool], seen: set[Point]) -> None:
        self.study = study
        self.parse = parse
        self.eligible = eligible
        self.seen = seen  # the proposal's own set: others' points join it
        self.shared, self._path = _results_file(study)
        self._journal = _is_journal(study)
        self._me = {"host": socket.gethostname(), "pid": os.getpid()}
        self._folded: set[int] = set()  # numbers of the finished trials already read
        self._others: set[Point] = set()  # what the last sync found others measuring
        self._synced = float("-inf")  # time.monotonic() of the last sync
        self._reaped = float("-inf")  # time.monotonic() of the last look for dead workers
        self._stale_checked = float("-inf")  # and of the last heartbeat check
        self.mine = -1  # the number of the trial this process runs now
        self._next: Any = None  # the point the next ask creates (create_next), as a trial
        if self.shared:  # a resumed study: what processes that died left RUNNING is failed
            with self._lock():
                self._reap(locked=True)
        if self._stamps():
            self._ask_under_lock()

    def sync(self, locked: bool = False) -> set[Point]:
        """Adds the points of the study's finished trials to the seen set; returns the points
        other live processes are measuring now (not seen yet). ``locked``: under the claim
        lock, where dead workers' trials may be failed."""
        if not self.shared:
            return set()
        from optuna.trial import TrialState  # heavy (about 0.5 s): only where a study is used

        self._reap(locked)
        claimed: set[Point] = set()
        for t in self.study.get_trials(deepcopy=False):
            if t.number in self._folded or t.number == self.mine:
                continue
            attrs = t.user_attrs
            if t.state.is_finished():
                self._folded.add(t.number)
                p = self.point_of(attrs)
                if p is not None and self.eligible(p):
                    self.seen.add(p)
            elif t.state == TrialState.RUNNING and self.point_of(attrs) is not None:
                # Its labels are written only after its evaluation (tuning/loop.py): its point
                # is measured and recorded, even if its process was killed before telling and
                # the trial is not reaped yet; measuring it again would measure it twice.
                if self.eligible(p := self.point_of(attrs)):
                    self.seen.add(p)
            elif t.state == TrialState.RUNNING and self._other_live(attrs.get(CLAIM)):
                claimed.add(self.parse(attrs[CLAIM]["variant_label"],
                                       attrs[CLAIM]["launch_label"]))
        self._others, self._synced = claimed, time.monotonic()
        return claimed - self.seen

    def point_of(self, attrs: dict[str, Any]) -> Point | None:
        """The point a finished trial measured, read once from its stored labels (its user
        attributes); None for a trial that measured none."""
        if "variant_label" not in attrs:
            return None
        return self.parse(attrs["variant_label"], attrs["launch_label"])

    def stop(self, budget: Any, result: Any) -> str:
        """``budget.stop(result)`` with the study's points, whoever measured them:
        ``result.points`` becomes the study's distinct points, and the points others are
        measuring now count against --max-evals too."""
        if self.shared and time.monotonic() - self._synced >= SYNC_EVERY_S:
            self.sync()
        others = self._others - self.seen
        if self.shared:
            result.points = len(self.seen)
        if budget.max_evals is not None and result.points + len(others) >= budget.max_evals:
            return "max-evals"
        return str(budget.stop(result))

    def taken(self, trial: Any, point: Point, max_evals: int | None) -> bool:
        """True, the trial told FAIL, when another process is measuring the point or the
        study's budget is spent meanwhile; else the point is this process's to evaluate (its
        claim written), or a repeat of a point already seen (served from the store)."""
        self.mine = trial.number
        if not self.shared or point in self.seen:
            return False
        with self._lock():
            others = self.sync(locked=True)
            if point in self.seen:
                return False
            why = ""
            if point in others:
                why = "another process is measuring this point"
            elif max_evals is not None and len(self.seen) + len(others) >= max_evals:
                why = "max-evals: the other processes of this study spent its budget"
            if not why:
                import optuna  # heavy (about 0.5 s): only where a study is used

                try:
                    trial.set_user_attr(CLAIM, {"variant_label": point.variant_label,
                                                "launch_label": point.launch_label, **self._me})
                    return False
                except optuna.exceptions.UpdateFinishedTrialError:  # failed under it: starved
                    return True  # its point re-queued by whoever failed it
        self.finish(trial, {"outcome": "claimed", "reason": why})
        return True

    def busy(self, point: Point) -> bool:
        """Seen, or being measured by another worker at the last sync."""
        return point in self.seen or point in self._others

    def _lock(self) -> Any:
        lock = claim_lock(self.study._storage, self.study.study_name)
        if lock is None:
            lock = file_lock(self._path) if self._path else contextlib.nullcontext()
        return lock

    def _ask_under_lock(self) -> None:
        """Makes ``study.ask`` take or create its trial, and stamp it with this process
        (OWNER), under the claim lock, and leaves the sampling outside it. In a shared SQLite
        file Optuna takes a waiting (enqueued) trial with a read then a write that SQLite does
        not lock as one (its FOR UPDATE is PostgreSQL's), so two processes could both take it;
        and a RUNNING trial seen without an owner under the lock must be a dead process's. But
        the sampler (TPE's model of every trial) must not run under the lock: held across the
        whole ``ask``, two tpe workers each waited 11 of their 29 s on it, taking turns
        (docs/results/cpu_2026-11-26_replay_throughput.md). ``ask`` draws the parameters
        after the trial exists (``Trial._suggest``), so the lock covers only
        ``_pop_waiting_trial_id``, which it asks first (Optuna 3.x to 5.x; private, like the
        heartbeat above): there it never answers None, so ``ask`` creates no second trial."""
        pop, storage, study_id = (self.study._pop_waiting_trial_id, self.study._storage,
                                  self.study._study_id)

        def take_or_create() -> int:
            with self._lock():
                trial_id, template, self._next = pop(), self._next, None
                if trial_id is None and template is not None:  # one write: made stamped
                    return int(storage.create_new_trial(study_id, self._running(template)))
                if template is not None:  # a waiting trial goes first; this one waits
                    storage.create_new_trial(study_id, template)
                if trial_id is None:
                    trial_id = storage.create_new_trial(study_id)
                storage.set_trial_user_attr(trial_id, OWNER, self._me)
            return int(trial_id)

        self.study._pop_waiting_trial_id = take_or_create

    def create_next(self, template: Any) -> bool:
        """Whether the next ``ask`` takes ``template`` (a WAITING trial: the point to try, its
        parameters) and, where no trial waits, creates it RUNNING and stamped in one write
        under the claim lock: enqueuing it, taking it and stamping it were three (issue 25).
        False where trials are not taken under the lock here: the caller enqueues it."""
        if not self._stamps():
            return False
        self._next = template
        return True

    def _running(self, template: Any) -> Any:
        """``template`` as the trial ``ask`` would have taken: RUNNING from now, its OWNER."""
        from optuna.trial import TrialState, create_trial  # heavy: only where a study is used

        return create_trial(state=TrialState.RUNNING, params=template.params,
                            distributions=template.distributions,
                            user_attrs={**template.user_attrs, OWNER: self._me},
                            system_attrs=template.system_attrs)

    def _stamps(self) -> bool:
        """Whether trials are taken and stamped under the lock: a results file or a journal
        (an RDB storage with a heartbeat has Optuna fail its dead workers' trials)."""
        return self.shared and (self._path is not None or self._journal)

    def beat(self, trial: Any) -> Any:
        """A context that keeps the trial's heartbeat while it is evaluated (nothing where the
        storage has none)."""
        try:  # private in Optuna (3.1 to 5.x): without it, no heartbeat
            # heavy (about 0.5 s): only where a study is used
            from optuna.storages._heartbeat import get_heartbeat_thread
        except ImportError:
            return contextlib.nullcontext()
        return get_heartbeat_thread(trial._trial_id, self.study._storage)

    def pending(self, stopped: str) -> str:
        """``stopped``, unless the proposal is exhausted while a re-queued point waits (a dead
        worker's): then "" and the next trial asks it."""
        if stopped != "exhausted" or not self.shared:
            return stopped
        from optuna.trial import TrialState  # heavy (about 0.5 s): only where a study is used

        waiting = self.study.get_trials(deepcopy=False, states=(TrialState.WAITING,))
        return "" if waiting else stopped

    def _reap(self, locked: bool) -> None:
        """Fails the trials of workers that died, and re-queues their points: by heartbeat
        where the storage keeps one (any host), and (under the claim lock only, so that one
        process does it) the trials claimed by a dead process of this host."""
        import optuna  # heavy (about 0.5 s): only where a study is used
        # heavy (about 0.5 s): only where a study is used
        from optuna.storages._heartbeat import is_heartbeat_enabled
        from optuna.trial import TrialState  # heavy (about 0.5 s): only where a study is used

        storage, now = self.study._storage, time.monotonic()
        if is_heartbeat_enabled(storage) and now - self._stale_checked >= REAP_EVERY_S:
            self._stale_checked = now
            self._fail_stale()
        if not locked or now - self._reaped < REAP_EVERY_S:
            return
        self._reaped = now
        for t in self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            if t.number != self.mine and self._dead(t.user_attrs):
                try:  # only one process wins this: the trial is RUNNING once
                    storage.set_trial_user_attr(t._trial_id, "reason", "its worker died")
                    storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL)
                except (optuna.exceptions.UpdateFinishedTrialError, RuntimeError, ValueError):
                    continue
                if CLAIM in t.user_attrs:  # its point was being measured: asked again
                    self.study.enqueue_trial(t.params, user_attrs={"retried": t.number})

    def _fail_stale(self) -> None:
        """Optuna's ``fail_stale_trials`` (a trial whose heartbeat stopped HEARTBEAT_GRACE_S
        ago is failed, its retry callback re-queues its point), less the trials of processes
        of this host that still run: a live worker starved of CPU (its heartbeat thread not
        scheduled) is still measuring its point, which failing its trial would have measured
        twice. A trial of another host is failed on its heartbeat alone, as before: its
        worker, if alive, keeps its result (``finish``)."""
        import optuna  # heavy (about 0.5 s): only where a study is used
        from optuna.trial import TrialState  # heavy: only where a study is used

        storage, failed = self.study._storage, []
        for trial_id in storage._get_stale_trial_ids(self.study._study_id):  # private (3.x-5.x)
            if self._alive_here(storage.get_trial(trial_id).user_attrs):
                continue
            try:
                if storage.set_trial_state_values(trial_id, state=TrialState.FAIL):
                    failed.append(trial_id)
            except optuna.exceptions.UpdateFinishedTrialError:
                pass  # another process failed it first
        # get_heartbeat_stale_trial_callback since Optuna 4.9 (the older name deprecated there)
        ask = getattr(storage, "get_heartbeat_stale_trial_callback",
                      getattr(storage, "get_failed_trial_callback", lambda: None))
        retry = ask()
        for trial_id in failed if retry is not None else []:
            retry(self.study, copy.deepcopy(storage.get_trial(trial_id)))

    def _alive_here(self, attrs: dict[str, Any]) -> bool:
        """The trial's claim or owner names a process of this host that still runs."""
        owner = attrs.get(CLAIM, attrs.get(OWNER))
        return (isinstance(owner, dict) and owner.get("host") == self._me["host"]
                and isinstance(owner.get("pid"), int) and pid_runs(owner["pid"]))

    def finish(self, trial: Any, attrs: dict[str, Any], values: Any = None) -> None:
        """The trial's user attributes written and the trial told (store/study_tell.py)."""
        tell(self.study, trial, attrs, values)

    def _dead(self, attrs: dict[str, Any]) -> bool:
        return left_by_dead(attrs, self._me, self._stamps())

    def _other_live(self, claim: Any) -> bool:
        """A claim of another process that may still be measuring."""
        if not isinstance(claim, dict) or "variant_label" not in claim:
            return False
        if claim.get("host") != self._me["host"]:
            return True  # cannot be checked from here: it holds while its trial runs
        pid = claim.get("pid")
        return pid != self._me["pid"] and isinstance(pid, int) and pid_runs(pid)


def left_by_dead(attrs: dict[str, Any], me: dict[str, Any] | None = None,
                 stamped: bool = True) -> bool:
    """Seen under the lock, a RUNNING trial (its user attributes) of a process that died: its
    claim or owner names a dead process of this host (``me``: host and pid, this process's by
    default), or (where trials are ``stamped`` under the lock) it has neither, its process
    killed between asking it and stamping it."""
    me = me or {"host": socket.gethostname(), "pid": os.getpid()}
    owner = attrs.get(CLAIM, attrs.get(OWNER))
    if not isinstance(owner, dict):
        return stamped and OWNER not in attrs and CLAIM not in attrs
    pid = owner.get("pid")
    return (owner.get("host") == me["host"] and isinstance(pid, int) and pid != me["pid"]
            and not pid_runs(pid))


def remove_dead_folders(prefix: str) -> None:
    """Removes the $TMPDIR/<prefix><pid>-* folders of processes that no longer run: one killed
    (SIGKILL) cannot remove its own (a replay's decompressed recording, a merge's copy)."""
    for folder in Path(tempfile.gettempdir()).glob(prefix + "*"):
        pid = folder.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and folder.is_dir() and not pid_runs(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def pid_runs(pid: int) -> bool:
    """Whether a process of this pid exists on this host (another user's included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, another user's
    return True


def _is_journal(study: Any) -> bool:
    import optuna  # heavy (about 0.5 s): only where a study is used

    return isinstance(getattr(study, "_storage", None), optuna.storages.JournalStorage)


def _results_file(study: Any) -> tuple[bool, str | None]:
    """(whether other processes can reach the study's storage, its SQLite file if any): an
    Optuna RDB or journal storage is shared; a SQLite one is a file, which file_lock can
    lock."""
    import optuna  # heavy (about 0.5 s): only where a study is used

    storage = getattr(study, "_storage", None)
    if isinstance(storage, optuna.storages.JournalStorage):
        return True, None
    backend = getattr(storage, "_backend", storage)  # an RDBStorage behind Optuna's cache
    url = getattr(backend, "url", None)
    if not isinstance(url, str):
        return False, None  # in memory: this process's alone
    # heavy (optuna's database layer): only for an RDB storage
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if not parsed.drivername.startswith("sqlite"):
        return True, None
    database = parsed.database or ""
    if database in ("", ":memory:") or database.startswith("file::memory:"):
        return False, None
    return True, database
