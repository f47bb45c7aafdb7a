"""The cascading experiment's report: markdown (report.md) with its findings stated from the
data, and PNG plots, pure functions of the dictionary cascading.collect builds."""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

from reducetune.evaluate.base import percent_of
from reducetune.experiments._cascading_plots import compare_figure, passes_figure, sweep_figure
from reducetune.experiments._harris_report import provenance, slug
from reducetune.experiments._plotting import pyplot

__all__ = ["markdown", "plot", "finding", "passes_finding", "missing_text"]


def _pow(n: int) -> str:
    k = int(math.log2(n))
    return f"2^{k}" if 1 << k == n else str(n)


def _eff(v: float) -> str:
    return f"{v:.0f}" if v >= 10 else f"{v:.2f}"


def finding(d: dict[str, Any]) -> str:
    """One paragraph a reader can check against the plot, from the measured optima."""
    opts = [(w, w["optimum"]) for w in d["sweep"] if w["optimum"]]
    if not opts:
        return f"No verified point of the sweep is in the database for {d['device']}."
    effs = [o["effective"] for _, o in opts]
    ratios = [o["effective"] / w["brent_target"] for w, o in opts]
    w, o = max(opts, key=lambda x: (x[0]["n"], x[0]["dtype"] == "float32"))
    b, h = w["brent"], w["harris"]
    text = (f"On {d['device']}, the fastest point of each of the {len(opts)} workloads reduces "
            f"{_eff(min(effs))} to {_eff(max(effs))} elements per thread (median "
            f"{_eff(statistics.median(effs))}), {min(ratios):.1f}× to {max(ratios):.1f}× "
            f"Brent's log2 n. At {w['dtype']} n = {_pow(w['n'])} the optimum is "
            f"{_eff(o['effective'])} elements per thread (block {o['block_size']}, grid "
            f"{o['grid']}): {o['gbps']:.0f} GB/s")
    if d.get("ceiling_gbps"):
        text += f" ({percent_of(o['gbps'], d['ceiling_gbps']):.0f}% of the streaming ceiling)"
    text += (f", {o['effective'] / w['brent_target']:.1f}× Brent's choice of "
             f"{w['brent_target']:.0f}; the point nearest Brent's choice "
             f"({_eff(b['effective'])} elements per thread) reaches {b['gbps']:.0f} GB/s: "
             f"the optimum is ×{o['gbps'] / b['gbps']:.2f} its bandwidth")
    text += (f"; the best point within Harris's 1024–4096 reaches {h['gbps']:.0f} GB/s "
             f"({_pct(h, o)} of the optimum)." if h else
             "; no measured point falls within Harris's 1024–4096 at this size.")
    sh = w.get("shrink")
    if sh and sh["first_short"]:
        f, wide = sh["first_short"], sh["widest"]
        text += (f" With block {sh['block_size']} the grid falls below one block per SM "
                 f"({sh['sm_count']}) at {_eff(f['effective'])} elements per thread (grid "
                 f"{f['grid']}: {f['gbps']:.0f} GB/s, {_pct(f, o)} of the optimum); the widest "
                 f"point, {_eff(wide['effective'])} elements per thread (grid {wide['grid']}), "
                 f"reaches {wide['gbps']:.0f} GB/s ({_pct(wide, o)}).")
    return text


def _pct(p: dict[str, Any], o: dict[str, Any]) -> str:
    return f"{percent_of(p['gbps'], o['gbps']):.0f}%"


def _host_cost(d: dict[str, Any]) -> str:
    """What the host finish costs against the fastest device-side finish of the same pass
    (two passes, ticket, atomics: the tunable family's) at each n both have."""
    host = next((p for p in d["passes"] if p.get("finish") == "host"), None)
    device = [p for p in d["passes"] if p.get("family") == "tunable"]
    if host is None or not device:
        return ""
    parts = []
    for c in sorted(host["cells"], key=lambda c: c["n"]):
        rivals = [(x["median_s"], p["protocol"]) for p in device for x in p["cells"]
                  if x["n"] == c["n"] and x["status"] == "ok"]
        if c["status"] != "ok" or not rivals:
            continue
        t, _ = min(rivals)
        parts.append(f"n = {_pow(c['n'])}: {c['median_s'] * 1e6:.2f} µs against "
                     f"{t * 1e6:.2f} µs, +{(c['median_s'] - t) * 1e6:.1f} µs "
                     f"(×{c['median_s'] / t:.2f})")
    if not parts:
        return ""
    return ("The host finish against the fastest device-side finish of the same pass (two "
            "passes, ticket or atomics) at each n: " + "; ".join(parts) + ".")


