"""The subcommands: each module adds its parsers and names the functions that run them."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from reducetune.cli import bench, calibrate, db, devices, experiment, priors, query, space, tune

__all__ = ["COMMANDS", "add_parsers"]

# In the order that `reducetune --help` lists them.
_MODULES = (tune, calibrate, bench, query, db, priors, devices, space, experiment)

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    name: run for module in _MODULES for name, run in module.COMMANDS.items()}


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Every command's parser, added to the top-level parser's subparsers."""
    for module in _MODULES:
        module.add_parsers(sub)
