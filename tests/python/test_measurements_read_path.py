"""The one public read path (issue 23 item 4): ``reducetune.measurements(db)`` (a pandas
DataFrame) and ``reducetune export csv`` (the same rows as CSV), on the committed H100 grid
recording (real measurements): every measurement once, the known point's numbers as the
recording holds them (read here by SQL, independently of the driver, and as literals)."""

from __future__ import annotations

import csv
import io
import sqlite3
import sys

import pytest

import reducetune
from reducetune.store.measurements import COLUMNS, measurement_rows, measurements_csv

from conftest import RECORDED

H100 = next((p for p in RECORDED if p.name == "h100_float32_sum_grid.db"), None)
pytestmark = pytest.mark.skipif(H100 is None, reason="the H100 grid recording is not present")

# The recording's fastest point at 2^16 (measurement 2504; ties with 2575 on the median).
KNOWN = {"measurement_id": 2504, "n": 65536, "launch_label": "ept_4.cap_4",
         "variant_label": "tunable.float32.sum.bs_128.u_2.v_2.warp_volatile_sync.blk_tree."
                          "fin_ticket", "median_s": 6.0479999519884585e-06}


def _sql(query: str) -> list[tuple]:
    with sqlite3.connect(f"file:{H100}?mode=ro", uri=True) as con:
        return con.execute(query).fetchall()


def test_rows_are_every_measurement_once_with_its_point_and_statistics():
    rows = measurement_rows(H100)
    (count,) = _sql("SELECT COUNT(*) FROM rt_measurements")[0]
    assert len(rows) == count == 4608
    assert [r["measurement_id"] for r in rows] == [i for (i,) in _sql(
        "SELECT id FROM rt_measurements ORDER BY id")]
    known = next(r for r in rows if r["measurement_id"] == KNOWN["measurement_id"])
    assert {k: known[k] for k in KNOWN} == KNOWN
    # the point's parameters are columns of their own: compile-time and launch
    assert (known["block_size"], known["vec"], known["finish"], known["elements_per_thread"],
            known["grid_cap"]) == (128, 2, "ticket", 4, 4)
    assert (known["device"], known["determinism"], known["status"], known["flags"]) == (
        "NVIDIA H100 80GB HBM3", "run_to_run", "ok", "")
    ((median, gbps, pct),) = _sql("SELECT median_s, gbps, pct_of_ceiling FROM rt_measurements "
                                  f"WHERE id = {KNOWN['measurement_id']}")
    assert (known["median_s"], known["gbps"], known["pct_of_ceiling"]) == (median, gbps, pct)
    assert known["study"].startswith("tunable.float32.sum.n_65536.grid.det.")


def test_filters_keep_only_what_they_name():
    small = measurement_rows(H100, n=65536)
    assert len(small) == 2304 and {r["n"] for r in small} == {65536}
    assert measurement_rows(H100, op="max") == []
    with pytest.raises(reducetune.InvalidConfiguration, match="unknown op 'avg'"):
        measurement_rows(H100, op="avg")
    with pytest.raises(reducetune.StoreError, match="no device 'GPU-none'"):
        measurement_rows(H100, device="GPU-none")


def test_the_dataframe_is_the_same_table():
    pandas = pytest.importorskip("pandas")
    df = reducetune.measurements(H100)
    assert isinstance(df, pandas.DataFrame) and len(df) == 4608
    assert list(df.columns[:11]) == list(COLUMNS[:11])
    fastest = df[df.n == 65536].sort_values(["median_s", "measurement_id"]).iloc[0]
    assert (fastest.measurement_id, fastest.variant_label, fastest.median_s) == (
        KNOWN["measurement_id"], KNOWN["variant_label"], KNOWN["median_s"])
    # the best of each size, as an analysis starts: grouped by the parameters' columns
    assert df.groupby("n").median_s.min().to_dict()[65536] == KNOWN["median_s"]


def test_without_pandas_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(ImportError, match=r"reducetune\[pandas\].*export csv"):
        reducetune.measurements(H100)


def test_export_csv_writes_the_same_rows(cli, tmp_path):
    out = tmp_path / "m.csv"
    code, _, err = cli("export", "csv", "--db", H100, "-o", out)
    assert code == 0, err
    table = list(csv.DictReader(io.StringIO(out.read_text())))
    rows = measurement_rows(H100)
    assert len(table) == len(rows) == 4608
    known = next(r for r in table if r["measurement_id"] == str(KNOWN["measurement_id"]))
    assert float(known["median_s"]) == KNOWN["median_s"]
    assert known["launch_label"] == KNOWN["launch_label"] and known["elements_per_thread"] == "4"
    assert out.read_text() == measurements_csv(H100)
    # written by export csv: a second export may replace it; a foreign file is refused
    assert cli("export", "csv", "--db", H100, "-o", out)[0] == 0
    foreign = tmp_path / "notes.csv"
    foreign.write_text("mine\n")
    code, _, err = cli("export", "csv", "--db", H100, "-o", foreign)
    assert code == 2 and "not written by reducetune export csv" in err
    assert foreign.read_text() == "mine\n"


def test_percent_of_agrees_with_the_cores_stored_percentages():
    # the one Python "% of ceiling" (evaluate/base.py) gives what measure/bandwidth.hpp
    # stored for each point, against the recording's own streaming ceiling
    from reducetune.evaluate.base import percent_of
    from reducetune.store.files import ceilings_by_gpu

    rows = measurement_rows(H100, n=65536)
    ceiling = ceilings_by_gpu(H100)[rows[0]["device_uuid"]]
    assert all(percent_of(r["gbps"], ceiling) == pytest.approx(r["pct_of_ceiling"], rel=1e-9)
               for r in rows)
    assert percent_of(1.0, 0.0) is None and percent_of(None, 2.0) is None
    assert percent_of(1.0, 4.0) == 25.0


def test_reading_leaves_no_wal_or_shm_and_a_read_only_copy_is_read(tmp_path):
    # the recordings are WAL-mode files: a plain read-only sqlite3 connection would leave
    # -wal and -shm beside them (store/files.py reads as the C++ store's readers do)
    import shutil

    from reducetune.store.files import ceilings_by_gpu, studies

    db = tmp_path / "rec#1.db"  # a '#' in the name is a name, not a URI fragment
    shutil.copy(H100, db)
    assert len(studies(db)) == 2 and ceilings_by_gpu(db)
    assert len(measurement_rows(db)) == 4608
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rec#1.db"]
    folder = tmp_path / "ro"
    folder.mkdir()
    shutil.copy(H100, folder / "rec.db")
    (folder / "rec.db").chmod(0o444)
    folder.chmod(0o555)
    try:
        assert len(studies(folder / "rec.db")) == 2
        assert sorted(p.name for p in folder.iterdir()) == ["rec.db"]
    finally:
        folder.chmod(0o755)
