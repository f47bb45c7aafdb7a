"""Replay against the database recorded on a GPU by an exhaustive sweep
(tests/data/recorded/*.db). Skipped, with the reason, until that recording is committed."""

from __future__ import annotations

import json

import pytest

from conftest import RECORDED

pytestmark = pytest.mark.skipif(
    not RECORDED, reason="no recorded database in tests/data/recorded/ (made on a GPU with "
    "`reducetune tune --strategy grid`); replay tests on real data skipped")


@pytest.mark.parametrize("recorded", RECORDED, ids=lambda p: p.name)
def test_tpe_on_the_recorded_sweep_is_deterministic(recorded, cli, tmp_path):
    from reducetune._evaluators import ReplayEvaluator

    dev = ReplayEvaluator(recorded)
    rows = dev._store.history(dev.device["id"], "float32", "sum", None)
    n = max(r["n"] for r in rows)
    outs = []
    for i in range(2):
        code, out, err = cli("tune", "--replay", recorded, "--db", tmp_path / f"{i}.db",
                             "--sizes", str(n), "--max-evals", "30", "--seed", "11", "--json",
                             "--quiet")
        assert code == 0, err
        outs.append(json.loads(out)["sizes"][0]["best"])
    assert outs[0] == outs[1]
