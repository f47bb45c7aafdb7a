"""The runtime benchmark's report, built from its JSON (so that it can be rebuilt without a
GPU: ``python -m reducetune.benchmarks._runtime_report PREFIX.json``): the issue's targets
with their verdicts, one table per (type, operator), and a plot of the speed-ups."""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

APP = (("reducer", "Reducer (C++)"), ("cub", "CUB"), ("reduce_torch", "reduce(torch)"),
       ("torch", "torch.sum"), ("reduce_cupy", "reduce(cupy)"), ("cupy", "cupy.sum"))


def _pow2(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def ratios(row: dict[str, Any]) -> dict[str, float | None]:
    """× CUB (application and protocol), reduce(torch) vs torch.sum, reduce(cupy) vs
    cupy.sum: > 1 means reducetune is faster."""
    app, prot = row.get("app_s", {}), row["protocol"]
    tuned, cub = prot["tuned"], prot["cub"]
    ok = tuned.get("status") == "ok" and cub.get("status") == "ok"
    return {"app_x_cub": _ratio(app.get("cub"), app.get("reducer")),
            "protocol_x_cub": _ratio(cub.get("median_s"), tuned.get("median_s")) if ok else None,
            "x_torch": _ratio(app.get("torch"), app.get("reduce_torch")),
            "x_cupy": _ratio(app.get("cupy"), app.get("reduce_cupy"))}


def targets(result: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(target, measured, met) for each target of issue 13 (deterministic points only)."""
    rows = result["rows"]
    rs = [ratios(r) for r in rows]
    def worst(key: str) -> float:
        vals = [r[key] for r in rs if r[key] is not None]
        return min(vals) if vals else float("nan")
    mid = [r["app_x_cub"] for row, r in zip(rows, rs) if (1 << 14) <= row["n"] <= (1 << 22)
           and (row["dtype"], row["op"]) == ("float32", "sum") and r["app_x_cub"]]
    geo = math.exp(sum(map(math.log, mid)) / len(mid)) if mid else float("nan")
    big = [r["protocol"]["tuned"].get("pct_of_peak") for r in rows
           if r["n"] == 1 << 30 and (r["dtype"], r["op"]) == ("float32", "sum")]
    peak = big[0] if big and big[0] else float("nan")
    wrong = sum(1 for r in rows if not r.get("correct", False))
    return [
        ("every answer correct (against PyTorch in float64)", f"{len(rows) - wrong}/{len(rows)}",
         wrong == 0),
        ("Reducer ≥ 1.0 × CUB at every n, as applications call it", f"min {worst('app_x_cub'):.3f}",
         worst("app_x_cub") >= 1.0),
        ("Reducer ≥ 1.0 × CUB at every n, tuner's protocol", f"min {worst('protocol_x_cub'):.3f}",
         worst("protocol_x_cub") >= 1.0),
        ("≥ 1.4 × CUB geometric mean over 2^14…2^22 (float32 sum, application)", f"{geo:.3f}",
         geo >= 1.4),
        ("reduce(torch tensor) faster than torch.sum at every n", f"min {worst('x_torch'):.3f}",
         worst("x_torch") > 1.0),
        ("reduce(cupy array) faster than cupy.sum at every n", f"min {worst('x_cupy'):.3f}",
         worst("x_cupy") > 1.0),
        ("≥ 95 % of the theoretical peak at 2^30 (float32 sum, tuner's protocol)",
         f"{peak:.1f} %", peak >= 95.0),
    ]


def _us(s: float | None) -> str:
    return f"{s * 1e6:.2f}" if s else "—"


def _x(v: float | None) -> str:
    return f"{v:.2f}" if v is not None else "—"


def _table(rows: list[dict[str, Any]]) -> list[str]:
    head = ["n", "point (launches)", *(name + " µs" for _, name in APP), "× CUB", "× torch",
            "× cupy", "protocol µs", "CUB µs", "× CUB", "GB/s", "% peak"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        c, app, rat = r["choice"], r.get("app_s", {}), ratios(r)
        t, cub = r["protocol"]["tuned"], r["protocol"]["cub"]
        point = f"{c['source']}: {c['variant'].split('.', 3)[-1]} {c['launch']} ({c['launches']})"
        gbps = f"{t['gbps']:.0f}" if t.get("gbps") else "—"
        pct = f"{t['pct_of_peak']:.1f}" if t.get("pct_of_peak") else "—"
        out.append("| " + " | ".join([
            _pow2(r["n"]) + ("" if r.get("correct") else " WRONG"), point,
            *(_us(app.get(k)) for k, _ in APP), _x(rat["app_x_cub"]), _x(rat["x_torch"]),
            _x(rat["x_cupy"]), _us(t.get("median_s")), _us(cub.get("median_s")),
            _x(rat["protocol_x_cub"]), gbps, pct]) + " |")
    return out


def _plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib  # optional (the experiments extra): only to plot

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # optional (the experiments extra): only to plot
    from matplotlib.ticker import FuncFormatter  # optional (the experiments extra): only to plot

    cases = list(dict.fromkeys((r["dtype"], r["op"]) for r in result["rows"]))
    fig, axes = plt.subplots(1, len(cases), figsize=(4.2 * len(cases), 4.2), sharey=True,
                             squeeze=False)
    series = (("app_x_cub", "Reducer vs CUB (application)", "o-"),
              ("protocol_x_cub", "Reducer vs CUB (tuner's protocol)", "s--"),
              ("x_torch", "reduce vs torch.sum", "^-"), ("x_cupy", "reduce vs cupy.sum", "v-"))
    for ax, (dtype, op) in zip(axes[0], cases):
        rows = [r for r in result["rows"] if (r["dtype"], r["op"]) == (dtype, op)]
        xs = [r["n"].bit_length() - 1 for r in rows]
        for k, (key, label, style) in enumerate(series):
            ys = [ratios(r)[key] or math.nan for r in rows]
            # a small sideways offset per series: equal values stay visible side by side
            ax.plot([x + (k - 1.5) * 0.12 for x in xs], ys, style, label=label, alpha=0.85,
                    markersize=4)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_title(f"{dtype} {op}")
        ax.set_xlabel("n (elements)")
        ax.set_xticks(xs, [f"$2^{{{x}}}$" for x in xs], fontsize=7)
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("speed-up of reducetune (× the other; > 1 is faster)")
    axes[0][-1].legend(fontsize=7, loc="best")
    fig.suptitle(f"{result['device'].get('name')}: reducetune's runtime against CUB, PyTorch "
                 "and CuPy (deterministic points)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _noise_lines(rows: list[dict[str, Any]]) -> list[str]:
    """Each contender's run-to-run noise (relative standard deviation of its calls), the
    median and the largest over the rows: the scale a ratio's margin is read against."""
    noise: dict[str, list[float]] = {}
    for r in rows:
        for k, v in r.get("app_noise", {}).items():
            noise.setdefault(k, []).append(v)
        for k in ("tuned", "cub"):
            v = r["protocol"][k].get("rel_stddev")
            if v is not None:
                noise.setdefault(f"protocol {k}", []).append(v)
    if not noise:
        return []
    parts = [f"{k} {100 * statistics.median(v):.1f} % (max {100 * max(v):.1f} %)"
             for k, v in noise.items()]
    return ["- run-to-run noise (relative standard deviation; median over sizes): "
            + ", ".join(parts)]


def write(result: dict[str, Any], prefix: Path) -> None:
    png = prefix.with_suffix(".png")
    _plot(result, png)
    dev = result["device"]
    lines = [f"# Runtime benchmark: {dev.get('name')}", "",
             f"- device: {dev.get('name')} ({dev.get('uuid')}), driver {dev.get('driver_version')}"
             f", toolkit {dev.get('toolkit_version')}; torch {result['versions']['torch']}, "
             f"cupy {result['versions']['cupy']}",
             f"- date: {result['date']}", f"- command: `{result['command']}`",
             f"- reducetune commit: {result.get('commit', 'not recorded')}",
             *(f"- protocol, {k}: {v}" for k, v in result.get("protocol", {}).items()),
             *_noise_lines(result["rows"]),
             f"- streaming ceiling: {result['ceiling_gbps']:.0f} GB/s; {result['samples']} "
             "calls per contender as applications call it (median; the contenders in rounds, "
             "one call each per round in a seeded shuffled order)", "",
             "## Targets (issue 13; deterministic points only)", "",
             "| target | measured | met |", "|---|---|---|"]
    lines += [f"| {t} | {m} | {'yes' if ok else '**no**'} |" for t, m, ok in targets(result)]
    lines += ["", f"![speed-ups]({png.name})", ""]
    for dtype, op in dict.fromkeys((r["dtype"], r["op"]) for r in result["rows"]):
        rows = [r for r in result["rows"] if (r["dtype"], r["op"]) == (dtype, op)]
        lines += [f"## {dtype} {op}", ""] + _table(rows) + [""]
        if rows[-1].get("fallbacks"):
            lines += ["Fallbacks: " + "; ".join(rows[-1]["fallbacks"]), ""]
    prefix.with_suffix(".md").write_text("\n".join(lines))


if __name__ == "__main__":
    src = Path(sys.argv[1])
    write(json.loads(src.read_text()), src.with_suffix(""))
