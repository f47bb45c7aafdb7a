"""Where reducetune keeps its files when no path is given."""

from __future__ import annotations

import os
from pathlib import Path

from reducetune.errors import InvalidConfiguration

__all__ = ["default_db_path", "check_output_folder", "writable"]


def default_db_path() -> Path:
    """``$XDG_DATA_HOME/reducetune/results.db`` (``~/.local/share`` when unset)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "reducetune" / "results.db"


def writable(path: Path) -> bool:
    """By access() and by the mode bits: root may write a 0444 file or into a 0555 folder, but
    the bits say nobody should, and reducetune honours them whoever runs it (as the store
    does, db/reducetune/db/read_only.hpp)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return bool(mode & 0o222) and os.access(path, os.W_OK)


def check_output_folder(folder: Path, option: str) -> None:
    """Refuses, before any work, an output folder that is a file, is read-only, or would be
    created inside a read-only folder (reducetune.errors.InvalidConfiguration)."""
    if folder.exists() and not folder.is_dir():
        raise InvalidConfiguration(f"{option} {folder} is not a folder: name a folder")
    existing = folder.absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir() or not writable(existing):
        what = "is" if existing == folder.absolute() else f"would be created in {existing}, which is"
        raise InvalidConfiguration(f"{option} {folder} {what} not a writable folder")
