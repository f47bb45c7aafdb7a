"""R2: a live worker whose trial is failed under it (issue 25, item 6).

In a storage with a heartbeat (``--storage`` PostgreSQL or an SQLite URL) a worker fails any
trial whose heartbeat is HEARTBEAT_GRACE_S stale and re-queues its point. A worker that was
only starved of CPU for that long is alive and still measuring: its next ``set_user_attr``
raised Optuna's UpdateFinishedTrialError and the whole tune ended with a traceback.

- The reaper no longer fails a stale trial whose claim names a process of this host that
  still runs (its owner is known alive); a dead one's is still failed and re-queued.
- A trial failed under its live worker anyway (by a worker of another host, which cannot see
  the process) does not end the tune: the point's outcome is kept in a new trial, one line
  says so, and the re-queued point is not measured again.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest

from replay_support import H200_GRID, needs_h200_grid, restrict_args

pytestmark = needs_h200_grid("the starved worker's tune is a replay of the real recording")

# 8 valid points of the recording's corner at 2^16: a tune of a few seconds
RESTRICT = {"block_size": ["256"], "unroll": ["1", "8"], "vec": ["4"], "warp": ["shuffle"],
            "finish": ["ticket"], "elements_per_thread": ["4", "16"], "grid_cap": ["0"]}


def dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def claimed_trial(study, pid: int) -> int:
    """A trial asked, claimed by ``pid`` of this host, with one heartbeat recorded."""
    from reducetune.store.study_share import CLAIM

    trial = study.ask({"x": __import__("optuna").distributions.IntDistribution(0, 9)})
    trial.set_user_attr(CLAIM, {"variant_label": "v", "launch_label": "l",
                                "host": socket.gethostname(), "pid": pid})
    study._storage.record_heartbeat(trial._trial_id)
    return trial._trial_id


def test_a_stale_trial_of_a_live_process_of_this_host_is_not_failed(tmp_path, monkeypatch):
    import optuna
    from optuna.trial import TrialState

    from reducetune.store import study_storage
    from reducetune.store.study_share import StudyShare

    monkeypatch.setattr(study_storage, "HEARTBEAT_S", 1)
    monkeypatch.setattr(study_storage, "HEARTBEAT_GRACE_S", 1)  # stale after a second
    storage = study_storage.open_shared_storage(f"sqlite:///{tmp_path / 'studies.db'}")
    study = optuna.create_study(storage=storage, study_name="s")
    live = claimed_trial(study, os.getpid())  # starved: no heartbeat since
    dead = claimed_trial(study, dead_pid())
    time.sleep(2.2)
    StudyShare(study, lambda v, ln: (v, ln), lambda p: True, set())  # reaps as a run opens it
    states = {t._trial_id: t.state for t in study.get_trials(deepcopy=False)}
    assert states[live] == TrialState.RUNNING  # alive: still measuring its point
    assert states[dead] == TrialState.FAIL
    assert list(states.values()).count(TrialState.WAITING) == 1  # the dead one's re-queued


def test_a_trial_failed_under_its_live_worker_does_not_end_the_tune(cli, tmp_path, monkeypatch):
    import optuna
    from optuna.trial import TrialState

    from reducetune.evaluate.replay import ReplayEvaluator

    url = f"sqlite:///{tmp_path / 'studies.db'}"
    asked: list[tuple[str, str]] = []
    original = ReplayEvaluator.evaluate

    def starved(self, point, problem, data=None, **options):
        """The third point: while it is measured, another host's worker finds its heartbeat
        stale, fails its trial and re-queues its point (what Optuna's fail_stale_trials and
        its retry callback do)."""
        asked.append(point.labels)
        if len(asked) == 3:
            reaper = optuna.storages.RDBStorage(url)
            # RetryHeartbeatStaleTrialCallback since Optuna 4.9 (the older name deprecated)
            retry = getattr(optuna.storages, "RetryHeartbeatStaleTrialCallback",
                            optuna.storages.RetryFailedTrialCallback)
            study = optuna.load_study(study_name=reaper.get_all_studies()[0].study_name,
                                      storage=reaper)
            for t in study.get_trials(states=(TrialState.RUNNING,)):
                reaper.set_trial_state_values(t._trial_id, state=TrialState.FAIL)
                retry(max_retry=3)(
                    study, reaper.get_trial(t._trial_id))
            reaper.engine.dispose()
        return original(self, point, problem, data, **options)

    monkeypatch.setattr(ReplayEvaluator, "evaluate", starved)
    code, _, err = cli("tune", "--replay", H200_GRID, "--db", tmp_path / "r.db", "--storage", url,
                       "--dtype", "float32", "--op", "sum", "--sizes", "2^16", "--strategy",
                       "grid", "--quiet", *restrict_args(RESTRICT))
    assert code == 0, err
    assert err.count("was failed by another worker while this one ran it") == 1, err
    assert len(asked) == len(set(asked)) == 8  # every point measured, none twice
    study = optuna.load_study(study_name=optuna.storages.RDBStorage(url).get_all_studies()[0]
                              .study_name, storage=url)
    told = [t for t in study.get_trials() if t.state == TrialState.COMPLETE]
    assert len({(t.user_attrs["variant_label"], t.user_attrs["launch_label"])
                for t in told}) == 8
    assert sum("retold" in t.user_attrs for t in told) == 1  # the starved trial's outcome kept
