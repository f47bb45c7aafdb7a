"""The ``reducetune`` command line: the entry point, the top-level parser, exit statuses.

Bad input gets one line on stderr (``reducetune: error: ...``) and a non-zero exit status:
2 for usage and invalid input, 1 for a database or device problem, 130 when interrupted.
A database is opened (and checked) before anything is measured, and every measurement is
recorded as soon as it is taken, so an error or an interruption loses nothing.

Each command's arguments and implementation live in its own module of ``reducetune.cli``
(the table of commands: ``cli/commands.py``), imported when the parser is built: a ``tune``
that measures on a GPU starts that GPU's worker before (``_gpu_of_tune``), so that its process
and CUDA's start overlap those imports, the arguments' parsing and the files the command opens.
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import threading
from collections.abc import Sequence

from reducetune import errors
from reducetune._no_gpu import has_driver
from reducetune.cli.args import show_ranges
from reducetune.evaluate.gpu import close_prestarted, prestart

__all__ = ["build_parser", "dispatch", "main"]


def build_parser() -> argparse.ArgumentParser:
    # here, not at the top: main starts a GPU tune's worker first (_gpu_of_tune)
    from reducetune.cli.commands import add_parsers

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
    words = list(sys.argv[1:] if argv is None else argv)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        ordinal = _gpu_of_tune(words)
        # the command's first step (issue 25): see _gpu_of_tune; without NVIDIA's driver the
        # worker could only fail, and cmd_tune asks the GPU before any file (has_driver)
        if ordinal is not None and has_driver():
            prestart(ordinal, ceiling=True)  # the ceiling is the run's first measurement
        return dispatch(build_parser().parse_args(words))
    finally:
        close_prestarted()  # one no evaluator took: arguments refused, --help, interrupted
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


# A tune with these options (or an abbreviation of them) measures on no GPU worker
_NO_GPU_WORKER = ("--replay", "--in-process")


def _gpu_of_tune(words: Sequence[str]) -> int | None:
    """The GPU that the ``tune`` command line ``words`` measures on, read before the parser is
    built (which imports every command's module, 45 ms on a 2-core machine): --devices K (one
    ordinal, as cmd_tune runs it), else --device K, else 0. None where it measures on none or on
    several: another command, --replay, --in-process, --devices of a list or all, --help. A
    reading that the parser then contradicts costs a GPU worker ended unused (main's finally),
    never a measurement on another GPU: cmd_tune asks prestart for the ordinal it parsed, and
    an evaluator takes the worker of its own ordinal only."""
    if not words or words[0] != "tune":
        return None
    given: dict[str, str] = {}
    rest = iter(words[1:])
    for word in rest:
        name, eq, value = word.partition("=")
        if name in ("-h", "--help") or any(
                len(name) > 2 and option.startswith(name) for option in _NO_GPU_WORKER):
            return None
        if name in ("--device", "--devices"):
            given[name] = value if eq else next(rest, "")
    text = given.get("--devices", given.get("--device", "0")).strip()
    return int(text) if re.fullmatch(r"[0-9]{1,9}", text) else None


def one_line(e: BaseException) -> str:
    """An error's message as one line: a message that a library wrote on several lines
    (SQLAlchemy adds "(Background on this error at: <link into its docs>)", nanobind lists
    the signatures it tried) keeps its lines joined, without SQLAlchemy's link."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()
             and not line.strip().startswith("(Background on this error at:")]
    return " ".join(lines)


def dispatch(args: argparse.Namespace) -> int:
    from reducetune.cli.commands import COMMANDS  # as build_parser's

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
