"""``reducetune calibrate``: each size's fastest points timed as an application calls them,
recorded so that the Reducer and ``export json`` pick by what a lone call costs
(reducetune/runtime/calibrate.py says why and how)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from rich.table import Table

from reducetune import errors
from reducetune._sizes import parse_sizes
from reducetune.cli.args import (INT_MAX, add_allow_flagged, add_db, add_nondeterministic,
                                 add_workload, db_path, integer, sizes_text, workload_pairs)
from reducetune.cli.console import console
from reducetune.tuning.shapes import Shape, parse_shapes, unit_text
from reducetune.runtime.calibrate import DEFAULT_CANDIDATES, DEFAULT_SAMPLES, calibrate


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("calibrate", help="time each size's and axis shape's fastest points as "
                                         "an application calls them (one lone call, launches "
                                         "included, hot data) and record it for the Reducer, "
                                         "best and the exports")
    add_workload(p, sizes=False, lists=True)
    p.add_argument("--sizes", nargs="+", default=None, type=sizes_text,
                   help="sizes to calibrate, as tune takes them (default: every size measured "
                        "on this GPU's model)")
    p.add_argument("--shapes", nargs="+", default=None, metavar="OUTERxRxINNER|GRID",
                   help="axis shapes to calibrate, as tune takes them (default: every shape "
                        "measured on this GPU's model; with --sizes alone: none)")
    p.add_argument("--device", type=integer(0, INT_MAX), default=0, help="GPU ordinal (default 0)")
    p.add_argument("--candidates", type=integer(1, 64), default=DEFAULT_CANDIDATES, metavar="K",
                   help=f"the fastest K points per size (default {DEFAULT_CANDIDATES})")
    p.add_argument("--samples", type=integer(1, 100_000), default=DEFAULT_SAMPLES, metavar="N",
                   help=f"lone calls timed per point (default {DEFAULT_SAMPLES})")
    add_nondeterministic(p, "also calibrate points whose result changes from run to run")
    add_allow_flagged(p, "also calibrate points with a flagged value")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    add_db(p)


def cmd_calibrate(args: argparse.Namespace) -> int:
    pairs = workload_pairs(args)
    sizes, shapes = _units(args)
    db = db_path(args)
    if not db.exists():
        raise errors.StoreError(f"no database at {db}: run reducetune tune first")
    started = time.monotonic()

    def said(row: dict[str, Any]) -> None:
        fastest = min((c["application_s"] for c in row["candidates"]), default=None)
        print(f"calibrate: {row['dtype']} {row['op']} {_where(row)}: "
              + (f"{fastest * 1e6:.2f} µs a call" if fastest else "nothing runnable")
              + f" ({time.monotonic() - started:.0f} s)", file=sys.stderr)

    rows = calibrate(str(db), pairs, sizes, args.device, args.candidates, args.samples,
                     args.nondeterministic, args.allow_flagged, None if args.json else said,
                     shapes)
    if args.json:
        print(json.dumps({"db": str(db), "rows": rows}, indent=2))
    else:
        console().print(_table(rows))
    if not rows:
        print("calibrate: no size or shape of this GPU's model is measured for that workload "
              f"in {db}: run reducetune tune first", file=sys.stderr)
        return 1
    return 0


def _units(args: argparse.Namespace) -> tuple[list[int] | None, list[Shape] | None]:
    """(sizes, shapes) to calibrate: those given; when only one kind is given, none of the
    other; when neither, every one measured (None)."""
    sizes = parse_sizes(args.sizes) if args.sizes is not None else None
    shapes = parse_shapes(args.shapes) if args.shapes is not None else None
    if sizes is not None and shapes is None:
        return sizes, []
    if shapes is not None and sizes is None:
        return [], shapes
    return sizes, shapes


def _where(row: dict[str, Any]) -> str:
    """A row's size (n=...) or axis shape (OUTERxRxINNER)."""
    return f"n={row['n']}" if "n" in row else unit_text(tuple(row["shape"]))


def _table(rows: list[dict[str, Any]]) -> Any:
    t = Table(title="As an application calls it: the protocol's winner and the measured pick")
    for c in ("dtype", "op", "n / shape", "protocol's winner µs", "pick µs", "gain", "pick"):
        t.add_column(c, justify="left" if c in ("dtype", "op", "pick") else "right",
                     no_wrap=True)
    for r in rows:
        where = _where(r).removeprefix("n=")
        if r["pick"] is None:
            t.add_row(r["dtype"], r["op"], where, "", "", "", "(nothing runnable)")
            continue
        p, w = r["pick"], r["protocol_winner"]
        t.add_row(r["dtype"], r["op"], where, f"{w['application_s'] * 1e6:.2f}",
                  f"{p['application_s'] * 1e6:.2f}", f"{r['gain']:.3f}",
                  f"{p['variant'].split('.', 3)[-1]} {p['launch']}")
    return t


COMMANDS = {"calibrate": cmd_calibrate}
