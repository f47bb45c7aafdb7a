"""The axis benchmark on the GPU (skipped without one; torch needed): two small shapes of
2^20 elements run end to end (benchmarks/axis.run) with a transferred point, then the report
and the progress line. What the screening must not change: the best is a verified candidate
timed in the rounds and no slower there than any other one in them, the transferred point is
timed whatever its screening said, every candidate screened out carries its screening time,
and a peer marked screened has 3 samples. What the statistics add: every contender's median
lies in its recorded 95 % interval, the rounds took at least --samples calls and at most the
cap and say why they stopped, the tie follows the ratio's interval, the chosen point is
measured in the tuner's protocol, the streaming ceiling is timed in the rounds (never a peer),
and the Python call's reducers are closed after each shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import NO_GPU

pytestmark = pytest.mark.skipif(NO_GPU is not None, reason=NO_GPU or "")
torch = pytest.importorskip("torch", reason="the axis benchmark times PyTorch tensors")


def test_two_shapes_run_end_to_end_with_a_transferred_point(tmp_path: Path, capsys) -> None:
    from reducetune.benchmarks import _axis_report
    from reducetune.benchmarks._axis_stats import MAX_CALLS
    from reducetune.benchmarks.axis import SLOW_PEER_SAMPLES, run, shapes
    from reducetune.runtime import axis as axis_runtime

    todo = shapes((1 << 20,), (2, 128))
    todo = [s for s in todo if s["kind"] == "rows"] + [todo[-1]]  # rows of 2, 128; columns
    # the transferred point: the block-per-row preset, far slower over 2^19 rows of 2
    transfer = {("float32", 1 << 20, "rows", 2): {
        "from_device": "other GPU", "point": _block_rows()}}
    result = run(todo, 10, None, 1e9, transfer=transfer)
    assert [r["r"] for r in result["rows"]] == [s["r"] for s in todo]
    for row in result["rows"]:
        cands = row["tune"]["candidates"]
        timed = [c for c in cands if "median_s" in c]
        out = [c for c in cands if c.get("screened_out")]
        # every candidate of the tune is screened; the transferred point is timed unscreened
        assert all(c["screen_s"] > 0 and c["screen_calls"] >= 1 for c in cands
                   if not c["name"].startswith("transfer "))
        assert all("median_s" not in c for c in out)
        assert row["tune"]["best_s"] == min(c["median_s"] for c in timed)
        assert row["point"]["name"] in {c["name"] for c in timed}
        assert set(row["phase_s"]) == {"tune_s", "protocol_s", "peers_setup_s", "rounds_s"}
        assert all(row["app_samples"][k] == SLOW_PEER_SAMPLES for k in row["screened"])
        assert 10 <= row["app_samples"]["reducetune"] <= MAX_CALLS
        assert row["app_stopped"]["reducetune"] in {"converged", "max_calls", "time_cap"}
        for name, (low, high) in row["app_interval"].items():
            assert low <= row["app_s"][name] <= high
        vs = row["versus_peer"]
        assert vs["tie"] == (vs["interval"][0] <= 1 <= vs["interval"][1])
        proto = row["protocol"]
        assert proto["status"] == "ok", proto
        assert proto["median_low_s"] <= proto["median_s"] <= proto["median_high_s"]
        assert row["app_s"]["reducetune_py"] > 0
        assert row["python_call_point"] == "table"  # the tuned point, not the rule's
        # the streaming ceiling in the rounds, in the protocol's fastest shape; never a peer
        assert row["app_s"]["streaming"] > 0 and row["streaming_protocol_s"] > 0
        assert row["streaming_shape"] and vs["peer"] != "streaming"
        # whether the Python call went to cudaMalloc: read over the rounds and its own calls
        assert "segment.all.allocated" in row["alloc"]["python_call"]
    moved = result["rows"][0]["transfer"]
    assert moved["verified"] and moved["from_device"] == "other GPU"
    assert moved["ratio_to_best"] == pytest.approx(
        moved["median_s"] / min(c["median_s"] for c in result["rows"][0]["tune"]["candidates"]
                                if "median_s" in c and not c["name"].startswith("transfer")))
    assert result["rows"][1]["transfer"] is None
    assert "3/3 shapes" in capsys.readouterr().err
    # the Python call's reducers (one per shape's table file) were closed with their shape
    assert not [k for k in axis_runtime._tuned if k[4] and "axis_bench_" in k[4]]
    _axis_report.write({**result, "command": "test", "date": "today"}, tmp_path / "axis")
    assert "other GPU's run" in (tmp_path / "axis.md").read_text()
    json.dumps(result)  # the result stays JSON


def _block_rows() -> dict:
    from reducetune._space import Space, limits_for_arch
    from reducetune import _core

    space = Space("axis", "float32", "sum", limits_for_arch(_core.query_device(0)["arch"]))
    p = next(p for p in space.presets() if not p.reasons and "block" in p.name)
    return {"name": p.name, "variant": p.variant_label, "launch": p.launch_label}
