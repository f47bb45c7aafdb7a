"""What the measuring experiments (harris, cascading) share: their common options, and the
flow "measure on the GPU into a database (or take recorded ones), then report from the
database(s)", so that a report never holds a number the database does not."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

from reducetune.cli.args import (INT_MAX, RUN_MAX_S, SAMPLE_TIME_MAX_S, TIMEOUT_MAX_S, duration,
                                 check_report_folder, integer, out_folder)
from reducetune.errors import InvalidConfiguration
from reducetune.evaluate import gpu
from reducetune.evaluate.base import sampling_options
from reducetune.experiments._xp_db import open_views
from reducetune.experiments._xp_run import Runner
from reducetune.store.results import open_store

__all__ = ["add_common", "databases", "command_line", "utc_today", "study_config"]


def add_common(p: argparse.ArgumentParser, name: str, sample_time: float,
               max_samples: int, timeout: float) -> None:
    p.add_argument("--replay", type=Path, action="append", default=[], metavar="DB",
                   help="build the report from this recorded database (DB or DB.xz; "
                        "repeatable: one section per device) instead of measuring: no GPU")
    p.add_argument("--db", type=Path, default=None, metavar="PATH",
                   help=f"where the measurements go (default OUT/{name}.db); a run cut short "
                        "resumes from it without measuring again")
    p.add_argument("--out", type=out_folder, default=Path(name), metavar="OUT",
                   help="folder for report.md, report.json and the PNG plots")
    p.add_argument("--device", type=integer(0, INT_MAX), default=0,
                   help="GPU ordinal (default 0)")
    p.add_argument("--sample-time", type=duration(0, SAMPLE_TIME_MAX_S, lo_open=True),
                   default=sample_time, metavar="S",
                   help=f"cold sampling time cap per point (default {sample_time:g} s; at "
                        "least 10 samples whatever it says)")
    p.add_argument("--max-samples", type=integer(10, 100_000), default=max_samples,
                   metavar="N", help=f"cold samples per point at most (default {max_samples})")
    p.add_argument("--time-limit", type=duration(0, RUN_MAX_S, lo_open=True), default=None,
                   metavar="T", help="stop measuring after T (e.g. 4m); the report shows what "
                                     "is measured, the same command again measures the rest")
    p.add_argument("--timeout", type=duration(1, TIMEOUT_MAX_S), default=timeout, metavar="S",
                   help=f"a point that takes longer is killed and stored as failed (default "
                        f"{timeout:g} s)")
    p.add_argument("--also", type=Path, action="append", default=[], metavar="DB",
                   help="after measuring, report these recorded databases too (e.g. the other "
                        "GPU's, for a comparison)")


def command_line() -> str:
    return "reducetune " + " ".join(sys.argv[1:])


def utc_today() -> str:
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def study_config(args: argparse.Namespace, plan: dict[str, Any]) -> dict[str, Any]:
    """What an experiment records in its studies' config: the command and sampling rule."""
    return {"command": command_line(), "sampling": {"time_cap_s": args.sample_time,
                                                     "max_samples": args.max_samples},
            "plan": plan}


def databases(args: argparse.Namespace, name: str,
              measure: Callable[[Any], None]) -> list[Path]:
    """The databases the report is built from: the --replay ones, or the one the GPU run
    measures into (``measure(runner)``), then --also."""
    check_report_folder(Path(args.out))
    db = Path(args.db) if args.db is not None else Path(args.out) / f"{name}.db"
    _each_once([("--replay", p) for p in args.replay] or [("--db", db)],
               [("--also", p) for p in args.also])
    if args.replay:
        return list(args.replay) + list(args.also)

    deadline = None if args.time_limit is None else time.monotonic() + args.time_limit
    # gpu.GpuEvaluator is looked up at each call: tests stand a fake GPU in for it
    with closing(gpu.GpuEvaluator(args.device, timeout_s=args.timeout)) as ev, \
            closing(open_store(db)) as store:
        ev.set_sampling(sampling_options(args.sample_time, args.max_samples, False))
        print(f"{name}: measuring on {ev.device['name']} into {db}", file=sys.stderr)
        measure(Runner(ev, store, db, name, deadline))
    return [db] + list(args.also)



def _same_file(a: Path, b: Path) -> bool:
    """One file under two names (./x.db, a link): by device and inode when both exist."""
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def _each_once(inputs: list[tuple[str, Path]], also: list[tuple[str, Path]]) -> None:
    """Refuses a database named twice (--replay A --replay A, or --also naming the replayed
    or measured file): its device would be reported twice, as if measured twice."""
    seen: list[tuple[str, Path]] = []
    for option, path in inputs + also:
        for first, earlier in seen:
            if _same_file(path, earlier):
                raise InvalidConfiguration(
                    f"{option} {path} is the file that {first} {earlier} names: the report "
                    "takes each database once")
        seen.append((option, path))


def write_report(out: Path, paths: list[Path], collect: Callable[[Any], dict[str, Any]],
                 extra: dict[str, Any], plot: Callable[..., dict[str, str]],
                 markdown: Callable[..., str]) -> int:
    """Builds an experiment's report from its databases only: report.json (every number, with
    the measurement it came from), the plots and report.md, in folder `out`, created only
    once every database has been read (a refused input leaves no folder behind)."""
    with open_views(paths) as views:
        report = {"command": command_line(), "date": utc_today(), **extra,
                  "devices": [collect(v) for v in views]}
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=1))
    images = plot(report, out)
    (out / "report.md").write_text(markdown(report, images))
    print(f"wrote {out}/report.md, report.json and {len(images)} plot(s)", file=sys.stderr)
    return 0
