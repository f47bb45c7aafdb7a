"""Optuna's JournalStorage that writes a trial's user attributes with its tell (issue 25).

Telling a trial writes its labels and outcome (three user attributes, tuning/loop.py), then
its state: in Optuna's JournalStorage each is an append of one line under the journal's lock
and a read of the lines appended since, four round-trips where one does. Here the attributes
(Optuna's own SET_TRIAL_USER_ATTR lines, one attribute each, as its replay asserts) are held
until the trial's next state is written, and go with it in one append, read once: the
journal holds what the four calls wrote, in their order. A trial finished meanwhile raises
as Optuna's first call would, once every line is read: each line of this worker on a
finished trial raises alone in Optuna's replay, and one left unread would raise in a later,
unrelated call."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

__all__ = ["journal_storage"]


def journal_storage(backend: Any) -> Any:
    """A JournalStorage on ``backend`` with ``hold_user_attrs``."""
    return _batch_class()(backend)


@functools.cache  # one class, made on first use: its base is optuna's (heavy)
def _batch_class() -> Any:
    # heavy (about 0.5 s): only where a study is used
    from optuna.exceptions import UpdateFinishedTrialError
    from optuna.storages import JournalStorage  # heavy, as the line above
    from optuna.storages.journal._storage import JournalOperation  # heavy; private (Optuna 4-5)

    class BatchJournalStorage(JournalStorage):  # type: ignore[misc]
        _held: dict[int, list[dict[str, Any]]] = {}  # trial id -> its held lines (per object)
        _unread = 0  # lines of one append that may raise on their own when read

        @contextlib.contextmanager
        def hold_user_attrs(self, trial_id: int, attrs: dict[str, Any]) -> Iterator[None]:
            """``set_trial_user_attr`` of each of ``attrs``, written with the trial's next
            state inside the block (its tell), else alone at the block's end."""
            worker = self._replay_result.worker_id
            self._held = {**self._held, trial_id: [
                {"op_code": JournalOperation.SET_TRIAL_USER_ATTR, "worker_id": worker,
                 "trial_id": trial_id, "user_attr": {key: value}} for key, value in attrs.items()]}
            try:
                yield
            finally:
                left = self._held.pop(trial_id, None)
                if left:  # the tell wrote no state (it raised before): the attributes alone
                    with self._thread_lock:
                        self._append(left)
                        self._sync_with_backend()

        def _write_log(self, op_code: int, extra_fields: dict[str, Any]) -> None:
            held = (self._held.pop(extra_fields.get("trial_id", -1), None)
                    if op_code == JournalOperation.SET_TRIAL_STATE_VALUES else None)
            if not held:
                super()._write_log(op_code, extra_fields)
                return
            self._append([*held, {"op_code": op_code, "worker_id": self._replay_result.worker_id,
                                  **extra_fields}])

        def _append(self, logs: list[dict[str, Any]]) -> None:
            self._backend.append_logs(logs)
            self._unread = len(logs)

        def _sync_with_backend(self) -> None:
            unread, self._unread = self._unread, 0
            failed: Exception | None = None
            for _ in range(unread + 1):  # each raise reads past its own line
                try:
                    super()._sync_with_backend()
                    break
                except (UpdateFinishedTrialError, KeyError) as e:
                    if not unread:
                        raise
                    failed = failed or e
            if failed is not None:
                raise failed

    return BatchJournalStorage
