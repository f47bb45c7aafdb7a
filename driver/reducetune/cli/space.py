"""``presets`` and ``compile``: the families' search space, listed or compiled (no GPU)."""

from __future__ import annotations

import argparse

from rich.table import Table

from reducetune import _core, errors
from reducetune._space import Space, families, limits_for_arch
from reducetune.cli.args import COUNT_MAX, THREADS_MAX, add_workload, check_workload, integer
from reducetune.cli.console import console


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("presets", help="the families' named presets and their labels")
    p.add_argument("--family", default=None)
    add_workload(p, sizes=False)
    p.add_argument("--arch", default="sm_90")

    p = sub.add_parser("compile", help="compile presets and points with NVRTC (no GPU)")
    p.add_argument("--arch", default="sm_90")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--all", action="store_true", help="every valid point")
    g.add_argument("--sample", type=integer(0, COUNT_MAX), default=500,
                   help="seeded sample size (default 500; 0: the presets only)")
    p.add_argument("--family", default="")
    p.add_argument("--dtype", action="append", default=[])
    p.add_argument("--op", action="append", default=[])
    p.add_argument("--threads", type=integer(0, THREADS_MAX), default=0,
                   help="NVRTC threads (default 0: one per core)")


def cmd_presets(args: argparse.Namespace) -> int:

    check_workload(args)
    limits = limits_for_arch(args.arch)
    names = [args.family] if args.family else [f["name"] for f in families() if not f["expected"]]
    t = Table(title=f"presets for {args.dtype} {args.op} on {args.arch}")
    for c in ("family", "preset", "variant", "launch", "valid", "note"):
        t.add_column(c, no_wrap=c not in ("note", "valid"))
    for name in names:
        for p in Space(name, args.dtype, args.op, limits).presets():
            valid = "yes" if not p.reasons else "; ".join(why for _, why in p.reasons)
            t.add_row(name, p.name, p.variant_label, p.launch_label, valid, p.note)
    console().print(t)
    return 0


def _check_family(name: str) -> None:
    """An unknown --family is refused by name (compile_jobs would compile nothing and say it
    compiled 0 variants, exit 0)."""
    known = [f["name"] for f in families()]
    if name and name not in known:
        raise errors.InvalidConfiguration(
            f"unknown family '{name}' (choose one of: {', '.join(known)})")


def cmd_compile(args: argparse.Namespace) -> int:
    _check_family(args.family)
    r = _core.compile_jobs(arch=args.arch, all=args.all, sample=args.sample, family=args.family,
                           dtypes=args.dtype, ops=args.op, threads=args.threads)
    for label, error in r["failures"][:3]:
        print(f"FAILED {label}\n{error}")
    count = r["count"]
    print(f"compiled {count} variants for {r['arch']} (templates: {r['templates']})")
    print(f"cold:   {r['cold_s']:.2f} s = {count / max(r['cold_s'], 1e-9):.1f} variants/s "
          f"({len(r['failures'])} failed)")
    print(f"cached: {r['cached_s']:.4f} s = {count / max(r['cached_s'], 1e-9):.0f} variants/s "
          f"({r['cached_hits']} hits)")
    return 0 if not r["failures"] else 1


COMMANDS = {"presets": cmd_presets, "compile": cmd_compile}
