"""The rich console that commands print their tables to."""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console


def console(stderr: bool = False) -> Any:
    file = sys.stderr if stderr else sys.stdout
    # Not a terminal (a pipe, a file): 200 columns rather than rich's default of 80.
    return Console(file=file, width=None if file.isatty() else 200, highlight=False)
