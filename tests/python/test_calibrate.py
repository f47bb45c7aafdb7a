"""``reducetune calibrate`` and the application times it records.

Without a GPU: on a copy of a real recording, the candidates the ranking weighs come out of the
core fastest first; recorded lone-call times turn a size's application pick (export json, which
the Reducer reads) to the fastest measured call, and leave the other sizes to the estimate; bad
input is refused without writing. On a GPU (skipped with the reason otherwise): calibrate times
and records a size, and the Reducer built from the database launches the measured pick.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import replay_support
from conftest import NO_GPU, RECORDED
from reducetune import _core, errors

GRID = [p for p in RECORDED if p.name == "h200_float32_sum_grid.db"]
needs_grid = pytest.mark.skipif(not GRID, reason="tests/data/recorded/h200_float32_sum_grid.db.xz "
                                                  "is absent")


@pytest.fixture
def grid_copy(tmp_path: Path) -> tuple[Path, str]:
    return replay_support.grid_copy(tmp_path)


def _application_picks(db: Path) -> dict[int, dict]:
    doc = json.loads(_core.export_json(str(db)))
    rules = doc["devices"][0]["tables"][0]["rules"]
    return {r["bucket_n"]: r["application"] for r in rules}


@needs_grid
def test_candidates_come_fastest_first_and_deterministic(grid_copy):
    db, uuid = grid_copy
    by_n = _core.application_candidates(str(db), "float32", "sum", uuid)
    assert by_n, "the recording has measured sizes"
    for n, cands in by_n.items():
        first = cands[:16]  # the fastest sixteen, then the fastest of each launch count beyond
        assert 1 <= len(cands) <= 16 + 2
        medians = [c["median_s"] for c in cands]
        assert medians == sorted(medians)
        assert all(c["launches"] in (1, 2) for c in cands)
        assert len({c["launches"] for c in cands[16:]}) == len(cands[16:])
        assert not {c["launches"] for c in cands[16:]} & {c["launches"] for c in first}
        assert all(c["determinism"] == "run_to_run" for c in cands)
        assert len({c["measurement_id"] for c in cands}) == len(cands)
        assert all(c["application_s"] is None for c in cands)
    assert _core.application_candidates(str(db), "float32", "sum", "GPU-not-here") == {}


@needs_grid
def test_recorded_times_decide_the_pick_of_their_size_only(grid_copy):
    db, uuid = grid_copy
    by_n = _core.application_candidates(str(db), "float32", "sum", uuid)
    n, other = sorted(by_n)[0], sorted(by_n)[-1]
    cands = by_n[n][:4]
    assert len(cands) == 4
    before = _application_picks(db)
    # the fourth-fastest by the protocol is the fastest lone call
    times = [(c["measurement_id"], 9e-6 - (1e-6 if i == 3 else 0) + i * 1e-8, 50)
             for i, c in enumerate(cands)]
    _core.record_application_times(str(db), times)
    after = _application_picks(db)
    assert (after[n]["variant"], after[n]["launch"]) == (cands[3]["variant"], cands[3]["launch"])
    assert after[n]["application_s"] == pytest.approx(8e-6 + 3e-8)
    assert after[other] == before[other] and after[other]["application_s"] is None
    again = _core.application_candidates(str(db), "float32", "sum", uuid)[n]
    assert {c["measurement_id"]: c["application_s"] for c in again if c["application_s"]} == {
        t[0]: t[1] for t in times}


@needs_grid
def test_an_unknown_measurement_writes_nothing(grid_copy):
    db, uuid = grid_copy
    n = sorted(_core.application_candidates(str(db), "float32", "sum", uuid))[0]
    first = _core.application_candidates(str(db), "float32", "sum", uuid)[n][0]
    with pytest.raises(errors.StoreError, match="no measurement 987654321"):
        _core.record_application_times(str(db), [(first["measurement_id"], 5e-6, 10),
                                                 (987654321, 5e-6, 10)])
    with pytest.raises(errors.StoreError, match="median > 0"):
        _core.record_application_times(str(db), [(first["measurement_id"], -1.0, 10)])
    assert _core.application_candidates(str(db), "float32", "sum", uuid)[n][0][
        "application_s"] is None


def test_calibrate_refuses_a_missing_database(cli, tmp_path: Path):
    code, _, err = cli("calibrate", "--db", tmp_path / "none.db")
    assert code != 0 and "run reducetune tune first" in err


@needs_grid
@pytest.mark.skipif(NO_GPU is None, reason="checks the no-GPU message; this machine has a GPU")
def test_calibrate_without_a_gpu_says_so(cli, grid_copy):
    db, _ = grid_copy
    code, _, err = cli("calibrate", "--db", db)
    assert code != 0
    assert "no NVIDIA driver / GPU" in err and "calibrate needs the GPU itself" in err


@pytest.mark.skipif(NO_GPU is not None, reason=NO_GPU or "")
def test_calibrate_records_and_the_reducer_launches_the_measured_pick(cli, tmp_path: Path):
    db = tmp_path / "t.db"
    code, _, err = cli("tune", "--db", db, "--sizes", "2^16", "--max-evals", "12",
                       "--restrict", "block_size=128,256,512", "--restrict", "vec=4",
                       "--quiet")
    assert code == 0, err
    code, out, err = cli("calibrate", "--db", db, "--candidates", "4", "--samples", "20",
                         "--json")
    assert code == 0, err
    row = json.loads(out)["rows"][0]
    assert row["n"] == 1 << 16 and len(row["candidates"]) >= 2
    pick = row["pick"]
    fastest = min(c["application_s"] for c in row["candidates"])
    tied = [c for c in row["candidates"] if c["application_s"] <= fastest * 1.02]
    # the store's rule (application_tie): of the lone calls within 2 % of the fastest, the
    # least replayed median
    assert pick["median_s"] == min(c["median_s"] for c in tied)
    import reducetune

    choice = reducetune.Reducer("float32", "sum", db=db).choice(1 << 16)
    assert (choice["variant"], choice["launch"]) == (pick["variant"], pick["launch"])


def test_the_fastest_of_each_launch_count_is_measured_too():
    from reducetune.runtime.calibrate import measured_first

    cands = [{"variant": f"v{i}", "launches": 2} for i in range(10)]
    cands[9]["launches"] = 1
    cands.append({"variant": "v10", "launches": 1})
    got = measured_first(cands, 4)
    assert [c["variant"] for c in got] == ["v0", "v1", "v2", "v3", "v9"]
    assert measured_first(cands, 20) == cands


def test_the_reports_pick_is_the_stores_rule_not_the_fastest_lone_call():
    """H200, 2026-11-26: two launches of one grid (cap_4, cap_1) 1 % apart in lone calls; the
    report named the faster call while the Reducer launched the store's pick (within
    application_tie, the least replayed median). Both now come from one rule."""
    from reducetune.runtime.calibrate import _size_row

    cands = [{"variant": "a", "median_s": 5e-6}, {"variant": "b", "median_s": 4e-6},
             {"variant": "c", "median_s": 1e-6}]
    row = _size_row("float32", "sum", 1 << 16, cands, [10.0e-6, 10.1e-6, 11.0e-6])
    assert row["pick"]["variant"] == "b"  # c is 10 % slower: outside the tie
    assert row["gain"] == 10.0e-6 / 10.1e-6
    row = _size_row("float32", "sum", 1 << 16, cands, [10.0e-6, 12.0e-6, 11.0e-6])
    assert row["pick"]["variant"] == "a"  # alone within 2 %
