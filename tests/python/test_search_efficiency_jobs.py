"""The search-efficiency experiment gives the same curves whatever --jobs is (synthetic)."""

from __future__ import annotations

import json
import lzma
import shutil
from pathlib import Path

import pytest
from conftest import RESTRICT_ARGS

pytestmark = pytest.mark.replay

CURVE_KEYS = ("mean", "p10", "p90", "min", "k_to_target")
# At 2^20 the synthetic space's seeds part ways within 12 evaluations (at 2^10 the first
# point is already the best, so every seed's curve would be the same and prove nothing).
N = 1 << 20
SMALL_RUN = ["--n", "2^20", "--strategies", "tpe", "random", "--seeds", "2",
             "--max-evals", "12", *RESTRICT_ARGS]


def curves(out: Path) -> dict[str, dict[str, dict[str, list]]]:
    """Per size and strategy, the curves of curves.json (not the timings)."""
    report = json.loads((out / "curves.json").read_text())
    return {n: {s: {k: c[k] for k in CURVE_KEYS} for s, c in e["strategies"].items()}
            for n, e in report["sizes"].items()}


def xz_copy(db: Path, folder: Path) -> Path:
    packed = folder / (db.name + ".xz")
    with open(db, "rb") as fin, lzma.open(packed, "wb") as fout:
        shutil.copyfileobj(fin, fout)
    return packed


@pytest.mark.parametrize("packed", [False, True], ids=["plain-db", "db-xz"])
def test_two_jobs_give_the_same_curves_as_one(cli, tmp_path, synthetic_db, packed):
    replay = xz_copy(synthetic_db, tmp_path) if packed else synthetic_db
    results = {}
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}"
        code, _, err = cli("experiment", "search-efficiency", "--replay", replay, *SMALL_RUN,
                           "--jobs", str(jobs), "--out", out)
        assert code == 0, err
        results[jobs] = curves(out)
    tpe = results[1][str(N)]["tpe"]
    assert tpe["p10"] != tpe["p90"]  # the seeds differ, so a mixed-up seed would show
    assert results[2] == results[1]
    report = json.loads((tmp_path / "jobs2" / "curves.json").read_text())
    assert report["jobs"] == 2 and report["wall_seconds"] > 0


@pytest.mark.parametrize("jobs", ["0", "-3"])
def test_jobs_below_one_is_refused_before_any_run(cli, tmp_path, synthetic_db, jobs):
    out = tmp_path / "se"
    code, _, err = cli("experiment", "search-efficiency", "--replay", synthetic_db, *SMALL_RUN,
                       "--jobs", jobs, "--out", out)
    assert code == 2
    assert "--jobs must be at least 1" in err
    assert not out.exists()


def test_run_raises_invalid_configuration_for_zero_jobs(tmp_path, synthetic_db):
    from reducetune.errors import InvalidConfiguration
    from reducetune.experiments.search_efficiency import run

    with pytest.raises(InvalidConfiguration, match="--jobs"):
        run(synthetic_db, "float32", "sum", [N], "tunable", ["random"], 1, 5,
            tmp_path / "se", jobs=0)


def journal_lines(out: Path) -> list[dict]:
    """The journal's complete lines (a line cut short by a kill is not one)."""
    good = []
    for line in (out / "runs.jsonl").read_text().splitlines():
        try:
            good.append(json.loads(line))
        except ValueError:
            pass
    return good


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_interrupted_experiment_runs_only_what_its_journal_lacks(cli, tmp_path, synthetic_db,
                                                                    jobs):
    out = tmp_path / "se"
    args = ["experiment", "search-efficiency", "--replay", synthetic_db, *SMALL_RUN,
            "--jobs", jobs, "--out", out]
    code, _, err = cli(*args)
    assert code == 0, err
    full = curves(out)
    lines = journal_lines(out)
    assert sorted((x["strategy"], x["seed"]) for x in lines) == [
        ("random", 0), ("random", 1), ("tpe", 0), ("tpe", 1)]

    # As if killed after two runs, one line cut short; the kept tpe run is marked by its time.
    kept = [x for x in lines if x["seed"] == 0]
    for x in kept:
        x["seconds"] = 1000.0
    (out / "runs.jsonl").write_text("".join(json.dumps(x) + "\n" for x in kept) + '{"n": 10')
    code, _, err = cli(*args)
    assert code == 0, err
    assert "2 of 4 runs taken from" in err
    assert curves(out) == full  # the same curves, half of them from the journal
    report = json.loads((out / "curves.json").read_text())
    for s in ("tpe", "random"):  # the reused run's time is the journal's: it was not re-run
        assert 1000.0 < report["sizes"][str(N)]["strategies"][s]["seconds"] < 1100.0
    assert len(journal_lines(out)) == 4


def test_the_journal_is_not_reused_for_another_budget(cli, tmp_path, synthetic_db):
    out = tmp_path / "se"
    base = ["experiment", "search-efficiency", "--replay", synthetic_db, "--out", out,
            "--n", "2^20", "--strategies", "random", "--seeds", "1", *RESTRICT_ARGS]
    assert cli(*base, "--max-evals", "5")[0] == 0
    code, _, err = cli(*base, "--max-evals", "6")
    assert code == 0, err
    assert "taken from" not in err
    assert sorted(x["max_evals"] for x in journal_lines(out)) == [5, 6]
