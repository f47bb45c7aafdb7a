"""The ``reducetune`` command line.

Bad input gets one line on stderr (``reducetune: error: ...``) and a non-zero exit status:
2 for usage and invalid input, 1 for a database or device problem, 130 when interrupted.
A database is opened (and checked) before anything is measured, and every measurement is
recorded as soon as it is taken, so an error or an interruption loses nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from reducetune import errors
from reducetune._paths import default_db_path
from reducetune._samplers import STRATEGIES
from reducetune._sizes import parse_sizes
from reducetune._space import DTYPES, OPS

__all__ = ["main", "build_parser"]


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    file = sys.stderr if stderr else sys.stdout
    return Console(file=file, width=None if file.isatty() else 200, highlight=False)


def _seconds(text: str) -> float:
    """``90``, ``90s``, ``10m``, ``2h``, ``100ms``."""
    units = {"ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    try:
        for unit in sorted(units, key=len, reverse=True):  # "ms" before "s"
            if text.endswith(unit):
                return float(text[: -len(unit)]) * units[unit]
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a duration (90, 90s, 10m, 2h, 100ms)")


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer")
    if v < 1:
        raise argparse.ArgumentTypeError(f"'{text}' must be at least 1")
    return v


def _add_db(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", type=Path, default=None,
                   help=f"results database (default: {default_db_path()})")


def _add_allow_flagged(p: argparse.ArgumentParser, text: str | None = None) -> None:
    p.add_argument("--allow-flagged", action="store_true", help=text or (
        "also consider measured points with a value the family flags (e.g. "
        "warp=volatile_unsafe, racy by construction); default: left out"))


def _add_workload(p: argparse.ArgumentParser, sizes: bool = True) -> None:
    p.add_argument("--dtype", default="float32", help=f"element type: {', '.join(DTYPES)}")
    p.add_argument("--op", default="sum", help=f"operator: {', '.join(OPS)}")
    if sizes:
        p.add_argument("--sizes", nargs="+", default=["2^20"],
                       help="input sizes: 1048576, 2^20, 2^10..2^30, 2^10..2^30:2")


def _check_workload(args: argparse.Namespace) -> None:
    if args.dtype not in DTYPES:
        raise errors.InvalidConfiguration(
            f"unknown element type '{args.dtype}' (choose one of: {', '.join(DTYPES)})")
    if args.op not in OPS:
        raise errors.InvalidConfiguration(
            f"unknown operator '{args.op}' (choose one of: {', '.join(OPS)})")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reducetune", description="Auto-tune GPU parallel reductions (NVRTC + Optuna).")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("tune", help="search the space for each workload; store every result")
    _add_workload(p)
    p.add_argument("--device", type=int, default=0, help="GPU ordinal (default 0)")
    p.add_argument("--family", default="tunable", help="template family (default tunable)")
    p.add_argument("--strategy", default="tpe", help=f"{' | '.join(STRATEGIES)} (default tpe)")
    p.add_argument("--max-evals", type=_positive_int, default=None,
                   help="distinct valid points per size (default: no limit)")
    p.add_argument("--time-limit", type=_seconds, default=None,
                   help="for the whole run, split evenly over the sizes (90, 10m, 2h)")
    p.add_argument("--target", type=float, default=None, metavar="P",
                   help="stop a size once within P%% of the streaming ceiling")
    p.add_argument("--seed", type=int, default=None, help="sampler seed (reproducible runs)")
    p.add_argument("--base", default="good", help="preset measured first (default good)")
    p.add_argument("--restrict", action="append", default=[], metavar="NAME=V1,V2",
                   help="only these values of a parameter (repeatable): a smaller space")
    p.add_argument("--replay", type=Path, default=None, metavar="DB",
                   help="evaluate from a recorded database instead of the GPU")
    p.add_argument("--timeout", type=_seconds, default=120.0,
                   help="per evaluation, before the worker is killed (default 120 s)")
    p.add_argument("--sample-time", type=_seconds, default=0.1, metavar="S",
                   help="cold sampling time cap per point, CUB included (default 0.1 s)")
    p.add_argument("--max-samples", type=_positive_int, default=200, metavar="N",
                   help="cold samples per point at most, at least 10 (default 200)")
    p.add_argument("--hot", action="store_true",
                   help="also take back-to-back hot samples (not stored; default off)")
    p.add_argument("--in-process", action="store_true",
                   help="evaluate in this process instead of a worker (no fault isolation)")
    _add_allow_flagged(p, "also tune points with a value the family flags (e.g. "
                          "warp=volatile_unsafe, racy by construction); default: skipped")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_db(p)

    p = sub.add_parser("best", help="the best variant for a type, operator and size")
    _add_workload(p, sizes=False)
    p.add_argument("--n", required=True, help="input size (1048576 or 2^20)")
    p.add_argument("--device", default=None, help="device UUID or name (default: the first)")
    p.add_argument("--json", action="store_true")
    _add_allow_flagged(p)
    _add_db(p)

    for name in ("show", "history"):
        p = sub.add_parser(name, help="every measurement of a type and operator")
        _add_workload(p, sizes=False)
        p.add_argument("--n", default=None, help="only this size")
        p.add_argument("--device", default=None, help="device UUID or name (default: the first)")
        p.add_argument("--limit", type=_positive_int, default=None, help="the fastest N only")
        p.add_argument("--json", action="store_true")
        _add_db(p)

    p = sub.add_parser("export", help="the best table as a C++ header or JSON")
    p.add_argument("format", choices=["header", "json"])
    p.add_argument("-o", "--output", type=Path, default=None, help="file (default: stdout)")
    p.add_argument("--namespace", default="reducetune_dispatch")
    _add_allow_flagged(p)
    _add_db(p)

    p = sub.add_parser("db", help="database maintenance")
    dbsub = p.add_subparsers(dest="db_command", required=True, metavar="ACTION")
    m = dbsub.add_parser("merge", help="copy other databases' results into --db")
    m.add_argument("others", nargs="+", type=Path)
    _add_db(m)
    c = dbsub.add_parser("check", help="schema version and SQLite integrity check")
    _add_db(c)

    p = sub.add_parser("devices", help="GPUs of this machine and devices in the database")
    _add_db(p)

    p = sub.add_parser("presets", help="the families' named presets and their labels")
    p.add_argument("--family", default=None)
    _add_workload(p, sizes=False)
    p.add_argument("--arch", default="sm_90")

    p = sub.add_parser("compile", help="compile presets and points with NVRTC (no GPU)")
    p.add_argument("--arch", default="sm_90")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--all", action="store_true", help="every valid point")
    g.add_argument("--sample", type=int, default=500, help="seeded sample size (default 500)")
    p.add_argument("--family", default="")
    p.add_argument("--dtype", action="append", default=[])
    p.add_argument("--op", action="append", default=[])
    p.add_argument("--threads", type=int, default=0)

    p = sub.add_parser("experiment", help="research experiments")
    esub = p.add_subparsers(dest="experiment", required=True, metavar="NAME")
    e = esub.add_parser("search-efficiency",
                        help="fraction of the exhaustive optimum vs evaluations (replay)")
    from reducetune.experiments.search_efficiency import add_arguments

    add_arguments(e)
    return parser


def _restrictions(items: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for item in items:
        name, sep, values = item.partition("=")
        if not sep or not name or not values:
            raise errors.InvalidConfiguration(
                f"--restrict '{item}' is not NAME=V1,V2 (for example block_size=128,256)")
        out.setdefault(name.strip(), []).extend(v.strip() for v in values.split(",") if v.strip())
    return out


def _db(args: argparse.Namespace) -> Path:
    return Path(args.db) if args.db is not None else default_db_path()


def _device_id(store: Any, device: str | None) -> dict[str, Any]:
    devices = store.devices()
    if not devices:
        raise errors.StoreError(f"no device in {store.path}: run reducetune tune first")
    if device is None:
        return dict(devices[0])
    for d in devices:
        if device in (d["uuid"], d["name"], str(d["id"])):
            return dict(d)
    raise errors.InvalidConfiguration(
        f"no device '{device}' in {store.path} (known: {', '.join(d['name'] for d in devices)})")


def cmd_tune(args: argparse.Namespace) -> int:
    import optuna

    from reducetune._evaluators import GpuEvaluator, ReplayEvaluator
    from reducetune._store import open_store
    from reducetune._tune import TuneConfig, tune

    _check_workload(args)
    if args.strategy not in STRATEGIES:
        raise errors.InvalidConfiguration(
            f"unknown strategy '{args.strategy}' (choose one of: {', '.join(STRATEGIES)})")
    config = TuneConfig(dtype=args.dtype, op=args.op, sizes=parse_sizes(args.sizes),
                        family=args.family, strategy=args.strategy, max_evals=args.max_evals,
                        time_limit_s=args.time_limit, target_pct=args.target, seed=args.seed,
                        base_preset=args.base, restrict=_restrictions(args.restrict),
                        sample_time_s=args.sample_time, max_samples=args.max_samples,
                        hot=args.hot, allow_flagged=args.allow_flagged)
    config.validate()  # before the database is opened or a worker started
    db = _db(args)
    if args.replay is not None and args.replay.resolve() == db.resolve():
        raise errors.InvalidConfiguration("--replay and --db must be different files")
    store = open_store(db)  # refuses a corrupt or foreign file before anything runs
    evaluator = (ReplayEvaluator(args.replay, args.device) if args.replay is not None
                 else GpuEvaluator(args.device, timeout_s=args.timeout, in_process=args.in_process))
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = optuna.storages.RDBStorage(f"sqlite:///{db.resolve()}",
                                         engine_kwargs={"connect_args": {"timeout": 60}})
    out = _console()
    progress = None
    if not args.quiet and sys.stderr.isatty():
        from reducetune._progress import TuneProgress

        progress = TuneProgress(_console(stderr=True), config)
    on_precompile = None if args.quiet else _print_precompile
    try:
        if progress:
            with progress:
                results = tune(evaluator, config, store=store, storage=storage,
                               on_trial=progress.trial, on_size=progress.size,
                               on_precompile=on_precompile)
        else:
            results = tune(evaluator, config, store=store, storage=storage,
                           on_precompile=on_precompile)
    finally:
        evaluator.close()
    from reducetune._report import results_json, results_table

    if args.json:
        print(json.dumps(results_json(results, evaluator.device), indent=2))
    else:
        out.print(results_table(results, evaluator.device, config, db))
    skipped = sum(r.flagged for r in results)
    if skipped and not args.quiet:
        from reducetune._space import Space

        flags = Space(config.family, config.dtype, config.op, evaluator.limits).flags()
        what = ", ".join(f"{k}={v}" for k, vs in flags.items() for v in vs)
        print(f"reducetune: skipped {skipped} proposed points with a flagged value ({what}); "
              "--allow-flagged to tune them", file=sys.stderr)
    return 0


def _print_precompile(r: dict[str, Any]) -> None:
    """One line on stderr: what precompiling cost, and what it could not do."""
    if "error" in r:
        print(f"reducetune: precompile failed ({r['error']}: {r['message']}); each variant "
              "compiles when it is first measured", file=sys.stderr)
        return
    line = f"precompiled {r['requested']} variants in {r['seconds']:.1f} s ({r['threads']} threads"
    if r["cached"]:
        line += f"; {r['cached']} already cached"
    if r["failed"]:
        label, error = next(iter(r["failures"].items()))
        first = error.strip().splitlines()[0] if error.strip() else "no log"
        line += f"; {r['failed']} failed, e.g. {label}: {first}"
    print(line + ")", file=sys.stderr)


def cmd_best(args: argparse.Namespace) -> int:
    from reducetune._store import open_store, store_best

    _check_workload(args)
    n = parse_sizes(args.n)
    if len(n) != 1:
        raise errors.InvalidConfiguration("--n takes one size")
    db = _db(args)
    store = open_store(db, create=False)
    dev = _device_id(store, args.device)
    b = store_best(store, db, dev["id"], args.dtype, args.op, n[0], args.allow_flagged)
    if b is None:
        only = ""
        if not args.allow_flagged and store.best(dev["id"], args.dtype, args.op, n[0]):
            only = " without a flagged value (--allow-flagged to consider those)"
        print(f"reducetune: no verified measurement for {dev['name']} {args.dtype} {args.op}"
              f"{only}", file=sys.stderr)
        return 1
    b = dict(b, device=dev["name"])
    if args.json:
        print(json.dumps(b, indent=2))
    else:
        gbps = f"{b['gbps']:.1f} GB/s" if b.get("gbps") else "? GB/s"
        print(f"{b['variant_label']} {b['launch_label']}  {gbps}  "
              f"(measured at n={b['bucket_n']} on {dev['name']})")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from rich.table import Table

    from reducetune._store import open_store

    _check_workload(args)
    n = parse_sizes(args.n)[0] if args.n else None
    store = open_store(_db(args), create=False)
    dev = _device_id(store, args.device)
    rows = list(store.history(dev["id"], args.dtype, args.op, n))
    rows.sort(key=lambda r: (r["n"], r["status"] != "ok", r["median_s"] or float("inf")))
    if args.limit:
        rows = [r for r in rows if r["status"] == "ok"][: args.limit]
    if args.json:
        print(json.dumps([{k: v for k, v in r.items() if k != "samples_s"} for r in rows],
                         indent=2))
        return 0
    t = Table(title=f"{dev['name']} {args.dtype} {args.op}: {len(rows)} measurements")
    for c in ("n", "variant", "launch", "status", "median µs", "GB/s", "% peak", "reason"):
        t.add_column(c, no_wrap=c != "reason")
    for r in rows:
        t.add_row(str(r["n"]), r["variant_label"], r["launch_label"], r["status"],
                  f"{r['median_s'] * 1e6:.2f}" if r["median_s"] else "",
                  f"{r['gbps']:.1f}" if r["gbps"] else "",
                  f"{r['pct_of_peak']:.1f}" if r["pct_of_peak"] else "", r["reason"][:80])
    _console().print(t)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from reducetune import _core
    from reducetune._store import export_header, export_json

    db = _db(args)
    text = (export_header(db, args.namespace, args.allow_flagged) if args.format == "header"
            else export_json(db, args.allow_flagged))
    if args.output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        _core.write_file_atomically(str(args.output), text)
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


def cmd_db(args: argparse.Namespace) -> int:
    from reducetune._store import open_store

    if args.db_command == "check":
        store = open_store(_db(args), create=False)
        result = store.integrity_check()
        print(f"{store.path}: schema version {store.schema_version()}, integrity {result}")
        return 0 if result == "ok" else 1
    for other in args.others:
        if not other.exists():
            raise errors.StoreError(f"no database at {other}")
    store = open_store(_db(args))
    for other in args.others:
        s = store.merge_from(str(other))
        print(f"merged {other}: {s['inserted']} inserted, {s['replaced']} replaced, "
              f"{s['kept']} kept, {s['builds_inserted']} builds, "
              f"{s['baselines_inserted']} baselines")
    return 0


def cmd_devices(args: argparse.Namespace) -> int:
    from reducetune import _core
    from reducetune._store import open_store

    found = 0
    for ordinal in range(64):
        try:
            d = _core.query_device(ordinal)
        except errors.DeviceError as e:
            if ordinal == 0:
                print(f"no GPU: {e}")
            break
        found += 1
        print(f"GPU {ordinal}: {d['name']} sm_{d['arch']} {d['sm_count']} SMs "
              f"{d['global_memory_bytes'] / 2**30:.0f} GiB, peak "
              f"{d['peak_bytes_per_s'] / 1e9:.0f} GB/s, {d['uuid']}")
    db = _db(args)
    if db.exists():
        for d in open_store(db, create=False).devices():
            found += 1
            print(f"in {db}: {d['name']} sm_{d['cc_major']}{d['cc_minor']} {d['uuid']}")
    return 0 if found else 1


def cmd_presets(args: argparse.Namespace) -> int:
    from rich.table import Table

    from reducetune._space import Space, families, limits_for_arch

    _check_workload(args)
    limits = limits_for_arch(args.arch)
    names = [args.family] if args.family else [f["name"] for f in families() if not f["expected"]]
    t = Table(title=f"presets for {args.dtype} {args.op} on {args.arch}")
    for c in ("family", "preset", "variant", "launch", "valid", "note"):
        t.add_column(c, no_wrap=c not in ("note", "valid"))
    for name in names:
        for p in Space(name, args.dtype, args.op, limits).presets():
            valid = "yes" if not p.reasons else "; ".join(why for _, why in p.reasons)
            t.add_row(name, p.name, p.variant_label, p.launch_label, valid, p.note)
    _console().print(t)
    return 0


def cmd_compile(args: argparse.Namespace) -> int:
    from reducetune import _core

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


def cmd_experiment(args: argparse.Namespace) -> int:
    from reducetune.experiments.search_efficiency import run_from_args

    return run_from_args(args)


COMMANDS = {"tune": cmd_tune, "best": cmd_best, "show": cmd_show, "history": cmd_show,
            "export": cmd_export, "db": cmd_db, "devices": cmd_devices, "presets": cmd_presets,
            "compile": cmd_compile, "experiment": cmd_experiment}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except errors.InvalidConfiguration as e:
        print(f"reducetune: error: {e}", file=sys.stderr)
        return 2
    except errors.Error as e:
        print(f"reducetune: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("reducetune: interrupted; every measurement so far is stored: run the same "
              "command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
