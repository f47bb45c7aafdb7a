"""What warm start from another GPU buys, in replay mode (issue 12): on recording A (one GPU's
exhaustive sweep), the evaluations a strategy needs to reach TARGET (0.98) of A's exhaustive
optimum, cold and with B's best points measured first (B: another GPU's recording).

    reducetune experiment transfer --recording A.db.xz --from B.db.xz --dtype float32 --op sum \
        --strategy tpe --seeds 20 --restrict ... --out transfer

How B's points get in: B is merged (``Store.merge_from``, what ``reducetune db merge`` does)
into one temporary results database, the only store every run is given; each run is a fresh
in-memory Optuna study, so ``tune_size`` takes the production path: the base preset first,
then (warm runs) tuning.warm_start.warm_points, i.e. each of B's devices' best at exactly that n
with the run's selection (deterministic, unflagged), when valid in A's restricted space. Cold
runs use the same store with ``warm_start=False``. A's points the runs record there are copies
of A's rows, so a later run served one from the store gets the answer replay would give: the
runs stay independent. A's optimum is its best deterministic, unflagged point of the space.

Why not just compare B's best with A's optimum: that says whether the point transfers, not
what it saves a search that goes on from it (a near-miss still guides tpe's model).
"""

from __future__ import annotations

import argparse
import datetime
import math
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from reducetune._sizes import parse_sizes
from reducetune.cli.args import Once, check_report_folder, out_folder, restrictions
from reducetune.errors import InvalidConfiguration, StoreError
from reducetune.evaluate.replay import ReplayEvaluator
from reducetune.experiments._runs import (add_replay_arguments, default_budget, plain_recording,
                                          replayed_space)
from reducetune.experiments._se_report import TARGET
from reducetune.experiments._transfer_report import write_report
from reducetune.experiments.search_efficiency import sidecar_of
from reducetune.store.results import open_store
from reducetune.tuning.config import TuneConfig
from reducetune.tuning.loop import tune_size
from reducetune.tuning.samplers import make_sampler
from reducetune.tuning.warm_start import warm_points

__all__ = ["add_arguments", "run", "run_from_args"]

MODES = ("cold", "warm")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--recording", type=Path, action=Once, required=True, metavar="A.db",
                   help="the GPU searched: an exhaustive sweep (--strategy grid), .db or .db.xz")
    p.add_argument("--from", dest="source", type=Path, action=Once, required=True, metavar="B.db",
                   help="another GPU's recording (or results) of the same space: its bests "
                        "are measured first in the warm runs")
    add_replay_arguments(p, sizes_from="A records", run_of="size and mode (cold, warm)")
    # the tuner's own default (TuneConfig), so that the experiment measures what tune runs
    p.add_argument("--strategy", default=TuneConfig.strategy,
                   help=f"the search strategy (default {TuneConfig.strategy})")
    p.add_argument("--out", type=out_folder, default=Path("transfer"),
                   help="folder for report.md, transfer.json and transfer.png")


def run(recording: Path, source: Path, dtype: str, op: str, sizes: list[int] | None,
        family: str, strategy: str, seeds: int, max_evals: int | None, out: Path,
        restrict: dict[str, list[Any]] | None = None) -> dict[str, Any]:
    import optuna  # heavy (about 0.5 s): only where a study is used

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    make_sampler(strategy, 0)  # an unknown strategy or a missing package fails first
    if seeds < 1:
        raise InvalidConfiguration("--seeds must be at least 1")
    if max_evals is not None and max_evals < 1:
        raise InvalidConfiguration(f"--max-evals must be at least 1 (got {max_evals})")
    for path in (recording, source):
        if not Path(path).exists():
            raise StoreError(f"recording {path} does not exist")
    check_report_folder(Path(out))
    with plain_recording(Path(recording)) as a_db, plain_recording(Path(source)) as b_db, \
            tempfile.TemporaryDirectory(prefix="reducetune-transfer-") as tmp:
        evaluator = ReplayEvaluator(a_db)
        store = None
        try:
            store = _warm_store(b_db, evaluator.device, Path(tmp) / "runs.db", source)
            return _run(evaluator, store, recording, source, dtype, op, sizes, family,
                        strategy, seeds, max_evals, out, restrict or {})
        finally:
            if store is not None:
                store.close()
            evaluator.close()


def _warm_store(b_db: Path, device: dict[str, Any], path: Path, source: Path) -> Any:
    """A new results database holding B (merged): what a user who ran ``reducetune db merge
    B.db`` has. B must not hold A's device: its rows would be served as A's measurements."""
    store = open_store(path)
    store.merge_from(str(b_db))
    if any(d["uuid"] == device["uuid"] for d in store.devices()):
        store.close()
        raise InvalidConfiguration(f"--from {source} holds the device of --recording "
                                   f"({device['name']}, {device['uuid']}): name another GPU's")
    return store


