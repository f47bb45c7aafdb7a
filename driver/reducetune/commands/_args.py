"""Argument types and options that several commands share, and how they are read back."""

from __future__ import annotations

import argparse
from pathlib import Path

from reducetune import errors
from reducetune._paths import default_db_path
from reducetune._space import DTYPES, OPS


def seconds(text: str) -> float:
    """``90``, ``90s``, ``10m``, ``2h``, ``100ms``."""
    units = {"ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    try:
        for unit in sorted(units, key=len, reverse=True):  # "ms" before "s"
            if text.endswith(unit):
                return float(text[: -len(unit)]) * units[unit]
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a duration (90, 90s, 10m, 2h, 100ms)")


def positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer")
    if v < 1:
        raise argparse.ArgumentTypeError(f"'{text}' must be at least 1")
    return v


def add_db(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", type=Path, default=None,
                   help=f"results database (default: {default_db_path()})")


def db_path(args: argparse.Namespace) -> Path:
    return Path(args.db) if args.db is not None else default_db_path()


def add_allow_flagged(p: argparse.ArgumentParser, text: str | None = None) -> None:
    p.add_argument("--allow-flagged", action="store_true", help=text or (
        "also consider measured points with a value the family flags (e.g. "
        "warp=volatile_unsafe, racy by construction); default: left out"))


def add_workload(p: argparse.ArgumentParser, sizes: bool = True) -> None:
    p.add_argument("--dtype", default="float32", help=f"element type: {', '.join(DTYPES)}")
    p.add_argument("--op", default="sum", help=f"operator: {', '.join(OPS)}")
    if sizes:
        p.add_argument("--sizes", nargs="+", default=["2^20"],
                       help="input sizes: 1048576, 2^20, 2^10..2^30, 2^10..2^30:2")


def check_workload(args: argparse.Namespace) -> None:
    if args.dtype not in DTYPES:
        raise errors.InvalidConfiguration(
            f"unknown element type '{args.dtype}' (choose one of: {', '.join(DTYPES)})")
    if args.op not in OPS:
        raise errors.InvalidConfiguration(
            f"unknown operator '{args.op}' (choose one of: {', '.join(OPS)})")


def restrictions(items: list[str]) -> dict[str, list[str]]:
    """``--restrict NAME=V1,V2`` items (repeatable) as {name: [values]}."""
    out: dict[str, list[str]] = {}
    for item in items:
        name, sep, values = item.partition("=")
        if not sep or not name or not values:
            raise errors.InvalidConfiguration(
                f"--restrict '{item}' is not NAME=V1,V2 (for example block_size=128,256)")
        out.setdefault(name.strip(), []).extend(v.strip() for v in values.split(",") if v.strip())
    return out
