"""Which code produced a benchmark's numbers: recorded beside them in every benchmark JSON
(``reducetune bench --json``, ``python -m reducetune.benchmarks.runtime``)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["reducetune_commit"]


def reducetune_commit() -> str:
    """``REDUCETUNE_COMMIT`` where set, else ``git describe --always --dirty`` of the tree this
    package was imported from, or "unknown" (an installed wheel is no git tree). Why the
    variable: the GPU machine gets a copy of the working tree without .git, so its benchmark
    files said "unknown"; the command that sends the tree there knows the commit and passes
    it (e.g. ``REDUCETUNE_COMMIT=$(git rev-parse --short HEAD)`` in the device call)."""
    if os.environ.get("REDUCETUNE_COMMIT", "").strip():
        return os.environ["REDUCETUNE_COMMIT"].strip()
    root = Path(__file__).resolve().parents[3]  # the source tree: root/driver/reducetune/...
    # Only the package's own tree: an installed copy may lie inside another repository (CI's
    # site-packages lies in the pyenv checkout, whose commit this answered).
    if _git(root, "rev-parse", "--show-toplevel") != str(root):
        return "unknown"
    return _git(root, "describe", "--always", "--dirty", "--tags") or "unknown"


def _git(folder: Path, *args: str) -> str:
    """git's stdout in ``folder``, stripped, or "" where git fails or is missing."""
    try:
        out = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True,
                             timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""
