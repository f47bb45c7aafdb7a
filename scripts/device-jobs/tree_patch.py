"""A copy of kernel_templates/ with a few text edits, for device experiments that time a kernel
change against the tree as it is (REDUCETUNE_TEMPLATE_DIR): prefetch_tree.py, tworow_tree.py.
Each edit's anchor must occur exactly once, so that an experiment never runs on a tree its edit
missed."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def patched_copy(dest: Path, edits: dict[str, list[tuple[str, str]]]) -> None:
    """kernel_templates/ copied to `dest`, then in each file (relative to the tree) each anchor
    replaced by its text; SystemExit naming the file where an anchor is not found once."""
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(ROOT / "kernel_templates", dest)
    for name, pairs in edits.items():
        path = dest / name
        text = path.read_text()
        for anchor, replacement in pairs:
            if text.count(anchor) != 1:
                raise SystemExit(f"{name} changed: an anchor of this experiment is gone")
            text = text.replace(anchor, replacement)
        path.write_text(text)
