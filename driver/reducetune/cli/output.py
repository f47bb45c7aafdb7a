"""Where ``export -o FILE`` writes, whatever FILE is.

- A regular file (or a new name) is replaced atomically: the text goes to a temporary file
  beside it, which is renamed over it, so a reader never sees half an export.
- A symbolic link is written through: its target is replaced, the link stays a link (as the
  shell's ``>`` does). A link whose target's folder does not exist is refused.
- A character device, a pipe or a FIFO (``/dev/null``, ``mkfifo``), and any name under
  ``/dev/`` (``/dev/stdout`` is whatever the shell made it: a terminal, a pipe, or a file
  after ``>``), is streamed into: nothing is read from it first, and no temporary file is
  renamed over it (that would replace the node, or wait forever reading a pipe).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from reducetune import _core, errors

__all__ = ["export_target", "is_stream", "write_export"]


def export_target(out: Path) -> Path:
    """The file ``-o out`` means: the final target of a symbolic link, else ``out``. A link to
    a stream stays as given: /dev/stdout's chain ends in /proc/self/fd/1, whose target
    (``pipe:[...]``) is no path."""
    if not out.is_symlink() or is_stream(out):
        return out
    target = Path(os.path.realpath(out))
    if not target.parent.is_dir():
        raise errors.InvalidConfiguration(
            f"-o {out} is a link to {target}, whose folder does not exist: fix the link or "
            "name another file")
    return target


def is_stream(out: Path) -> bool:
    """A character device, pipe, FIFO or socket, or a name under /dev/: written as a stream,
    never read or renamed."""
    if out.absolute().parts[:2] == ("/", "dev"):
        return True
    try:
        mode = out.stat().st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def write_export(out: Path, text: str) -> None:
    """Writes an export's text to the target of ``-o`` (export_target): streamed into a
    device, pipe or FIFO, else replaced atomically."""
    if is_stream(out):
        with open(out, "w", encoding="utf-8") as f:  # blocks until a FIFO has a reader
            f.write(text)
        return
    _core.write_file_atomically(str(out), text)
