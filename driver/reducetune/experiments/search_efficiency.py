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
import contextlib
import datetime
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reducetune.experiments._journal import Journal, Task

__all__ = ["add_arguments", "curve_for", "curves_for", "run", "run_from_args"]

DEFAULT_STRATEGIES = ["tpe", "random", "nsga2"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--replay", type=Path, required=True, metavar="DB",
                   help="a database recorded by an exhaustive sweep (--strategy grid)")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--op", default="sum")
    p.add_argument("--n", nargs="+", default=None,
                   help="sizes (default: every size recorded for dtype/op)")
    p.add_argument("--family", default="tunable")
    p.add_argument("--strategies", nargs="+", default=DEFAULT_STRATEGIES)
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--max-evals", type=int, default=None,
                   help="evaluations per run (default: 10%% of the valid space, at most 400)")
    p.add_argument("--restrict", action="append", default=[], metavar="NAME=V1,V2",
                   help="the same restriction as the recording sweep's (repeatable)")
    p.add_argument("--out", type=Path, default=Path("search-efficiency"),
                   help="folder for report.md, curves.json and curves.png")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="processes that run the (size, strategy, seed) runs (default 1); "
                        "the curves do not depend on it")


def curves_for(evaluator: Any, family: str, dtype: str, op: str, n: int, strategy: str,
               seeds: int, max_evals: int,
               restrict: dict[str, list[Any]] | None = None) -> list[list[float]]:
    """Per seed, the best median time after 1..max_evals evaluations (inf before any ok)."""
    return [curve_for(evaluator, family, dtype, op, n, strategy, seed, max_evals, restrict)
            for seed in range(seeds)]


def curve_for(evaluator: Any, family: str, dtype: str, op: str, n: int, strategy: str,
              seed: int, max_evals: int,
              restrict: dict[str, list[Any]] | None = None) -> list[float]:
    """One seed's best median time after 1..max_evals evaluations (inf before any ok)."""
    from reducetune._tune import TuneConfig, tune_size

    best_after: list[float] = []

    def on_trial(r: Any) -> None:
        while len(best_after) < r.points:
            best_after.append(r.best["median_s"] if r.best else float("inf"))

    config = TuneConfig(dtype=dtype, op=op, sizes=[n], family=family, strategy=strategy,
                        max_evals=max_evals, seed=seed, restrict=dict(restrict or {}))
    tune_size(evaluator, config, n, on_trial=on_trial)
    while len(best_after) < max_evals:  # a strategy that ran out of points keeps its best
        best_after.append(best_after[-1] if best_after else float("inf"))
    return best_after[:max_evals]


# A worker process's evaluator, opened once by _open_worker (one per process, never shared).
_WORKER_EVALUATOR: Any = None
# Read by OpenMP/MKL (torch's GPSampler) when a worker loads them: 16 workers x 16 threads
# would oversubscribe the cores.
_WORKER_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _open_worker(db: str) -> None:
    global _WORKER_EVALUATOR
    import importlib

    import optuna

    from reducetune._evaluators import ReplayEvaluator

    try:  # only the gp strategy needs torch; import_module: no stubs needed for mypy
        importlib.import_module("torch").set_num_threads(1)
    except ImportError:
        pass
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    _WORKER_EVALUATOR = ReplayEvaluator(db)  # lives as long as the process


def _timed_curve(evaluator: Any, family: str, dtype: str, op: str, task: Task,
                 restrict: dict[str, list[Any]] | None) -> tuple[list[float], float]:
    n, strategy, seed, budget = task
    start = time.monotonic()
    curve = curve_for(evaluator, family, dtype, op, n, strategy, seed, budget, restrict)
    return curve, time.monotonic() - start


def _worker_curve(family: str, dtype: str, op: str, task: Task,
                  restrict: dict[str, list[Any]] | None) -> tuple[list[float], float]:
    return _timed_curve(_WORKER_EVALUATOR, family, dtype, op, task, restrict)


