"""Adding a strategy or an evaluator is one entry in one table (issue 23 item 2): an entry
added to ``tuning.samplers.STRATEGY`` or ``evaluate.sources.EVALUATORS`` (and nothing else) is
what ``reducetune tune`` then runs with, on a synthetic replay database."""

from __future__ import annotations

import json

from reducetune.evaluate import sources
from reducetune.evaluate.replay import ReplayEvaluator
from reducetune.tuning import samplers
from reducetune.tuning.samplers import STRATEGIES, STRATEGY, Strategy

from conftest import RESTRICT_ARGS


def _tune(cli, db, replay, *extra):
    return cli("tune", "--replay", replay, "--db", db, "--dtype", "float32", "--op", "sum",
               "--sizes", "2^20", "--quiet", "--json", *RESTRICT_ARGS, *extra)


def test_the_strategy_names_are_the_tables():
    assert STRATEGIES == tuple(STRATEGY) == ("tpe", "random", "grid", "gp", "cmaes", "nsga2")
    assert [s.name for s in STRATEGY.values() if s.exhaustive] == ["grid"]
    assert [s.name for s in STRATEGY.values() if s.two_objectives] == ["nsga2"]


def test_a_strategy_added_to_the_table_is_run_by_tune(cli, tmp_path, synthetic_db,
                                                      monkeypatch):
    made = []

    def sampler(optuna, seed):
        made.append(seed)
        return optuna.samplers.RandomSampler(seed=seed)

    monkeypatch.setitem(STRATEGY, "mine", Strategy("mine", sampler))
    monkeypatch.setattr(samplers, "STRATEGIES", tuple(STRATEGY))
    code, out, err = _tune(cli, tmp_path / "r.db", synthetic_db, "--strategy", "mine",
                           "--max-evals", "5", "--seed", "7")
    assert code == 0, err
    assert made == [7] and json.loads(out)["sizes"][0]["points"] == 5
    # an unknown name is still refused, naming the table's strategies
    code, _, err = _tune(cli, tmp_path / "r.db", synthetic_db, "--strategy", "theirs")
    assert code == 2 and "unknown strategy 'theirs'" in err and "mine" in err


def test_an_evaluator_added_to_the_table_is_what_tune_measures_with(cli, tmp_path,
                                                                    synthetic_db, monkeypatch):
    opened = []

    class Counting(ReplayEvaluator):
        pass

    def open_counting(options):
        opened.append(options["replay"])
        return Counting(options["replay"], options.get("device"))

    mine = sources.EvaluatorEntry("counting", lambda o: o.get("replay") is not None,
                                  open_counting)
    monkeypatch.setattr(sources, "EVALUATORS", (mine, *sources.EVALUATORS))
    code, _, err = _tune(cli, tmp_path / "r.db", synthetic_db, "--max-evals", "3")
    assert code == 0, err
    assert opened == [synthetic_db]


def test_the_table_picks_the_recording_when_one_is_named_else_the_gpu(synthetic_db,
                                                                      monkeypatch):
    gpus = []
    monkeypatch.setattr(sources, "GpuEvaluator", lambda *a, **kw: gpus.append((a, kw)) or "gpu")
    with sources.open_evaluator({"replay": synthetic_db, "device": None}) as ev:
        assert isinstance(ev, ReplayEvaluator)
    assert sources.open_evaluator({"replay": None, "device": 1, "timeout": 5.0}) == "gpu"
    assert gpus == [((1,), {"timeout_s": 5.0, "in_process": False})]
    assert sources.EVALUATORS[-1].chosen({})  # the last entry (the GPU) takes what is left
