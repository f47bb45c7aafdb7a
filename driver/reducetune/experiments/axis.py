"""Reductions along an axis (issue 26, item 7), from the axis benchmark's JSON of each GPU
(``python -m reducetune.benchmarks.axis`` writes axis.json): which strategy wins where (a
heatmap over log2 r × log2 outer·inner per GPU and type, rows and columns apart), what batch
invariance costs over the run_to_run best per shape, and how far a best tuned on one GPU
transfers to the other (per shape and the geometric mean per direction).

    reducetune experiment axis --inputs H100.json H200.json --out docs/research/axis
    reducetune experiment axis --replay H100.json --replay H200.json --out ...   (the same)

It measures nothing: the benchmark measured on the GPU, so the report is rebuilt from the
committed JSONs on any machine. Writes OUT/axis_experiment.md, OUT/axis_experiment.json (every
number, with the candidate it came from) and the PNGs (with matplotlib)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from reducetune.cli.args import check_report_folder, out_folder
from reducetune.errors import InvalidConfiguration
from reducetune.experiments._axis_analysis import analyse, load, transfers
from reducetune.experiments._axis_plots import plot
from reducetune.experiments._axis_report import markdown
from reducetune.experiments._xp_common import command_line, utc_today

__all__ = ["add_arguments", "run", "run_from_args", "REPORT"]

REPORT = "axis_experiment"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--inputs", type=Path, nargs="+", default=[], metavar="AXIS.json",
                   help="the axis benchmark's JSON of each GPU (python -m "
                        "reducetune.benchmarks.axis writes axis.json), one per GPU")
    p.add_argument("--replay", type=Path, action="append", default=[], metavar="AXIS.json",
                   help="the same as --inputs, one file each (repeatable), as the other "
                        "experiments replay: this experiment never measures")
    p.add_argument("--out", type=out_folder, default=Path("axis"), metavar="OUT",
                   help=f"folder for {REPORT}.md, {REPORT}.json and the PNG plots")


def _check_inputs(paths: list[Path]) -> None:
    if not paths:
        raise InvalidConfiguration("name the axis benchmark's JSON of each GPU: --inputs "
                                   "A.json [B.json] (or --replay A.json --replay B.json)")
    resolved = [p.resolve() for p in paths]
    for i, p in enumerate(resolved):
        if p in resolved[:i]:
            raise InvalidConfiguration(f"{paths[i]} is named twice: the report takes each "
                                       "GPU's file once")


def run(paths: list[Path], out: Path) -> dict[str, Any]:
    """The report of the files at `paths`, written into `out` once every file has been read
    (a refused input leaves no folder behind)."""
    paths = [Path(p) for p in paths]
    _check_inputs(paths)
    check_report_folder(Path(out))
    gpus = [{**analyse(load(p)), "path": str(p)} for p in paths]
    report = {"command": command_line(), "date": utc_today(), "gpus": gpus,
              "transfers": transfers(gpus)}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{REPORT}.json").write_text(json.dumps(_written(report), indent=1))
    images = plot(report, out)
    (out / f"{REPORT}.md").write_text(markdown(report, images))
    print(f"wrote {out}/{REPORT}.md, {REPORT}.json and {len(images)} plot(s)", file=sys.stderr)
    return report


def _written(report: dict[str, Any]) -> dict[str, Any]:
    """The report as its JSON keeps it: each shape without its candidates and the transfer
    entry as the run recorded it (the input files named in it hold them; 64 shapes of
    candidates per GPU made a file of 0.75 MB), with every number the markdown shows."""
    dropped = ("candidates", "recorded_transfer")
    return {**report, "gpus": [
        {**g, "shapes": [{k: v for k, v in s.items() if k not in dropped} for s in g["shapes"]]}
        for g in report["gpus"]]}


def run_from_args(args: argparse.Namespace) -> int:
    run(list(args.inputs) + list(args.replay), args.out)
    return 0
