"""``reducetune tune``: search the space for each workload and store every result."""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import ExitStack, closing
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

from reducetune import _core, errors
from reducetune._no_gpu import has_driver
from reducetune._sizes import parse_sizes
from reducetune._space import Space, limits_for_arch
from reducetune.cli.args import (COUNT_MAX, INT_MAX, MIN_SAMPLES, RUN_MAX_S, SAMPLE_TIME_MAX_S,
                                 SEED_MAX, TIMEOUT_MAX_S, add_allow_flagged, add_db,
                                 add_nondeterministic, add_shapes, add_workload, db_path,
                                 duration, integer, positive_int, real, restrictions,
                                 workload_pairs)
from reducetune.cli.console import console
from reducetune.cli.progress import TuneProgress
from reducetune.cli.report import results_json, results_table, time_json, time_table
from reducetune.cli.tune_devices import parse_devices, run_devices
from reducetune.evaluate.base import percent_of
from reducetune.evaluate.gpu import close_prestarted, prestart
from reducetune.evaluate.replay import REPLAY_PREFIX
from reducetune.evaluate.sources import open_evaluator
from reducetune.store.files import holds_no_results
from reducetune.store.priors import checked
from reducetune.store.results import open_store
from reducetune.store.storage_check import check_storage
from reducetune.store.study_share import remove_dead_folders
from reducetune.store.study_storage import import_ahead, imports_done, open_shared_storage
from reducetune.tuning.config import TuneConfig
from reducetune.tuning.mirror import MirroredStorage, open_default_storage
from reducetune.tuning.run import tune_all
from reducetune.tuning.samplers import STRATEGIES, strategy_named
from reducetune.tuning.shapes import RULE_PRESET, Shape, parse_shapes
from reducetune.tuning.timing import Breakdown, begin_marks, mark


# TuneConfig's defaults are the command's (one source, tuning/config.py): an option's default
# and the "(default ...)" of its help are read from here, never restated.
DEFAULT: dict[str, Any] = {f.name: f.default for f in fields(TuneConfig)
                           if f.default is not MISSING}