def passes_finding(d: dict[str, Any]) -> str:
    fastest: dict[int, tuple[float, str]] = {}
    for p in d["passes"]:
        for c in p["cells"]:
            if c["status"] == "ok":
                fastest[c["n"]] = min(fastest.get(c["n"], (math.inf, "")),
                                      (c["median_s"], p["protocol"]))
    if not fastest:
        return "No verified point of the passes comparison is in the database."
    parts = [f"n = {_pow(n)}: {name} ({t * 1e6:.1f} µs)" for n, (t, name) in
             sorted(fastest.items())]
    text = "Fastest way to combine the blocks' partials, by size: " + "; ".join(parts) + "."
    cost = _host_cost(d)
    return text + (" " + cost if cost else "")


def missing_text(d: dict[str, Any]) -> str:
    """What the plan holds and this database lacks (a recording made before a row existed,
    or a run cut short), said rather than left blank; "" when nothing is missing."""
    m = d.get("missing") or {}
    parts = []
    by_family: dict[str, list[dict[str, Any]]] = {}
    for r in m.get("sweep", []):
        by_family.setdefault(r["family"], []).append(r)
    for family, rows in by_family.items():
        effs = [r["effective"] for r in rows]
        parts.append(f"{len(rows)} sweep point(s) of the {family} family (elements per thread "
                     f"{_eff(min(effs))} … {_eff(max(effs))}, at "
                     f"{len({(r['dtype'], r['n']) for r in rows})} workload(s))")
    for r in m.get("passes", []):
        parts.append(f"{r['protocol']} at n = " + ", ".join(_pow(n) for n in r["n"]))
    if not parts:
        return ""
    return ("**Not in this database** (planned by this version of the experiment; a GPU run "
            "with `--db` on this database measures only these): " + "; ".join(parts) + ".")


def _sweep_lines(d: dict[str, Any]) -> list[str]:
    lines = ["| dtype | n | optimum: elements/thread (block, grid) | GB/s | Brent log2 n | "
             "nearest Brent: elements/thread | GB/s | optimum ÷ Brent | best in 1024–4096: "
             "GB/s (% of optimum; elements/thread, block, grid) | CUB GB/s | points (failed) |",
             "|---|" + "---|" * 10]
    for w in d["sweep"]:
        if not w["points"]:
            continue
        o, b, h = w["optimum"], w["brent"], w["harris"]
        failed = sum(1 for p in w["points"] if p["status"] != "ok")
        if o is None:
            lines.append(f"| {w['dtype']} | {_pow(w['n'])} | (none verified) |" + " |" * 7
                         + f" {len(w['points'])} ({failed}) |")
            continue
        lines.append(
            f"| {w['dtype']} | {_pow(w['n'])} | {_eff(o['effective'])} ({o['block_size']}, "
            f"{o['grid']}) | {o['gbps']:.1f} | {w['brent_target']:.0f} | "
            f"{_eff(b['effective'])} | {b['gbps']:.1f} | ×{o['gbps'] / b['gbps']:.2f} | "
            f"{'–' if h is None else _harris_cell(h, o)} | "
            f"{'–' if w['cub_gbps'] is None else format(w['cub_gbps'], '.1f')} | "
            f"{len(w['points'])} ({failed}) |")
    return lines


def _harris_cell(h: dict[str, Any], o: dict[str, Any]) -> str:
    return (f"{h['gbps']:.1f} ({_pct(h, o)}; {_eff(h['effective'])}, {h['block_size']}, "
            f"{h['grid']})")


