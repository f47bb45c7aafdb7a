"""The tiles the axis benchmark fits to a column shape (benchmarks/_axis_fitted.py), without a
GPU: they are valid points of the type's space at the benchmark's column shapes, they read with
16-byte vectors as long a piece of a row as the row (up to 1024 columns) and the block allow,
with 64 bytes in flight per thread and a grid of 4-8 blocks per SM where splitting r can reach
it, and the tune screens them beside the presets, never picking one that fails verification."""

from __future__ import annotations

import pytest

from reducetune import _core
from reducetune._space import limits_for_arch
from reducetune.benchmarks._axis_fitted import (BLOCK_SIZES, BLOCKS_PER_SM, IN_FLIGHT, ROW_SPAN,
                                                TICKET, VECTOR_BYTES, fitted_tiles)
from reducetune.benchmarks._axis_tune import FITTED, Tuner

from test_axis_bench_tune import _fake_tune, _FakeX

SM90 = limits_for_arch("sm_90")
# The benchmark's column shapes (1, r, inner): totals 2^24 and 2^28, r from 2 by powers of 8
COLUMNS = [(1, r, (1 << total) // r) for total in (24, 28)
           for r in (2, 16, 128, 1024, 8192, 65536, 524288, 4194304)]
TYPES = ("float32", "bfloat16", "float64")


def _params(t: Tuner, variant: str, launch: str) -> dict:
    return dict(t.space.parse(variant, launch).params)


@pytest.mark.parametrize("dtype", TYPES)
def test_every_fitted_tile_is_a_valid_point_at_every_benchmark_column_shape(dtype):
    t = Tuner(dtype, "sum", SM90, [])
    twinned = 0
    for shape in COLUMNS:
        got = t.fitted(shape)
        # one tile for each block size, then the one-launch twin of each that splits r; none
        # refused by the space (fitted() drops refused points)
        tiles = got[:2]
        assert [c.name for c in tiles] == [FITTED, f"{FITTED} block_size=512"], shape
        split = [c for c in tiles if _params(t, c.variant, c.launch)["split"] > 1]
        assert [c.name for c in got[2:]] == [f"{c.name} strategy={TICKET}" for c in split]
        for tile, twin in zip(split, got[2:]):
            # the same point but the strategy: the tile's bits in one launch
            assert _params(t, twin.variant, twin.launch) == {
                **_params(t, tile.variant, tile.launch), "strategy": TICKET}
        twinned += len(split)
        for c in got:
            p = t.space.parse(c.variant, c.launch)
            assert not t.space.check(p), (shape, c.variant)
            assert dict(p.params)["strategy"] in ("tile", TICKET)
    assert twinned >= 8  # the tall columns split r (the short ones fill the GPU with tiles)


def test_rows_get_no_fitted_tile():
    assert Tuner("float32", "sum", SM90, []).fitted((1 << 20, 256, 1)) == []


@pytest.mark.parametrize("dtype", TYPES)
def test_the_fitted_tile_reads_16_bytes_a_load_64_in_flight_and_a_row_as_long_as_allowed(dtype):
    size = _core.element_bytes(dtype)
    t = Tuner(dtype, "sum", SM90, [])
    choices = t.space.choices()
    for _, r, inner in COLUMNS:
        for bs, c in zip(BLOCK_SIZES, t.fitted((1, r, inner))):
            p = _params(t, c.variant, c.launch)
            assert p["block_size"] == bs
            # 16 bytes, or the widest vector that divides inner (4 bfloat16 columns: vec 4)
            assert p["vec"] * size == VECTOR_BYTES or inner % (2 * p["vec"]) != 0
            assert inner % p["vec"] == 0
            assert p["unroll"] * p["vec"] * size == IN_FLIGHT
            span = min(inner, ROW_SPAN)
            # the fewest lanes that cover the span, unless the declared lanes stop short of it
            # (float64's 256 lanes of 2 cover 512 columns)
            assert p["lanes"] * p["vec"] >= span or p["lanes"] == max(choices["lanes"])
            assert p["lanes"] // 2 * p["vec"] < span and p["lanes"] <= bs


@pytest.mark.parametrize("dtype", TYPES)
def test_the_fitted_split_fills_the_gpu_with_4_to_8_blocks_per_sm(dtype):
    t = Tuner(dtype, "sum", SM90, [])
    low, high = (k * SM90.sm_count for k in BLOCKS_PER_SM)
    for _, r, inner in COLUMNS:
        c = t.fitted((1, r, inner))[0]
        p = _params(t, c.variant, c.launch)
        tiles = -(-inner // (p["lanes"] * p["vec"]))
        blocks = tiles * p["split"]
        if tiles >= low:  # the tiles alone fill the GPU: no split
            assert p["split"] == 1
        elif p["split"] < max(t.space.choices()["split"]):  # else the largest split stops it
            assert low < blocks <= high, (r, inner, p)


def test_the_fitted_tiles_of_the_shortfall_shapes():
    # H200 float32 at 2^28 (docs/results/h200_2026-11-26_axis_bench_shuffled_rounds): (65536,
    # 4096) read 32-column strips (83.1 %); fitted: 256 lanes of 4 (a block step reads 4 KiB of
    # a row), 4 tiles x 256 = 1024 blocks (7.8 per SM). (4194304, 64): 16 lanes of 4 read a whole
    # row of 256 bytes, one tile split 1024 ways (the largest declared split). bfloat16 (8192,
    # 32768): 128 lanes of 8, 32 tiles x 32 = 1024 blocks.
    want = {("float32", (1, 65536, 4096)): (256, 4, 4, 256),
            ("float32", (1, 4194304, 64)): (16, 4, 4, 1024),
            ("float32", (1, 2, 1 << 27)): (256, 4, 4, 1),
            ("bfloat16", (1, 8192, 32768)): (128, 8, 4, 32),
            ("bfloat16", (1, 524288, 512)): (64, 8, 4, 1024),
            ("float64", (1, 65536, 4096)): (256, 2, 4, 128)}
    for (dtype, shape), (lanes, vec, unroll, split) in want.items():
        t = Tuner(dtype, "sum", SM90, [])
        got = [_params(t, c.variant, c.launch) for c in t.fitted(shape)]
        # the two tiles, then (split > 1) their tile_ticket twins, the same geometry
        assert [(p["lanes"], p["vec"], p["unroll"], p["split"]) for p in got] == \
            [(lanes, vec, unroll, split)] * (2 if split == 1 else 4), (dtype, shape)
        assert [p["strategy"] for p in got[2:]] == [TICKET] * len(got[2:])


def test_a_misaligned_inner_gets_the_widest_vector_that_divides_it():
    # 6 columns of float32: vec 2 (4 does not divide 6), so every row starts on a vector;
    # 8 bytes a load, 8 loads in flight make the 64 bytes
    got = fitted_tiles((1, 1 << 20, 6), 4, 132, Tuner("float32", "sum", SM90, []).space.choices())
    # (the two tiles split r 1024 ways, so their tile_ticket twins follow, the same geometry)
    assert [(p["vec"], p["unroll"], p["lanes"]) for p in got] == [(2, 8, 4)] * 4
    assert [p["strategy"] for p in got] == ["tile", "tile", TICKET, TICKET]


def test_a_tile_that_does_not_split_r_has_no_ticket_twin():
    # 2 rows of 2^27 float32 columns: the tiles alone fill the GPU (split 1), and tile_ticket
    # refuses split 1 (it would be the tile itself)
    choices = Tuner("float32", "sum", SM90, []).space.choices()
    got = fitted_tiles((1, 2, 1 << 27), 4, 132, choices)
    assert [(p["strategy"], p["split"]) for p in got] == [("tile", 1)] * 2
    # a space that does not declare the strategy (an older family) gets the tiles alone
    older = {**choices, "strategy": [s for s in choices["strategy"] if s != TICKET]}
    assert all(p["strategy"] == "tile" for p in fitted_tiles((1, 1 << 20, 6), 4, 132, older))


class _Columns(_FakeX):
    shape = (65536, 4096)  # axis 0: the view (1, 65536, 4096)


def test_the_tune_screens_the_fitted_tiles_with_the_presets_and_never_picks_a_wrong_one(
        monkeypatch):
    from reducetune.benchmarks import _axis_tune

    t = Tuner("float32", "sum", SM90, [(1, 65536, 4096)])
    # the fitted tile at block 256 is the fastest but fails verification; at block 512 it is
    # the fastest verified point; the presets are slower
    seconds = {FITTED: 0.5e-3, f"{FITTED} block_size=512": 1e-3}
    _fake_tune(monkeypatch, lambda name: seconds.get(name, 1.6e-3), wrong=FITTED)
    got = _axis_tune.tune_shape(t, _Columns(), 0, 10)
    assert FITTED in got["rejected"]
    assert got["best"].name == f"{FITTED} block_size=512"
    # its neighbourhood was screened too (it is among the best three)
    assert any(c["name"].startswith(f"{FITTED} block_size=512 ") for c in got["candidates"])
