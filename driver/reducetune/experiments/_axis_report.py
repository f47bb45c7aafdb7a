"""The axis experiment's markdown (axis_experiment.md), from the report dictionary that
experiments/axis.py builds: where it came from, the winners per GPU and type (beside their
heatmaps), the cost of batch invariance per shape, and the transfer table per direction."""

from __future__ import annotations

import statistics
from typing import Any

from reducetune.experiments._axis_analysis import geomean
from reducetune.experiments._axis_plots import COST_PLOT, KINDS, heatmap_name

__all__ = ["markdown"]


def _pow2(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def _us(s: float | None) -> str:
    return "–" if s is None else f"{s * 1e6:.1f}"


def _x(v: float | None, spec: str) -> str:
    return "–" if v is None else format(v, spec)


def _shape(s: dict[str, Any]) -> str:
    return f"{s['kind']} | {_pow2(s['r'])} | {_pow2(s['outer_inner'])}"


def markdown(report: dict[str, Any], images: list[str]) -> str:
    lines = ["# Reductions along an axis: which strategy wins where, what determinism costs, "
             "how a best transfers", "",
             f"- Command: `{report['command']}`; report built {report['date']} (UTC) from the "
             "axis benchmark JSON(s) below (no GPU): every number is read from them.",
             "- Times: the medians of each benchmark run's on-the-spot tune per shape, as its "
             "protocol (below) states. % of peak counts bytes read + written against the GPU's "
             "HBM peak. A point's strategy is the axis space's reading of its variant (the "
             "core's), not a parse here.", "",
             "| GPU | input | benchmark run (UTC) | commit | benchmark command |",
             "|---|---|---|---|---|"]
    lines += [f"| {g['device']} | `{g['path']}` | {g['date'] or '–'} | {g['commit'] or '–'} | "
              f"`{g['command'] or '–'}` |" for g in report["gpus"]]
    lines += [""] + [f"- How the {g['device']}'s points were tuned: {g['protocol']}"
                     for g in report["gpus"] if g["protocol"]]
    lines += [line for g in report["gpus"] for line in _skipped(g)]
    return "\n".join(lines + _winners(report, images) + _costs(report, images)
                     + _transfers(report)) + "\n"


def _skipped(g: dict[str, Any]) -> list[str]:
    """The shapes the GPU's run planned and left (its time limit), r grouped per type, total
    and kind."""
    groups: dict[tuple[str, int, str], list[int]] = {}
    for k in g["skipped"]:
        groups.setdefault((k["dtype"], int(k["total"]), k["kind"]), []).append(int(k["r"]))
    if not groups:
        return []
    return ["", f"Not measured on the {g['device']} (left by the run's time limit): "
            + "; ".join(f"{t} {_pow2(n)} {kind} r = {', '.join(_pow2(r) for r in rs)}"
                        for (t, n, kind), rs in groups.items()) + "."]


def _dtypes(shapes: list[dict[str, Any]]) -> list[str]:
    """The types of `shapes` in the order the run measured them."""
    return list(dict.fromkeys(s["dtype"] for s in shapes))


def _regions(report: dict[str, Any]) -> list[str]:
    """The winning strategy per GPU, type, total and kind (a line) and r (a column): where each
    strategy wins, in one table."""
    rs = sorted({s["r"] for g in report["gpus"] for s in g["shapes"]})
    lines = ["The winning strategy per shape, every GPU in one table (details below):", "",
             "| GPU | type | total | kind | " + " | ".join(f"r {_pow2(r)}" for r in rs) + " |",
             "|---|---|---|---|" + "---|" * len(rs)]
    for g in report["gpus"]:
        groups = dict.fromkeys((s["dtype"], s["total"], s["kind"]) for s in g["shapes"])
        for dtype, total, kind in groups:
            won = {s["r"]: (s["best"] or {}).get("strategy") or "–" for s in g["shapes"]
                   if (s["dtype"], s["total"], s["kind"]) == (dtype, total, kind)}
            lines.append(f"| {g['device']} | {dtype} | {_pow2(total)} | {kind} | "
                         + " | ".join(won.get(r, "") for r in rs) + " |")
    return lines + [""]


def _winners(report: dict[str, Any], images: list[str]) -> list[str]:
    lines = ["", "## Which strategy wins where", "", *_regions(report)]
    for g in report["gpus"]:
        for dtype in _dtypes(g["shapes"]):
            lines += [f"### {g['device']}, {dtype}", ""]
            name = heatmap_name(g["device"], dtype)
            if name in images:
                lines += [f"![{g['device']} {dtype}]({name})", ""]
            lines += ["| kind | r | outer·inner | strategy | point | median µs | % of peak |",
                      "|---|---|---|---|---|---|---|"]
            for s in (s for s in g["shapes"] if s["dtype"] == dtype):
                b = s["best"] or {}
                lines.append(f"| {_shape(s)} | {b.get('strategy') or '–'} | "
                             f"{b.get('name') or 'not measured'} | {_us(b.get('median_s'))} | "
                             f"{_x(s['pct_peak'], '.1f')} |")
            lines.append("")
    return lines


def _costs(report: dict[str, Any], images: list[str]) -> list[str]:
    lines = ["## The cost of each determinism level", "",
             "Every axis point is run_to_run (no float atomics); batch_invariant (a row's bits "
             "do not depend on how many rows are reduced with it) holds for some. Cost: the "
             "best batch_invariant point's median ÷ the best point's median − 1.", ""]
    if COST_PLOT in images:
        lines += [f"![determinism cost]({COST_PLOT})", ""]
    lines += ["| GPU | type | kind | r | outer·inner | run_to_run best µs | "
              "batch_invariant best | µs | cost % |", "|---|---|---|---|---|---|---|---|---|"]
    for g in report["gpus"]:
        for s in g["shapes"]:
            b, bi = s["best"] or {}, s["best_batch_invariant"] or {}
            lines.append(f"| {g['device']} | {s['dtype']} | {_shape(s)} | "
                         f"{_us(b.get('median_s'))} | {bi.get('name') or 'none measured'} | "
                         f"{_us(bi.get('median_s'))} | {_x(s['bi_cost_pct'], '.2f')} |")
    lines.append("")
    for g in report["gpus"]:
        groups = [(None, None)] + [(d, k) for d in _dtypes(g["shapes"]) for k in KINDS]
        lines += [line for dtype, kind in groups if (line := _cost_line(g, dtype, kind))]
    return lines + ([""] if lines[-1] else [])


def _cost_line(g: dict[str, Any], dtype: str | None, kind: str | None) -> str | None:
    """What batch invariance costs on one GPU (over every shape: dtype and kind None; else
    over one type and kind): the median and the largest cost, the shape of the largest, the
    median where it costs something, and how many shapes it costs nothing."""
    shapes = [s for s in g["shapes"] if s["bi_cost_pct"] is not None
              and dtype in (None, s["dtype"]) and kind in (None, s["kind"])]
    if not shapes:
        return None
    costs = sorted(s["bi_cost_pct"] for s in shapes)
    paid = [c for c in costs if c > 0]
    what = (f"- {g['device']}, every shape" if dtype is None else f"  - {dtype} {kind}")
    if not paid:
        return f"{what}: nothing at any of {len(costs)} shapes (the best is batch_invariant)"
    top = max(shapes, key=lambda s: s["bi_cost_pct"])
    return (f"{what}: median {statistics.median(costs):.2f} %, at most {costs[-1]:.2f} % "
            f"({top['dtype']} {_pow2(top['total'])} {top['kind']} r = {_pow2(top['r'])}) over "
            f"{len(costs)} shapes; nothing at {len(costs) - len(paid)} (the best point is "
            f"batch_invariant), a median {statistics.median(paid):.2f} % at the other "
            f"{len(paid)}")


def _transfers(report: dict[str, Any]) -> list[str]:
    lines = ["## How far a best tuned on one GPU transfers", "",
             "Per shape: the other GPU's best point run on this GPU, its median ÷ this GPU's "
             "best median (1.00: as fast as this GPU's own best). Measured by this GPU's run "
             "when it was given the other's axis.json (--transfer), else found among this "
             "GPU's own candidates (the same point measured in its tune).", ""]
    if not report["transfers"]:
        return lines + ["No shape has a transfer measurement: no run was given the other "
                        "GPU's file, and no GPU's best is among the other's candidates.", ""]
    for d in report["transfers"]:
        lines += [f"### tuned on the {d['from']}, run on the {d['to']}", "",
                  "| type | kind | r | outer·inner | the other's best | ratio | source |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {t['dtype']} | {_shape(t)} | {t['point']} | {_x(t['ratio'], '.3f')} | "
                  f"{t['source']} |" for t in d["shapes"]]
        ratios = [t["ratio"] for t in d["shapes"] if t["ratio"] is not None]
        lines += ["", f"Geometric mean {_x(d['geomean'], '.3f')} over {len(ratios)} "
                      f"shape(s); worst {_x(max(ratios, default=None), '.3f')}, best "
                      f"{_x(min(ratios, default=None), '.3f')}; below 1.00 (the other's point "
                      f"beat this GPU's own tune) at {sum(1 for r in ratios if r < 1)}.",
                  *_given(d), *_noise(d), ""]
    return lines


def _noise(d: dict[str, Any]) -> list[str]:
    """The same point timed twice in one run's rounds (moved, and among the run's own
    candidates): the transfer ratio under the point's own name, and how far apart the two
    medians fall: the noise under every ratio above."""
    pairs = d.get("twins") or []
    if not pairs:
        return []
    apart = [max(r / t, t / r) for r, t in pairs]
    return ["", f"At {len(pairs)} shape(s) the moved point is also one of the {d['to']}'s own "
                "candidates, the same point timed under two names in the same rounds. Under "
                "its own name its ratio has the geometric mean "
                f"{geomean([t for _, t in pairs]):.3f}; its two medians differ by a factor "
                f"{geomean(apart):.3f} in the geometric mean, at most {max(apart):.3f}: the "
                "rounds' noise, against which each ratio above is to be read."]


def _given(d: dict[str, Any]) -> list[str]:
    """Whether the points a --transfer run was given are the bests of the other GPU's file in
    this report (a run may have been given an earlier run's file)."""
    same, other = d.get("files_best", 0), d.get("not_files_best", 0)
    if not other:
        return ["", f"The points measured are the {d['from']} file's recorded bests at all "
                    f"{same} shape(s) where the run was given one."] if same else []
    return ["", f"The {d['to']}'s run was given another {d['from']} file than this report's "
                f"(an earlier run): its point is this report's {d['from']} file's recorded "
                f"best at {same} of {same + other} shapes, another point at {other}."]
