"""``reducetune experiment``: the research experiments in reducetune.experiments."""

from __future__ import annotations

import argparse
import importlib

# name -> (module in reducetune.experiments, help)
EXPERIMENTS = {
    "search-efficiency": ("search_efficiency",
                          "fraction of the exhaustive optimum vs evaluations (replay)"),
    "transfer": ("transfer", "evaluations to the optimum with and without another GPU's bests "
                             "measured first (replay)"),
    "harris": ("harris", "the seeds' tables measured again on this GPU beside the published "
                         "numbers (GPU, or --replay)"),
    "cascading": ("cascading", "GB/s against elements per thread, and passes against n "
                               "(GPU, or --replay)"),
    "axis": ("axis", "axis sums: strategy per shape, determinism cost, transfer (benchmark JSONs)"),
}


def _module(name: str) -> object:
    # by name from the table above: adding an experiment is one entry there
    return importlib.import_module(f"reducetune.experiments.{EXPERIMENTS[name][0]}")


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("experiment", help="research experiments")
    esub = p.add_subparsers(dest="experiment", required=True, metavar="NAME")
    for name, (_, text) in EXPERIMENTS.items():
        _module(name).add_arguments(esub.add_parser(name, help=text))  # type: ignore[attr-defined]


def cmd_experiment(args: argparse.Namespace) -> int:
    return int(_module(args.experiment).run_from_args(args))  # type: ignore[attr-defined]


COMMANDS = {"experiment": cmd_experiment}