@contextlib.contextmanager
def _worker_env() -> Iterator[None]:
    """_WORKER_ENV set while worker processes start (they copy the parent's environment)."""
    saved = {k: os.environ.get(k) for k in _WORKER_ENV}
    os.environ.update(_WORKER_ENV)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _pooled_curves(db: Path, jobs: int, family: str, dtype: str, op: str, tasks: list[Task],
                   restrict: dict[str, list[Any]] | None, journal: Journal) -> None:
    """Every task run in jobs spawned processes, each result journaled as it arrives."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # spawn, not fork: the parent holds an open SQLite connection and maybe torch's threads
    ctx = multiprocessing.get_context("spawn")
    with _worker_env(), ProcessPoolExecutor(max_workers=jobs, mp_context=ctx,
                                            initializer=_open_worker,
                                            initargs=(str(db),)) as pool:
        futures = {pool.submit(_worker_curve, family, dtype, op, t, restrict): t for t in tasks}
        step = max(1, len(futures) // 10)
        for done, f in enumerate(as_completed(futures), 1):
            journal.add(futures[f], *f.result())
            if done % step == 0 or done == len(futures):
                print(f"search-efficiency: {done}/{len(futures)} runs done ({jobs} processes)",
                      file=sys.stderr)


def _all_curves(evaluator: Any, db: Path, jobs: int, family: str, dtype: str, op: str,
                tasks: list[Task], restrict: dict[str, list[Any]] | None, journal: Journal
                ) -> list[tuple[list[float], float]]:
    """Every task's (curve, seconds) in the order of tasks; runs the journal already holds
    are not run again."""
    missing = [t for t in tasks if journal.get(t) is None]
    if len(missing) < len(tasks):
        print(f"search-efficiency: {len(tasks) - len(missing)} of {len(tasks)} runs taken from "
              f"{journal.path}", file=sys.stderr)
    if jobs == 1:  # in this process, on its evaluator: no start-up cost
        for t in missing:
            journal.add(t, *_timed_curve(evaluator, family, dtype, op, t, restrict))
    elif missing:
        _pooled_curves(db, jobs, family, dtype, op, missing, restrict, journal)
    return [journal.get(t) or ([], 0.0) for t in tasks]


@contextlib.contextmanager
def _plain_recording(replay: Path) -> Iterator[Path]:
    """The recording as a plain database: a .xz one is decompressed once, here, so that
    worker processes open the copy instead of each decompressing it again."""
    if not replay.name.endswith(".xz"):
        yield replay
        return
    from reducetune._evaluators import decompress_recording

    with tempfile.TemporaryDirectory(prefix="reducetune-replay-") as folder:
        yield decompress_recording(replay, folder)


TARGET = 0.98  # issue 5: within 2% of the exhaustive optimum ...
SPACE_SHARE = 0.05  # ... after 5% of the space's points


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


def _quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(q * (len(s) - 1)))))]


def run(replay: Path, dtype: str, op: str, sizes: list[int] | None, family: str,
        strategies: list[str], seeds: int, max_evals: int | None, out: Path,
        restrict: dict[str, list[Any]] | None = None, jobs: int = 1) -> dict[str, Any]:
    import optuna

    from reducetune._evaluators import ReplayEvaluator
    from reducetune._samplers import make_sampler
    from reducetune.errors import InvalidConfiguration, StoreError

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    for s in strategies:
        make_sampler(s, 0)  # unknown strategies and missing packages fail before any work
    if seeds < 1:
        raise InvalidConfiguration("--seeds must be at least 1")
    if jobs < 1:
        raise InvalidConfiguration(f"--jobs must be at least 1 (got {jobs})")
    if not Path(replay).exists():
        raise StoreError(f"replay database {replay} does not exist")
    with _plain_recording(Path(replay)) as db:
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
    import optuna

    from reducetune._space import Space
    from reducetune.errors import InvalidConfiguration

    space = Space(family, dtype, op, evaluator.limits, restrict)
    valid = {space.labels(p) for p in space.valid_points()}
    if sizes is None:
        rows = evaluator._store.history(evaluator.device["id"], dtype, op, None)
        sizes = sorted({r["n"] for r in rows})
    if not sizes:
        raise InvalidConfiguration(f"{replay} holds no {dtype} {op} measurement")
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
        budget = max_evals or max(10, min(400, len(valid) // 10))
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
    results = iter(_all_curves(evaluator, db, jobs, family, dtype, op, tasks, restrict, journal))
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
    (out / "report.md").write_text(_markdown(report, replay))
    _plot(report, out / "curves.png")
    return report


def _summary(curves: list[list[float]], optimum: float, seconds: float) -> dict[str, Any]:
    fr = _fractions(curves, optimum)
    return {
        "mean": [statistics.fmean(col) for col in zip(*fr)],
        "p10": [_quantile(list(col), 0.1) for col in zip(*fr)],
        "p90": [_quantile(list(col), 0.9) for col in zip(*fr)],
        "min": [min(col) for col in zip(*fr)],
        # per seed: evaluations until within the target (null: not in the budget)
        "k_to_target": [None if math.isinf(k) else k for k in map(_k_to_target, fr)],
        # the runs' own times added up (not wall time): comparable whatever --jobs was
        "seconds": seconds,
    }


def _ks(v: int, budget: int, five: int) -> list[int]:
    return sorted({k for k in (1, 5, 10, 20, max(1, v // 100), max(1, v // 50), five, budget)
                   if k <= budget})


def _k_summary(ks: list[int | None]) -> str:
    """'median [max]' of the evaluations to the target over seeds; 'never' for those missing."""
    got = sorted(k for k in ks if k is not None)
    missed = len(ks) - len(got)
    if not got:
        return f"never ({missed}/{len(ks)} seeds)"
    text = f"{_quantile([float(k) for k in got], 0.5):.0f} [{got[-1]}]" if not missed else \
        f"{_quantile([float(k) for k in got], 0.5):.0f} (missed by {missed}/{len(ks)} seeds)"
    return text


def _versus(t: list[float], r: list[float]) -> str:
    """Where the first curve is above, equal to and below the second."""
    above = [k + 1 for k in range(len(t)) if t[k] > r[k]]
    equal = [k + 1 for k in range(len(t)) if t[k] == r[k]]
    below = [k + 1 for k in range(len(t)) if t[k] < r[k]]

    def ranges(ks: list[int]) -> str:
        out: list[str] = []
        for k in ks:
            if out and int(out[-1].split("-")[-1]) == k - 1:
                out[-1] = out[-1].split("-")[0] + f"-{k}"
            else:
                out.append(str(k))
        return ", ".join(out) if len(out) <= 8 else ", ".join(out[:8]) + ", ..."
    parts = [f"above at {len(above)} of {len(t)} budgets"]
    if equal:
        parts.append(f"equal at k = {ranges(equal)}")
    parts.append(f"below at k = {ranges(below)}" if below else "never below")
    return "; ".join(parts)


def _markdown(report: dict[str, Any], replay: Path) -> str:
    rec = report.get("recording") or {}
    lines = [
        f"# Search efficiency on {report['device']} ({report['dtype']} {report['op']})",
        "",
        f"- Device: {report['device']} (the recording's device; this experiment runs on a CPU "
        "from the recording, no GPU)",
        f"- Date of this run (UTC): {report['date']}; Optuna {report.get('optuna', '?')}",
        f"- Source recording: `{replay}`" + (
            f", recorded {rec['date']} on {rec.get('device', {}).get('name', '?')} with "
            f"`{rec['command']}`" if rec.get("command") else ""),
        f"- Command: `{report['command']}`" + (
            f"; {report['wall_seconds']:.0f} s wall time with {report['jobs']} process(es)"
            if "wall_seconds" in report else ""),
        "",
        f"Fraction of the exhaustive optimum (optimum time / best time found) after k "
        f"evaluations (distinct valid points), {report['seeds']} seeds per strategy: mean over "
        "seeds, [p10, p90] in brackets. The target (issue 5): at least "
        f"{TARGET:.2f} of the optimum within {SPACE_SHARE:.0%} of the space's points, and tpe "
        "above random search at every budget.",
        "",
    ]
    for n, e in report["sizes"].items():
        v, budget = e["valid_points"], e["max_evals"]
        five = e.get("k_5pct", max(1, v // 20))
        ks = _ks(v, budget, five)
        lines += [f"## n = {n}", "",
                  f"{v} valid points ({100 * e['recorded_fraction']:.0f}% recorded); "
                  f"optimum {e['optimum_s'] * 1e6:.3f} µs"
                  + (f" (relative standard deviation of its samples "
                     f"{100 * e['optimum_rel_stddev']:.1f}%)" if "optimum_rel_stddev" in e else "")
                  + f"; {SPACE_SHARE:.0%} of the space = {five} evaluations."]
        if "points_within_target" in e:
            near = e["points_within_target"]
            lines.append(f"{near} points ({100 * near / v:.1f}%) are within {TARGET:.2f} of the "
                         f"optimum: {five} uniform draws without repeats hit one with probability "
                         f"{e['random_chance_at_k_5pct']:.3f}.")
        lines += ["", "| strategy | " + " | ".join(f"k={k}" for k in ks) + " |",
                  "|---|" + "---|" * len(ks)]
        for s, c in e["strategies"].items():
            cells = [f"{c['mean'][k - 1]:.3f} [{c['p10'][k - 1]:.2f}, {c['p90'][k - 1]:.2f}]"
                     for k in ks]
            lines.append(f"| {s} | " + " | ".join(cells) + " |")
        if five <= budget and any("k_to_target" in c for c in e["strategies"].values()):
            lines += ["", (f"| strategy | mean at k={five} | worst seed at k={five} | seeds >= "
                           f"{TARGET:.2f} at k={five} | evaluations to >= {TARGET:.2f}: median "
                           "[worst seed] | seconds (summed over runs) |"),
                      "|---|---|---|---|---|---|"]
            for s, c in e["strategies"].items():
                if "k_to_target" not in c:
                    continue
                hit = sum(1 for k in c["k_to_target"] if k is not None and k <= five)
                lines.append(f"| {s} | {c['mean'][five - 1]:.3f} | {c['min'][five - 1]:.3f} | "
                             f"{hit}/{len(c['k_to_target'])} | {_k_summary(c['k_to_target'])} | "
                             f"{c['seconds']:.1f} |")
        if "tpe" in e["strategies"] and five <= budget:
            t = e["strategies"]["tpe"]["mean"]
            lines += ["", f"- tpe at {SPACE_SHARE:.0%} of the space (k={five}): mean "
                      f"{t[five - 1]:.3f} of the optimum (target >= {TARGET:.2f}): "
                      f"{'met' if t[five - 1] >= TARGET else 'NOT met'}"]
            if "random" in e["strategies"]:
                r = e["strategies"]["random"]["mean"]
                lines.append(f"- tpe against random (mean curves, k = 1..{len(t)}): "
                             + _versus(t, r))
                if r[five - 1] >= TARGET:
                    lines.append(f"- random search meets the target too (mean {r[five - 1]:.3f} "
                                 f"at k={five}): on this space the target does not separate "
                                 "the strategies; the evaluations each needs to reach it do")
        lines.append("")
    return "\n".join(lines)


def _plot(report: dict[str, Any], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("search-efficiency: matplotlib is missing; no PNG written", file=sys.stderr)
        return
    sizes = list(report["sizes"].items())
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4.5), squeeze=False)
    for ax, (n, e) in zip(axes[0], sizes):
        low = 1.0
        for s, c in e["strategies"].items():
            ks = range(1, len(c["mean"]) + 1)
            ax.plot(ks, c["mean"], label=s)
            ax.fill_between(ks, c["p10"], c["p90"], alpha=0.15)
            low = min(low, min(c["mean"]))
        ax.axvline(e.get("k_5pct", max(1, e["valid_points"] // 20)), color="grey", ls=":",
                   label=f"{SPACE_SHARE:.0%} of the space")
        ax.axhline(TARGET, color="grey", ls="--", lw=0.8, label=f"target {TARGET:.2f}")
        ax.set_title(f"{report['dtype']} {report['op']} n={n}")
        ax.set_xscale("log")  # the early evaluations are where strategies differ
        ax.set_xlabel("evaluations (log scale)")
        ax.set_ylabel("fraction of exhaustive optimum (mean, p10-p90)")
        ax.set_ylim(max(0.0, min(low, TARGET) - 0.02), 1.005)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
    fig.suptitle(f"{report['device']}: {report['seeds']} seeds per strategy")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run_from_args(args: argparse.Namespace) -> int:
    from reducetune._sizes import parse_sizes
    from reducetune.commands._args import restrictions as _restrictions

    sizes = parse_sizes(args.n) if args.n else None
    run(args.replay, args.dtype, args.op, sizes, args.family, args.strategies, args.seeds,
        args.max_evals, args.out, _restrictions(args.restrict), args.jobs)
    print(f"wrote {args.out}/report.md, curves.png, curves.json", file=sys.stderr)
    return 0