def _shrink_lines(d: dict[str, Any]) -> list[str]:
    """Where the grid falls below one block per SM, at the optimum's block size."""
    rows = [w for w in d["sweep"] if w.get("shrink")]
    if not rows:
        return []
    lines = [f"Where the grid shrinks below one block per SM ({d['sm_count']} SMs), at the "
             "optimum's block size (elements/thread (grid): GB/s, % of the optimum):", "",
             "| dtype | n | block | last grid ≥ SMs | first grid < SMs | widest measured |",
             "|---|---|---|---|---|---|"]

    def cell(p: dict[str, Any] | None, o: dict[str, Any]) -> str:
        if p is None:
            return "–"
        return f"{_eff(p['effective'])} ({p['grid']}): {p['gbps']:.1f}, {_pct(p, o)}"

    for w in rows:
        sh, o = w["shrink"], w["optimum"]
        lines.append(f"| {w['dtype']} | {_pow(w['n'])} | {sh['block_size']} | "
                     f"{cell(sh['last_full'], o)} | {cell(sh['first_short'], o)} | "
                     f"{cell(sh['widest'], o)} |")
    return lines


def _run_line(r: dict[str, Any], first: dict[str, Any] | None = None) -> str:
    counts = ", ".join(f"{k} {v}" for k, v in sorted(r["status"].items()))
    families = ", ".join(f"{k} {v}" for k, v in sorted(r.get("families", {}).items()))
    when = (f"{r['first'][:10]} {r['first'][11:19]} – {r['last'][11:19]}"
            if r["first"][:10] == r["last"][:10] else f"{r['first'][:19]} – {r['last'][:19]}")
    ceiling = (f"; this GPU's streaming ceiling {r['ceiling_gbps']:.0f} GB/s"
               if r.get("ceiling_gbps") else "")
    if (ceiling and first is not None and first.get("ceiling_gbps")
            and first["gpu"] != r["gpu"]):
        share = percent_of(r["ceiling_gbps"], first["ceiling_gbps"])
        ceiling += f" ({share:.1f}% of the first GPU's)"
    command = f"`{r['command']}`" if r["command"] else "(no command recorded)"
    return (f"- Measured with {command} on {r['gpu']}, {when} UTC: {counts} points"
            + (f" (by family: {families})" if families else "") + ceiling)


def _passes_lines(d: dict[str, Any]) -> list[str]:
    sizes = sorted({c["n"] for p in d["passes"] for c in p["cells"]})
    if not sizes:
        return []
    lines = ["| protocol | " + " | ".join(f"n = {_pow(n)}: µs (launches)" for n in sizes) + " |",
             "|---|" + "---|" * len(sizes)]
    for p in d["passes"]:
        by_n = {c["n"]: c for c in p["cells"]}
        cells = []
        for n in sizes:
            c = by_n.get(n)
            if c is None:
                cells.append("–")
            elif c["status"] != "ok":
                cells.append(f"({c['status']})")
            else:
                cells.append(f"{c['median_s'] * 1e6:.2f} ({c['launches'] or '?'})")
        lines.append(f"| {p['protocol']} | " + " | ".join(cells) + " |")
    return lines


def _compare_lines(devices: list[dict[str, Any]]) -> list[str]:
    keys = [(w["dtype"], w["n"]) for w in devices[0]["sweep"]]
    lines = ["## Across devices", "", "Optimum elements per thread (GB/s) per workload:", "",
             "| dtype | n | " + " | ".join(d["device"] for d in devices) + " |",
             "|---|---|" + "---|" * len(devices)]
    moved = 0
    for key in keys:
        opts = []
        for d in devices:
            w = next((w for w in d["sweep"] if (w["dtype"], w["n"]) == key), None)
            opts.append(w["optimum"] if w else None)
        if all(o is None for o in opts):
            continue
        effs = [o["effective"] for o in opts if o]
        moved += len(effs) > 1 and max(effs) / min(effs) > 2
        lines.append(f"| {key[0]} | {_pow(key[1])} | " + " | ".join(
            "–" if o is None else f"{_eff(o['effective'])} ({o['gbps']:.0f})" for o in opts)
            + " |")
    lines += ["", f"The optimum moves by more than a factor 2 in elements per thread between "
                  f"devices at {moved} of {len(keys)} workloads.", ""]
    return lines


