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
    try:
        out = subprocess.run(["git", "-C", str(Path(__file__).resolve().parents[1]), "describe",
                              "--always", "--dirty", "--tags"], capture_output=True, text=True,
                             timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"
