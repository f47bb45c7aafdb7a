"""The split column tile that spans whole rows issues every 16-byte load of a group before the
group's first add (axis_tile.cuh, tile_columns' block-wide count of groups). The schedule is
ptxas's, so it is read where it is decided: in the SASS of real NVRTC cubins (sm_90, no GPU
needed), disassembled with nvdisasm from the CUDA toolkit or from PyPI's nvidia-cuda-nvdisasm
(scripts/setup installs it). On an H200 the change took bfloat16 columns (4194304, 64)'s point
block 256, lanes 8, vec 8, unroll 4 from 0.943-0.947 to 0.957-0.961 x the streaming kernel, the
shape's best (docs/results/h200_2026-11-27_tile_groups/); the same loop with k and cnt tested
per thread issued three of four loads, then an add, then the fourth."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

import reducetune
from reducetune import _core


# scripts/sass-same's nvdisasm (on PATH, else PyPI's nvidia-cuda-nvdisasm), its compile of one
# point into a folder of its own (the cubin lands there whatever this process compiled) and its
# disassembly
SASS_SAME = runpy.run_path(str(Path(__file__).resolve().parents[2] / "scripts" / "sass-same"))
NVDISASM = SASS_SAME["default_nvdisasm"]()
pytestmark = pytest.mark.skipif(not Path(NVDISASM).is_file(), reason=(
    "no nvdisasm: scripts/setup installs it (pip install nvidia-cuda-nvdisasm)"))


def pass_sass(variant: str) -> list[str]:
    """The instructions of the variant's pass kernel (its final_pass left out), one a line."""
    dtype, op = variant.split(".")[1:3]
    point = reducetune.Space("axis", dtype, op, reducetune.limits_for_arch("sm_90")).parse(
        variant, "")
    got = SASS_SAME["cubins_of"](_core, point)  # its cubins, or ("failed", why)
    assert got and got[0] != "failed", f"{variant} did not compile: {got}"
    (cubin,) = got
    text = "\n".join(SASS_SAME["sass"](NVDISASM, cubin))  # its disassembly, addresses left out
    sections = re.split(r"^\s*\.text\.", text, flags=re.M)
    (body,) = [s for s in sections if re.match(r"_ZN2rt4axis4pass", s)]
    return body.splitlines()


def loops(lines: list[str]) -> list[list[str]]:
    """Each loop's instructions: from a label to the branch back to it."""
    at = {m.group(1): i for i, line in enumerate(lines)
          if (m := re.match(r"\s*(\.L_x_\d+):", line))}
    found = []
    for i, line in enumerate(lines):
        m = re.search(r"BRA `\((\.L_x_\d+)\)", line)
        if m and at.get(m.group(1), i) < i:
            found.append(lines[at[m.group(1)]:i + 1])
    return found


def order(loop: list[str]) -> str:
    """L for a 16-byte load, a for a float add, in issue order."""
    ops = [line.split("*/")[-1].strip() for line in loop]
    return "".join("L" if "LDG.E.128" in op else "a" if re.match(r"(@!?U?P\d+ )?FADD", op)
                   else "" for op in ops)


@pytest.mark.parametrize("variant, unroll", [
    ("axis.bfloat16.sum.s_tile.bs_256.l_8.v_8.u_4.sp_512", 4),
    ("axis.bfloat16.sum.s_tile.bs_512.l_8.v_8.u_4.sp_512", 4),
    ("axis.bfloat16.sum.s_tile.bs_512.l_8.v_8.u_2.sp_512", 2),
    ("axis.float32.sum.s_tile.bs_512.l_16.v_4.u_4.sp_512", 4),
])
def test_a_split_whole_row_tile_issues_a_groups_loads_before_its_first_add(variant, unroll):
    # The pass holds two such loops: the tile's general one (rows inner apart, a run-time step)
    # and the whole-row one (a constant step); the first may interleave, the second may not.
    groups = [o for o in map(order, loops(pass_sass(variant)))
              if o.count("L") == unroll and "a" in o]
    assert groups, f"{variant}: no loop of {unroll} 16-byte loads and adds"
    assert any(o.index("a") > o.rindex("L") for o in groups), \
        f"{variant}: every loop interleaves its loads and adds: {groups}"
