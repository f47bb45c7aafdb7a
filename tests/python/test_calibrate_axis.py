"""``reducetune calibrate`` for the axis family's shapes (issue 26, item 4).

Without a GPU: a results file written with the store's own API (axis points at two shapes of a
synthetic sm_90 device, its "medians" chosen here, never presented as measurements) is
calibrated with a FAKE timer (lone-call "times" chosen per point). The core hands each shape's
candidates fastest first with their level; calibrate times the first k of both levels, records
what was launched, and from then on ``best --shape``, the JSON export (which the runtime's
tables read) and each level's pick answer the fastest lone call: batch_invariant points compared
with batch_invariant ones only, near-ties to the better replayed median. Without a GPU the
command says that calibration needs one. On a GPU (skipped with the reason otherwise): a small
axis tune, calibrated end to end, and the AxisReducer built from the file launches the pick.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import reducetune
from axis_results_support import axis_space, write_axis_results
from conftest import NO_GPU, SYNTHETIC_DEVICE
from reducetune import _core
from reducetune.cli.calibrate import _units
from reducetune.runtime.calibrate_axis import calibrate_shapes
from reducetune.runtime.calibrate_candidates import both_levels, measured_first

ROWS, COLUMNS = (4096, 1024, 1), (1, 1024, 4096)
UUID = SYNTHETIC_DEVICE["uuid"]
# (shape, preset, replayed median): at ROWS the fastest point is warp_rows_vec2, the one preset
# that is not batch_invariant
MEDIANS = [(ROWS, "warp_rows_vec2", 1.0e-5), (ROWS, "warp_rows", 1.1e-5),
           (ROWS, "block_rows", 1.2e-5), (ROWS, "group_short_rows", 1.3e-5),
           (COLUMNS, "thread_columns", 3.0e-5), (COLUMNS, "tile_columns", 3.1e-5)]


def _label(preset: str) -> str:
    return axis_space().base(preset).variant_label


@pytest.fixture
def axis_db(tmp_path: Path) -> str:
    return str(write_axis_results(tmp_path / "axis.db", MEDIANS))


class FakeTimer:
    """Lone-call "times" by preset (not measurements); None: the runtime did not launch it.
    Remembers what it was asked to time."""

    def __init__(self, by_preset: dict[str, float | None]) -> None:
        self.by_label = {_label(p): t for p, t in by_preset.items()}
        self.asked: dict[tuple[int, int, int], list[str]] = {}

    def __call__(self, dtype: str, op: str, shape: tuple[int, int, int],
                 cands: list[dict[str, Any]], samples: int) -> list[float | None]:
        self.asked[shape] = [c["variant"] for c in cands]
        return [self.by_label[c["variant"]] for c in cands]


def _calibrate(db: str, timer: FakeTimer, k: int = 8, shapes: Any = None) -> list[dict]:
    return calibrate_shapes(db, [("float32", "sum")], shapes, UUID, timer, k, 20)


def _export_rules(db: str) -> dict[tuple[int, int, int], dict]:
    doc = json.loads(_core.export_json(db))
    return {(r["outer"], r["r"], r["inner"]): r
            for r in doc["devices"][0]["axis_tables"][0]["rules"]}


def _ids(db: str) -> dict[str, int]:
    by_shape = _core.axis_application_candidates(db, "float32", "sum", UUID)
    return {c["variant"]: c["measurement_id"] for s in by_shape.values()
            for c in s["candidates"]}


def test_a_shapes_candidates_come_fastest_first_with_their_level(axis_db):
    by_shape = _core.axis_application_candidates(axis_db, "float32", "sum", UUID)
    assert set(by_shape) == {ROWS, COLUMNS}
    rows = by_shape[ROWS]
    assert [c["variant"] for c in rows["candidates"]] == [
        _label(p) for s, p, _ in MEDIANS if s == ROWS]
    assert [c["batch_invariant"] for c in rows["candidates"]] == [False, True, True, True]
    assert all(c["launches"] >= 1 and c["application_s"] is None for c in rows["candidates"])
    ids = _ids(axis_db)
    # uncalibrated: the fastest replayed median of each level
    assert rows["run_to_run_pick"] == ids[_label("warp_rows_vec2")]
    assert rows["batch_invariant_pick"] == ids[_label("warp_rows")]
    assert _core.axis_application_candidates(axis_db, "float32", "sum", "GPU-not-here") == {}


def test_calibrate_times_the_first_k_of_both_levels():
    cands = [{"measurement_id": i, "variant": f"v{i}", "launches": 1,
              "batch_invariant": i >= 3} for i in range(6)]
    got = [c["measurement_id"] for c in both_levels(cands, 2)]
    assert got == [0, 1, 3, 4]  # the two fastest, then the two fastest batch_invariant ones
    assert both_levels(cands, 10) == cands
    cands[5]["launches"] = 2  # the fastest of a launch count the first k lack: timed too
    assert [c["measurement_id"] for c in both_levels(cands, 2)] == [0, 1, 3, 4, 5]
    assert measured_first(cands, 2) == [cands[0], cands[1], cands[5]]


def test_the_fastest_lone_call_becomes_each_levels_pick_for_best_and_export(axis_db, cli):
    # ROWS: the fastest call is warp_rows_vec2 (not batch_invariant), and among the
    # batch_invariant points block_rows, third by the replayed median; COLUMNS: tile_columns
    timer = FakeTimer({"warp_rows_vec2": 5e-6, "warp_rows": 9e-6, "block_rows": 7e-6,
                       "group_short_rows": 8e-6, "thread_columns": 2e-5,
                       "tile_columns": 1e-5})
    header_before = _core.export_header(axis_db)
    rows = {tuple(r["shape"]): r for r in _calibrate(axis_db, timer, k=3)}
    # k = 3: the first three of all, and the first three batch_invariant ones, which reach
    # group_short_rows (fourth by the replayed median)
    assert timer.asked[ROWS] == [_label(p) for p in ("warp_rows_vec2", "warp_rows",
                                                     "block_rows", "group_short_rows")]
    assert rows[ROWS]["pick"]["variant"] == _label("warp_rows_vec2")
    assert rows[ROWS]["batch_invariant_pick"]["variant"] == _label("block_rows")
    assert rows[COLUMNS]["pick"]["variant"] == _label("tile_columns")
    assert rows[COLUMNS]["gain"] == pytest.approx(2.0)
    assert rows[COLUMNS]["protocol_winner"]["variant"] == _label("thread_columns")

    assert _label("tile_columns") not in header_before  # no pick of any shape before
    assert _label("tile_columns") in _core.export_header(axis_db)
    rules = _export_rules(axis_db)
    assert (rules[ROWS]["variant"], rules[ROWS]["application_s"]) == (
        _label("warp_rows_vec2"), 5e-6)
    assert rules[ROWS]["batch_invariant_pick"]["variant"] == _label("block_rows")
    assert rules[ROWS]["batch_invariant_pick"]["application_s"] == 7e-6
    assert rules[COLUMNS]["variant"] == _label("tile_columns")
    assert rules[COLUMNS]["median_s"] == pytest.approx(3.1e-5)  # the pick's own median

    code, out, err = cli("best", "--shape", "1x1024x4096", "--db", axis_db)
    assert code == 0, err
    assert out.startswith(_label("tile_columns")) and "10.00 µs a call" in out
    code, out, err = cli("best", "--shape", "2^13x1024x1", "--db", axis_db, "--json")
    assert code == 0, err
    answer = json.loads(out)
    assert answer["variant_label"] == _label("warp_rows_vec2")
    assert answer["bucket_shape"] == list(ROWS) and answer["application_s"] == 5e-6
    with sqlite3.connect(axis_db) as c:
        assert c.execute("SELECT count(*) FROM rt_application_times").fetchone()[0] == 6


def test_lone_calls_within_two_percent_are_a_tie_the_replayed_median_breaks(axis_db):
    timer = FakeTimer({"thread_columns": 1.015e-5, "tile_columns": 1.0e-5})
    (row,) = _calibrate(axis_db, timer, shapes=[COLUMNS])
    assert row["pick"]["variant"] == _label("thread_columns")
    assert _export_rules(axis_db)[COLUMNS]["variant"] == _label("thread_columns")
    timer = FakeTimer({"thread_columns": 1.03e-5, "tile_columns": 1.0e-5})
    (row,) = _calibrate(axis_db, timer, shapes=[COLUMNS])
    assert row["pick"]["variant"] == _label("tile_columns")


def test_a_point_the_runtime_did_not_launch_is_neither_recorded_nor_picked(axis_db):
    timer = FakeTimer({"warp_rows_vec2": None, "warp_rows": 9e-6, "block_rows": 8e-6,
                       "group_short_rows": None, "thread_columns": None, "tile_columns": None})
    rows = {tuple(r["shape"]): r for r in _calibrate(axis_db, timer)}
    assert [c["variant"] for c in rows[ROWS]["candidates"]] == [_label("warp_rows"),
                                                                _label("block_rows")]
    assert rows[ROWS]["pick"]["variant"] == _label("block_rows")
    assert rows[COLUMNS]["candidates"] == [] and rows[COLUMNS]["pick"] is None
    rules = _export_rules(axis_db)
    assert rules[ROWS]["variant"] == _label("block_rows")
    # nothing timed at COLUMNS: the replayed median still decides there
    assert rules[COLUMNS]["variant"] == _label("thread_columns")
    assert rules[COLUMNS]["application_s"] is None


def test_a_second_calibration_replaces_the_shapes_earlier_times(axis_db):
    _calibrate(axis_db, FakeTimer({"thread_columns": 2e-5, "tile_columns": 1e-5}),
               shapes=[COLUMNS])
    # k = 1 now times thread_columns alone: tile_columns' earlier time is dropped with the
    # rest of the shape's, so the two runs' times are never compared
    (row,) = _calibrate(axis_db, FakeTimer({"thread_columns": 2e-5, "tile_columns": 1e-5}),
                        k=1, shapes=[COLUMNS])
    assert [c["variant"] for c in row["candidates"]] == [_label("thread_columns")]
    assert _export_rules(axis_db)[COLUMNS]["variant"] == _label("thread_columns")


def test_only_the_shapes_asked_for_are_calibrated(axis_db):
    timer = FakeTimer({"thread_columns": 2e-5, "tile_columns": 1e-5})
    rows = _calibrate(axis_db, timer, shapes=[COLUMNS, (1, 64, 4096)])  # the second: unmeasured
    assert [tuple(r["shape"]) for r in rows] == [COLUMNS] and set(timer.asked) == {COLUMNS}


@pytest.mark.parametrize("sizes, shapes, want", [
    (None, None, (None, None)),  # every size and shape measured
    (["2^20"], None, ([1 << 20], [])),
    (None, ["4096x1024x1"], ([], [ROWS])),
    (["2^20"], ["4096x1024x1"], ([1 << 20], [ROWS])),
])
def test_sizes_or_shapes_alone_leave_the_other_kind_out(sizes, shapes, want):
    assert _units(argparse.Namespace(sizes=sizes, shapes=shapes)) == want


@pytest.mark.skipif(NO_GPU is None, reason="checks the no-GPU message; this machine has a GPU")
def test_calibrating_an_axis_file_without_a_gpu_says_so(cli, axis_db):
    code, _, err = cli("calibrate", "--db", axis_db, "--shapes", "4096x1024x1")
    assert code != 0
    assert "no NVIDIA driver / GPU" in err and "calibrate needs the GPU itself" in err


@pytest.mark.skipif(NO_GPU is not None, reason=NO_GPU or "")
@pytest.mark.gpu
def test_an_axis_tune_calibrated_on_the_gpu_answers_its_pick_everywhere(cli, tmp_path):
    db = tmp_path / "axis.db"
    code, _, err = cli("tune", "--family", "axis", "--shapes", "4096x1024x1", "1x1024x4096",
                       "--max-evals", "8", "--sample-time", "20ms", "--seed", "1", "--db", db,
                       "--quiet")
    assert code == 0, err
    code, out, err = cli("calibrate", "--db", db, "--shapes", "4096x1024x1", "1x1024x4096",
                         "--candidates", "3", "--samples", "20", "--json")
    assert code == 0, err
    rows = {tuple(r["shape"]): r for r in json.loads(out)["rows"]}
    assert set(rows) == {ROWS, COLUMNS}
    rules = _export_rules(str(db))
    for shape, row in rows.items():
        assert len(row["candidates"]) >= 2, row
        assert all(c["application_s"] > 0 for c in row["candidates"])
        pick = row["pick"]
        assert pick["application_s"] <= 1.02 * min(c["application_s"] for c in row["candidates"])
        # the runtime built from the file, the export and best answer the calibrated pick
        choice = reducetune.AxisReducer("float32", "sum", db=db).choice(*shape)
        assert choice["source"] == "tuned" and choice["variant"] == pick["variant"], choice
        assert choice["launch"] == pick["launch"]
        assert rules[shape]["variant"] == pick["variant"]
        assert rules[shape]["application_s"] == pytest.approx(pick["application_s"])
        code, out, err = cli("best", "--shape", "x".join(map(str, shape)), "--db", db)
        assert code == 0 and out.startswith(f"{pick['variant']} {pick['launch']}"), err


def test_the_command_says_and_tables_each_shape(axis_db, cli, monkeypatch):
    # the GPU's part (device, timing) replaced by the FAKE timer; the command's own parsing,
    # progress lines and table are what is tested
    import reducetune.cli.calibrate as command

    timer = FakeTimer({"thread_columns": 2e-5, "tile_columns": 1e-5})

    def without_gpu(db, pairs, sizes, ordinal, k, samples, nondeterministic, allow_flagged,
                    progress, shapes):
        assert sizes == [] and shapes == [COLUMNS]  # --shapes alone: no whole-array size
        return calibrate_shapes(db, pairs, shapes, UUID, timer, k, samples, nondeterministic,
                                allow_flagged, progress)

    monkeypatch.setattr(command, "calibrate", without_gpu)
    code, out, err = cli("calibrate", "--db", axis_db, "--shapes", "1x1024x4096")
    assert code == 0, err
    assert "calibrate: float32 sum 1x1024x4096: 10.00 µs a call" in err
    assert "1x1024x4096" in out and "2.000" in out  # the shape and the pick's gain
