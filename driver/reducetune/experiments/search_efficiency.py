"""Search efficiency in replay mode: the fraction of the exhaustive optimum each strategy
reaches after k evaluations (distinct valid points), over many seeds.

The optimum is the fastest status-ok point of the recorded (exhaustive) sweep; the fraction
after k evaluations is optimum median time / best median time found so far (1.0 = found it).
Every strategy replays the same recording, so the comparison is deterministic per seed.

    reducetune experiment search-efficiency \
        --replay tests/data/recorded/h200_float32_sum_grid.db.xz --dtype float32 --op sum \
        --seeds 20 --restrict ... --jobs 16 --out docs/results/search-efficiency

A recording's sidecar (``NAME.json`` beside ``NAME.db`` or ``NAME.db.xz``: device, date,
command) is named in the report when present.

``--jobs N`` spreads the (size, strategy, seed) runs over N processes, each with its own
replay evaluator on one decompressed copy of the recording. Each run is a fresh study with a
fixed seed over the same recording, so the curves do not depend on N; only the timings do.

Every finished run is journaled in OUT/runs.jsonl (experiments/_journal.py): the same command
after an interruption or a time limit runs only the runs that are missing.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from reducetune._sizes import parse_sizes
from reducetune.cli.args import (Once, THREADS_MAX, check_report_folder, integer, out_folder,
                                 restrictions as _restrictions)
from reducetune.errors import InvalidConfiguration, StoreError
from reducetune.evaluate.replay import ReplayEvaluator
from reducetune.experiments._journal import Journal
from reducetune.experiments._runs import (add_replay_arguments, all_curves, curve_for, curves_for,
                                          default_budget, plain_recording, replayed_space)
from reducetune.experiments._se_report import SPACE_SHARE, TARGET, markdown, plot, quantile
from reducetune.tuning.config import TuneConfig
from reducetune.tuning.samplers import make_sampler

__all__ = ["add_arguments", "curve_for", "curves_for", "run", "run_from_args"]

# The tuner's default strategy (TuneConfig, what tune runs) against two others.
DEFAULT_STRATEGIES = [TuneConfig.strategy, "random", "nsga2"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--replay", type=Path, action=Once, required=True, metavar="DB",
                   help="a database recorded by an exhaustive sweep (--strategy grid)")
    add_replay_arguments(p, sizes_from="recorded", run_of="strategy and size")
    p.add_argument("--strategies", nargs="+", default=DEFAULT_STRATEGIES)
    p.add_argument("--out", type=out_folder, default=Path("search-efficiency"),
                   help="folder for report.md, curves.json and curves.png")
    # below 1, run() refuses it with the message scripts rely on
    p.add_argument("--jobs", type=integer(1, THREADS_MAX, defer_below=-math.inf), default=1,
                   metavar="N",
                   help="processes that run the (size, strategy, seed) runs (default 1); "
                        "the curves do not depend on it")




def _utc_today() -> str:
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def sidecar_of(replay: Path) -> dict[str, Any] | None:
    """The recording's description (NAME.json beside NAME.db / NAME.db.xz), if any."""
    name = replay.name
    for suffix in (".xz", ".db"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    path = replay.with_name(name + ".json")
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return None


def _k_to_target(fractions: list[float]) -> float:
    """Evaluations until the best so far is within the target (inf: never in the budget)."""
    return next((k + 1 for k, f in enumerate(fractions) if f >= TARGET), math.inf)


def _random_chance(good: int, total: int, k: int) -> float:
    """The probability that k distinct uniform draws from total points hit one of good."""
    if k >= total:
        return 1.0
    miss = 1.0
    for i in range(k):
        miss *= (total - good - i) / (total - i)
        if miss <= 0:
            return 1.0
    return 1.0 - miss


def _fractions(curves: list[list[float]], optimum: float) -> list[list[float]]:
    return [[optimum / v if v != float("inf") else 0.0 for v in c] for c in curves]


def run(replay: Path, dtype: str, op: str, sizes: list[int] | None, family: str,
        strategies: list[str], seeds: int, max_evals: int | None, out: Path,
        restrict: dict[str, list[Any]] | None = None, jobs: int = 1) -> dict[str, Any]:
    import optuna  # heavy (about 0.5 s): only where a study is used

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    for s in strategies:
        make_sampler(s, 0)  # unknown strategies and missing packages fail before any work
    if seeds < 1:
        raise InvalidConfiguration("--seeds must be at least 1")
    if jobs < 1:
        raise InvalidConfiguration(f"--jobs must be at least 1 (got {jobs})")
    if max_evals is not None and max_evals < 1:  # 0 would silently mean the default budget
        raise InvalidConfiguration(f"--max-evals must be at least 1 (got {max_evals})")
    if not Path(replay).exists():
        raise StoreError(f"replay database {replay} does not exist")
    check_report_folder(Path(out))
    with plain_recording(Path(replay)) as db:
        evaluator = ReplayEvaluator(db)
        try:
            return _run(evaluator, replay, db, jobs, dtype, op, sizes, family, strategies,
                        seeds, max_evals, out, restrict)
        finally:
            evaluator.close()


def _run(evaluator: Any, replay: Path, db: Path, jobs: int, dtype: str, op: str,
         sizes: list[int] | None, family: str, strategies: list[str], seeds: int,
         max_evals: int | None, out: Path,
         restrict: dict[str, list[Any]] | None) -> dict[str, Any]:
    import optuna  # heavy (about 0.5 s): only where a study is used

    _, valid, sizes = replayed_space(evaluator, replay, family, dtype, op, sizes, restrict)
    report: dict[str, Any] = {"replay": str(replay), "device": evaluator.device["name"],
                              "dtype": dtype, "op": op, "family": family, "seeds": seeds,
                              "date": _utc_today(), "sizes": {},
                              "command": "reducetune " + " ".join(sys.argv[1:]),
                              "restrict": restrict or {}, "optuna": optuna.__version__,
                              "recording": sidecar_of(replay), "jobs": jobs}
    wall = time.monotonic()
    for n in sizes:
        table = evaluator.table(dtype, op, n)
        ok = [r["median_s"] for k, r in table.items() if r["status"] == "ok" and k in valid]
        if not ok:
            raise InvalidConfiguration(f"{replay} holds no verified {dtype} {op} n={n} point")
        optimum = min(ok)
        noise = min((r.get("rel_stddev") or 0.0 for k, r in table.items()
                     if r["status"] == "ok" and k in valid and r["median_s"] == optimum))
        coverage = len([k for k in table if k in valid]) / max(1, len(valid))
        budget = max_evals or default_budget(len(valid))
        five = max(1, int(len(valid) * SPACE_SHARE))
        near = sum(1 for t in ok if optimum / t >= TARGET)
        entry: dict[str, Any] = {"valid_points": len(valid), "recorded_fraction": coverage,
                                 "optimum_s": optimum, "optimum_rel_stddev": noise,
                                 "max_evals": budget, "k_5pct": five,
                                 "points_within_target": near,
                                 "random_chance_at_k_5pct": _random_chance(near, len(valid), five),
                                 "strategies": {}}
        report["sizes"][str(n)] = entry
    tasks = [(n, s, seed, report["sizes"][str(n)]["max_evals"])
             for n in sizes for s in strategies for seed in range(seeds)]
    journal = Journal(out / "runs.jsonl", {"replay": Path(replay).name, "family": family,
                                           "dtype": dtype, "op": op, "restrict": restrict or {}})
    results = iter(all_curves(evaluator, db, jobs, family, dtype, op, tasks, restrict, journal))
    for n in sizes:
        entry = report["sizes"][str(n)]
        for s in strategies:
            runs = [next(results) for _ in range(seeds)]
            entry["strategies"][s] = _summary([c for c, _ in runs], entry["optimum_s"],
                                              sum(t for _, t in runs))
            print(f"n={n} {s}: {seeds} seeds x {entry['max_evals']} evaluations in "
                  f"{entry['strategies'][s]['seconds']:.1f} s (summed over runs)",
                  file=sys.stderr)
    report["wall_seconds"] = time.monotonic() - wall  # every run, with --jobs processes
    out.mkdir(parents=True, exist_ok=True)
    (out / "curves.json").write_text(json.dumps(report, indent=1))
    (out / "report.md").write_text(markdown(report, replay))
    plot(report, out / "curves.png")
    return report


def _summary(curves: list[list[float]], optimum: float, seconds: float) -> dict[str, Any]:
    fr = _fractions(curves, optimum)
    return {
        "mean": [statistics.fmean(col) for col in zip(*fr)],
        "p10": [quantile(list(col), 0.1) for col in zip(*fr)],
        "p90": [quantile(list(col), 0.9) for col in zip(*fr)],
        "min": [min(col) for col in zip(*fr)],
        # per seed: evaluations until within the target (null: not in the budget)
        "k_to_target": [None if math.isinf(k) else k for k in map(_k_to_target, fr)],
        # the runs' own times added up (not wall time): comparable whatever --jobs was
        "seconds": seconds,
    }


def run_from_args(args: argparse.Namespace) -> int:
    sizes = parse_sizes(args.n) if args.n else None
    run(args.replay, args.dtype, args.op, sizes, args.family, args.strategies, args.seeds,
        args.max_evals, args.out, _restrictions(args.restrict), args.jobs)
    print(f"wrote {args.out}/report.md, curves.png, curves.json", file=sys.stderr)
    return 0