def markdown(report: dict[str, Any], images: dict[str, str]) -> str:
    lines = [
        "# Algorithm cascading on today's GPUs (`reducetune experiment cascading`)", "",
        provenance(report),
        "- x axis: elements each thread reduces sequentially = n ÷ (grid × block size): the "
        "tunable family's `elements_per_thread` (1 … 256) with an uncapped grid, every "
        "`grid_cap` (× SMs) beyond it, and the cascade family's `elements_per_thread` 512 … "
        "16384 uncapped, down to a grid of one block (the same kernel: "
        "`kernel_templates/cascade/family.json` says why it is a family of its own). Other "
        "parameters: the `good` preset (`good_8byte` for 8-byte types). GB/s = bytes read ÷ "
        "median time of L2-flushed cold samples.",
        "- Marks: Brent's O(log n) (log2 n elements per thread), Harris's 1024–4096 (seed 000, "
        "'Algorithm Cascading'), and the measured optimum (star).",
        "- `report.json` names every plotted point's measurement (`id`: the row of "
        "`rt_measurements` that holds its samples).", ""]
    for d in report["devices"]:
        dates = sorted({c["date"] for w in d["sweep"] for c in w["points"]}
                       | {c["date"] for p in d["passes"] for c in p["cells"]})
        lines += [f"## {d['device']}", "", f"- Database `{d['source']}`; {d['sm_count']} SMs; "
                  + ((f"streaming ceiling {d['ceiling_gbps']:.0f} GB/s"
                      + (" (the newest GPU's, as are the CUB baselines)"
                         if len(d.get("gpus", [])) > 1 else ""))
                     if d["ceiling_gbps"] else "no streaming ceiling recorded")
                  + (f"; measured {dates[0]} .. {dates[-1]} (UTC)" if dates else ""),
                  *([_run_line(r, d["runs"][0]) for r in d["runs"]] if d.get("runs") else
                    [f"- Measured with `{c}`" for c in d.get("measured_by", [])]),
                  *([f"- Measured on {len(d['gpus'])} GPUs of this model"]
                    if len(d.get("gpus", [])) > 1 else []), "",
                  "**Finding.** " + finding(d), ""]
        if missing_text(d):
            lines += [missing_text(d), ""]
        if f"sweep:{d['device']}" in images:
            lines += [f"![sweep]({images['sweep:' + d['device']]})", ""]
        lines += _sweep_lines(d) + [""]
        if _shrink_lines(d):
            lines += _shrink_lines(d) + [""]
        if any(p["cells"] for p in d["passes"]):
            lines += ["### Passes against n", "", passes_finding(d), ""]
            if f"passes:{d['device']}" in images:
                lines += [f"![passes]({images['passes:' + d['device']]})", ""]
            cap = report.get("options", {}).get("nested_max")
            lines += _passes_lines(d) + ["", (f"A GPU run measures nested launches up "
                                              f"to n = {_pow(cap)} (`--nested-max`). "
                                              if cap else "")
                                         + "Launches are those the host makes per reduction "
                                         "(nested launches' children are made on the device and "
                                         "not counted). The host finish launches the pass of "
                                         "two passes over the same capped grid; its time ends "
                                         "when the CPU has combined the copied partials (a "
                                         "memcpy and a host node in each sample's graph).", ""]
    if len(report["devices"]) > 1:
        lines += _compare_lines(report["devices"])
        if "compare" in images:
            lines += [f"![compare]({images['compare']})", ""]
    return "\n".join(lines)


def plot(report: dict[str, Any], out: Path) -> dict[str, str]:
    plt = pyplot("cascading")
    if plt is None:
        return {}

    images = {}
    for d in report["devices"]:
        if any(w["points"] for w in d["sweep"]):
            name = f"cascading_{slug(d['device'])}.png"
            sweep_figure(plt, d, out / name)
            images[f"sweep:{d['device']}"] = name
        if any(p["cells"] for p in d["passes"]):
            name = f"passes_{slug(d['device'])}.png"
            passes_figure(plt, d, out / name)
            images[f"passes:{d['device']}"] = name
    if len(report["devices"]) > 1:
        compare_figure(plt, report["devices"], out / "cascading_compare.png")
        images["compare"] = "cascading_compare.png"
    return images
