"""The rows of Optuna's trials in a PostgreSQL server, written and read in plain SQL for
store/pg_storage.py: Optuna's schema (its RDBStorage's tables, v3.2.0.a and later) and its
stored forms of values (TrialValueModel, TrialIntermediateValueModel), without its ORM."""

from __future__ import annotations

import functools
import json
import math
from typing import Any

__all__ = ["distribution", "load", "put_attrs", "put_template", "put_value"]

# A trial's rows in the other tables, read in one query (UNION ALL) as (trial id, kind,
# name, number, text, order): a parameter (its name, internal value, distribution), a value
# (its objective, value, type), a user or system attribute (its key, JSON), an intermediate
# value (its step, value, type); parameters in their order of insertion, as Optuna's.
_CHILDREN = (
    ("params", "param_name, param_value, distribution_json, param_id", "trial_params"),
    ("values", "objective::text, value, value_type::text, objective", "trial_values"),
    ("user", "key, NULL::float8, value_json, 0", "trial_user_attributes"),
    ("system", "key, NULL::float8, value_json, 0", "trial_system_attributes"),
    ("steps", "step::text, intermediate_value, intermediate_value_type::text, step",
     "trial_intermediate_values"),
)
_CHILDREN_SQL = " UNION ALL ".join(
    f"SELECT trial_id, {kind}, {columns} FROM {table} WHERE trial_id = ANY(%(ids)s)"
    for kind, (_, columns, table) in enumerate(_CHILDREN)) + " ORDER BY 2, 6"


@functools.cache
def distribution(text: str) -> Any:
    """A parameter's distribution from its JSON (a few distinct ones per study, read often)."""
    from optuna.distributions import json_to_distribution  # heavy: only where a study is used

    return json_to_distribution(text)



def _insert_rows(cur: Any, sql: str, rows: list[tuple[Any, ...]]) -> None:
    """``sql`` with its ``VALUES %s`` given every row, in one statement (one round trip)."""
    if not rows:
        return
    one = "(" + ", ".join(["%s"] * len(rows[0])) + ")"
    cur.execute(sql.replace("VALUES %s", "VALUES " + ", ".join([one] * len(rows)), 1),
                [v for row in rows for v in row])


def put_attrs(cur: Any, table: str, trial_id: int, attrs: dict[str, Any]) -> None:
    """A trial's user or system attributes (``table``) written, each replacing its key's."""
    _insert_rows(cur, f"INSERT INTO {table} (trial_id, key, value_json) VALUES %s ON "
                 "CONFLICT (trial_id, key) DO UPDATE SET value_json = EXCLUDED.value_json",
                 [(trial_id, k, json.dumps(v)) for k, v in attrs.items()])


def put_value(cur: Any, trial_id: int, objective: int, value: float) -> None:
    stored, kind = _stored(value)
    cur.execute("INSERT INTO trial_values (trial_id, objective, value, value_type) VALUES "
                "(%s, %s, %s, %s) ON CONFLICT (trial_id, objective) DO UPDATE SET value = "
                "EXCLUDED.value, value_type = EXCLUDED.value_type",
                (trial_id, objective, stored, kind))


def _stored(value: float) -> tuple[float | None, str]:
    """Optuna's stored form of a value (TrialValueModel.value_to_stored_repr)."""
    if value == float("inf"):
        return None, "INF_POS"
    if value == float("-inf"):
        return None, "INF_NEG"
    return value, "FINITE"


def put_template(cur: Any, trial_id: int, t: Any) -> None:
    """A template trial's values, parameters, attributes and intermediate values."""
    from optuna.distributions import distribution_to_json  # heavy: only where a study is used

    values = t.values if t.values is not None and len(t.values) > 1 else (
        [t.value] if t.value is not None else [])
    for objective, v in enumerate(values):
        put_value(cur, trial_id, objective, v)
    if t.params:
        _insert_rows(cur, "INSERT INTO trial_params (trial_id, param_name, param_value, "
                     "distribution_json) VALUES %s", [
                         (trial_id, name, t.distributions[name].to_internal_repr(value),
                          distribution_to_json(t.distributions[name]))
                         for name, value in t.params.items()])
    if t.user_attrs:
        put_attrs(cur, "trial_user_attributes", trial_id, t.user_attrs)
    if t.system_attrs:
        put_attrs(cur, "trial_system_attributes", trial_id, t.system_attrs)
    if t.intermediate_values:
        _insert_rows(cur, "INSERT INTO trial_intermediate_values (trial_id, step, "
                     "intermediate_value, intermediate_value_type) VALUES %s", [
                         (trial_id, step, None if math.isnan(v) or math.isinf(v) else v,
                          "NAN" if math.isnan(v) else "INF_POS" if v == math.inf else
                          "INF_NEG" if v == -math.inf else "FINITE")
                         for step, v in t.intermediate_values.items()])


def load(cur: Any, where: str, args: tuple[Any, ...]) -> list[Any]:
    """The trials of ``where`` (on the trials table) as FrozenTrials, by trial id: two
    queries whatever their number."""
    cur.execute("SELECT trial_id, number, state, datetime_start, datetime_complete FROM trials "
                f"WHERE {where} ORDER BY trial_id", args)
    rows = cur.fetchall()
    children: dict[int, dict[str, list[tuple[Any, ...]]]] = {
        r[0]: {name: [] for name, _, _ in _CHILDREN} for r in rows}
    if rows:
        cur.execute(_CHILDREN_SQL, {"ids": list(children)})
        for trial_id, kind, name, number, text, _ in cur.fetchall():
            children[trial_id][_CHILDREN[kind][0]].append(_child(kind, name, number, text))
    return [_frozen(r, children[r[0]]) for r in rows]


def _child(kind: int, name: str, number: float | None, text: str) -> tuple[Any, ...]:
    """A row of _CHILDREN_SQL as _frozen reads it: (name, value, distribution) of a
    parameter, (objective or step, value, type) of a value, (key, JSON) of an attribute."""
    if _CHILDREN[kind][0] in ("user", "system"):
        return name, text
    if _CHILDREN[kind][0] == "params":
        return name, number, text
    return int(name), number, text


def _frozen(row: tuple[Any, ...], c: dict[str, list[tuple[Any, ...]]]) -> Any:
    """Optuna's FrozenTrial of a trials row and its children (RDBStorage's
    _build_frozen_trial_from_trial_model)."""
    from optuna.trial import FrozenTrial, TrialState  # heavy: only where a study is used

    trial_id, number, state, start, complete = row
    values = [0.0] * len(c["values"]) if c["values"] else None
    for objective, value, kind in c["values"]:
        values[objective] = _SPECIAL.get(kind, value)  # type: ignore[index]
    dists = {name: distribution(text) for name, _, text in c["params"]}
    return FrozenTrial(
        number=number, state=TrialState[state], value=None, values=values,
        datetime_start=start, datetime_complete=complete,
        params={name: dists[name].to_external_repr(v) for name, v, _ in c["params"]},
        distributions=dists,
        user_attrs={k: json.loads(v) for k, v in c["user"]},
        system_attrs={k: json.loads(v) for k, v in c["system"]},
        intermediate_values={step: _SPECIAL.get(kind, v) for step, v, kind in c["steps"]},
        trial_id=trial_id)


# stored value types whose value column is NULL (Optuna's models: TrialValueType and
# TrialIntermediateValueType)
_SPECIAL = {"INF_POS": float("inf"), "INF_NEG": float("-inf"), "NAN": float("nan")}
