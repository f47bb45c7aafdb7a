"""The axis benchmark's report without a GPU (benchmarks/_axis_report.py), from a synthetic
result in the benchmark's JSON layout: the ratio to the fastest correct peer, a tie when the
ratio's interval (from the medians' 95 % intervals) holds 1, % of peak counting bytes read + written, the
better of the two ceilings, batch invariance's price, the summary lines, the table and the
plot. The numbers are made up here; no GPU measured them."""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path

import pytest

from reducetune.benchmarks import _axis_report
from reducetune.benchmarks._axis_stats import MAX_CALLS
from reducetune.benchmarks.axis import (RS, TOTALS, _transfer_candidate, app_stats, only,
                                       progress, read_transfer, shapes)


def _row(kind: str, r: int, t: float, peers: dict[str, float], noise: float = 0.01,
         correct: dict[str, bool] | None = None) -> dict:
    """A row whose every median is known to +-noise (its 95 % interval)."""
    total = 1 << 24
    view = [total // r, r, 1] if kind == "rows" else [1, r, total // r]
    app = {"reducetune": t, "memcpy": 2e-5, **peers}
    return {"total": total, "kind": kind, "r": r, "axis": 1, "shape": [view[0], r],
            "view": view, "point": {"name": "warp_rows"}, "app_s": app,
            "app_interval": {k: [v * (1 - noise), v * (1 + noise)] for k, v in app.items()},
            "app_noise": {k: noise for k in app},
            "peers_correct": correct or {}, "streaming_s": 3e-5,
            "tune": {"best_s": 1.0, "best_batch_invariant": "warp_rows",
                     "best_batch_invariant_s": 1.05}}


def _result(rows: list[dict]) -> dict:
    return {"device": {"name": "Test GPU", "driver_version": "0", "peak_bytes_per_s": 4e12},
            "rows": rows, "skipped": [], "samples": 10, "commit": "abc", "peers_missing": [],
            "date": "2026-11-26 00:00 UTC", "command": "python -m reducetune.benchmarks.axis",
            "protocol": {"reducetune_point": "tuned", "application": "events",
                         "ceilings": "memcpy and streaming"}}


def test_the_ratio_is_to_the_fastest_correct_peer_and_a_small_difference_is_a_tie():
    fast = _row("rows", 16, 2.0e-5, {"torch": 6e-5, "cupy_cub": 3e-5, "jax": 1e-5},
                correct={"jax": False})  # a wrong answer is no peer
    q = _axis_report.ratios({**fast, "peak": 4e12})
    assert q["peer"] == "cupy_cub" and q["x_peer"] == pytest.approx(1.5) and not q["tie"]
    assert q["x_torch"] == pytest.approx(3.0)
    assert q["x_ceiling"] == pytest.approx(1.0)  # memcpy's 2e-5 s, the better ceiling
    assert q["bi_cost"] == pytest.approx(1.05)
    bytes_ = 4 * ((1 << 24) + (1 << 20))
    assert q["pct_peak"] == pytest.approx(100 * bytes_ / 2e-5 / 4e12)
    assert q["interval"] == pytest.approx([3e-5 * 0.99 / (2e-5 * 1.01),
                                           3e-5 * 1.01 / (2e-5 * 0.99)])
    close = _axis_report.ratios({**_row("rows", 16, 2.0e-5, {"torch": 2.02e-5}), "peak": 4e12})
    assert close["tie"] and close["x_peer"] == pytest.approx(1.01)
    assert close["interval"][0] < 1 < close["interval"][1]
    line = _axis_report.table(_result([_row("rows", 16, 2.0e-5, {"torch": 2.02e-5})]))[2]
    assert "| tie (1.01, 0.99–1.03) |" in line  # the tie's ratio and its interval
    # known to 0.2 % each, the same 1 % margin is no tie
    known = _row("rows", 16, 2.0e-5, {"torch": 2.02e-5}, noise=0.002)
    assert not _axis_report.ratios({**known, "peak": 4e12})["tie"]


def test_a_file_without_intervals_calls_no_tie():
    """The files of 2026-11-26 recorded each contender's relative standard deviation only: no
    interval, no tie (the spread of single calls is not the uncertainty of a median)."""
    row = _row("rows", 16, 2.0e-5, {"torch": 2.02e-5}, noise=0.05)
    del row["app_interval"]
    q = _axis_report.versus_peer(row)
    assert q["interval"] is None and not q["tie"] and q["x_peer"] == pytest.approx(1.01)


def test_the_report_writes_the_summary_the_table_and_the_plot(tmp_path: Path):
    rows = [_row("rows", 2, 2e-5, {"torch": 8e-5}), _row("columns", 128, 4e-5, {"torch": 2e-5})]
    _axis_report.write(_result(rows), tmp_path / "axis")
    md = (tmp_path / "axis.md").read_text()
    assert "worst 0.50" in md and f"geometric mean {math.sqrt(4 * 0.5):.2f}" in md
    assert "× torch.sum eager 4.00" in md
    assert md.count("| float32 rows") + md.count("| float32 columns") == 2
    assert "+5.0 %" in md
    assert (tmp_path / "axis.png").stat().st_size > 1000
    json.dumps(_result(rows))  # the result stays JSON


def test_the_benchmark_shapes_cover_both_totals_rows_and_columns_r_by_powers_of_8():
    s = shapes(TOTALS, RS)
    assert RS == (2, 16, 128, 1024, 8192, 65536, 524288, 4194304)
    assert len(s) == 2 * 2 * 8 and {x["dtype"] for x in s} == {"float32"}
    assert len(shapes(TOTALS, RS, ("float32", "bfloat16"))) == 2 * len(s)
    for x in s:
        outer, r, inner = x["view"]
        assert outer * r * inner == x["total"]
        assert (inner == 1) == (x["kind"] == "rows")


def test_only_keeps_the_named_shapes_of_every_total_and_dtype_and_refuses_an_unknown_one():
    every = shapes(TOTALS, RS, ("float32", "bfloat16"))
    assert only(every, None) == every
    picked = only(every, ["columns:524288", "rows:128"])
    assert len(picked) == 2 * 2 * 2  # two shapes, both totals, both dtypes
    assert {(s["kind"], s["r"]) for s in picked} == {("columns", 524288), ("rows", 128)}
    with pytest.raises(SystemExit, match=r"--only rows:3: no such shape here; one of "
                                         r"columns:2, columns:16"):
        only(every, ["rows:128", "rows:3"])


def test_a_far_slower_peer_gets_3_samples_and_the_others_every_round():
    # fake timers: CUB's segmented reduce 200x the fastest (its 2^27 rows of 2 on an H100)
    calls: dict[str, int] = {}

    def timer(name: str, s: float):
        def once() -> float:
            calls[name] = calls.get(name, 0) + 1
            return s
        return once

    timers = {"reducetune": timer("reducetune", 1e-3), "torch": timer("torch", 2e-3),
              "cub_segmented": timer("cub_segmented", 0.2), "memcpy": timer("memcpy", 1e-3)}
    app, screened, slow = app_stats(timers, 20)
    assert slow == ["cub_segmented"] and screened["cub_segmented"] == pytest.approx(0.2)
    assert app["cub_segmented"]["samples"] == 3 and app["torch"]["samples"] == 20
    assert app["cub_segmented"]["median_s"] == pytest.approx(0.2)
    # screening: warm-up + 1 call (over 50x); rounds: 1 warm-up + 3 primed samples
    assert calls["cub_segmented"] == 2 + 1 + 2 * 3
    assert calls["torch"] == 4 + 3 + 2 * 20


def test_a_slow_fastest_peer_is_flagged_screened_in_the_table():
    row = {**_row("rows", 2, 1e-3, {"cub_segmented": 9e-3}), "screened": ["cub_segmented"]}
    line = _axis_report.table(_result([row]))[2]
    assert "cub_segmented (screened)" in line


def test_the_transfer_entry_is_read_and_reported(tmp_path: Path):
    other = _result([{**_row("rows", 2, 1e-3, {"torch": 2e-3}), "dtype": "bfloat16",
                      "point": {"name": "staged_short_rows vec=8", "variant": "v", "launch": "l"}}])
    other["device"]["name"] = "NVIDIA H200"
    path = tmp_path / "h200.json"
    path.write_text(json.dumps(other))
    got = read_transfer(str(path))
    assert got == {("bfloat16", 1 << 24, "rows", 2): {
        "from_device": "NVIDIA H200",
        "point": {"name": "staged_short_rows vec=8", "variant": "v", "launch": "l"}}}
    entry = got[("bfloat16", 1 << 24, "rows", 2)]
    here = [{**_row("rows", 2, 1e-3, {"torch": 2e-3}),
             "transfer": {**entry, "verified": True, "median_s": 1.1e-3, "ratio_to_best": 1.1}},
            {**_row("rows", 16, 1e-3, {"torch": 2e-3}),
             "transfer": {**entry, "verified": False, "median_s": None, "ratio_to_best": None}},
            _row("rows", 128, 1e-3, {"torch": 2e-3})]
    _axis_report.write(_result(here), tmp_path / "axis")
    md = (tmp_path / "axis.md").read_text()
    assert "NVIDIA H200's run" in md
    assert "| staged_short_rows vec=8: 1.10 |" in md
    assert "| staged_short_rows vec=8: wrong or not runnable |" in md
    assert md.count("| – |\n") == 1  # the shape the other run did not hold


@pytest.mark.parametrize("recorded", ["tile_columns_split lanes=16",
                                      "transfer tile_columns_split lanes=16",
                                      "transfer transfer tile_columns_split lanes=16"])
def test_a_transferred_point_carries_one_transfer_prefix_whatever_the_other_run_named_it(
        tmp_path: Path, recorded: str):
    """The other GPU's best may itself be a point its run was given (named "transfer ..."
    there, and "transfer transfer ..." by the H200's run of 2026-11-26 when given the H100's
    file): its candidate here says "transfer" once, and the row's transfer entry names the
    point by its own name, variant and launch as the other run recorded them."""
    point = {"name": recorded, "variant": "axis.float32.sum.v", "launch": "l"}
    other = _result([{**_row("columns", 2, 1e-3, {"torch": 2e-3}), "point": point}])
    path = tmp_path / "h100.json"
    path.write_text(json.dumps(other))
    (entry,) = read_transfer(str(path)).values()
    assert entry["point"] == {**point, "name": "tile_columns_split lanes=16"}
    moved = _transfer_candidate(entry)
    assert moved is not None
    assert (moved.name, moved.variant, moved.launch) == (
        "transfer tile_columns_split lanes=16", point["variant"], point["launch"])
    # an entry built by hand (as the GPU test builds one) gets the same name
    hand = _transfer_candidate({"from_device": "x", "point": point})
    assert hand is not None and hand.name == moved.name


def test_the_progress_line_counts_shapes_and_estimates_the_time_left():
    assert progress(4, 64, 60.0) == "4/64 shapes, 60 s elapsed, ETA 900 s (15.0 s a shape)"
    assert progress(64, 64, 960.0).startswith("64/64 shapes, 960 s elapsed, ETA 0 s")


def test_the_report_gives_the_mean_phase_times(tmp_path: Path):
    rows = [{**_row("rows", 2, 1e-3, {"torch": 2e-3}),
             "phase_s": {"tune_s": 4.0, "peers_setup_s": 2.0, "rounds_s": 1.0}},
            {**_row("rows", 16, 1e-3, {"torch": 2e-3}),
             "phase_s": {"tune_s": 6.0, "peers_setup_s": 2.0, "rounds_s": 3.0}}]
    assert _axis_report.phases(_result(rows)) == [
        "Time a shape took, mean of 2: tune_s 5.0 s, peers_setup_s 2.0 s, rounds_s 2.0 s."]


def test_the_tuners_protocol_is_a_column_beside_the_application_timing(tmp_path: Path):
    """The chosen point's median in the tuner's protocol (cold L2) becomes its GB/s and % of
    peak beside the application's; a point the protocol could not measure says why."""
    bytes_ = 4 * ((1 << 24) + (1 << 20))
    ok = {**_row("rows", 16, 2e-5, {"torch": 4e-5}),
          "protocol": {"status": "ok", "median_s": 2.5e-5}}
    failed = {**_row("rows", 128, 2e-5, {"torch": 4e-5}),
              "protocol": {"status": "failed", "reason": "wrong"}}
    lines = _axis_report.table(_result([ok, failed]))
    app, proto = bytes_ / 2e-5 / 1e9, bytes_ / 2.5e-5 / 1e9
    assert f"| warp_rows | {app:.0f} | 0.0 | {proto:.0f} | torch |" in lines[2]
    assert "| failed | torch |" in lines[3]
    _axis_report.write(_result([ok, failed]), tmp_path / "axis")
    md = (tmp_path / "axis.md").read_text()
    assert f"(tuner's protocol {100 * bytes_ / 2.5e-5 / 4e12:.0f}–" in md
    assert "0 tie(s) of 2 shapes" in md


def test_the_rounds_wait_for_the_peers_near_reducetune_not_for_those_far_from_it():
    """A faster ceiling (memcpy at half reducetune's time) does not move what is close: a
    noisy peer screened near reducetune keeps the rounds going (its median decides the tie),
    a noisy one twice as slow does not."""
    def timer(times: list[float]):
        it = itertools.cycle(times)
        return lambda: next(it)

    def spread(median: float, seed: int) -> list[float]:  # +-9 %, seeded (not two in turn,
        rng = random.Random(seed)  # of which primed rounds would time one)
        return [median * (1 + 0.09 * (2 * rng.random() - 1)) for _ in range(997)]

    timers = {"reducetune": timer([1e-3]), "memcpy": timer([0.5e-3]),
              "torch": timer(spread(1.15e-3, 6)), "jax": timer(spread(2.2e-3, 7))}
    app, _, slow = app_stats(timers, 20)
    assert slow == []
    assert app["torch"]["samples"] == MAX_CALLS and app["torch"]["stopped"] == "max_calls"
    quiet = {**timers, "torch": timer([1.1e-3])}
    app, _, _ = app_stats(quiet, 20)
    assert app["jax"]["samples"] == 20 and app["reducetune"]["stopped"] == "converged"


def test_the_summary_compares_the_python_calls_host_time_with_its_time_between_events(
        tmp_path: Path):
    rows = [{**_row("rows", r, 2e-5, {"torch": 4e-5, "reducetune_py": 2e-5 + extra}),
             "host_s": {"reducetune": 3e-6, "reducetune_py": 3e-6 + host}}
            for r, extra, host in ((2, 30e-6, 10e-6), (16, 20e-6, 12e-6), (128, 40e-6, 11e-6))]
    _axis_report.write(_result(rows), tmp_path / "axis")
    md = (tmp_path / "axis.md").read_text()
    assert ("Python call over the C++ call: +30.0 µs between the events, +11.0 µs of host "
            "time") in md
