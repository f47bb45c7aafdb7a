"""Search efficiency in replay mode: the fraction of the exhaustive optimum each strategy
reaches after k evaluations (distinct valid points), over many seeds.

The optimum is the fastest status-ok point of the recorded (exhaustive) sweep; the fraction
after k evaluations is optimum median time / best median time found so far (1.0 = found it).
Every strategy replays the same recording, so the comparison is deterministic per seed.

    reducetune experiment search-efficiency --replay tests/data/recorded/h100.db \
        --dtype float32 --op sum --n 2^24 --seeds 20 --out docs/results/search-efficiency
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["add_arguments", "run", "run_from_args", "curves_for"]

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


def curves_for(evaluator: Any, family: str, dtype: str, op: str, n: int, strategy: str,
               seeds: int, max_evals: int,
               restrict: dict[str, list[Any]] | None = None) -> list[list[float]]:
    """Per seed, the best median time after 1..max_evals evaluations (inf before any ok)."""
    from reducetune._tune import TuneConfig, tune_size

    out = []
    for seed in range(seeds):
        best_after: list[float] = []

        def on_trial(r: Any) -> None:
            while len(best_after) < r.points:
                best_after.append(r.best["median_s"] if r.best else float("inf"))

        config = TuneConfig(dtype=dtype, op=op, sizes=[n], family=family, strategy=strategy,
                            max_evals=max_evals, seed=seed, restrict=dict(restrict or {}))
        tune_size(evaluator, config, n, on_trial=on_trial)
        while len(best_after) < max_evals:  # a strategy that ran out of points keeps its best
            best_after.append(best_after[-1] if best_after else float("inf"))
        out.append(best_after[:max_evals])
    return out


def _fractions(curves: list[list[float]], optimum: float) -> list[list[float]]:
    return [[optimum / v if v != float("inf") else 0.0 for v in c] for c in curves]


def _quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(q * (len(s) - 1)))))]


def run(replay: Path, dtype: str, op: str, sizes: list[int] | None, family: str,
        strategies: list[str], seeds: int, max_evals: int | None, out: Path,
        restrict: dict[str, list[Any]] | None = None) -> dict[str, Any]:
    import optuna

    from reducetune._evaluators import ReplayEvaluator
    from reducetune._samplers import make_sampler
    from reducetune._space import Space
    from reducetune.errors import InvalidConfiguration

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    for s in strategies:
        make_sampler(s, 0)  # unknown strategies and missing packages fail before any work
    if seeds < 1:
        raise InvalidConfiguration("--seeds must be at least 1")
    evaluator = ReplayEvaluator(replay)
    space = Space(family, dtype, op, evaluator.limits, restrict)
    valid = {space.labels(p) for p in space.valid_points()}
    if sizes is None:
        rows = evaluator._store.history(evaluator.device["id"], dtype, op, None)
        sizes = sorted({r["n"] for r in rows})
    if not sizes:
        raise InvalidConfiguration(f"{replay} holds no {dtype} {op} measurement")
    report: dict[str, Any] = {"replay": str(replay), "device": evaluator.device["name"],
                              "dtype": dtype, "op": op, "family": family, "seeds": seeds,
                              "date": datetime.date.today().isoformat(), "sizes": {},
                              "command": "reducetune " + " ".join(sys.argv[1:]),
                              "restrict": restrict or {}}
    for n in sizes:
        table = evaluator.table(dtype, op, n)
        ok = [r["median_s"] for k, r in table.items() if r["status"] == "ok" and k in valid]
        if not ok:
            raise InvalidConfiguration(f"{replay} holds no verified {dtype} {op} n={n} point")
        optimum = min(ok)
        coverage = len([k for k in table if k in valid]) / max(1, len(valid))
        budget = max_evals or max(10, min(400, len(valid) // 10))
        entry: dict[str, Any] = {"valid_points": len(valid), "recorded_fraction": coverage,
                                 "optimum_s": optimum, "max_evals": budget, "strategies": {}}
        for s in strategies:
            start = time.monotonic()
            fr = _fractions(curves_for(evaluator, family, dtype, op, n, s, seeds, budget, restrict),
                            optimum)
            entry["strategies"][s] = {
                "mean": [statistics.fmean(col) for col in zip(*fr)],
                "p10": [_quantile(list(col), 0.1) for col in zip(*fr)],
                "p90": [_quantile(list(col), 0.9) for col in zip(*fr)],
                "seconds": time.monotonic() - start,
            }
            print(f"n={n} {s}: {seeds} seeds x {budget} evaluations in "
                  f"{entry['strategies'][s]['seconds']:.1f} s", file=sys.stderr)
        report["sizes"][str(n)] = entry
    out.mkdir(parents=True, exist_ok=True)
    (out / "curves.json").write_text(json.dumps(report, indent=1))
    (out / "report.md").write_text(_markdown(report, replay))
    _plot(report, out / "curves.png")
    return report


def _markdown(report: dict[str, Any], replay: Path) -> str:
    lines = [
        f"# Search efficiency on {report['device']} ({report['dtype']} {report['op']})",
        "",
        f"Replay of `{replay}`, {report['seeds']} seeds per strategy, {report['date']}.",
        "Fraction of the exhaustive optimum (optimum time / best time found) after k "
        "evaluations (distinct valid points); mean over seeds, [p10, p90] in brackets.",
        "",
        f"Command: `{report['command']}`",
        "",
    ]
    for n, e in report["sizes"].items():
        v, budget = e["valid_points"], e["max_evals"]
        ks = sorted({k for k in (1, 5, 10, 20, max(1, v // 100), max(1, v // 50),
                                 max(1, v // 20), budget) if k <= budget})
        lines += [f"## n = {n}", "",
                  f"{v} valid points ({100 * e['recorded_fraction']:.0f}% recorded); "
                  f"optimum {e['optimum_s'] * 1e6:.2f} µs; 5% of the space = "
                  f"{max(1, v // 20)} evaluations.", "",
                  "| strategy | " + " | ".join(f"k={k}" for k in ks) + " |",
                  "|---|" + "---|" * len(ks)]
        for s, c in e["strategies"].items():
            cells = [f"{c['mean'][k - 1]:.3f} [{c['p10'][k - 1]:.2f}, {c['p90'][k - 1]:.2f}]"
                     for k in ks]
            lines.append(f"| {s} | " + " | ".join(cells) + " |")
        five = max(1, v // 20)
        if "tpe" in e["strategies"] and five <= budget:
            t = e["strategies"]["tpe"]["mean"]
            lines += ["", f"- tpe at 5% of the space (k={five}): {t[five - 1]:.3f} of the "
                      f"optimum (target >= 0.98): {'met' if t[five - 1] >= 0.98 else 'NOT met'}"]
            if "random" in e["strategies"]:
                r = e["strategies"]["random"]["mean"]
                worse = [k + 1 for k in range(len(t)) if t[k] < r[k]]
                lines.append("- tpe above random at every budget: " +
                             ("yes" if not worse else f"no (below at k = {worse[:10]})"))
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
        for s, c in e["strategies"].items():
            ks = range(1, len(c["mean"]) + 1)
            ax.plot(ks, c["mean"], label=s)
            ax.fill_between(ks, c["p10"], c["p90"], alpha=0.15)
        ax.axvline(max(1, e["valid_points"] // 20), color="grey", ls=":", label="5% of space")
        ax.axhline(0.98, color="grey", ls="--", lw=0.8)
        ax.set_title(f"{report['dtype']} {report['op']} n={n}")
        ax.set_xlabel("evaluations")
        ax.set_ylabel("fraction of exhaustive optimum")
        ax.set_ylim(0, 1.02)
        ax.legend()
    fig.suptitle(f"{report['device']}: {report['seeds']} seeds per strategy")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run_from_args(args: argparse.Namespace) -> int:
    from reducetune._sizes import parse_sizes
    from reducetune.cli import _restrictions

    sizes = parse_sizes(args.n) if args.n else None
    run(args.replay, args.dtype, args.op, sizes, args.family, args.strategies, args.seeds,
        args.max_evals, args.out, _restrictions(args.restrict))
    print(f"wrote {args.out}/report.md, curves.png, curves.json", file=sys.stderr)
    return 0
