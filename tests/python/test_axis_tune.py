"""The axis family tuned and stored per shape (issue 26 item 4), without a GPU: ``reducetune tune
--family axis --shapes ...`` over a FAKE worker (its "times" are a formula of the point and
the shape, never presented as measurements), the store keeping shapes apart (record, best,
history, merge), an old file migrated to schema 6 with its ids and shapes (1, n, 1), and the
messages for a malformed shape."""

from __future__ import annotations

import hashlib
import json
import lzma
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import reducetune
from reducetune import _core
from reducetune.evaluate import gpu as _evaluators
from reducetune.store.measurements import measurement_rows
from reducetune.store.results import best_point, store_best
from reducetune.tuning.config import TuneConfig, study_name
from reducetune.tuning.run import tune_all, unit_order
from reducetune.tuning.shapes import GRIDS, parse_shapes

from conftest import SYNTHETIC_DEVICE

REPO = Path(__file__).resolve().parents[2]
ROWS, COLUMNS = (4096, 64, 1), (1, 64, 4096)  # one r, two shapes
# A corner of the axis space small enough to tune in a second, holding the presets the
# runtime's rule picks for ROWS (group_short_rows) and COLUMNS (tile_columns_split).
RESTRICT = ["--restrict", "strategy=group,tile", "--restrict", "block_size=128,256",
            "--restrict", "lanes=8", "--restrict", "unroll=2,4", "--restrict", "vec=1,2",
            "--restrict", "split=1,8"]


def fake_time(variant: str, launch: str, shape: tuple[int, int, int]) -> float:
    """A deterministic "time" per point and shape (not a measurement): bytes over 3 TB/s,
    times a factor from a hash, so that each shape has its own fastest point."""
    h = int(hashlib.sha256(f"{variant}|{launch}|{shape}".encode()).hexdigest()[:8], 16) / 2**32
    outer, r, inner = shape
    return (outer * r * inner * 4 / 3.0e12 + 2e-6) * (1.0 + h)


class AxisWorker:
    """The worker's calls answered from fake_time; every evaluate request remembered."""

    evaluated: list[tuple[tuple[int, int, int], str, str]] = []
    cub_calls = 0

    def __init__(self, timeout_s: float = 60.0, argv: list[str] | None = None) -> None:
        self.running = True

    def call(self, name: str, timeout_s: float | None = None, **args: Any) -> dict[str, Any]:
        return {"ok": True, "result": getattr(self, "_" + name)(**args)}

    def _query_device(self, ordinal: int) -> dict[str, Any]:
        return {**SYNTHETIC_DEVICE, "ordinal": ordinal, "arch": 90, "runtime_version": 13000,
                "max_threads_per_block": 1024}

    def _precompile(self, points: list[dict], arch: str, threads: int,
                    **share: Any) -> dict[str, Any]:  # workers, shared_dir: a --devices run's
        return {"requested": len(points), "compiled": len(points), "cached": 0, "failed": 0,
                "failures": {}, "seconds": 0.1, "threads": 1}

    def _compile_ahead(self, points: list[dict], arch: str, threads: int,
                       **share: Any) -> dict[str, Any]:  # workers, shared_dir: a --devices run's
        return {"queued": len(points), "waiting": 0, "compiled": 0, "skipped": 0, "failed": 0,
                "dropped": 0}

    def _evaluate(self, point: dict, problem: dict, data: dict, ordinal: int,
                  options: dict) -> dict[str, Any]:
        space = reducetune.Space(point["family"], point["dtype"], point["op"],
                                 reducetune.limits_for_arch("sm_90"))
        p = space.point(point["params"])
        shape = tuple(problem["shape"])
        AxisWorker.evaluated.append((shape, p.variant_label, p.launch_label))
        t = fake_time(p.variant_label, p.launch_label, shape)
        outer, r, inner = shape
        gbps = (outer * r * inner + outer * inner) * 4 / t / 1e9
        return {"status": "ok", "kind": "", "reason": "", "samples_s": [t] * 10,
                "median_s": t, "rel_stddev": 0.0, "gbps": gbps, "pct_of_peak": gbps / 33.5,
                "pct_of_ceiling": gbps / 30.0}

    def _evaluate_cub(self, **_: Any) -> dict[str, Any]:
        AxisWorker.cub_calls += 1
        return {"status": "ok", "samples_s": [1e-5] * 10, "median_s": 1e-5, "gbps": 1.0}

    def _streaming_ceiling(self, ordinal: int) -> dict[str, Any]:
        return {"bytes_per_s": 3.0e12, "samples_s": [1 / 3.0e3] * 10}

    def close(self) -> None:
        self.running = False


