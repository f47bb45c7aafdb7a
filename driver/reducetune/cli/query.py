"""``best``, ``show``, ``history`` and ``export``: read what the database holds."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from rich.table import Table

from reducetune import _core, errors
from reducetune._sizes import parse_sizes
from reducetune.cli.args import (add_allow_flagged, add_db, add_nondeterministic, add_workload,
                                 check_workload, cxx_namespace, db_path, one_shape, one_size,
                                 positive_int, sizes_text)
from reducetune.cli.console import console
from reducetune.cli.output import export_target, is_stream, write_export
from reducetune.store.measurements import measurements_csv
from reducetune.store.results import (application_best_shape, export_header, export_json,
                                      open_store)
from reducetune.tuning.shapes import Shape, unit_text


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("best", help="the best variant for a type, operator and size or shape")
    add_workload(p, sizes=False)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--n", type=sizes_text, help="input size (1048576 or 2^20)")
    which.add_argument("--shape", default=None, metavar="OUTERxRxINNER",
                       help="a shape an axis family reduces (4096x64x1: rows; 1x64x4096: "
                            "columns): the best at the measured shape nearest to it")
    p.add_argument("--device", default=None, help="device UUID or name (default: the first)")
    p.add_argument("--json", action="store_true")
    add_allow_flagged(p)
    add_nondeterministic(p)
    add_db(p)

    for name in ("show", "history"):
        p = sub.add_parser(name, help="every measurement of a type and operator")
        add_workload(p, sizes=False)
        p.add_argument("--n", default=None, type=sizes_text, help="only this size")
        p.add_argument("--shape", default=None, metavar="OUTERxRxINNER",
                       help="only this shape (outer, r, inner)")
        p.add_argument("--device", default=None, help="device UUID or name (default: the first)")
        p.add_argument("--limit", type=positive_int, default=None, help="the fastest N only")
        p.add_argument("--json", action="store_true")
        add_db(p)

    p = sub.add_parser("export", help="the best table as a C++ header or JSON; csv: every "
                                      "measurement (reducetune.measurements' table)")
    p.add_argument("format", choices=["header", "json", "csv"])
    p.add_argument("-o", "--output", type=Path, default=None, help=(
        "file (default: stdout); a symbolic link is written through (its target replaced), "
        "a device, pipe or FIFO streamed into"))
    p.add_argument("--namespace", type=cxx_namespace, default="reducetune_dispatch",
                   help="the header's C++ namespace (a::b allowed; default reducetune_dispatch)")
    p.add_argument("--force", action="store_true",
                   help="overwrite -o even if it is not a file reducetune exported")
    add_allow_flagged(p)
    add_nondeterministic(p)
    add_db(p)


def _device_id(store: Any, device: str | None, db: Path) -> dict[str, Any]:
    """The stored device named by UUID, name or id; the first one when none is named. The
    messages name db as given (a read-only store's own path may be another name for it)."""
    devices = store.devices()
    if not devices:
        raise errors.StoreError(f"no device in {db}: run reducetune tune first")
    if device is None:
        return dict(devices[0])
    for d in devices:
        if device in (d["uuid"], d["name"], str(d["id"])):
            return dict(d)
    raise errors.InvalidConfiguration(
        f"no device '{device}' in {db} (known: {', '.join(d['name'] for d in devices)})")


def cmd_best(args: argparse.Namespace) -> int:
    check_workload(args)
    if args.shape is not None:
        return _best_shape(args, one_shape(args.shape))
    n = parse_sizes(args.n)
    if len(n) != 1:
        raise errors.InvalidConfiguration("--n takes one size")
    db = db_path(args)
    dev = _device_id(open_store(db, read_only=True), args.device, db)

    def ask(allow_flagged: bool, nondeterministic: bool) -> dict[str, Any] | None:
        return _core.catalog_best(str(db), dev["uuid"], args.dtype, args.op, n[0], allow_flagged,
                                  nondeterministic)

    b = _answer(args, ask, f"{dev['name']} {args.dtype} {args.op}")
    if b is None:
        return 1
    if args.json:  # the rule `export json` gives for this size, with the request
        print(json.dumps(b, indent=2))
        return 0
    print(f"{b['variant']} {b['launch']}  {_gbps_text(b)}  "
          f"(measured at n={b['bucket_n']} on {dev['name']}; {b['determinism']})")
    return 0


def _best_shape(args: argparse.Namespace, shape: Shape) -> int:
    """best --shape: the runtime's answer for the problem of that shape (the pick at the
    measured shape that answers it, db/shape_rule.hpp: the exact shape, else the nearest of
    its kind, rows and columns apart; the fastest lone call where calibrate timed it)."""
    db = db_path(args)
    store = open_store(db, read_only=True)
    dev = _device_id(store, args.device, db)

    def ask(allow_flagged: bool, nondeterministic: bool) -> dict[str, Any] | None:
        return application_best_shape(db, dev["uuid"], args.dtype, args.op, shape,
                                      allow_flagged, nondeterministic)

    b = _answer(args, ask, f"{dev['name']} {args.dtype} {args.op} along an axis")
    if b is None:
        return 1
    measured_at = unit_text(tuple(b["bucket_shape"]))
    if args.json:
        print(json.dumps({**b, "requested_shape": list(shape), "bucket_shape": list(
            b["bucket_shape"]), "device": dev["name"]}, indent=2))
        return 0
    call = "" if b["application_s"] is None else f"; {b['application_s'] * 1e6:.2f} µs a call"
    print(f"{b['variant_label']} {b['launch_label']}  {_gbps_text(b)}  "
          f"(measured at shape {measured_at} on {dev['name']}; {b['determinism']}{call})")
    return 0


def _answer(args: argparse.Namespace, ask: Any, what: str) -> dict[str, Any] | None:
    """best's answer under the selection args ask for; None, once stderr says that nothing
    answers `what` and what the selection left out, when there is none."""
    b = ask(args.allow_flagged, args.nondeterministic)
    if b is None:
        print(f"reducetune: no verified measurement for {what}{_left_out(args, ask)}",
              file=sys.stderr)
    return b


def _gbps_text(b: dict[str, Any]) -> str:
    return f"{b['gbps']:.1f} GB/s" if b.get("gbps") else "? GB/s"


def _left_out(args: argparse.Namespace, ask: Any) -> str:
    """' without ...' naming what the selection left out when that is why nothing answers."""
    if not args.nondeterministic and ask(args.allow_flagged, True) is not None:
        return (" that is deterministic (--nondeterministic to consider points whose result "
                "changes from run to run)")
    if not args.allow_flagged and ask(True, True) is not None:
        return " without a flagged value (--allow-flagged to consider those)"
    return ""


def cmd_show(args: argparse.Namespace) -> int:
    check_workload(args)
    n = one_size(args.n)
    shape = one_shape(args.shape)
    store = open_store(db_path(args), read_only=True)
    dev = _device_id(store, args.device, db_path(args))
    rows = list(store.history(dev["id"], args.dtype, args.op, n) if shape is None
                else store.history(dev["id"], args.dtype, args.op, shape=shape))
    rows.sort(key=lambda r: (r["n"], _shape_of(r), r["status"] != "ok",
                             r["median_s"] or float("inf")))
    if args.limit:
        rows = [r for r in rows if r["status"] == "ok"][: args.limit]
    if args.json:
        print(json.dumps([{k: v for k, v in r.items() if k != "samples_s"} for r in rows],
                         indent=2))
        return 0
    console().print(_history_table(f"{dev['name']} {args.dtype} {args.op}", rows))
    return 0


def _shape_of(row: dict[str, Any]) -> tuple[int, int, int]:
    return int(row.get("outer", 1)), int(row["n"]), int(row.get("inner", 1))


def _unit_of(row: dict[str, Any]) -> str:
    """A row's size, or its shape (OUTERxRxINNER) when it is not the whole array's."""
    outer, r, inner = _shape_of(row)
    return str(r) if (outer, inner) == (1, 1) else unit_text((outer, r, inner))


def _history_table(title: str, rows: list[dict[str, Any]]) -> Any:
    t = Table(title=f"{title}: {len(rows)} measurements")
    unit = "n" if all(_shape_of(r)[::2] == (1, 1) for r in rows) else "n / shape"
    for c in (unit, "variant", "launch", "status", "median µs", "GB/s", "% peak", "reason"):
        t.add_column(c, no_wrap=c != "reason")
    for r in rows:
        t.add_row(_unit_of(r), r["variant_label"], r["launch_label"], r["status"],
                  f"{r['median_s'] * 1e6:.2f}" if r["median_s"] else "",
                  f"{r['gbps']:.1f}" if r["gbps"] else "",
                  f"{r['pct_of_peak']:.1f}" if r["pct_of_peak"] else "", r["reason"][:80])
    return t


def cmd_export(args: argparse.Namespace) -> int:
    db = db_path(args)
    target = None if args.output is None else export_target(args.output)
    if target is not None:
        _check_output(target, db, args.format, args.force)
    if args.format == "csv":  # every measurement, flagged or not: the columns say which
        text = measurements_csv(db)
    elif args.format == "header":
        text = export_header(db, args.namespace, args.allow_flagged, args.nondeterministic)
    else:
        text = export_json(db, args.allow_flagged, args.nondeterministic)
    if args.output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        write_export(target, text)
        through = "" if target == args.output else f" (through the link: {target})"
        print(f"wrote {args.output}{through}", file=sys.stderr)
    return 0


EXPORT_MARKERS = {"header": b"// Generated by reducetune",
                  "json": b'"format": "reducetune-dispatch"',
                  "csv": b"measurement_id,device,device_uuid,"}


def _check_output(out: Path, db: Path, fmt: str, force: bool) -> None:
    """Refuses an -o that would destroy something export did not write: the database itself,
    a directory, an SQLite file, or any file without the export's marker (unless --force)."""
    if out.is_dir():
        raise errors.InvalidConfiguration(f"-o {out} is a directory: name a file in it")
    if not out.exists():
        return
    if db.exists() and os.path.samefile(out, db):
        raise errors.InvalidConfiguration(
            f"-o {out} is the database (--db {db}): name another file for the export")
    if is_stream(out):  # a device, pipe or FIFO: reading it first would wait for its writer
        return
    with open(out, "rb") as f:
        head = f.read(4096)
    if head.startswith(b"SQLite format 3\0"):
        raise errors.InvalidConfiguration(
            f"-o {out} is an SQLite database: name another file (it is never overwritten)")
    if force:
        return
    marker = EXPORT_MARKERS[fmt]
    if not (head.startswith(marker) or (fmt == "json" and marker in head[:200])):
        raise errors.InvalidConfiguration(
            f"-o {out} exists and was not written by reducetune export {fmt}: "
            "remove it, name another file, or pass --force")


COMMANDS = {"best": cmd_best, "show": cmd_show, "history": cmd_show, "export": cmd_export}
