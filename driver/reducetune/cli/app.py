"""The ``reducetune`` command line: the entry point, the top-level parser, exit statuses.

Bad input gets one line on stderr (``reducetune: error: ...``) and a non-zero exit status:
2 for usage and invalid input, 1 for a database or device problem, 130 when interrupted.
A database is opened (and checked) before anything is measured, and every measurement is
recorded as soon as it is taken, so an error or an interruption loses nothing.

Each command's arguments and implementation live in its own module of ``reducetune.cli``
(the table of commands: ``cli/commands.py``).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence

from reducetune import errors
from reducetune.cli.args import show_ranges
from reducetune.cli.commands import COMMANDS, add_parsers

__all__ = ["build_parser", "dispatch", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reducetune", description="Auto-tune GPU parallel reductions (NVRTC + Optuna).")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_parsers(sub)
    show_ranges(parser)  # every numeric option's help ends in its [range: ...]
    return parser


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM exits through SystemExit, so that every finally block and context manager
    runs (temporary folders removed, databases closed) instead of dying on the spot."""
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        return dispatch(args)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def one_line(e: BaseException) -> str:
    """An error's message as one line: a message that a library wrote on several lines
    (SQLAlchemy adds "(Background on this error at: <link into its docs>)", nanobind lists
    the signatures it tried) keeps its lines joined, without SQLAlchemy's link."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()
             and not line.strip().startswith("(Background on this error at:")]
    return " ".join(lines)


def dispatch(args: argparse.Namespace) -> int:
    try:
        return COMMANDS[args.command](args)
    except errors.InvalidConfiguration as e:
        print(f"reducetune: error: {one_line(e)}", file=sys.stderr)
        return 2
    except errors.Error as e:
        print(f"reducetune: error: {one_line(e)}", file=sys.stderr)
        return 1
    except OSError as e:  # a file or folder the command could not read or write
        print(f"reducetune: error: {one_line(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("reducetune: interrupted; every measurement so far is stored: run the same "
              "command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
