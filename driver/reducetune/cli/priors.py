"""``reducetune priors``: the priors table (store/priors.py) rebuilt from results files, the
committed ones as the repository keeps them (``.db.xz``) included."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from reducetune import _core, errors
from reducetune.evaluate.replay import decompress_recording
from reducetune.store.priors import SHIPPED, build, dumps

__all__ = ["COMMANDS", "add_parsers"]


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "priors", help="build a priors table (what GPUs learned) from results files",
        description="Per device model and per (family, dtype, op, size), the fastest "
        "deterministic points of these results files, with the models' compute capability, "
        "SM count and bandwidth: what 'tune --priors FILE' starts a new GPU's studies from. "
        f"The package ships one ({SHIPPED.name}), built from the committed H100 and H200 "
        "databases.")
    p.add_argument("results", nargs="+", type=Path, help="results files (.db, or .db.xz)")
    p.add_argument("-o", "--output", type=Path, required=True, help="the table's JSON file")
    p.add_argument("--model", default=None, metavar="TEXT",
                   help="only the device models whose name contains TEXT (a held-out test: "
                        "an H100 started from what H200s learned)")


def cmd_priors(args: argparse.Namespace) -> int:
    _check(args)  # before anything is read or written
    with tempfile.TemporaryDirectory(prefix="reducetune-priors-") as tmp:
        table = build([_unpacked(p, Path(tmp) / str(i)) for i, p in enumerate(args.results)])
    if args.model is not None:
        names = sorted({d["name"] for d in table["devices"]})
        table["devices"] = [d for d in table["devices"] if args.model in d["name"]]
        if not table["devices"]:  # an empty table starts no study: nothing is written
            raise errors.InvalidConfiguration(
                f"--model {args.model}: no device model of these files contains it (they hold "
                f"{', '.join(names) or 'none'}); nothing written")
    _core.write_file_atomically(str(args.output), dumps(table))
    buckets = sum(len(s) for d in table["devices"] for s in d["bests"].values())
    print(f"{args.output}: {len(table['devices'])} device models "
          f"({', '.join(d['name'] for d in table['devices'])}), {buckets} buckets")
    return 0


# The first bytes of what -o must never be written over: a results file, plain or packed.
_DATABASE_MAGIC = (b"SQLite format 3\0", b"\xfd7zXZ\0")


def _check(args: argparse.Namespace) -> None:
    """The arguments, refused in one line (exit status 2) before any file is read or written:
    an empty --model or -o, a results file that is missing or a folder, and an -o that is a
    folder, one of the results files, or any database (a results file swapped for -o would
    be replaced by the table)."""
    if args.model is not None and not args.model.strip():
        raise errors.InvalidConfiguration("--model is empty: name (part of) a device model, "
                                          "e.g. --model H200, or leave it out")
    for p in args.results:
        if not p.is_file():
            raise errors.InvalidConfiguration(
                f"{p}: {'a folder' if p.is_dir() else 'no such file'}; name results files "
                "(.db, or .db.xz)")
    out = args.output
    if not str(out).strip() or out.is_dir():  # Path("") is "."
        raise errors.InvalidConfiguration(f"-o {str(out)!r} is a folder or empty: name the "
                                          "table's JSON file")
    if any(out.exists() and os.path.samefile(out, p) for p in args.results):
        raise errors.InvalidConfiguration(f"-o {out} is one of the results files it reads: "
                                          "name another file for the table")
    if out.is_file() and _starts_with_database_magic(out):
        raise errors.InvalidConfiguration(f"-o {out} is a database, which the table would "
                                          "replace: name another file (a priors table is JSON)")


def _unpacked(path: Path, folder: Path) -> Path:
    """A .xz file decompressed into a folder of its own (a/x.db.xz and b/x.db.xz are two
    files), a plain one as it is."""
    if not path.name.endswith(".xz"):
        return path
    folder.mkdir()
    return decompress_recording(path, folder)


def _starts_with_database_magic(path: Path) -> bool:
    with open(path, "rb") as f:
        head = f.read(16)
    return any(head.startswith(m) for m in _DATABASE_MAGIC)


COMMANDS = {"priors": cmd_priors}
