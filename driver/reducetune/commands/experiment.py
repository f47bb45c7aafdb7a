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
    t = esub.add_parser("transfer", help="evaluations to the optimum with and without another "
                                         "GPU's bests measured first (replay)")
    from reducetune.experiments.transfer import add_arguments as transfer_arguments

    transfer_arguments(t)


def cmd_experiment(args: argparse.Namespace) -> int:
    if args.experiment == "transfer":
        from reducetune.experiments.transfer import run_from_args as transfer

        return transfer(args)
    from reducetune.experiments.search_efficiency import run_from_args

    return run_from_args(args)


COMMANDS = {"experiment": cmd_experiment}
