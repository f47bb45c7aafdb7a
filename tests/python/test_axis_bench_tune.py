"""The axis benchmark's on-the-spot tune without a GPU (benchmarks/_axis_tune.py): which points
it measures beside a preset. Each neighbour is a valid point of the type's space that differs
from the preset in one parameter, and vec also goes to its widest valid value: 16-byte loads,
two declared steps above the staged preset's vec 2 for bfloat16, one for float32, none for
float64 (whose vec 2 is already 16 bytes)."""

from __future__ import annotations

import pytest

from reducetune._space import limits_for_arch
from reducetune.benchmarks._axis_tune import Candidate, Tuner


def _neighbours(dtype: str, preset: str) -> tuple[Tuner, dict, list[Candidate]]:
    t = Tuner(dtype, "sum", limits_for_arch("sm_90"), [(1 << 20, 2, 1)])
    p = t.space.preset(preset)
    base = dict(t.space.parse(p.variant_label, p.launch_label).params)
    return t, base, t.neighbours(Candidate(preset, p.variant_label, p.launch_label))


@pytest.mark.parametrize("dtype, vecs", [("bfloat16", {1, 4, 8}), ("float16", {1, 4, 8}),
                                         ("float32", {1, 4}), ("float64", {1})])
def test_the_staged_preset_neighbours_reach_16_byte_loads(dtype, vecs):
    t, base, near = _neighbours(dtype, "staged_short_rows")
    assert base["strategy"] == "staged" and base["vec"] == 2
    got = set()
    for c in near:
        p = t.space.parse(c.variant, c.launch)
        assert not t.space.check(p), c.name  # only valid points are measured
        changed = {k for k, v in dict(p.params).items() if base[k] != v}
        assert len(changed) == 1, c.name
        if changed == {"vec"}:
            got.add(dict(p.params)["vec"])
    assert got == vecs


def test_vec_widens_only_as_far_as_16_bytes():
    # group_short_rows has vec 1: float32 steps to 2 and widens to 4, never to 8 (32 bytes)
    t, _, near = _neighbours("float32", "group_short_rows")
    vecs = sorted(dict(t.space.parse(c.variant, c.launch).params)["vec"] for c in near
                  if c.name.split()[-1].startswith("vec="))
    assert vecs == [2, 4]
