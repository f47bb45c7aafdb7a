"""``reducetune tune --family axis`` on the GPU (skipped without one): three small shapes (rows,
columns, short rows) tuned for a few seconds, each stored best verified and at its own shape,
and no slower than the point the runtime's built-in rule picks for that shape (the study
measures that one first)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import NO_GPU
from reducetune import _core
from reducetune.store.results import store_best

pytestmark = pytest.mark.skipif(NO_GPU is not None, reason=NO_GPU or "")

SHAPES = [(256, 1024, 1), (1, 1024, 256), (16384, 16, 1)]  # 2^18 elements each


def test_an_axis_tune_stores_a_verified_best_per_shape(cli, tmp_path: Path) -> None:
    db = tmp_path / "axis.db"
    code, out, err = cli("tune", "--family", "axis", "--shapes",
                         *("x".join(map(str, s)) for s in SHAPES), "--max-evals", "6",
                         "--sample-time", "20ms", "--seed", "1", "--db", db, "--quiet", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert sorted(tuple(s["shape"]) for s in doc["sizes"]) == sorted(SHAPES)
    store = _core.Store(str(db), True)
    dev = store.devices()[0]["id"]
    for shape in SHAPES:
        b = store_best(store, dev, "float32", "sum", shape)
        assert b is not None, f"no best at {shape}"
        assert tuple(b["bucket_shape"]) == shape and b["family"] == "axis"
        assert b["gbps"] and b["gbps"] > 0
        # a best is a status-ok row: verified against the reference before and after sampling
        rows = store.history(dev, "float32", "sum", shape=shape)
        (row,) = [r for r in rows if r["id"] == b["measurement_id"]]
        assert row["status"] == "ok"
        # the rule's preset was measured first: the best is no slower than it
        preset = _core.axis_rule(*shape)[0]
        values = dict(_core.family("axis")["presets"][_preset_index(preset)]["values"])
        rule_rows = [r for r in rows if r["status"] == "ok" and _is_preset(r, values)]
        assert rule_rows, f"the rule's preset {preset} was not measured at {shape}"
        assert b["median_s"] <= min(r["median_s"] for r in rule_rows)
    with sqlite3.connect(db) as c:  # every measured row passed or failed verification
        statuses = {s for (s,) in c.execute("SELECT DISTINCT status FROM rt_measurements")}
    assert "wrong" not in statuses, "an axis point gave a wrong result"
    code, out, err = cli("best", "--shape", "256x1024x1", "--db", db)
    assert code == 0 and "measured at shape 256x1024x1" in out, err


def _preset_index(name: str) -> int:
    presets = _core.family("axis")["presets"]
    return next(i for i, p in enumerate(presets) if p["name"] == name)


def _is_preset(row: dict, values: dict) -> bool:
    params = {**json.loads(row["parameters_json"]), **json.loads(row["launch_parameters_json"])}
    return all(str(params.get(k)) == str(v) for k, v in values.items())
