"""``reducetune db merge`` carries what ``reducetune calibrate`` recorded (rt_application_times).

On a copy of the H200 grid recording, lone-call times recorded at one size (as calibrate
records them: ``_core.record_application_times``) turn that size's pick to the fourth-fastest
replayed point; after ``db merge`` into a new file, ``best`` and ``export json`` of the merged
file answer as the source does, its times under the merged file's own measurement ids. Merging
twice adds no row. Before the merge carried the table, the merged file's pick at that size was
the source's pick before calibrating, which the test checks differs from the calibrated one.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import replay_support
from reducetune import _core

pytestmark = replay_support.needs_h200_grid("db merge of a calibrated file")


def _best(cli, db: Path, n: int) -> dict:
    """best --json at n: the protocol's fastest point and, under "application", the pick the
    Reducer launches (calibrated: the fastest lone call). Less the measurement id, which is
    the file's own."""
    code, out, err = cli("best", "--db", db, "--dtype", "float32", "--op", "sum", "--n", n,
                         "--json")
    assert code == 0, err
    answer = json.loads(out)
    del answer["measurement_id"]
    return answer


def _application_picks(db: Path) -> dict[int, dict]:
    doc = json.loads(_core.export_json(str(db)))
    return {r["bucket_n"]: r["application"] for r in doc["devices"][0]["tables"][0]["rules"]}


def _times(db: Path) -> list[tuple[str, str, int, float, int]]:
    """Every application time as (variant, launch, n, median, samples): by the point, not by
    the measurement id, which differs between two files. Read-only."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        return sorted(c.execute(
            "SELECT v.label, m.launch_label, w.n, a.median_s, a.sample_count"
            " FROM rt_application_times a JOIN rt_measurements m ON m.id = a.measurement_id"
            " JOIN rt_variants v ON v.id = m.variant_id JOIN rt_workloads w"
            " ON w.id = m.workload_id").fetchall())


@pytest.fixture
def calibrated(cli, tmp_path: Path) -> tuple[Path, int, dict]:
    """(a grid copy calibrated at its smallest size, that size, best's answer there before the
    calibration)."""
    db, uuid = replay_support.grid_copy(tmp_path)
    by_n = _core.application_candidates(str(db), "float32", "sum", uuid)
    n = sorted(by_n)[0]
    before = _best(cli, db, n)
    cands = by_n[n][:4]
    assert len(cands) == 4
    # the fourth-fastest by the protocol is the fastest lone call
    _core.record_application_times(str(db), [
        (c["measurement_id"], 9e-6 - (1e-6 if i == 3 else 0) + i * 1e-8, 50)
        for i, c in enumerate(cands)])
    return db, n, before


def test_merge_carries_the_calibration_and_best_answers_alike(cli, calibrated, tmp_path):
    source, n, before = calibrated
    want = _best(cli, source, n)
    # the calibration moved the pick: a merged file without the times would answer `before`
    assert want["application"]["application_s"] == pytest.approx(8e-6 + 3e-8)
    assert want["application"]["variant"] != before["application"]["variant"] or (
        want["application"]["launch"] != before["application"]["launch"])
    merged = tmp_path / "merged.db"
    code, out, err = cli("db", "merge", source, "--db", merged)
    assert code == 0, err
    assert "4 application times copied, 0 kept out" in out
    assert _times(merged) == _times(source) and len(_times(source)) == 4
    assert _best(cli, merged, n) == want
    assert _application_picks(merged) == _application_picks(source)


def test_merging_twice_adds_no_application_time(cli, calibrated, tmp_path):
    source, n, _ = calibrated
    merged = tmp_path / "merged.db"
    assert cli("db", "merge", source, "--db", merged)[0] == 0
    first = _times(merged)
    code, out, err = cli("db", "merge", source, "--db", merged)
    assert code == 0, err
    assert "0 application times copied, 4 kept out" in out
    assert _times(merged) == first
    with sqlite3.connect(f"file:{merged}?mode=ro", uri=True) as c:
        assert c.execute("SELECT count(*) FROM rt_application_times").fetchone()[0] == 4
    assert _best(cli, merged, n) == _best(cli, source, n)
