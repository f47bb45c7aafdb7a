"""Column tiles fitted to one shape, for the axis benchmark's on-the-spot tune (_axis_tune.py).

The presets are fixed points: at the column shapes of 2^28 elements they left the H200 at
83-85 % of the HBM peak (docs/results/h200_2026-11-26_axis_bench_shuffled_rounds: (65536,
4096) 83.1 % with 32-column tiles, (4194304, 64) 83.4 %) where rows and the read-only streaming
kernel reach 86-90 %. Two causes, both fixed by the shape: a preset's tile holds too few bytes
in flight per thread (2 x 4 loads of 4 bytes = 32 B; the streaming kernel keeps 64 B and more),
and its rows of lanes read short strips of a row (32 lanes of 16 bytes at most) before jumping
a whole row ahead. A fitted tile reads with 16-byte vectors, as long a piece of each row as the
row (up to ROW_SPAN columns) and the block allow, IN_FLIGHT bytes in flight per thread, and
splits r until the grid holds BLOCKS_PER_SM blocks per SM. Every fitted point goes through
the same verification and screening as the presets: a wrong one is rejected, never best.

A fitted tile that splits r has a TICKET twin: the same point as the tile_ticket strategy,
which finishes the split in its own launch (kernel_templates/axis/axis_finish.cuh) with the
same bits. A split's finish kernel cost 5-10 us a call (H200, 2026-11-27: bfloat16 (8192,
32768) 10.2 us over the streaming kernel, (4194304, 64) 9.1 us); the twin trades it for the
serial finish of each tile's last block, which the tune weighs by measurement.
"""

from __future__ import annotations

from typing import Any

VECTOR_BYTES = 16  # the widest load (family.json: vec * sizeof_T <= 16)
ROW_SPAN = 1024  # columns of a row one block step reads at most: 4 KiB of float32
IN_FLIGHT = 64  # bytes a thread keeps in flight (the streaming kernel's 64+)
BLOCKS_PER_SM = (4, 8)  # a grid of 4-8 blocks per SM: every SM busy, split partials small
BLOCK_SIZES = (256, 512)  # the tile's block: 256 (the presets'), 512 (twice the rows along r)
TICKET = "tile_ticket"  # the strategy of a split tile's one-launch twin


def fitted_tiles(shape: tuple[int, int, int], size: int, sm_count: int,
                 choices: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """The tile points fitted to `shape` (outer, r, inner) for elements of `size` bytes on a GPU
    of `sm_count` SMs, one for each of BLOCK_SIZES, from the declared values in `choices`, then
    the TICKET twin of each that splits r (where the space declares it); none for rows
    (inner == 1: there is no row of columns to read along)."""
    outer, r, inner = shape
    if inner <= 1:
        return []
    vec = _vec(inner, size, choices["vec"])
    unroll = _at_least(-(-IN_FLIGHT // (vec * size)), choices["unroll"])
    out = []
    for block_size in BLOCK_SIZES:
        lanes = _lanes(inner, vec, block_size, choices["lanes"])
        tiles = outer * -(-inner // (lanes * vec))
        out.append({"strategy": "tile", "block_size": block_size, "lanes": lanes, "vec": vec,
                    "unroll": unroll, "split": _split(tiles, r, sm_count, choices["split"])})
    if TICKET in choices["strategy"]:
        out += [{**p, "strategy": TICKET} for p in out if p["split"] > 1]
    return out


def _vec(inner: int, size: int, values: list[int]) -> int:
    """The widest load of at most VECTOR_BYTES that divides inner: every row of the tile then
    starts on a vector (axis_tile.cuh takes its vector path only where inner % vec == 0)."""
    return max(v for v in values if v * size <= VECTOR_BYTES and inner % v == 0)


def _lanes(inner: int, vec: int, block_size: int, values: list[int]) -> int:
    """The fewest lanes whose vec-wide loads cover min(inner, ROW_SPAN) columns, at most the
    block and the largest declared: a block step reads that much of a row in one piece."""
    fit = [v for v in values if v <= block_size]
    return _at_least(-(-min(inner, ROW_SPAN) // vec), fit)


def _split(tiles: int, r: int, sm_count: int, values: list[int]) -> int:
    """The largest declared split (at most r) that keeps tiles x split within the top of
    BLOCKS_PER_SM blocks per SM: 1 where the tiles alone fill the GPU; since the declared splits
    double, the grid then lies between the bottom and the top unless r or the largest split
    stops it first."""
    top = BLOCKS_PER_SM[1] * sm_count
    fit = [s for s in values if s <= max(r, 1) and tiles * s <= top]
    return max(fit) if fit else min(values)


def _at_least(want: int, values: list[int]) -> int:
    """The smallest of `values` at least `want`, else the largest."""
    above = [v for v in values if v >= want]
    return min(above) if above else max(values)
