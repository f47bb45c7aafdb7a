"""Optuna's JournalStorage that writes a trial's user attributes in one append (issue 25).

Telling a trial writes its labels and outcome (three user attributes, tuning/loop.py): in
Optuna's JournalStorage each is an append of one line under the journal's lock and a read of
the lines appended since, three round-trips where one does. ``set_trial_user_attrs`` appends
the same lines (Optuna's own SET_TRIAL_USER_ATTR records, one attribute each, as its replay
asserts) in one append and reads once: the journal holds what the three calls wrote."""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["journal_storage"]


def journal_storage(backend: Any) -> Any:
    """A JournalStorage on ``backend`` with ``set_trial_user_attrs``."""
    return _batch_class()(backend)


@functools.cache  # one class, made on first use: its base is optuna's (heavy)
def _batch_class() -> Any:
    # heavy (about 0.5 s): only where a study is used
    from optuna.exceptions import UpdateFinishedTrialError
    from optuna.storages import JournalStorage
    from optuna.storages.journal._storage import JournalOperation  # private (Optuna 4.x-5.x)

    class BatchJournalStorage(JournalStorage):  # type: ignore[misc]
        def set_trial_user_attrs(self, trial_id: int, attrs: dict[str, Any]) -> None:
            """``set_trial_user_attr`` of each of ``attrs``, in one append. A trial finished
            meanwhile raises as the first call would, once every line is read: each line of
            this worker on a finished trial raises alone in Optuna's replay, and one left
            unread would raise in a later, unrelated call."""
            worker = self._replay_result.worker_id
            logs = [{"op_code": JournalOperation.SET_TRIAL_USER_ATTR, "worker_id": worker,
                     "trial_id": trial_id, "user_attr": {key: value}}
                    for key, value in attrs.items()]
            if not logs:
                return
            failed: Exception | None = None
            with self._thread_lock:
                self._backend.append_logs(logs)
                for _ in range(len(logs) + 1):  # each raise reads past its own line
                    try:
                        self._sync_with_backend()
                        break
                    except (UpdateFinishedTrialError, KeyError) as e:
                        failed = failed or e
            if failed is not None:
                raise failed

    return BatchJournalStorage
