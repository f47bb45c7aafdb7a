"""``reducetune tune --family axis`` is refused upfront, in one line (no GPU): the axis family is
tuned per shape, which the tuner does not do yet, and tuning it on whole-array sizes would
record every point as invalid. Nothing is created: neither the results file nor a --storage
journal. The other families still reach the tuner's own checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from reducetune import _core


def test_the_family_dict_names_each_kernel_abi() -> None:
    assert _core.family("axis")["abi"] == "axis"
    assert _core.family("tunable")["abi"] == "whole_array"


def test_tune_refuses_the_axis_family_before_any_file(cli, tmp_path: Path) -> None:
    db, journal = tmp_path / "results.db", tmp_path / "studies.journal"
    code, out, err = cli("tune", "--family", "axis", "--db", db, "--storage", f"journal:{journal}")
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert "the axis family is tuned per shape, which the tuner does not do yet" in lines[0]
    assert "reducetune.reduce(x, axis=...)" in lines[0]
    assert "python -m reducetune.benchmarks.axis" in lines[0]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("family", ["tunable", "no_such_family"])
def test_other_families_pass_on_to_the_tuners_checks(cli, tmp_path: Path, family: str) -> None:
    # A missing --replay recording is the next check: reaching it shows the refusal let the
    # whole-array family (and an unknown name, which _check_spaces names later) through.
    code, _, err = cli("tune", "--family", family, "--db", tmp_path / "r.db",
                       "--replay", tmp_path / "missing.db")
    assert code != 0
    assert "tuned per shape" not in err
    assert "missing.db does not exist" in err
