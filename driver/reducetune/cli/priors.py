"""``reducetune priors``: the priors table (store/priors.py) rebuilt from results files, the
committed ones as the repository keeps them (``.db.xz``) included."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from reducetune import _core
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
    with tempfile.TemporaryDirectory(prefix="reducetune-priors-") as tmp:
        paths = [decompress_recording(p, tmp) if p.name.endswith(".xz") else p
                 for p in args.results]
        table = build(paths)
    if args.model is not None:
        table["devices"] = [d for d in table["devices"] if args.model in d["name"]]
    _core.write_file_atomically(str(args.output), dumps(table))
    buckets = sum(len(s) for d in table["devices"] for s in d["bests"].values())
    print(f"{args.output}: {len(table['devices'])} device models "
          f"({', '.join(d['name'] for d in table['devices'])}), {buckets} buckets")
    return 0


COMMANDS = {"priors": cmd_priors}
