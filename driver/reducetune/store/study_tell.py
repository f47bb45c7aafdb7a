"""Telling a shared study's trial its outcome, when the trial may have been failed under its
live worker (R2).

In a storage with a heartbeat (``--storage`` PostgreSQL or an SQLite URL), any worker fails a
trial whose heartbeat stopped HEARTBEAT_GRACE_S ago and re-queues its point
(store/study_share.py). A worker on another host that was only starved (its heartbeat thread
not scheduled for that long) is alive and still measuring: its next ``set_user_attr`` raised
Optuna's UpdateFinishedTrialError and ended the tune. Here that worker keeps going: a point
it measured is added to the study as a new finished trial with the same outcome, so that the
study counts the point as seen (its re-queued trial is then served or skipped, not measured
again), and it says so in one line.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

__all__ = ["tell"]


def tell(study: Any, trial: Any, attrs: dict[str, Any], values: Any = None) -> None:
    """The trial's user attributes ``attrs`` written, and the trial told: ``values`` (a value
    or a list of them: COMPLETE), or FAIL when None; a trial failed meanwhile by another
    worker is told again as a new trial (``_retell``)."""
    import optuna  # heavy (about 0.5 s): only where a study is used
    from optuna.trial import TrialState  # heavy: only where a study is used

    try:
        with _holding(study, trial, attrs):
            if values is None:
                study.tell(trial, state=TrialState.FAIL)
            else:
                study.tell(trial, values)
    except (optuna.exceptions.UpdateFinishedTrialError, ValueError):
        old = study._storage.get_trial(trial._trial_id)
        if not old.state.is_finished():
            raise  # a ValueError of another cause
        _retell(study, old, attrs, values)


def _holding(study: Any, trial: Any, attrs: dict[str, Any]) -> Any:
    """The trial's user attributes ``attrs`` written: with its tell, in one append, where the
    storage holds them (a journal: store/journal_storage.py), else one call each, first."""
    hold = getattr(study._storage, "hold_user_attrs", None)
    if hold is None or not attrs:
        for key, value in attrs.items():
            trial.set_user_attr(key, value)
        return contextlib.nullcontext()
    trial._cached_frozen_trial.user_attrs.update(attrs)  # as Trial.set_user_attr keeps it
    return hold(trial._trial_id, attrs)


def _retell(study: Any, old: Any, attrs: dict[str, Any], values: Any) -> None:
    """``old`` (failed under its live worker) told again as a new trial when it has a point's
    outcome (its labels are in ``attrs``: measured or served); one line on stderr either way."""
    import optuna  # heavy (about 0.5 s): only where a study is used
    from optuna.trial import TrialState  # heavy: only where a study is used

    kept = ""
    if "variant_label" in attrs:
        told = None if values is None else list(values) if isinstance(values, list) else [values]
        study.add_trial(optuna.trial.create_trial(
            state=TrialState.FAIL if told is None else TrialState.COMPLETE, params=old.params,
            distributions=old.distributions, values=told,
            user_attrs={**old.user_attrs, **attrs, "retold": old.number}))
        kept = "; its outcome is kept in a new trial"
    print(f"reducetune: trial {old.number} of {study.study_name} was failed by another worker "
          f"while this one ran it (its heartbeat was stale: a starved process){kept}",
          file=sys.stderr)
