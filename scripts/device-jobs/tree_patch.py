"""A copy of kernel_templates/ with a few text edits, for device experiments that time a kernel
change against the tree as it is (REDUCETUNE_TEMPLATE_DIR): prefetch_tree.py, tworow_tree.py,
deferred_tree.py, store_tree.py.
Each edit's anchor must occur exactly once, so that an experiment never runs on a tree its edit
missed."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# axis/axis_rows.cuh: rows_by_lanes' declaration (an experiment's helpers go before it) and the
# head of its loop (an experiment's own path goes before the loop: rows_by_lanes_path)
ROWS_BY_LANES = """template <class T, class Op, unsigned BS, unsigned L, unsigned UNROLL, unsigned VEC>
__device__ __forceinline__ void rows_by_lanes("""
_LOOP_HEAD = ("""  const unsigned long long outputs = outer * inner;
  const unsigned lane = threadIdx.x % 32;
""", """  // The loop bound is the warp's first row, so every lane of a warp runs the same iterations:
  // the shuffles need all 32.
  for (unsigned long long base""")
# axis/family.json: the group and warp strategies' grid, a block per block_size / lanes rows
# (times unroll where short rows take several groups a step)
GROUP_GRID = ("ceil_div(outer * inner, block_size / lanes * (r <= lanes * (inner == 1 ? vec : 1) "
              "? (block_size >= 1024 ? min(unroll, 2) : unroll) : 1))")


def rows_by_lanes_path(code: str) -> tuple[str, str]:
    """The edit that runs `code` in rows_by_lanes after `outputs` and `lane` are known and
    before its loop: (anchor, replacement)."""
    return "".join(_LOOP_HEAD), _LOOP_HEAD[0] + code + _LOOP_HEAD[1]


def patched_copy(dest: Path, edits: dict[str, list[tuple[str, str] | tuple[str, str, int]]]
                 ) -> None:
    """kernel_templates/ copied to `dest`, then in each file (relative to the tree) each anchor
    replaced by its text; an edit (anchor, text, times) replaces an anchor that occurs `times`
    times, (anchor, text) one that occurs once. SystemExit naming the file where an anchor is not
    found as often."""
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(ROOT / "kernel_templates", dest)
    for name, pairs in edits.items():
        path = dest / name
        text = path.read_text()
        for anchor, replacement, *times in pairs:
            if text.count(anchor) != (times[0] if times else 1):
                raise SystemExit(f"{name} changed: an anchor of this experiment is gone")
            text = text.replace(anchor, replacement)
        path.write_text(text)
