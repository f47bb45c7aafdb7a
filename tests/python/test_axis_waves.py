"""scripts/axis-waves without a GPU: the blocks an SM holds from a kernel's registers, threads
and shared memory, and the registers read from a cubin NVRTC compiled here (.nv.info's
EIATTR_REGCOUNT), for a split tile and its tile_ticket twin."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

import pytest

from reducetune._space import Space, limits_for_arch

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "axis-waves"


def _waves():
    loader = importlib.machinery.SourceFileLoader("axis_waves", str(SCRIPT))
    spec = importlib.util.spec_from_loader("axis_waves", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


@pytest.mark.parametrize("regs, block, shared, want", [
    (32, 256, 0, 8),       # 8 x 256 x 32 = 64 K registers, 2048 threads: both limits at once
    (33, 256, 0, 6),       # 40 allocated (units of 8): 10,240 a block, 6 fit in 64 K
    (40, 256, 0, 6),       # the H100's tile_ticket twin at (8192, 32768)
    (54, 512, 34816, 2),   # registers: 56 x 512 a block, 2 fit
    (16, 128, 0, 16),      # threads: 2048 / 128
    (16, 64, 0, 32),       # the block limit, before threads (2048 / 64 = 32 too)
    (16, 256, 60000, 3),   # shared memory: 228 KiB / (60,000 + 1 KiB reserved)
])
def test_blocks_per_sm_take_the_tightest_of_registers_threads_blocks_and_shared_memory(
        regs, block, shared, want):
    assert _waves().blocks_per_sm(regs, block, shared) == want


def test_the_registers_of_a_compiled_split_tile_and_its_ticket_twin_are_read_from_the_cubin():
    waves = _waves()
    space = Space("axis", "bfloat16", "sum", limits_for_arch("sm_90"))
    got = {}
    for strategy in ("tile", "tile_ticket"):
        p = space.point({"strategy": strategy, "block_size": 256, "lanes": 32, "vec": 4,
                         "unroll": 4, "split": 4})
        got[strategy] = waves.pass_resources(space, p.variant_label, p.launch_label)
    for regs, shared in got.values():
        assert 16 <= regs <= 255  # a real count, not a stray field
        assert shared > 0  # the tile's tree over 8 rows of lanes: block_size * vec floats
    # the same tile's tree in both: the ticket adds code, never shared memory
    assert got["tile"][1] == got["tile_ticket"][1]
