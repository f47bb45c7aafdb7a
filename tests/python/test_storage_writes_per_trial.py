"""The studies' storage writes per trial (issue 25): in the default storage (a journal beside
the results file, tuning/mirror.py) a grid point cost 17 writes on an H200, 2.3 ms of the
point: create_new_trial, one set_trial_param per parameter (8), five user attributes one at a
time, two states, and the file's copy. Now the trial is created RUNNING under the claim lock
with its parameters and owner (tuning/proposal.py, store/study_share.py: create_next) and the
three attributes of telling go with its state in one append (store/journal_storage.py): 4.
These tests fail if the count grows back, or if a trial ends with less than before (its
parameters, labels, outcome, owner, claim)."""

from __future__ import annotations

import json

import pytest

from replay_support import h200_grid_replay, needs_h200_grid

pytestmark = needs_h200_grid("the writes are counted on a real recording")

EVALS = 24
# create (RUNNING, stamped, its parameters), claim, the tell (with the labels and outcome),
# and the trial's copy in the results file as it is asked (MirroredStorage.began)
WRITES_PER_POINT = 4
ONCE = 8  # per study, whatever its length: its creation, its system attributes, the copy


def sweep(cli, tmp_path, *extra):
    code, out, err = cli(*h200_grid_replay(tmp_path / "r.db"), "--strategy", "grid",
                         "--max-evals", str(EVALS), "--race", "off", "--json", *extra)
    assert code == 0, err
    return json.loads(out)["time"]


def test_a_grid_point_costs_four_storage_writes(cli, tmp_path):
    doc = sweep(cli, tmp_path)
    assert doc["points"] == EVALS
    assert doc["calls"]["storage_write"] <= WRITES_PER_POINT * EVALS + ONCE, doc["calls"]
    # not fewer than one write per point: the count is of real calls
    assert doc["calls"]["storage_write"] >= 3 * EVALS, doc["calls"]


def test_each_trial_keeps_its_parameters_and_attributes(cli, tmp_path):
    import optuna

    sweep(cli, tmp_path)
    (summary,) = optuna.get_all_study_summaries(f"sqlite:///{tmp_path / 'r.db'}")
    trials = optuna.load_study(study_name=summary.study_name,
                               storage=f"sqlite:///{tmp_path / 'r.db'}").trials
    assert len(trials) == EVALS
    names = {"block_size", "warp", "finish", "elements_per_thread", "grid_cap"}
    for t in trials:
        assert t.state.name == "COMPLETE" and t.values
        assert names <= set(t.params) and set(t.params) == set(t.distributions)
        assert t.system_attrs["fixed_params"] == t.params  # Optuna's enqueue record, kept
        assert {"owner", "claim", "variant_label", "launch_label", "outcome"} <= set(
            t.user_attrs), t.user_attrs
    # none twice
    assert len({tuple(sorted(t.params.items())) for t in trials}) == EVALS


def test_the_attributes_of_a_finished_trial_raise_once(tmp_path):
    """Held attributes and a tell in one append, on a trial finished meanwhile (failed by
    another worker): the tell raises as Optuna's first call would, and no line is left to
    raise in a later, unrelated call; on a live trial the journal holds them all, and a block
    that tells nothing still writes them."""
    import optuna
    from optuna.trial import TrialState

    from reducetune.store.study_storage import open_journal

    storage = open_journal(tmp_path / "j.journal", durable=False)
    study = optuna.create_study(storage=storage)
    trial, told, untold = study.ask(), study.ask(), study.ask()
    storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
    with pytest.raises(optuna.exceptions.UpdateFinishedTrialError):
        with storage.hold_user_attrs(trial._trial_id, {"a": 1, "b": 2, "c": 3}):
            storage.set_trial_state_values(trial._trial_id, TrialState.COMPLETE, [1.0])
    with storage.hold_user_attrs(told._trial_id, {"a": 1, "b": 2}):
        assert storage.get_trial(told._trial_id).user_attrs == {}  # held
        study.tell(told, 2.0)
    with storage.hold_user_attrs(untold._trial_id, {"c": 3}):
        pass
    assert storage.get_trial(told._trial_id).user_attrs == {"a": 1, "b": 2}
    assert storage.get_trial(told._trial_id).values == [2.0]
    assert storage.get_trial(untold._trial_id).user_attrs == {"c": 3}
    assert storage.get_trial(trial._trial_id).user_attrs == {}
    assert storage.get_trial(trial._trial_id).state == TrialState.FAIL
    # what another process reads from the file: the same
    again = open_journal(tmp_path / "j.journal", durable=False)
    assert again.get_trial(told._trial_id).user_attrs == {"a": 1, "b": 2}