def _run(evaluator: Any, store: Any, recording: Path, source: Path, dtype: str, op: str,
         sizes: list[int] | None, family: str, strategy: str, seeds: int,
         max_evals: int | None, out: Path, restrict: dict[str, list[Any]]) -> dict[str, Any]:
    import optuna  # heavy (about 0.5 s): only where a study is used

    space, valid, sizes = replayed_space(evaluator, recording, family, dtype, op, sizes, restrict)
    report: dict[str, Any] = {
        "recording": str(recording), "from": str(source), "device": evaluator.device["name"],
        "from_devices": [d["name"] for d in store.devices()
                         if d["uuid"] != evaluator.device["uuid"]],
        "dtype": dtype, "op": op, "family": family, "strategy": strategy, "seeds": seeds,
        "restrict": restrict, "target": TARGET, "optuna": optuna.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
        "command": "reducetune " + " ".join(sys.argv[1:]),
        "recording_sidecar": sidecar_of(Path(recording)),
        "from_sidecar": sidecar_of(Path(source)), "sizes": {}}
    for n in sizes:
        table = evaluator.table(dtype, op, n)
        ok = {k: float(r["median_s"]) for k, r in table.items()
              if r["status"] == "ok" and k in valid}
        if not ok:
            raise InvalidConfiguration(f"{recording} holds no verified {dtype} {op} n={n} point")
        budget = max_evals or default_budget(len(valid))
        entry = _size(evaluator, store, space, n, min(ok.values()), ok, budget, strategy,
                      seeds, restrict)
        entry["valid_points"] = len(valid)
        report["sizes"][str(n)] = entry
        c, w = entry["modes"]["cold"], entry["modes"]["warm"]
        print(f"transfer n={n}: {c['reached']}/{seeds} cold, {w['reached']}/{seeds} warm "
              f"reached {TARGET:.2f} within {budget} evaluations; median "
              f"{_show(c['median'])} cold, {_show(w['median'])} warm", file=sys.stderr)
    write_report(report, Path(out))
    return report


def _size(evaluator: Any, store: Any, space: Any, n: int, optimum: float,
          ok: dict[tuple[str, str], float], budget: int, strategy: str, seeds: int,
          restrict: dict[str, list[Any]]) -> dict[str, Any]:
    """One size: B's points as warm start would take them, and every seed's run per mode."""
    def config(seed: int, warm: bool) -> TuneConfig:
        return TuneConfig(dtype=space.dtype, op=space.op, sizes=[n], family=space.family,
                          strategy=strategy, max_evals=budget, seed=seed,
                          restrict=dict(restrict), warm_start=warm,
                          race=None)  # full measurements: the modes differ only in their start

    from_b = [{"device": w.device, "variant_label": w.point.variant_label,
               "launch_label": w.point.launch_label, "median_s_there": w.median_s,
               "fraction_here": (optimum / ok[w.point.labels]) if w.point.labels in ok else None}
              for w in warm_points(store, space, config(0, True), n, evaluator.device["uuid"])]
    modes: dict[str, Any] = {}
    for mode in MODES:
        runs = [_curve(evaluator, store, config(seed, mode == "warm"), n)
                for seed in range(seeds)]
        modes[mode] = _summary([c for c, _ in runs], optimum, budget)
        modes[mode]["warm_enqueued"] = [sum(w.values()) for _, w in runs]
    return {"optimum_s": optimum, "max_evals": budget, "from_points": from_b,
            "points_within_target": sum(1 for t in ok.values() if optimum / t >= TARGET),
            "modes": modes, "paired": _paired(modes["cold"]["k"], modes["warm"]["k"])}


def _curve(evaluator: Any, store: Any, config: Any, n: int) -> tuple[list[float], dict[str, int]]:
    """One run's best median time after 1..max_evals evaluations, and its warm counts."""
    import optuna  # heavy (about 0.5 s): only where a study is used

    best_after: list[float] = []

    def on_trial(r: Any) -> None:
        while len(best_after) < r.points:
            best_after.append(r.best["median_s"] if r.best else math.inf)

    # a study per run in memory: the store's file holds no study to resume
    r = tune_size(evaluator, config, n, store=store, storage=optuna.storages.InMemoryStorage(),
                  on_trial=on_trial)
    budget = int(config.max_evals)
    while len(best_after) < budget:  # a run that ran out of points keeps its best
        best_after.append(best_after[-1] if best_after else math.inf)
    return best_after[:budget], r.warm


def _summary(curves: list[list[float]], optimum: float, budget: int) -> dict[str, Any]:
    fr = [[optimum / v if v != math.inf else 0.0 for v in c] for c in curves]
    ks = [next((k + 1 for k, f in enumerate(c) if f >= TARGET), None) for c in fr]
    got = [k for k in ks if k is not None]
    # the median over every seed, a miss counted as beyond the budget (None: most missed)
    middle = statistics.median(k if k is not None else math.inf for k in ks)
    return {"k": ks, "reached": len(got), "success_rate": len(got) / len(ks),
            "mean_reached": statistics.fmean(got) if got else None,
            "median": None if math.isinf(middle) else middle,
            "mean_fraction": [statistics.fmean(col) for col in zip(*fr)], "budget": budget}


def _paired(cold: list[int | None], warm: list[int | None]) -> dict[str, int]:
    """Per seed: warm needed fewer, as many or more evaluations (a miss: more than any)."""
    inf = math.inf
    pairs = [(c if c is not None else inf, w if w is not None else inf)
             for c, w in zip(cold, warm)]
    return {"warm_fewer": sum(1 for c, w in pairs if w < c),
            "equal": sum(1 for c, w in pairs if w == c),
            "warm_more": sum(1 for c, w in pairs if w > c)}


def _show(k: float | None) -> str:
    return "beyond the budget" if k is None else f"{k:g}"


def run_from_args(args: argparse.Namespace) -> int:
    sizes = parse_sizes(args.n) if args.n else None
    run(args.recording, args.source, args.dtype, args.op, sizes, args.family, args.strategy,
        args.seeds, args.max_evals, args.out, restrictions(args.restrict))
    print(f"wrote {args.out}/report.md, transfer.json, transfer.png", file=sys.stderr)
    return 0
