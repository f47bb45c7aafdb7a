"""The store hands out typed Points, and the runtime takes and gives them (issue 23, item 1):
what tuning (warm start), calibrate and the runtime benchmark used to parse from labels
themselves. Without a GPU on a copy of a real recording, except the Reducer's choice (skipped
with the reason where there is no GPU)."""

from __future__ import annotations

from pathlib import Path

import pytest

import replay_support
from conftest import NO_GPU, RECORDED
from reducetune import _core
from reducetune._space import Space, limits_for_arch
from reducetune.store.candidates import application_points
from reducetune.store.priors import Prior
from reducetune.store.results import best_point, open_store, store_best

GRID = [p for p in RECORDED if p.name == "h200_float32_sum_grid.db"]
needs_grid = pytest.mark.skipif(not GRID, reason="tests/data/recorded/h200_float32_sum_grid.db.xz "
                                                  "is absent")
SPACE = Space("tunable", "float32", "sum", limits_for_arch("90"))


@pytest.fixture
def grid_copy(tmp_path: Path) -> tuple[Path, str]:
    return replay_support.grid_copy(tmp_path)


def _labels(p: _core.Point) -> tuple[str, str]:
    return str(p.variant_label), str(p.launch_label)


@needs_grid
def test_calibrate_candidates_come_with_the_point_their_row_names(grid_copy):
    db, uuid = grid_copy
    rows = _core.application_candidates(str(db), "float32", "sum", uuid)
    got = application_points(str(db), "float32", "sum", uuid, SPACE.limits)
    assert sorted(got) == sorted(rows) and rows
    for n, cands in got.items():
        # the same candidates in the same order, each with the point of its labels
        assert [c["measurement_id"] for c in cands] == [c["measurement_id"] for c in rows[n]]
        for c in cands:
            assert isinstance(c["point"], _core.Point)
            assert _labels(c["point"]) == (c["variant"], c["launch"])
    assert application_points(str(db), "float32", "sum", "GPU-not-here", SPACE.limits) == {}


@needs_grid
def test_the_store_best_is_a_point_of_its_parameters_at_its_own_size_only(grid_copy):
    db, _ = grid_copy
    store = open_store(db, read_only=True)
    device_id = int(store.devices()[0]["id"])
    b = store_best(store, device_id, "float32", "sum", 1 << 20)
    assert b is not None
    n = int(b["bucket_n"])
    p, median = best_point(store, device_id, SPACE, n)
    # built from the parameter columns, it is the point the row's labels name
    assert _labels(p) == (b["variant_label"], b["launch_label"])
    assert median == pytest.approx(float(b["median_s"]))
    assert best_point(store, device_id, SPACE, n + 1) is None  # the nearest size is not n's
    other = Space("tunable", "float32", "max", SPACE.limits)
    assert best_point(store, device_id, other, n) is None  # nothing measured of max


def test_a_prior_is_a_point_of_its_space_or_none():
    base = SPACE.base("good", False, False)
    assert Prior(*_labels(base), 1, 1e-6).point(SPACE) == base
    # labels of another version of the family: no point rather than an error
    assert Prior("tunable.float32.sum.bs_3", "ept_1.cap_0", 1, 1e-6).point(SPACE) is None


def test_the_runtime_takes_the_point_itself():
    base = SPACE.base("good", False, False)
    r = _core.Reducer.for_point(base)
    assert (r.dtype, r.op) == ("float32", "sum")  # the point's space says them
    with pytest.raises(TypeError):  # labels are no longer a way to name the point
        _core.Reducer.for_point("float32", "sum", "tunable", *_labels(base))


@pytest.mark.skipif(NO_GPU is not None, reason=NO_GPU or "")
def test_the_reducers_choice_carries_its_point():
    base = SPACE.base("good", False, False)
    choice = _core.Reducer.for_point(base).choice(1 << 20)
    assert choice["source"] == "tuned"
    assert choice["point"] == base and _labels(choice["point"]) == (choice["variant"],
                                                                     choice["launch"])
    untuned = _core.Reducer("float32", "sum", log_fallbacks=False).choice(1 << 20)
    assert _labels(untuned["point"]) == (untuned["variant"], untuned["launch"])