@pytest.fixture
def axis_worker(monkeypatch):
    AxisWorker.evaluated = []
    AxisWorker.cub_calls = 0
    monkeypatch.setattr(_evaluators, "WorkerClient", AxisWorker)
    return AxisWorker


def axis_tune(cli, db: Path, *shapes: str) -> tuple[int, str, str]:
    return cli("tune", "--family", "axis", "--shapes", *shapes, "--max-evals", "4", "--seed",
               "1", "--db", db, "--quiet", "--json", *RESTRICT)


def test_an_axis_tune_stores_each_shapes_best_and_best_shape_reads_it(axis_worker, cli,
                                                                     tmp_path):
    db = tmp_path / "axis.db"
    code, out, err = axis_tune(cli, db, "4096x64x1", "1x64x4096")
    assert code == 0, err
    doc = json.loads(out)
    assert sorted(tuple(s["shape"]) for s in doc["sizes"]) == sorted([ROWS, COLUMNS])
    assert axis_worker.cub_calls == 0  # CUB's whole-array DeviceReduce: no axis baseline
    assert all(s["cub_gbps"] is None and s["x_cub"] is None for s in doc["sizes"])
    store = _core.Store(str(db), True)
    dev = store.devices()[0]["id"]
    space = reducetune.Space("axis", "float32", "sum", reducetune.limits_for_arch("sm_90"))
    for shape in (ROWS, COLUMNS):
        # each study measures first the point the runtime's built-in rule runs for its shape
        rule = space.base(_core.axis_rule(*shape)[0])
        first = next((v, l) for s, v, l in axis_worker.evaluated if s == shape)
        assert first == (rule.variant_label, rule.launch_label)
        measured = {(v, l): fake_time(v, l, shape) for s, v, l in axis_worker.evaluated
                    if s == shape}
        assert measured, f"nothing measured at {shape}"
        fastest = min(measured, key=measured.get)
        b = store_best(store, dev, "float32", "sum", shape)
        assert tuple(b["bucket_shape"]) == shape
        assert (b["variant_label"], b["launch_label"]) == fastest
        assert b["median_s"] == pytest.approx(measured[fastest])
        # the run's own table says the same best
        (row,) = [s for s in doc["sizes"] if tuple(s["shape"]) == shape]
        assert (row["best"]["variant_label"], row["best"]["launch_label"]) == fastest
    # no whole-array workload was written: the whole array's best stays empty
    assert store.best(dev, "float32", "sum", 64) is None

    code, out, err = cli("best", "--shape", "4096x64x1", "--db", db)
    assert code == 0, err
    rows_best = store_best(store, dev, "float32", "sum", ROWS)
    assert out.startswith(f"{rows_best['variant_label']} {rows_best['launch_label']}")
    assert "measured at shape 4096x64x1" in out
    # an unmeasured shape is answered from the nearest measured one (log2 distance)
    code, out, err = cli("best", "--shape", "2^13x64x1", "--db", db, "--json")
    assert code == 0, err
    answer = json.loads(out)
    assert answer["bucket_shape"] == list(ROWS) and answer["requested_shape"] == [8192, 64, 1]
    code, out, err = cli("show", "--shape", "1x64x4096", "--db", db, "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert shown and all((r["outer"], r["n"], r["inner"]) == COLUMNS for r in shown)
    assert len(shown) == len({(v, l) for s, v, l in axis_worker.evaluated if s == COLUMNS})


def test_the_results_table_names_each_shape_and_why_cub_is_empty(axis_worker, cli, tmp_path):
    code, out, err = cli("tune", "--family", "axis", "--shapes", "4096x64x1", "1x64x4096",
                         "--max-evals", "2", "--db", tmp_path / "axis.db", "--quiet", *RESTRICT)
    assert code == 0, err
    assert "4096x64x1" in out and "1x64x4096" in out and "shape" in out
    assert "CUB: none for shapes" in out


def test_a_second_axis_run_serves_its_shapes_from_the_store(axis_worker, cli, tmp_path):
    db = tmp_path / "axis.db"
    assert axis_tune(cli, db, "4096x64x1")[0] == 0
    first = len(axis_worker.evaluated)
    code, out, err = axis_tune(cli, db, "4096x64x1")
    assert code == 0, err
    assert len(axis_worker.evaluated) == first  # the same study resumed: nothing measured
    # another shape with the same r is another workload: measured, not served
    assert axis_tune(cli, db, "1x64x4096")[0] == 0
    assert {s for s, _, _ in axis_worker.evaluated[first:]} == {COLUMNS}


def _record(store: Any, shape: tuple[int, int, int], t: float, point: Any = None) -> None:
    space = reducetune.Space("axis", "float32", "sum", reducetune.limits_for_arch("sm_90"))
    p = point if point is not None else space.base("warp_rows")
    dev = store.register_device(SYNTHETIC_DEVICE)
    outer, r, inner = shape
    store.record_measurement(p, {
        "device_id": dev, "dtype": "float32", "op": "sum", "n": r, "outer": outer,
        "inner": inner, "data_pattern": "uniform", "seed": 1, "template_hash": "h",
        "driver_version": 13000, "toolkit_version": 13000, "samples_s": [t] * 10,
        "status": "ok", "gbps": 1.0})


def test_two_shapes_with_one_r_are_two_workloads(tmp_path):
    store = _core.Store(str(tmp_path / "s.db"))
    _record(store, ROWS, 2e-5)
    _record(store, COLUMNS, 3e-5)
    dev = store.devices()[0]["id"]
    rows = store.history(dev, "float32", "sum", shape=ROWS)
    columns = store.history(dev, "float32", "sum", shape=COLUMNS)
    assert [r["median_s"] for r in rows] == [2e-5] and [r["median_s"] for r in columns] == [3e-5]
    assert len(store.history(dev, "float32", "sum")) == 2
    assert store.history(dev, "float32", "sum", 64) == []  # n alone: the whole array's
    assert store_best(store, dev, "float32", "sum", COLUMNS)["median_s"] == 3e-5
    with sqlite3.connect(tmp_path / "s.db") as c:
        assert sorted(c.execute("SELECT outer, n, inner FROM rt_workloads")) == sorted(
            [ROWS, COLUMNS])
    store.close()
    # the measurements table (export csv, reducetune.measurements) names each row's shape
    rows = measurement_rows(tmp_path / "s.db")
    assert sorted((r["outer"], r["n"], r["inner"]) for r in rows) == sorted([ROWS, COLUMNS])


def test_best_answers_a_shape_by_the_axis_dispatch_rule(tmp_path):
    # db/shape_rule.hpp, the rule the runtime and the exported header run: the exact shape,
    # else the nearest of its kind (rows: inner == 1; columns) in (log2 r, log2 outer x inner)
    store = _core.Store(str(tmp_path / "s.db"))
    for shape, t in (((1024, 16, 1), 1e-5), ((64, 256, 1), 2e-5), ((1, 256, 64), 3e-5)):
        _record(store, shape, t)
    dev = store.devices()[0]["id"]

    def bucket(shape: tuple[int, int, int]) -> tuple[int, ...]:
        return tuple(store_best(store, dev, "float32", "sum", shape)["bucket_shape"])

    assert bucket((1024, 16, 1)) == (1024, 16, 1)  # measured: itself
    assert bucket((2048, 16, 1)) == (1024, 16, 1)  # one octave of outputs away
    # columns answer columns only, even where a row shape is nearer in both coordinates
    assert bucket((1, 16, 1024)) == (1, 256, 64)
    # (256, 64, 1) is as far from (1024, 16, 1) as from (64, 256, 1): the longer r wins
    assert bucket((256, 64, 1)) == (64, 256, 1)
    # the whole array never answers a shape, and a shape never answers the whole array
    assert store.best(dev, "float32", "sum", 256) is None
    # no shape of a kind measured: no answer for that kind
    empty = _core.Store(str(tmp_path / "rows_only.db"))
    _record(empty, (1024, 16, 1), 1e-5)
    assert store_best(empty, empty.devices()[0]["id"], "float32", "sum", (1, 16, 1024)) is None


def test_best_point_is_the_exact_shapes_only(tmp_path):
    store = _core.Store(str(tmp_path / "s.db"))
    space = reducetune.Space("axis", "float32", "sum", reducetune.limits_for_arch("sm_90"))
    point = space.base("tile_columns")
    _record(store, COLUMNS, 1e-5, point)
    dev = store.devices()[0]["id"]
    assert best_point(store, dev, space, COLUMNS) == (point, 1e-5)
    assert best_point(store, dev, space, (1, 128, 4096)) is None  # nearest is not this one


def test_merge_keeps_two_shapes_of_one_r_apart(tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    store_a = _core.Store(str(a))
    _record(store_a, ROWS, 2e-5)
    store_b = _core.Store(str(b))
    _record(store_b, COLUMNS, 3e-5)
    _record(store_b, ROWS, 1e-5)  # the same key as a's row: the merge rule picks one
    store_b.close()
    stats = store_a.merge_from(str(b))
    assert stats["inserted"] == 1 and stats["replaced"] + stats["kept"] == 1
    dev = store_a.devices()[0]["id"]
    assert len(store_a.history(dev, "float32", "sum", shape=COLUMNS)) == 1
    assert len(store_a.history(dev, "float32", "sum", shape=ROWS)) == 1
    with sqlite3.connect(a) as c:
        assert c.execute("SELECT count(*) FROM rt_workloads").fetchone()[0] == 2


def _old_file(tmp_path: Path) -> Path:
    """A committed database from before shapes (schema 4), decompressed."""
    src = REPO / "docs" / "results" / "h100_2026-11-23_tune_float32_short.db.xz"
    out = tmp_path / "old.db"
    with lzma.open(src) as f, open(out, "wb") as g:
        shutil.copyfileobj(f, g)
    return out


def test_an_old_file_migrates_keeping_ids_and_every_workload_is_the_whole_array(tmp_path):
    path = _old_file(tmp_path)
    with sqlite3.connect(path) as c:
        old_version = c.execute("PRAGMA user_version").fetchone()[0]
        before = c.execute("SELECT id, dtype, op, n, data_pattern, seed FROM rt_workloads"
                           " ORDER BY id").fetchall()
        measurements = c.execute("SELECT id, workload_id FROM rt_measurements ORDER BY id"
                                 ).fetchall()
    assert old_version < 6 and before
    store = _core.Store(str(path))
    assert store.migration["from_version"] == old_version and store.schema_version() >= 6
    store.close()
    with sqlite3.connect(path) as c:
        after = c.execute("SELECT id, dtype, op, n, data_pattern, seed, outer, inner"
                          " FROM rt_workloads ORDER BY id").fetchall()
        assert [row[:6] for row in after] == before
        assert {row[6:] for row in after} == {(1, 1)}
        assert c.execute("SELECT id, workload_id FROM rt_measurements ORDER BY id"
                         ).fetchall() == measurements
        assert c.execute("PRAGMA foreign_key_check").fetchall() == []
        unique = c.execute("SELECT sql FROM sqlite_schema WHERE name = 'rt_workloads'"
                           ).fetchone()[0]
        assert "UNIQUE (dtype, op, outer, n, inner, data_pattern, seed)" in unique
        # the foreign keys still hold: a workload that measurements use cannot be deleted
        c.execute("PRAGMA foreign_keys = ON")
        with pytest.raises(sqlite3.IntegrityError):
            c.execute("DELETE FROM rt_workloads WHERE id = ?", (measurements[0][1],))


def test_a_read_only_open_of_an_old_file_sees_shapes_without_writing_it(tmp_path):
    path = _old_file(tmp_path)
    bytes_before = path.read_bytes()
    store = _core.Store(str(path), True)
    dev = store.devices()[0]["id"]
    rows = store.history(dev, "float32", "sum")
    assert rows and all((r["outer"], r["inner"]) == (1, 1) for r in rows)
    store.close()
    assert path.read_bytes() == bytes_before


@pytest.mark.parametrize("shapes,message", [
    (["4096x64"], "'4096x64' is not a shape; give OUTERxRxINNER"),
    (["4096xax1"], "'4096xax1': size 'a' is not an integer"),
    (["1x64x1"], "'1x64x1' is the whole array (1, n, 1): tune it with --sizes 64"),
    (["0x64x1"], "'0x64x1': size '0'"),
    (["2^2..2^4x1x2"], "is not a shape"),
])
def test_a_malformed_shape_is_refused_in_one_line(cli, tmp_path, shapes, message):
    code, out, err = cli("tune", "--family", "axis", "--shapes", *shapes, "--db",
                         tmp_path / "r.db")
    assert code != 0 and message in err and "Traceback" not in err
    assert not (tmp_path / "r.db").exists()


def test_a_malformed_shape_is_refused_before_any_file_storage_included(cli, tmp_path):
    db, journal = tmp_path / "results.db", tmp_path / "studies.journal"
    code, out, err = cli("tune", "--family", "axis", "--shapes", "64", "--db", db,
                         "--storage", f"journal:{journal}")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "'64' is not a shape" in err
    assert list(tmp_path.iterdir()) == []


def test_the_family_dict_names_each_kernel_abi() -> None:
    # what decides whether a family takes --shapes or --sizes
    assert _core.family("axis")["abi"] == "axis"
    assert _core.family("tunable")["abi"] == "whole_array"


def test_shapes_are_refused_for_a_whole_array_family(cli, tmp_path):
    code, _, err = cli("tune", "--family", "tunable", "--shapes", "4096x64x1", "--db",
                       tmp_path / "r.db")
    assert code != 0 and "--shapes is for a family that reduces along an axis" in err


def test_an_axis_tune_without_shapes_covers_the_default_grid(axis_worker, cli, tmp_path):
    code, out, err = cli("tune", "--family", "axis", "--max-evals", "1", "--db",
                         tmp_path / "r.db", "--quiet", "--json")
    assert code == 0, err
    assert [tuple(s["shape"]) for s in json.loads(out)["sizes"]] == sorted(
        GRIDS["default"], key=lambda s: (s[1], s))  # reported by r, then shape
    assert {s for s, _, _ in axis_worker.evaluated} == set(GRIDS["default"])


def test_sizes_are_refused_for_the_axis_family(cli, tmp_path):
    code, _, err = cli("tune", "--family", "axis", "--sizes", "2^20", "--db", tmp_path / "r.db")
    assert code == 2 and "is tuned per shape: give --shapes" in err
    assert not (tmp_path / "r.db").exists()


def test_the_default_grid_is_rows_and_columns_of_2_24_elements():
    grid = parse_shapes("default")
    assert grid == GRIDS["default"] and len(grid) == 16
    assert all(o * r * i == 1 << 24 and (o, i) != (1, 1) for o, r, i in grid)
    assert [r for _, r, i in grid if i == 1] == [2, 16, 128, 1024, 8192, 65536, 524288, 1 << 22]
    assert sorted(grid, key=lambda s: s[2] == 1) == grid[8:] + grid[:8]  # columns apart


def test_whole_array_study_names_are_unchanged_and_shapes_get_their_own():
    config = TuneConfig()
    assert study_name(config, 1 << 20, "U") == "tunable.float32.sum.n_1048576.tpe.det@U"
    axis = TuneConfig(family="axis", shapes=[ROWS])
    assert study_name(axis, ROWS, "U") == "axis.float32.sum.shape_4096x64x1.tpe.det@U"


@pytest.mark.parametrize("config, words", [
    (TuneConfig(family="axis"), "is tuned per shape"),
    (TuneConfig(family="tunable", shapes=[ROWS]), "reduces whole arrays"),
])
def test_tune_all_refuses_units_of_the_wrong_kind(axis_worker, config, words):
    from reducetune.evaluate.gpu import GpuEvaluator

    with pytest.raises(reducetune.InvalidConfiguration, match=words):
        tune_all(GpuEvaluator(), [config])
    assert axis_worker.evaluated == []


def test_units_run_largest_first_in_one_order():
    config = TuneConfig(family="axis", shapes=[COLUMNS, (16, 64, 1), ROWS])
    assert [u for _, u in unit_order([config])] == [ROWS, COLUMNS, (16, 64, 1)]
    whole = TuneConfig(sizes=[1 << 10, 1 << 20])
    assert [u for _, u in unit_order([whole])] == [1 << 20, 1 << 10]
