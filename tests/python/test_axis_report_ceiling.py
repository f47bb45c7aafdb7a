"""The axis report's "× ceiling" (benchmarks/_axis_report.py, ceiling_ratio): rates, not times.
The streaming ceiling reads the input and writes nothing, so a reduction that writes its output
can reach only input / (input + output) of its time; the report compares bytes per second
(reducetune's read + written, the streaming kernel's read, memcpy's read + written) and keeps
the literal time ratio and that bound beside it. Checked on a committed H200 run (its raw
medians, not the report's text) and on a synthetic row whose numbers are made up here. Both
rows hold the streaming kernel's time in the tuner's protocol only (``streaming_s``, as files
written before the rounds timed it): the report falls back to it (test_axis_bench_ceilings.py
has rows with the streaming kernel timed in the rounds)."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from reducetune.benchmarks import _axis_report

H200_RUN = (Path(__file__).resolve().parents[2] / "docs" / "results" /
            "h200_2026-11-26_axis_bench_shuffled_rounds" / "axis.json.xz")


def _h200_row(dtype: str, total: int, kind: str, r: int) -> dict:
    result = json.loads(lzma.open(H200_RUN).read())
    (row,) = [q for q in result["rows"] if (q["dtype"], q["total"], q["kind"], q["r"]) ==
              (dtype, total, kind, r)]
    return {**row, "peak": result["device"]["peak_bytes_per_s"]}


def test_the_h200_runs_r2_columns_are_094_of_the_streaming_rate_though_063_of_its_time():
    """float32 columns (2, 2^27) on the H200 of 2026-11-26: reducetune moved 84.6 % of the HBM
    peak (read + written), the streaming kernel read at 89.7 %; the old time ratio, 0.63, was
    held under 2/3 by the 0.5 GiB output the streaming kernel does not write."""
    row = _h200_row("float32", 1 << 28, "columns", 2)
    q = _axis_report.ratios(row)
    assert q["pct_peak"] == pytest.approx(84.6, abs=0.05)
    streaming_pct = 100 * (4 << 28) / row["streaming_s"] / row["peak"]
    assert streaming_pct == pytest.approx(89.7, abs=0.05)
    # memcpy's rate there: 81.8 % of the peak; the file predates the streaming kernel in the
    # rounds, so its ceiling is the kernel in the tuner's protocol (_axis_ceilings.py)
    assert q["ceiling"] == "streaming_protocol"
    assert q["x_streaming_protocol"] == q["x_ceiling"]
    assert q["x_ceiling"] == pytest.approx(84.6 / 89.7, abs=0.002)
    assert q["x_ceiling_time"] == pytest.approx(0.63, abs=0.005)
    assert q["time_bound"] == pytest.approx(2 / 3)
    assert q["x_ceiling_time"] < q["time_bound"] < q["x_ceiling"]


def _row(t: float, memcpy_s: float, streaming_s: float) -> dict:
    """float32 rows of 2 over 2^24 elements: 64 MiB read, 32 MiB written."""
    view = [1 << 23, 2, 1]
    return {"dtype": "float32", "total": 1 << 24, "kind": "rows", "r": 2, "axis": 1,
            "shape": view[:2], "view": view, "point": {"name": "staged_short_rows"},
            "app_s": {"reducetune": t, "memcpy": memcpy_s, "torch": 2 * t},
            "peers_correct": {}, "streaming_s": streaming_s, "peak": 4e12,
            "tune": {"best_s": 1.0, "best_batch_invariant_s": None}}


def test_the_faster_ceiling_is_the_one_with_the_higher_rate_not_the_shorter_time():
    # memcpy moves 96 MiB in 40 us (2.5 TB/s); streaming reads 64 MiB in 30 us (2.2 TB/s):
    # the shorter time is streaming's, the higher rate memcpy's
    moved, read = 96 << 20, 64 << 20
    q = _axis_report.ratios(_row(t=48e-6, memcpy_s=40e-6, streaming_s=30e-6))
    assert _axis_report.ceiling_rates(_row(48e-6, 40e-6, 30e-6)) == pytest.approx(
        {"memcpy": moved / 40e-6, "streaming_protocol": read / 30e-6})
    assert q["ceiling"] == "memcpy"
    assert q["x_ceiling"] == pytest.approx(40 / 48)  # same bytes as memcpy: a time ratio
    assert q["x_ceiling_time"] == pytest.approx(30 / 48)
    # streaming faster by rate: the ratio is of rates, whatever the times
    q = _axis_report.ratios(_row(t=48e-6, memcpy_s=60e-6, streaming_s=25e-6))
    assert q["ceiling"] == "streaming_protocol"  # the row has no streaming time in the rounds
    assert q["x_ceiling"] == pytest.approx((moved / 48e-6) / (read / 25e-6))
    assert q["x_ceiling_time"] == pytest.approx(25 / 48) and q["time_bound"] == pytest.approx(2 / 3)


def test_a_row_without_ceilings_has_no_ratio_to_them():
    q = _axis_report.ceiling_ratio({**_row(48e-6, 40e-6, 0.0), "app_s": {"reducetune": 48e-6}})
    assert q["x_ceiling"] is None and q["ceiling"] is None and q["x_ceiling_time"] is None


def test_the_summary_names_the_worst_shape_and_the_table_shows_the_time_ratio_and_bound():
    worse = _row(t=60e-6, memcpy_s=40e-6, streaming_s=30e-6)
    other = {**_row(t=45e-6, memcpy_s=40e-6, streaming_s=30e-6), "kind": "columns",
             "shape": [2, 1 << 23], "view": [1, 2, 1 << 23]}
    result = {"rows": [worse, other]}
    (line,) = [s for s in _axis_report.summary(result) if s.startswith("- float32")]
    assert (f"× faster ceiling (rates) worst {40 / 60:.2f} (rows (8388608, 2)); as times "
            f"worst {30 / 60:.2f} (rows (8388608, 2), bound 0.67)") in line
    cells = _axis_report.table(result)[2].split(" | ")
    # × ceiling, × streaming in the tuner's protocol (64 MiB in 30 us against 96 MiB in 60 us),
    # no mixed stream in this row, the time ratio and its bound
    assert cells[-5:-1] == [f"{40 / 60:.2f}", f"{(96 / 60) / (64 / 30):.2f}", "–",
                            f"{30 / 60:.2f} (0.67)"]
