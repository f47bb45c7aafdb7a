"""Job: the ``reducetune`` command line (entry point ``reducetune.cli:main``).

``app`` holds the top-level parser and the exit statuses; each subcommand is a module here
that adds its parsers and names the functions that run them (the table: ``commands``).
"""

from __future__ import annotations

from reducetune.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