DEFAULT["sizes"] = TuneConfig().sizes  # a default_factory's value


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("tune", help="search the space for each workload; store every result")
    add_workload(p, lists=True)
    add_shapes(p)
    # the switches (--hot, --allow-flagged, --nondeterministic, --no-warm-start) flip these
    p.set_defaults(dtype=DEFAULT["dtype"], op=DEFAULT["op"],
                   sizes=[str(n) for n in DEFAULT["sizes"]], hot=DEFAULT["hot"],
                   allow_flagged=DEFAULT["allow_flagged"],
                   nondeterministic=DEFAULT["nondeterministic"], warm_start=DEFAULT["warm_start"])
    p.add_argument("--device", type=integer(0, INT_MAX), default=0, help="GPU ordinal (default 0)")
    p.add_argument("--devices", default=None, metavar="0,1|all",
                   help="one worker process per GPU; GPUs of one model share each study "
                        "(in replay: workers replaying --device)")
    p.add_argument("--storage", default=None, metavar="URL",
                   help="Optuna studies in a shared storage: postgresql+psycopg2://... (many "
                        "machines) or journal:PATH (one host); default: the --db file")
    p.add_argument("--family", default=DEFAULT["family"],
                   help=f"template family (default {DEFAULT['family']})")
    p.add_argument("--strategy", default=DEFAULT["strategy"],
                   help=f"{' | '.join(STRATEGIES)} (default {DEFAULT['strategy']})")
    p.add_argument("--max-evals", type=positive_int, default=DEFAULT["max_evals"],
                   help="distinct valid points per size (default: no limit)")
    p.add_argument("--time-limit", type=duration(0, RUN_MAX_S, lo_open=True),
                   default=DEFAULT["time_limit_s"],
                   help="for the whole run (90, 10m, 2h): every size is answered first, the "
                        "rest shared by what an evaluation costs at each size")
    p.add_argument("--target", type=real(0, 100, hi_open=True), default=DEFAULT["target_pct"],
                   metavar="P",
                   help="stop a size once within P%% of the streaming ceiling")
    p.add_argument("--seed", type=integer(0, SEED_MAX), default=DEFAULT["seed"],
                   help="sampler seed (reproducible runs)")
    p.add_argument("--base", default=DEFAULT["base_preset"],
                   help=f"preset measured first (default {DEFAULT['base_preset']})")
    p.add_argument("--restrict", action="append", default=[], metavar="NAME=V1,V2",
                   help="only these values of a parameter (repeatable): a smaller space")
    p.add_argument("--replay", type=Path, default=None, metavar="DB",
                   help="evaluate from a recorded database instead of the GPU")
    p.add_argument("--timeout", type=duration(0, TIMEOUT_MAX_S, lo_open=True), default=120.0,
                   help="per evaluation, before the worker is killed (default 120 s)")
    # Below their ranges, --sample-time and --max-samples are refused by TuneConfig.validate,
    # whose messages scripts and tests rely on.
    p.add_argument("--sample-time", default=DEFAULT["sample_time_s"], metavar="S",
                   type=duration(0, SAMPLE_TIME_MAX_S, lo_open=True, defer_below=float("-inf")),
                   help="cold sampling time cap per point, CUB included "
                        f"(default {DEFAULT['sample_time_s']:g} s)")
    p.add_argument("--max-samples", default=DEFAULT["max_samples"], metavar="N",
                   type=integer(MIN_SAMPLES, COUNT_MAX, defer_below=1),
                   help=f"cold samples per point at most, at least {MIN_SAMPLES} "
                        f"(default {DEFAULT['max_samples']})")
    p.add_argument("--race", type=_race, default=DEFAULT["race"], metavar="FACTOR|off",
                   help=f"stop sampling a point once the median of its first "
                        f"{_core.OUTPACED_MIN_SAMPLES} cold samples is "
                        "above FACTOR x the size's best so far: stored as 'outpaced', never a "
                        f"best; more points in the time (default {DEFAULT['race']:g}; off: "
                        "every point fully sampled)")
    p.add_argument("--hot", action="store_true",
                   help="also take back-to-back hot samples (not stored; default off)")
    p.add_argument("--in-process", action="store_true",
                   help="evaluate in this process instead of a worker (no fault isolation)")
    add_allow_flagged(p, "also tune points with a value the family flags (e.g. "
                         "warp=volatile_unsafe, racy by construction); default: skipped")
    add_nondeterministic(p, "also tune points whose result changes from run to run (a float "
                            "sum or product finished by atomics); default: deterministic points "
                            "only, as CUB's DeviceReduce is; × CUB is reported for both")
    p.add_argument("--no-warm-start", dest="warm_start", action="store_false",
                   help="do not measure other devices' bests for the same workload first in "
                        "a new study (default: they are, when --db holds some)")
    p.add_argument("--priors", default=DEFAULT["priors"], metavar="auto|on|off|FILE",
                   help="where --db holds no other device, start each new study from the "
                        "points a priors table learned on the nearest GPU model (FILE: "
                        "'reducetune priors'; default auto: the package's table, off in "
                        "--replay)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_db(p)


def _race(text: str) -> float | None:
    """--race: off, or a factor above 1 (one from 0 to 1 is left to TuneConfig.validate,
    whose message names the rule)."""
    return None if text.strip().lower() == "off" else _RACE_FACTOR(text)


_RACE_FACTOR = real(1, 100, lo_open=True, defer_below=0)
_race.range_text = f"off, or {_RACE_FACTOR.range_text}"  # type: ignore[attr-defined]


def cmd_tune(args: argparse.Namespace) -> int:
    begin_marks()  # "cli": the process started, its imports done, the arguments read
    if args.storage:  # before any file is opened: Optuna writes into whatever it is given
        imports_done()  # a --devices worker's, begun before its go: not two importers at once
        check_storage(args.storage, db_path(args), args.replay)
    # Optuna's imports on a thread (they touch no file): here they overlap the results file's
    # opening; in a --devices command, the count of the GPUs that _make_file waits for. Begun
    # after check_storage, which imports SQLAlchemy (and Optuna's models for an SQLite file)
    # itself (store/study_storage.imports_done says why)
    ahead = import_ahead(args.storage)
    if args.devices is not None:  # one worker per GPU (cli/tune_devices.py)
        ordinals = parse_devices(args.devices, args.replay is not None)
        if len(ordinals) > 1:  # refused here, in one line, rather than once per worker
            _checked_configs(args)
            return run_devices(args, ordinals)
        if args.replay is None:
            args.device = ordinals[0]
    configs = _checked_configs(args)  # before any file is opened
    mark("configs")  # the spaces built (the extension's first use): apart from the file's open
    db = db_path(args)
    if args.replay is not None and _same_file(args.replay, db):
        raise errors.InvalidConfiguration("--replay and --db must be different files")
    # the files open while a GPU worker starts; without NVIDIA's driver the GPU is asked first
    # (its "no GPU" then leaves every file untouched)
    worker_ahead = (args.replay is None and not getattr(args, "in_process", False)
                    and has_driver())
    try:
        if worker_ahead:
            # started already where the command line said so (cli/app.py main, a --devices
            # worker's prestart): its process and CUDA's start overlap the files opened next
            prestart(args.device, ceiling=True)
        return _tune_in_files(args, configs, db, ahead, worker_ahead)
    finally:
        close_prestarted()  # one no evaluator took (refused or interrupted before it measured)


def _checked_configs(args: argparse.Namespace) -> list[Any]:
    """The run's configs, each valid, and each space with the --restrict keys and values and
    the --base preset, refused before a file is opened: the family, --restrict and --base exist
    whatever the GPU, so they are asked on sm_90's limits (the GPU's come after the files)."""
    configs = _configs(args)
    for config in configs:
        config.validate()
    _check_spaces(limits_for_arch("sm_90"), configs)
    return configs


def _tune_in_files(args: argparse.Namespace, configs: list[Any], db: Path, ahead: Any,
                   worker_ahead: bool) -> int:
    """Opens the results file, the studies' storage and the evaluator, and tunes. A GPU worker
    started ahead (prestart) is taken after the files, which its start overlaps (issue 25; a
    missing GPU is then said after the file was opened: one this run created is removed); a
    recording, or --in-process's device, is opened before them, and a refused one (missing, a
    device not in it) leaves every file untouched."""
    if args.replay is not None:
        remove_dead_folders(REPLAY_PREFIX)  # left by replays killed with SIGKILL
    # the evaluator is closed (a replay's temporary folder removed) on every exit, SIGTERM
    # included (see cli.main), after the storage
    with ExitStack() as stack:
        evaluator = None if worker_ahead else _evaluator_checked(stack, args, configs)
        fresh = not db.exists()
        store = open_store(db)  # refuses a corrupt or foreign file before anything runs
        mark("store")
        storage = None
        breakdown = Breakdown()  # where the time went (tuning/timing.py), printed at the end
        try:
            ahead.join()
            storage = _storage(args, db)
            mark("storage")
            if evaluator is None:  # the GPU worker started ahead, answering by now
                evaluator = _evaluator_checked(stack, args, configs)
            results = _run(args, configs, evaluator, store, storage, breakdown)
        except BaseException:
            # No GPU, an interruption, ...: a results file this run created and nothing
            # measured was recorded in (by this run or another one) is not left behind,
            # empty. A file that cannot be read as expected is kept.
            if fresh and holds_no_results(db):
                _remove_file(db, store, storage)
            raise
        finally:  # the journal beside the file removed by its last user (tuning/mirror.py)
            if isinstance(storage, MirroredStorage):
                storage.close()
    _print_results(args, configs, evaluator, results, db, time_json(breakdown, results))
    _print_skipped(args, configs, results)
    return 0


def _evaluator_checked(stack: ExitStack, args: argparse.Namespace, configs: list[Any]) -> Any:
    """The run's evaluator (closed with ``stack``), and each config's space on its limits."""
    evaluator = stack.enter_context(closing(_evaluator(args)))  # no GPU, a missing recording
    mark("evaluator")
    _check_spaces(evaluator.limits, configs)
    return evaluator


def _remove_file(db: Path, store: Any, storage: Any) -> None:
    """The results file this run created, and the files beside it, removed."""
    store.close()
    if isinstance(storage, MirroredStorage):
        storage.close()  # its journal and the file's engine
    if getattr(storage, "engine", None) is not None:
        storage.engine.dispose()
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


def _check_spaces(limits: Any, configs: list[Any]) -> None:
    """Each config's space, on ``limits``, exists (--family), takes the --restrict keys and
    values, and has the --base preset: tune_all asks again when it builds them."""
    for c in configs:
        space = Space(c.family, c.dtype, c.op, limits, c.restrict)
        if c.base_preset != RULE_PRESET:  # the rule's presets are the family's own
            space.preset(c.base_preset)


def _storage(args: argparse.Namespace, db: Path) -> Any:
    """Optuna's storage: --storage, else a journal beside the results file, copied into the
    file's own tables after each size (tuning/mirror.py: several times faster)."""
    return open_shared_storage(args.storage) if args.storage else open_default_storage(db)


def _same_file(a: Path, b: Path) -> bool:
    """The same file by device and inode when both exist (hard links, other spellings)."""
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def _configs(args: argparse.Namespace) -> list[Any]:
    """The run's TuneConfigs, one per (dtype, op), from arguments checked as far as they can
    be without a device."""
    pairs = workload_pairs(args)
    strategy_named(args.strategy)  # an unknown one refused before any file is touched
    sizes = parse_sizes(args.sizes)
    shapes = _shapes(args)
    return [TuneConfig(dtype=dtype, op=op, sizes=sizes, shapes=shapes, family=args.family,
                       strategy=args.strategy, max_evals=args.max_evals,
                       time_limit_s=args.time_limit, target_pct=args.target, seed=args.seed,
                       base_preset=_base(args, shapes), restrict=restrictions(args.restrict),
                       sample_time_s=args.sample_time, max_samples=args.max_samples,
                       race=args.race, hot=args.hot, allow_flagged=args.allow_flagged,
                       nondeterministic=args.nondeterministic, warm_start=args.warm_start,
                       priors=checked(args.priors),
                       by_model=args.devices is not None or args.storage is not None,
                       walk_apart=args.storage is not None)
            for dtype, op in pairs]


def _shapes(args: argparse.Namespace) -> list[Shape]:
    """--shapes for a family of the axis kernel ABI (tuned per shape; the default grid when
    none is given), refused for a whole-array family (whose units are --sizes). An unknown
    family is left to _check_spaces' message."""
    try:
        abi = _core.family(args.family).get("abi", "whole_array")
    except errors.InvalidConfiguration:
        return []
    if abi != "axis":
        if args.shapes is not None:
            raise errors.InvalidConfiguration(
                f"--shapes is for a family that reduces along an axis (--family axis); "
                f"--family {args.family} reduces whole arrays: give it --sizes")
        return []
    if args.sizes != [str(n) for n in DEFAULT["sizes"]]:  # given, and would be ignored
        raise errors.InvalidConfiguration(
            f"--family {args.family} is tuned per shape: give --shapes OUTERxRxINNER "
            "(e.g. 4096x64x1) or a grid instead of --sizes")
    return parse_shapes(args.shapes if args.shapes is not None else "default")


def _base(args: argparse.Namespace, shapes: list[Shape]) -> str:
    """--base; for an axis run left at the default, the rule's preset for each shape."""
    return RULE_PRESET if shapes and args.base == DEFAULT["base_preset"] else args.base


def _evaluator(args: argparse.Namespace) -> Any:
    return open_evaluator(vars(args))  # --replay DB: the recording; else the GPU


def _run(args: argparse.Namespace, configs: list[Any], evaluator: Any, store: Any,
         storage: Any, breakdown: Breakdown) -> list[list[Any]]:
    """Tunes every size of every (dtype, op), with one progress display where stderr is a
    terminal."""
    on_precompile = None if args.quiet else _print_precompile
    if args.quiet or not sys.stderr.isatty():
        return tune_all(evaluator, configs, store=store, storage=storage,
                        on_precompile=on_precompile, breakdown=breakdown)

    progress = TuneProgress(console(stderr=True), configs)
    with progress:
        return tune_all(evaluator, configs, store=store, storage=storage,
                        on_trial=progress.trial, on_size=progress.size,
                        on_precompile=on_precompile, breakdown=breakdown)


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


def _print_results(args: argparse.Namespace, configs: list[Any], evaluator: Any,
                   results: list[list[Any]], db: Path, spent: dict[str, Any]) -> None:
    """One table per (dtype, op), or (--json) one document: a single workload's as before,
    several as {"runs": [...]}; either with the run's "time" (where it went). The table of
    where the time went goes to stderr, unless --quiet."""
    if args.json:
        docs = [{"dtype": c.dtype, "op": c.op, **results_json(r, evaluator.device)}
                for c, r in zip(configs, results, strict=True)]
        doc = docs[0] if len(docs) == 1 else {"runs": docs}
        print(json.dumps({**doc, "time": spent}, indent=2))
        return
    for c, r in zip(configs, results, strict=True):
        console().print(results_table(r, evaluator.device, c, db, args.replay))
    if not args.quiet:
        console(stderr=True).print(time_table([("this process", spent)]))


def _print_skipped(args: argparse.Namespace, configs: list[Any],
                   results: list[list[Any]]) -> None:
    """The rejected-proposal rate, and how many were flagged or nondeterministic."""
    if args.quiet:
        return
    every = [r for rs in results for r in rs]
    proposed = sum(r.proposed for r in every)
    rejected = sum(r.rejected for r in every)
    if not proposed:
        return
    line = (f"reducetune: {rejected} of {proposed} proposals rejected before compiling "
            f"({percent_of(rejected, proposed):.1f} %)")
    kinds = [(sum(r.invalid for r in every), "invalid"),
             (sum(r.flagged for r in every), "with a flagged value (--allow-flagged)"),
             (sum(r.nondeterministic for r in every), "nondeterministic (--nondeterministic)")]
    if rejected:
        line += ": " + ", ".join(f"{k} {what}" for k, what in kinds if k)
    print(line, file=sys.stderr)


COMMANDS = {"tune": cmd_tune}
