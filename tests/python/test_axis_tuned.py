"""The axis call takes its points per shape from a results file or its export (issue 26, item
5), as the whole-array reducer does: ``AxisReducer(dtype, op, db=...)``,
``AxisReducer(dtype, op, table=EXPORT)``, ``reducetune.reduce(x, axis=..., db=...)``. The file
here is written with the store's own API: axis measurements at a few shapes of a synthetic
sm_90 device, which an H100 or H200 finds by its compute capability.

Without a GPU: the file's export carries each shape's picks, and the reducer takes the file or
the export (and refuses both at once, a missing file, an export given as a dict). With a GPU
(skipped here, with the reason): the choice of a tuned shape, of a shape between grid points
and of a batch_invariant call, and the results against torch. Which entry answers a shape is
tested in C++ (tests/cpp/db/test_db_shape_rule.cpp, tests/cpp/runtime/test_axis_tables.cpp)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import reducetune
from reducetune import InvalidConfiguration, _core
from axis_results_support import axis_space, write_axis_results
from conftest import NO_GPU

# (shape, preset, median seconds): two points at (4096, 1024, 1), the faster not batch_invariant
MEASURED = [((4096, 1024, 1), "warp_rows_vec2", 1.0e-5), ((4096, 1024, 1), "warp_rows", 1.2e-5),
            ((64, 1 << 16, 1), "block_rows", 2.0e-5), ((1, 1024, 4096), "thread_columns", 3e-5)]


def _label(preset: str) -> str:
    return axis_space().base(preset).variant_label


def _results(folder: Path) -> Path:
    return write_axis_results(folder / "axis-results.db", MEASURED)


def _export(folder: Path) -> Path:
    path = folder / "axis-export.json"
    path.write_text(_core.export_json(str(_results(folder))))
    return path


def test_the_export_of_axis_results_carries_each_shapes_picks(tmp_path):
    doc = json.loads(_export(tmp_path).read_text())
    assert "shape_rule" in doc
    rules = {(r["outer"], r["r"], r["inner"]): r for r in doc["devices"][0]["axis_tables"][0]["rules"]}
    assert set(rules) == {(4096, 1024, 1), (64, 1 << 16, 1), (1, 1024, 4096)}
    assert rules[(4096, 1024, 1)]["variant"] == _label("warp_rows_vec2")
    assert rules[(4096, 1024, 1)]["batch_invariant"] is False
    assert rules[(4096, 1024, 1)]["batch_invariant_pick"]["variant"] == _label("warp_rows")
    assert doc["devices"][0]["tables"] == []  # no whole-array row in this file


def test_an_axis_reducer_takes_a_results_file_or_its_export(tmp_path):
    db = _results(tmp_path)
    export = _export(tmp_path)
    for kwargs in ({"db": db}, {"table": export}, {"db": db, "determinism": "batch_invariant"}):
        r = reducetune.AxisReducer("float32", "sum", **kwargs)
        assert r.dtype == "float32" and r.fallbacks == []


@pytest.mark.parametrize("kwargs, words", [
    ({"db": "missing.db"}, "no results database at missing.db"),
    ({"db": "DB", "table": "EXPORT"}, "not both"),
    ({"table": "EXPORT_DICT"}, "pass the path"),
])
def test_an_axis_reducer_refuses_a_bad_tuned_source_in_one_line(tmp_path, kwargs, words):
    db, export = _results(tmp_path), _export(tmp_path)
    given = {k: {"DB": db, "EXPORT": export,
                 "EXPORT_DICT": json.loads(export.read_text())}.get(v, v)
             for k, v in kwargs.items()}
    with pytest.raises(InvalidConfiguration, match=words) as e:
        reducetune.AxisReducer("float32", "sum", **given)
    assert "\n" not in str(e.value)


def _torch():
    return pytest.importorskip("torch", reason="PyTorch is not installed")


@pytest.mark.parametrize("source", ["db", "table"])
@pytest.mark.skipif(NO_GPU is not None, reason=NO_GPU or "")
@pytest.mark.gpu
def test_a_tuned_axis_point_reduces_its_shape_and_its_neighbours_as_torch(tmp_path, source):
    torch = _torch()
    path = _results(tmp_path) if source == "db" else _export(tmp_path)
    r = reducetune.AxisReducer("float32", "sum", **{source: path})
    cases = [((4096, 1024, 1), (4096, 1024, 1), "warp_rows_vec2"),   # a tuned shape
             ((2048, 1500, 1), (4096, 1024, 1), "warp_rows_vec2"),   # between grid points
             ((16, 1 << 17, 1), (64, 1 << 16, 1), "block_rows"),
             ((1, 1000, 3000), (1, 1024, 4096), "thread_columns")]   # a column shape
    g = torch.Generator(device="cuda").manual_seed(26)
    for shape, tuned, preset in cases:
        c = r.choice(*shape)
        assert c["source"] == "tuned", c
        assert c["variant"] == _label(preset) and str(tuned).replace(" ", "") in c["why"].replace(" ", "")
        outer, n, inner = shape
        x = torch.randn((outer, n, inner), device="cuda", generator=g)
        out = r(x, axis=1)
        torch.testing.assert_close(out, x.double().sum(1).float(), rtol=1e-5, atol=1e-3)
    assert r.fallbacks == []
    # batch_invariant takes the shape's batch_invariant point, not the faster vec2
    bi = reducetune.AxisReducer("float32", "sum", determinism="batch_invariant", **{source: path})
    c = bi.choice(4096, 1024, 1)
    assert c["source"] == "tuned" and c["variant"] == _label("warp_rows") and c["batch_invariant"]
    # and reduce() with the file
    x = torch.randn((2048, 1500), device="cuda", generator=g)
    torch.testing.assert_close(reducetune.reduce(x, axis=1, **{source: path}),
                               x.double().sum(1).float(), rtol=1e-5, atol=1e-3)
