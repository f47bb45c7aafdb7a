"""Optuna's RDBStorage on a PostgreSQL server, its per-trial calls in plain SQL (issue 25).

Through Optuna's own RDBStorage a grid point cost 24 reads and 13 writes of the loop's time
(tuning/timing.py), about 63 ms of a point here and 60 ms on a 4 x H200 machine: each call is
a SQLAlchemy ORM session (queries built, objects mapped, flushes), about 2.5 ms a write and
3.5 ms a ``get_trial`` of a server whose commit takes 0.4 ms (psycopg2 alone, fsync on). The
calls a trial makes here (create, take, claim, label, tell, heartbeat, and the reads of the
study's new trials) are the same statements on the same tables, sent through the engine's
psycopg2 connection without the ORM, each call one transaction as in Optuna; and a trial's
labels and outcome go with its tell in one transaction (``hold_user_attrs``, as in the
journal: store/journal_storage.py). The schema, Optuna's checks (a finished trial raises
UpdateFinishedTrialError, a taken WAITING trial answers False, a parameter's distribution
must match the study's), the study row's lock for trial numbers, and the server's clock for
heartbeats are Optuna's; every other call is Optuna's own.

The storage ``--storage postgresql+psycopg2://...`` opens (store/study_storage.py) is
``pg_storage(url, **kwargs)``: Optuna's cache (_CachedStorage) in front of this backend,
given as the storage itself so that Optuna does not wrap it again, with ``hold_user_attrs``.
"""

from __future__ import annotations

import contextlib
import copy
import functools
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from reducetune.store.pg_rows import distribution, load, put_attrs, put_template, put_value

__all__ = ["pg_storage"]


def pg_storage(url: str, **kwargs: Any) -> Any:
    """Optuna's cached storage over a PgStorage of ``url`` (RDBStorage's keyword arguments)."""
    backend_class, cached_class = _classes()
    return cached_class(backend_class(url, **kwargs))


@functools.cache  # classes made on first use: their bases are optuna's (heavy)
def _classes() -> tuple[Any, Any]:
    """PgBackend over Optuna's RDBStorage, PgCache over its _CachedStorage: each mixin's
    ``super()`` is Optuna's class, imported only here."""
    from optuna.storages import RDBStorage  # heavy (about 0.5 s): only where a study is used
    from optuna.storages._cached_storage import _CachedStorage  # private (Optuna 3-5)

    return (type("PgStorage", (PgBackend, RDBStorage), {}),
            type("PgCachedStorage", (PgCache, _CachedStorage), {}))


