"""Where reducetune keeps its files when no path is given."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["default_db_path"]


def default_db_path() -> Path:
    """``$XDG_DATA_HOME/reducetune/results.db`` (``~/.local/share`` when unset)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "reducetune" / "results.db"
