"""A sampler that keeps proposing the same point does not stall the study: after STALL_ESCAPE
trials without a new point, a random unseen valid point is evaluated instead (synthetic)."""

from __future__ import annotations

import json

import optuna
import pytest

import reducetune.tuning.proposal as proposal_module
from conftest import RESTRICT_ARGS

pytestmark = [pytest.mark.replay,
              pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")]


@pytest.fixture
def stubborn(monkeypatch):
    """Every strategy becomes a sampler that proposes the `good` preset, again and again (as
    gp does with a point its model likes, or an invalid one it cannot learn about)."""
    import reducetune

    good = reducetune.Space("tunable", "float32", "sum",
                            reducetune.limits_for_arch("sm_90")).preset("good").params

    def make(strategy, seed):  # noqa: ARG001 (the signature of make_sampler)
        return optuna.samplers.PartialFixedSampler(good, optuna.samplers.RandomSampler(seed))

    monkeypatch.setattr(proposal_module, "make_sampler", make)


def tune(cli, tmp_path, synthetic_db, *extra):
    code, out, err = cli("tune", "--replay", synthetic_db, "--db", tmp_path / "r.db",
                         "--dtype", "float32", "--op", "sum", "--quiet", "--json",
                         *RESTRICT_ARGS, "--sizes", "2^20", *extra)
    assert code == 0, err
    return json.loads(out)["sizes"][0]


def test_a_stubborn_sampler_still_spends_its_budget_on_distinct_points(
        stubborn, asked, cli, tmp_path, synthetic_db):
    size = tune(cli, tmp_path, synthetic_db, "--max-evals", "12", "--seed", "4")
    assert size["stopped"] == "max-evals" and size["points"] == 12
    assert len(asked) == len(set(asked)) == 12
    # the first point is the sampler's own; every later one came from an escape
    assert size["escapes"] == 11


def test_escapes_are_seeded(stubborn, asked, cli, tmp_path, synthetic_db):
    tune(cli, tmp_path / "a", synthetic_db, "--max-evals", "6", "--seed", "4")
    first = list(asked)
    asked.clear()
    tune(cli, tmp_path / "b", synthetic_db, "--max-evals", "6", "--seed", "4")
    assert asked == first
    asked.clear()
    tune(cli, tmp_path / "c", synthetic_db, "--max-evals", "6", "--seed", "5")
    assert asked != first


def test_a_well_behaved_sampler_never_escapes(asked, cli, tmp_path, synthetic_db):
    size = tune(cli, tmp_path, synthetic_db, "--max-evals", "12", "--strategy", "random")
    assert size["escapes"] == 0 and size["points"] == 12
