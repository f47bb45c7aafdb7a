"""The one-minute mode (issue 25): under a time limit the run compiles first what each unit
measures first (priors, then the base preset), and the rest of the spaces only when the time
left allows it; without a GPU (replay, an evaluator whose precompile is recorded)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import RESTRICT_ARGS
from test_priors import _table
from test_warm_start import BASE, OLDER, TWIN, _tune

from reducetune.evaluate.replay import ReplayEvaluator
from reducetune.tuning.budget import precompile_rest

# An H100 machine's precompile of the README's 132 units (docs/results/h100_2026-11-23_issue12.md)
README_VARIANTS, README_SECONDS = 9456, 41.6


def _summary(requested: int, seconds: float, cached: int = 0) -> dict[str, Any]:
    return {"requested": requested, "compiled": requested - cached, "cached": cached,
            "failed": 0, "failures": {}, "seconds": seconds, "threads": 16}


def test_the_rest_is_compiled_at_once_when_cheaper_than_one_at_a_time():
    per = README_SECONDS / README_VARIANTS  # 4.4 ms a variant on 16 threads: 70 ms on one
    first = _summary(500, 500 * per)
    rest = README_VARIANTS - 500
    # one minute: ~260 points measurable, 18 s of compiles one at a time against 39 s at once
    assert not precompile_rest(60.0, 57.0, first, rest)
    assert precompile_rest(360.0, 355.0, first, rest)  # six minutes: ~1,600 points
    assert precompile_rest(None, 0.0, first, rest)  # no limit: everything, as before
    assert precompile_rest(60.0, 57.0, {"error": "timed_out", "message": ""}, rest)
    assert precompile_rest(60.0, 57.0, _summary(500, 0.0, cached=500), rest)  # no rate
    # a small rest is always worth it: each variant is cheaper in the batch than alone
    assert precompile_rest(60.0, 57.0, first, 100)
    assert not precompile_rest(60.0, 0.0, first, rest)  # no time left: nothing more measured


@pytest.fixture
def compiled(monkeypatch) -> list[list[str]]:
    """Each precompile batch's distinct variants; every batch 'takes' 10 s a variant, so that a
    time-limited run skips the rest."""
    batches: list[list[str]] = []

    def precompile(self: Any, points: list[Any]) -> dict[str, Any]:
        batches.append(list(dict.fromkeys(p.variant_label for p in points)))
        return _summary(len(batches[-1]), 10.0 * len(batches[-1]))

    monkeypatch.setattr(ReplayEvaluator, "precompile", precompile)
    return batches


def test_a_short_run_compiles_the_priors_and_base_first_and_skips_the_rest(
        cli, asked, compiled, synthetic_db, tmp_path):
    priors = _table(tmp_path / "p.json", near=[TWIN, OLDER], far=[])
    size = _tune(cli, synthetic_db, tmp_path / "r.db", "--priors", priors, "--time-limit", "60")
    assert compiled == [list(dict.fromkeys([TWIN.variant_label, OLDER.variant_label,
                                            BASE.variant_label]))]
    assert [(v, lab) for v, lab, _ in asked[:3]] == [TWIN.labels, OLDER.labels, BASE.labels]
    assert size["best"] is not None  # answered


def test_a_run_without_a_time_limit_compiles_everything_at_once(cli, compiled, synthetic_db,
                                                                tmp_path):
    priors = _table(tmp_path / "p.json", near=[TWIN, OLDER], far=[])
    _tune(cli, synthetic_db, tmp_path / "r.db", "--priors", priors)
    assert len(compiled) == 1 and {TWIN.variant_label, BASE.variant_label} < set(compiled[0])
    assert len(compiled[0]) > 3


def test_every_unit_of_a_one_minute_run_is_answered_priors_first(cli, asked, synthetic_db,
                                                                 tmp_path: Path):
    """Two sizes, a time limit far below what replay needs: each unit still measures its
    priors' point first and ends with an ok answer."""
    priors = _table(tmp_path / "p.json", near=[TWIN], far=[])
    code, out, err = cli("tune", "--replay", synthetic_db, "--db", tmp_path / "r.db",
                         "--sizes", "2^10", "2^20", "--time-limit", "0.01", "--seed", "0",
                         "--json", "--quiet", "--priors", priors,
                         *RESTRICT_ARGS)
    assert code == 0, err
    sizes = json.loads(out)["sizes"]
    assert [s["stopped"] for s in sizes] == ["time-limit", "time-limit"]
    assert all(s["best"] is not None for s in sizes)
    # largest size first (tuning/run.py unit_order); each unit's first point is the prior
    firsts = [next(a for a in asked if a[2] == n)[:2] for n in (1 << 20, 1 << 10)]
    assert firsts == [TWIN.labels, TWIN.labels]