class PgBackend:
    """RDBStorage whose per-trial calls are plain SQL (see the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._held: dict[int, dict[str, Any]] = {}  # trial id -> attrs for its next state
        self._dists: dict[tuple[int, str], str] = {}  # (study, param) -> its JSON
        self.written: datetime | None = None  # the time the last state written carries

    @contextlib.contextmanager
    def _sql(self) -> Iterator[Any]:
        """A cursor of one transaction on a pooled connection: committed at the end of the
        block, rolled back if it raises."""
        con = self.engine.raw_connection()
        try:
            cur = con.cursor()
            yield cur
            con.commit()
        except BaseException:
            con.rollback()
            raise
        finally:
            con.close()  # back to the pool

    def _updatable(self, cur: Any, trial_id: int) -> Any:
        """The trial's state, its row locked; KeyError where there is none and Optuna's
        UpdateFinishedTrialError where it is finished."""
        from optuna.trial import TrialState  # heavy: only where a study is used

        cur.execute("SELECT state FROM trials WHERE trial_id = %s FOR UPDATE", (trial_id,))
        row = cur.fetchone()
        if row is None:
            raise KeyError(f"No trial with trial_id {trial_id} exists.")
        state = TrialState[row[0]]
        self.check_trial_is_updatable(trial_id, state)
        return state

    def set_trial_user_attr(self, trial_id: int, key: str, value: Any) -> None:
        with self._sql() as cur:
            self._updatable(cur, trial_id)
            put_attrs(cur, "trial_user_attributes", trial_id, {key: value})

    def set_trial_system_attr(self, trial_id: int, key: str, value: Any) -> None:
        with self._sql() as cur:
            self._updatable(cur, trial_id)
            put_attrs(cur, "trial_system_attributes", trial_id, {key: value})

    @contextlib.contextmanager
    def hold_user_attrs(self, trial_id: int, attrs: dict[str, Any]) -> Iterator[None]:
        """``set_trial_user_attr`` of each of ``attrs``, written in the transaction of the
        trial's next state inside the block (its tell), else alone at the block's end."""
        self._held[trial_id] = dict(attrs)
        try:
            yield
        finally:
            left = self._held.pop(trial_id, None)
            if left:  # the tell wrote no state (it raised before): the attributes alone
                with self._sql() as cur:
                    self._updatable(cur, trial_id)
                    put_attrs(cur, "trial_user_attributes", trial_id, left)

    def set_trial_state_values(self, trial_id: int, state: Any,
                               values: Any = None) -> bool:
        """Optuna's: False where RUNNING is asked of a trial no longer WAITING (another
        process took it); a finished trial raises. Held attributes go in the same
        transaction."""
        from optuna.trial import TrialState  # heavy: only where a study is used

        held = self._held.pop(trial_id, None)
        with self._sql() as cur:
            now = self._updatable(cur, trial_id)
            if state == TrialState.RUNNING and now != TrialState.WAITING:
                return False
            for objective, v in enumerate(values or []):
                put_value(cur, trial_id, objective, v)
            if held:
                put_attrs(cur, "trial_user_attributes", trial_id, held)
            column = ("datetime_start" if state == TrialState.RUNNING else
                      "datetime_complete" if state.is_finished() else None)
            self.written = datetime.now()
            cur.execute("UPDATE trials SET state = %s" + (f", {column} = %s" if column
                                                          else "") + " WHERE trial_id = %s",
                        (state.name, *([self.written] if column else []), trial_id))
        return True

    def record_heartbeat(self, trial_id: int) -> None:
        with self._sql() as cur:  # the server's clock, as Optuna's stale check reads it
            cur.execute("INSERT INTO trial_heartbeats (trial_id, heartbeat) VALUES (%s, "
                        "now()::timestamp) ON CONFLICT (trial_id) DO UPDATE SET "
                        "heartbeat = EXCLUDED.heartbeat", (trial_id,))

    def _create_new_trial(self, study_id: int, template_trial: Any = None) -> Any:
        """Optuna's: the trial numbered under its study's row lock, the template's
        parameters, values and attributes with it, in one transaction."""
        from optuna.trial import FrozenTrial, TrialState  # heavy: only where a study is used

        t = template_trial
        with self._sql() as cur:
            cur.execute("SELECT 1 FROM studies WHERE study_id = %s FOR UPDATE", (study_id,))
            if cur.fetchone() is None:
                raise KeyError(f"No study with study_id {study_id} exists.")
            if t is not None:
                self._check_distributions(cur, study_id, t.distributions)
            start = t.datetime_start if t is not None else datetime.now()
            # its final state at once: Optuna's ORM passes through RUNNING for its own checks
            cur.execute("INSERT INTO trials (number, study_id, state, datetime_start, "
                        "datetime_complete) VALUES ((SELECT count(*) FROM trials WHERE "
                        "study_id = %s), %s, %s, %s, %s) RETURNING trial_id, number",
                        (study_id, study_id, "RUNNING" if t is None else t.state.name, start,
                         t.datetime_complete if t is not None else None))
            trial_id, number = cur.fetchone()
            if t is None:
                return FrozenTrial(number=number, state=TrialState.RUNNING, value=None,
                                   values=None, datetime_start=start,
                                   datetime_complete=None, params={}, distributions={},
                                   user_attrs={}, system_attrs={},
                                   intermediate_values={}, trial_id=trial_id)
            put_template(cur, trial_id, t)
        frozen = copy.deepcopy(t)
        frozen.number, frozen._trial_id = number, trial_id
        return frozen

    def _check_distributions(self, cur: Any, study_id: int, dists: dict[str, Any]) -> None:
        """Optuna's check that each parameter keeps the study's distribution (the first
        one seen for its name, read once a process)."""
        # heavy (about 0.5 s): only where a study is used
        from optuna.distributions import (check_distribution_compatibility,
                                          distribution_to_json)

        unknown = [n for n in dists if (study_id, n) not in self._dists]
        if unknown:
            cur.execute("SELECT DISTINCT ON (p.param_name) p.param_name, "
                        "p.distribution_json FROM trial_params p JOIN trials t ON "
                        "t.trial_id = p.trial_id WHERE t.study_id = %s AND p.param_name = "
                        "ANY(%s) ORDER BY p.param_name, p.param_id", (study_id, unknown))
            for name, text in cur.fetchall():
                self._dists[(study_id, name)] = text
        for name, dist in dists.items():
            known = self._dists.setdefault((study_id, name), distribution_to_json(dist))
            check_distribution_compatibility(distribution(known), dist)

    def get_trial(self, trial_id: int) -> Any:
        with self._sql() as cur:
            trials = load(cur, "trial_id = %s", (trial_id,))
        if not trials:
            raise KeyError(f"No trial with trial_id {trial_id} exists.")
        return trials[0]

    def _get_trials(self, study_id: int, states: Any, included_trial_ids: set[int],
                    trial_id_greater_than: int) -> list[Any]:
        """Optuna's: the study's trials after ``trial_id_greater_than``, and those of
        ``included_trial_ids`` up to it, of ``states``."""
        included = [i for i in included_trial_ids if i <= trial_id_greater_than]
        where, args = "study_id = %s AND (trial_id > %s OR trial_id = ANY(%s))", [
            study_id, trial_id_greater_than, included]
        if states is not None:
            where += " AND state::text = ANY(%s)"
            args.append([s.name for s in states])
        with self._sql() as cur:
            trials = load(cur, where, tuple(args))
            if not trials:  # Optuna's KeyError for a study that is not there
                cur.execute("SELECT 1 FROM studies WHERE study_id = %s", (study_id,))
                if cur.fetchone() is None:
                    raise KeyError(f"No study with study_id {study_id} exists.")
            return trials


class PgCache:
    """Optuna's cache in front of a PgStorage, with its ``hold_user_attrs``; and the
    trials this process runs, kept as it wrote them: Optuna reads a trial three times
    between taking it and telling it (ask's Trial, tell twice), 4 ms of a point here.
    Only this process writes a RUNNING trial it runs, but another may fail it (a stale
    heartbeat): a copy then still says RUNNING, and the next write raises
    UpdateFinishedTrialError under the trial's row lock, as Optuna's first read would
    have (store/study_tell.py tells its outcome again)."""

    def __init__(self, backend: Any) -> None:
        super().__init__(backend)
        self._mine: dict[int, Any] = {}  # trial id -> this process's RUNNING trial

    @property
    def engine(self) -> Any:
        return self._backend.engine

    def hold_user_attrs(self, trial_id: int, attrs: dict[str, Any]) -> Any:
        if trial_id in self._mine:  # written with the tell, or at the block's end
            self._mine[trial_id].user_attrs.update(attrs)
        return self._backend.hold_user_attrs(trial_id, attrs)

    def get_trial(self, trial_id: int) -> Any:
        mine = self._mine.get(trial_id)
        if mine is None:
            return super().get_trial(trial_id)
        if mine.state.is_finished():  # told: tell reads it once after (Optuna 3-5)
            del self._mine[trial_id]
        return copy.deepcopy(mine)

    def create_new_trial(self, study_id: int, template_trial: Any = None) -> int:
        from optuna.trial import TrialState  # heavy: only where a study is used

        trial_id = super().create_new_trial(study_id, template_trial)
        if template_trial is None or template_trial.state == TrialState.RUNNING:
            self._keep(trial_id)
        return int(trial_id)

    def set_trial_state_values(self, trial_id: int, state: Any,
                               values: Any = None) -> bool:
        from optuna.trial import TrialState  # heavy: only where a study is used

        mine = self._mine.pop(trial_id, None)
        done = bool(super().set_trial_state_values(trial_id, state, values))
        if done and state == TrialState.RUNNING:  # taken from the queue: this one's
            self._keep(trial_id, self._backend.written)
        elif done and mine is not None and state.is_finished():  # final: read once more
            mine.state, mine.values = state, None if values is None else list(values)
            mine.datetime_complete = self._backend.written
            self._mine[trial_id] = mine
        return done

    def set_trial_user_attr(self, trial_id: int, key: str, value: Any) -> None:
        super().set_trial_user_attr(trial_id, key, value)
        if trial_id in self._mine:
            self._mine[trial_id].user_attrs[key] = value

    def set_trial_system_attr(self, trial_id: int, key: str, value: Any) -> None:
        super().set_trial_system_attr(trial_id, key, value)
        if trial_id in self._mine:
            self._mine[trial_id].system_attrs[key] = value

    def set_trial_param(self, trial_id: int, param_name: str, param_value_internal: float,
                        distribution: Any) -> None:
        super().set_trial_param(trial_id, param_name, param_value_internal, distribution)
        if trial_id in self._mine:
            mine = self._mine[trial_id]
            mine.params[param_name] = distribution.to_external_repr(param_value_internal)
            mine.distributions[param_name] = distribution

    def _keep(self, trial_id: int, started: datetime | None = None) -> None:
        """The trial as Optuna's cache holds it (just created, or taken from the queue:
        RUNNING from ``started``), kept as this process's."""
        from optuna.trial import TrialState  # heavy: only where a study is used

        with self._lock:
            where = self._trial_id_to_study_id_and_number.get(trial_id)
            if where is None:
                return
            trial = copy.deepcopy(self._studies[where[0]].trials[where[1]])
        trial.state = TrialState.RUNNING
        if started is not None:
            trial.datetime_start = started
        self._mine[trial_id] = trial


