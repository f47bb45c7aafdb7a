"""Issue 26's targets judged from a benchmark's rows (benchmarks/_axis_targets, the block of
axis.md and scripts/axis-targets), without a GPU: on recorded H200 runs of 2026-11-27 (real
measurements: the unprimed bfloat16 run misses 85 % of the peak at 7 of 16 shapes, the primed
runs meet every target), and on made-up ratios at the edges (a 0.9496 x the ceiling, which the
summary's two digits print as 0.95, is a miss)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reducetune.benchmarks import _axis_report
from reducetune.benchmarks._axis_targets import GEOMEAN, judge, verdicts

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"
UNPRIMED = RESULTS / "h200_2026-11-27_tile_groups" / "28_bfloat16" / "axis.json.xz"
PRIMED = sorted((RESULTS / "h200_2026-11-27_axis_bench_primed").glob("*/axis.json.xz"))
H200_ALL = sorted((RESULTS / "h200x2_2026-11-27_axis_bench_primed").glob("*/axis.json.xz"))
H100_ALL = sorted((RESULTS / "h100_2026-11-27_axis_bench_primed_all").glob("*/axis.json.xz"))
HOST3 = RESULTS / "h200_2026-11-27_axis_bench_primed_host3" / "28_bfloat16" / "axis.json.xz"
HOST4 = RESULTS / "h200_2026-11-27_axis_bench_climb_ties"
H200_28_FLOAT32 = (RESULTS / "h200_2026-11-28_axis_bench_float32_primed" / "28_float32" /
                   "axis.json.xz")
H100_SIX = RESULTS / "h100_2026-11-27_axis_bench_primed" / "28_bfloat16_six" / "axis.json.xz"


def _pair(kind="rows", r=128, pct=90.0, xc=0.99, xp=1.2, tie=False, xt=None):
    return ({"pct_peak": pct, "x_ceiling": xc, "x_peer": xp, "tie": tie, "x_torch": xt},
            {"kind": kind, "r": r, "shape": [1 << 21, r]})


def test_a_ceiling_ratio_that_rounds_to_the_target_is_still_a_miss():
    got = judge([_pair(), _pair(r=2, xc=0.9496)], 28)
    _, met, what = next(v for v in got if "ceiling" in v[0])
    assert not met and "0.9496" in what and "rows (2097152, 2)" in what
    assert "1 of 2 shapes under" in what
    assert next(v for v in judge([_pair(xc=0.95)], 28) if "ceiling" in v[0])[1]


def test_a_tie_is_no_miss_but_ties_past_one_in_ten_are():
    ten = [_pair() for _ in range(9)] + [_pair(xp=0.99, tie=True)]
    got = {name: met for name, met, _ in judge(ten, 28)}
    assert got["1.0 x fastest peer (ties apart)"] and got["ties in at most 1 shape in 10"]
    eleven = ten[:8] + [_pair(xp=1.005, tie=True)] * 2
    got = {name: met for name, met, _ in judge(eleven, 28)}
    assert not got["ties in at most 1 shape in 10"]
    slower = {n: m for n, m, _ in judge([_pair(), _pair(xp=0.98)], 28)}
    assert not slower["1.0 x fastest peer (ties apart)"]


def test_the_bandwidth_targets_hold_at_2p28_and_the_geometric_means_per_total():
    low = [_pair(pct=84.9, xp=1.2)] * 4
    at28 = {n: m for n, m, _ in judge(low, 28)}
    assert not at28["85 % of peak"] and at28[f"geometric mean {GEOMEAN[28]:g} x fastest peer"]
    at24 = {n: m for n, m, _ in judge(low, 24)}
    assert "85 % of peak" not in at24  # 2^24 has the peers' targets only
    assert not at24[f"geometric mean {GEOMEAN[24]:g} x fastest peer"]  # 1.2 < 1.3
    short = judge([_pair(r=2, xt=2.4), _pair(r=16, xt=9.0), _pair(r=128, xt=1.0)], 28)
    name, met, what = short[-1]
    assert name.startswith("rows of 16 or fewer") and not met and "2.40" in what


def test_a_recorded_unprimed_h200_run_misses_85_percent_and_the_primed_ones_meet_all():
    old = _axis_report.targets(_axis_report.load(UNPRIMED))
    assert len(old) == 1 and "85 % of peak: MISSED (worst 82.21 %" in old[0]
    assert "7 of 16 shapes under" in old[0]
    assert "0.95 x faster ceiling: met" in old[0]
    assert len(PRIMED) == 2
    for path in PRIMED:
        (line,) = _axis_report.targets(_axis_report.load(path))
        assert "MISSED" not in line and line.count(": met") == 6, line


@pytest.mark.parametrize("paths, gpu, commit", [(H100_ALL, "H100", "9f41ce6"),
                                                 (H200_ALL, "H200", "e6b864f")])
def test_each_gpus_four_primed_runs_meet_every_target_at_both_totals(paths, gpu, commit):
    """A complete primed record of each GPU, every target met: the H100's of 2026-11-27
    (9f41ce6) and the H200's of the same day (e6b864f, host 2: the worst 0.9500 x the faster
    ceiling; other H200 hosts missed by up to 0.005, docs/results/h200_2026-11-28_write_stream
    says why). At 2^28 six targets each (bandwidth, ceiling and peers), at 2^24 the peers'
    three; all 16 shapes of each run measured."""
    assert [p.parent.name for p in paths] == ["24_bfloat16", "24_float32", "28_bfloat16",
                                              "28_float32"]
    for path in paths:
        record = _axis_report.load(path)
        assert gpu in record["device"]["name"] and record["commit"] == commit
        (line,) = _axis_report.targets(record)
        wanted = 6 if path.parent.name.startswith("28") else 3
        assert "MISSED" not in line and line.count(": met") == wanted, line
        assert "(16 shape(s) measured)" in line, line


def test_the_h200_hosts_3_and_4_misses_are_judged_missed_with_their_worst_shape():
    """Real misses, judged as the README and the closing note state them: host 3 (c6049a4)
    bfloat16 under 85 % at two shapes and under 0.95 x at one; host 4 (dcae1c3, the climb from
    ties) bfloat16 all met, float32 0.95 x missed by 0.001 at rows of 16."""
    (three,) = _axis_report.targets(_axis_report.load(HOST3))
    assert "85 % of peak: MISSED (worst 83.24 % (rows (2097152, 128)), 2 of 16 shapes" in three
    assert "0.95 x faster ceiling: MISSED (worst 0.9456 (rows (2097152, 128))" in three
    (bf16,) = _axis_report.targets(_axis_report.load(HOST4 / "28_bfloat16" / "axis.json.xz"))
    assert "MISSED" not in bf16 and bf16.count(": met") == 6
    (f32,) = _axis_report.targets(_axis_report.load(HOST4 / "28_float32" / "axis.json.xz"))
    assert "0.95 x faster ceiling: MISSED (worst 0.9490 (rows (16777216, 16))" in f32
    assert f32.count(": met") == 5


def test_a_later_h200_host_meets_every_float32_target_where_host_4_missed_one():
    """The same kernels and tune as host 4 (dcae1c3's), another H200 (2026-11-28, c6beb2c):
    the float32 short rows that missed 0.95 x by 0.001 there are met here, the worst shape
    rows of 128 at 0.959 (docs/results/h200_2026-11-28_axis_bench_float32_primed)."""
    (line,) = _axis_report.targets(_axis_report.load(H200_28_FLOAT32))
    assert line.startswith("- float32, 2^28 (16 shape(s) measured): 85 % of peak: met")
    assert "0.95 x faster ceiling: met (worst 0.9590 (rows (2097152, 128)))" in line
    assert "MISSED" not in line and line.count(": met") == 6


def test_the_script_exits_1_where_a_record_misses_a_target():
    run = [sys.executable, str(ROOT / "scripts" / "axis-targets")]
    # the reducetune this test imports (installed, or PYTHONPATH=driver with its _core built)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    ok = subprocess.run(run + [str(p) for p in PRIMED], capture_output=True, text=True, env=env,
                        check=False)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.count("commit e6b864f") == 2
    bad = subprocess.run(run + [str(UNPRIMED)], capture_output=True, text=True, env=env,
                        check=False)
    assert bad.returncode == 1 and "MISSED" in bad.stdout


def test_the_report_prints_the_targets_block(tmp_path: Path):
    result = _axis_report.load(PRIMED[0])
    _axis_report.write(result, tmp_path / "axis")
    md = (tmp_path / "axis.md").read_text()
    block = md[md.index("Issue 26's targets:"):].splitlines()[1]
    assert block.startswith("- bfloat16, 2^28 (16 shape(s) measured): 85 % of peak: met")
    assert verdicts("bfloat16", 28, [_pair()]).startswith("- bfloat16, 2^28 (1 shape(s) measured)")


def test_shapes_the_time_limit_left_out_are_named_beside_the_verdicts():
    """The H100's primed run of 2026-11-27 left columns (4194304, 64) out (its time limit):
    the targets met over its 6 shapes say nothing of the seventh."""
    (line,) = _axis_report.targets(_axis_report.load(H100_SIX))
    assert line.startswith("- bfloat16, 2^28 (6 shape(s) measured, 1 not run): 85 % of peak: met")
    nothing = {**_axis_report.load(H100_SIX), "rows": []}
    (line,) = _axis_report.targets(nothing)
    assert "(0 shape(s) measured, 1 not run)" in line and "MISSED (not measured)" in line


@pytest.mark.parametrize("path", PRIMED, ids=lambda p: p.parent.name)
def test_the_primed_records_name_their_commit(path: Path):
    assert _axis_report.load(path)["commit"] == "e6b864f"
