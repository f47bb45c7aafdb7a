"""``reducetune experiment``: the research experiments in reducetune.experiments."""

from __future__ import annotations

import argparse


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("experiment", help="research experiments")
    esub = p.add_subparsers(dest="experiment", required=True, metavar="NAME")
    e = esub.add_parser("search-efficiency",
                        help="fraction of the exhaustive optimum vs evaluations (replay)")
    from reducetune.experiments.search_efficiency import add_arguments

    add_arguments(e)


def cmd_experiment(args: argparse.Namespace) -> int:
    from reducetune.experiments.search_efficiency import run_from_args

    return run_from_args(args)


COMMANDS = {"experiment": cmd_experiment}
