"""The axis benchmark's report, built from its JSON (rebuild it without a GPU:
``python -m reducetune.benchmarks._axis_report PREFIX.json[.xz]``): one markdown table row per shape
(reducetune's bandwidth and % of the HBM peak counting bytes read + written, the same point's
bandwidth in the tuner's protocol, its ratio to the fastest peer, "tie" with the ratio's
interval where that interval holds 1 (benchmarks/_axis_stats.py: the medians' 95 % intervals),
its rate over the faster ceiling's rate (both ceilings timed in the rounds), over the streaming
kernel's rate in the tuner's protocol, and the literal ratio of times with that ratio's bound
(benchmarks/_axis_ceilings.py), the cost of batch invariance, and where the run had
--transfer, the other GPU's point's median over this run's best), the issue's targets as
measured (% of peak beside the streaming kernel's own % in the same rounds), the time each
phase took, and one plot. A fastest peer marked "screened" was timed 3 times only (far slower
than the fastest contender in the screening pass).
"""

from __future__ import annotations

import json
import lzma
import statistics
import sys
from pathlib import Path
from typing import Any

from reducetune.benchmarks._axis_ceilings import (CEILING_RULE, PROTOCOL, bytes_moved,
                                                  ceiling_rates, ceiling_ratio, fallback_note)
from reducetune.benchmarks._axis_peers import PEERS
from reducetune.benchmarks._axis_stats import is_tie, ratio_interval
from reducetune.benchmarks._axis_targets import (FULL_TOTAL, PCT_PEAK, SHORT_ROWS, geomean,
                                                 shape_label, verdicts)
from reducetune.evaluate.base import percent_of


def load(path: str | Path) -> dict[str, Any]:
    """A recorded run: axis.json, or axis.json.xz as docs/results keeps them."""
    with (lzma.open(path) if str(path).endswith(".xz") else open(path, "rb")) as f:
        return json.load(f)


def _pow2(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


def versus_peer(row: dict[str, Any]) -> dict[str, Any]:
    """Reducetune against the fastest correct peer: its median over reducetune's (> 1:
    reducetune faster), the interval of that ratio from the two medians' 95 % intervals
    (None in a file that recorded none) and whether it is a tie (the interval holds 1)."""
    app, bounds = row["app_s"], row.get("app_interval", {})
    peers = {k: app[k] for k in PEERS if app.get(k) and row["peers_correct"].get(k, True)}
    peer = min(peers, key=peers.get) if peers else None
    if peer is None:
        return {"peer": None, "x_peer": None, "interval": None, "tie": False}
    both = [bounds.get(k) for k in ("reducetune", peer)]
    interval = None if None in both else list(ratio_interval(
        *({"median_low_s": lo, "median_high_s": hi} for lo, hi in both)))
    return {"peer": peer, "x_peer": peers[peer] / app["reducetune"], "interval": interval,
            "tie": is_tie(None if interval is None else (interval[0], interval[1]))}


def ratios(row: dict[str, Any]) -> dict[str, Any]:
    """Reducetune against the fastest peer (versus_peer), against the faster ceiling
    (ceiling_ratio: rates, and times beside them), the Python call against the same peer, the
    point's bandwidth in the tuner's protocol, % of peak beside the streaming kernel's own in
    the same rounds, and batch invariance's price (best batch_invariant point's median / best
    point's median)."""
    app = row["app_s"]
    t = app["reducetune"]
    vs = versus_peer(row)
    peer = vs["peer"]
    tune = row["tune"]
    bi = tune["best_batch_invariant_s"]
    py = app.get("reducetune_py")
    proto = row.get("protocol") or {}
    return {**vs, "x_peer_py": app[peer] / py if peer and py else None,
            "protocol_gbps": (bytes_moved(row) / proto["median_s"] / 1e9
                              if proto.get("status") == "ok" else None),
            **ceiling_ratio(row),
            "x_torch": app["torch"] / t if app.get("torch") else None,
            "pct_peak": percent_of(bytes_moved(row) / t, row.get("peak")),
            "streaming_pct": percent_of(ceiling_rates(row).get("streaming"), row.get("peak")),
            "bi_cost": bi / tune["best_s"] if bi else None}


def _groups(rows: list[dict[str, Any]]) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """The rows by (dtype, total), in that order: a summary line and a line of targets each."""
    by: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r.get("dtype", "float32"), r["total"]), []).append(r)
    return dict(sorted(by.items()))


def summary(result: dict[str, Any]) -> list[str]:
    lines = []
    for (dtype, total), mine in _groups(result["rows"]).items():
        rs = [ratios(r) for r in mine]
        xp = [q["x_peer"] for q in rs if q["x_peer"]]
        pct = [q["pct_peak"] for q in rs if q["pct_peak"]]
        xc = _ceiling_worst(mine, rs)
        lines.append(f"- {dtype}, total {_pow2(total)}: × fastest peer worst {min(xp):.2f}, geometric "
                     f"mean {geomean(xp):.2f} ({_ties(rs)}); % of peak "
                     f"{min(pct):.0f}–{max(pct):.0f}{_protocol_pct(mine, rs)}"
                     f"{_streaming_pct(rs)}; {xc}"
                     if xp and pct and xc else f"- {dtype}, total {_pow2(total)}: incomplete")
        short = [q["x_torch"] for r, q in zip(mine, rs)
                 if r["kind"] == "rows" and r["r"] <= SHORT_ROWS]
        if short and all(short):
            lines.append(f"  rows of {SHORT_ROWS} or fewer: × torch.sum eager {min(short):.2f}–"
                         f"{max(short):.2f}")
        lines += _python_call(mine)
    return lines


def targets(result: dict[str, Any]) -> list[str]:
    """Issue 26's targets per dtype and total, each met or MISSED with its worst value to four
    digits (_axis_targets.verdicts): the summary's two digits would show a 0.9496 as 0.95."""
    peak = result["device"]["peak_bytes_per_s"]
    for row in result["rows"]:
        row.setdefault("peak", peak)
    # shapes the time limit left out: named beside their group's verdicts, not judged
    skipped = _groups(result.get("skipped", []))
    groups = _groups(result["rows"])
    lines = []
    for key in sorted(groups.keys() | skipped.keys()):
        dtype, total = key
        rs = [(ratios(r), r) for r in groups.get(key, [])]
        lines.append(verdicts(dtype, total.bit_length() - 1, rs, len(skipped.get(key, []))))
    return lines


def _ceiling_worst(rows: list[dict[str, Any]], rs: list[dict[str, Any]]) -> str:
    """The target's number, the worst ratio of rates to the faster ceiling, and its shape;
    then the worst ratio of times with its shape's bound, input / (input + output); then the
    worst against the streaming kernel in the tuner's protocol and against the mixed stream, the
    references."""
    got = [(q["x_ceiling"], q, r) for r, q in zip(rows, rs) if q["x_ceiling"]]
    if not got:
        return ""
    x, _, row = min(got, key=lambda g: g[0])
    _, q, slow = min(got, key=lambda g: g[1]["x_ceiling_time"])
    proto = [(q["x_streaming_protocol"], r) for r, q in zip(rows, rs)
             if q["x_streaming_protocol"]]
    ref = ""
    if proto:
        xp, prow = min(proto, key=lambda g: g[0])
        ref = f"; × streaming, tuner's protocol worst {xp:.2f} ({shape_label(prow)})"
    mixed = [(q["x_mixed"], r) for r, q in zip(rows, rs) if q["x_mixed"]]
    if mixed:
        xm, mrow = min(mixed, key=lambda g: g[0])
        ref += f"; × mixed stream worst {xm:.3f} ({shape_label(mrow)})"
    return (f"× faster ceiling (rates) worst {x:.2f} ({shape_label(row)}); as times worst "
            f"{q['x_ceiling_time']:.2f} ({shape_label(slow)}, bound {q['time_bound']:.2f}){ref}")


def _python_call(rows: list[dict[str, Any]]) -> list[str]:
    """What the Python call costs over the C++ call, the median over the shapes: on the host
    (the Python call's perf_counter around it, the C++ call's own clock in C++ around it: the
    launch included) and between the events. Equal: the
    difference is the host's Python; more between the events: something else."""
    both = [r for r in rows if len(r.get("host_s", {})) == 2 and r["app_s"].get("reducetune_py")]
    if not both:
        return []
    host = statistics.median(r["host_s"]["reducetune_py"] - r["host_s"]["reducetune"]
                             for r in both)
    events = statistics.median(r["app_s"]["reducetune_py"] - r["app_s"]["reducetune"]
                               for r in both)
    return [f"  Python call over the C++ call: +{1e6 * events:.1f} µs between the events, "
            f"+{1e6 * host:.1f} µs of host time (medians over the shapes)"]


def _ties(rs: list[dict[str, Any]]) -> str:
    """The ties of a summary line, or that the file cannot say (no median intervals: the
    runs before the interval rule)."""
    if not any(q["interval"] for q in rs):
        return "ties not judged: no median intervals recorded"
    return f"{sum(q['tie'] for q in rs)} tie(s) of {len(rs)} shapes"


def _protocol_pct(rows: list[dict[str, Any]], rs: list[dict[str, Any]]) -> str:
    """The range of % of peak in the tuner's protocol, where the run measured it."""
    pct = [percent_of(q["protocol_gbps"] * 1e9, r.get("peak")) for r, q in zip(rows, rs)
           if q["protocol_gbps"]]
    got = [p for p in pct if p]
    return f" (tuner's protocol {min(got):.0f}–{max(got):.0f})" if got else ""


def _streaming_pct(rs: list[dict[str, Any]]) -> str:
    """The range of the streaming kernel's own % of peak in the same rounds (its input's bytes
    read), where the rounds timed it: on an H200 it moved from 81 to 90 % between hosts and
    between one shape's rounds and the next, so a shape's % of peak is read beside it."""
    got = [q["streaming_pct"] for q in rs if q["streaming_pct"]]
    return (f" (the streaming kernel in the same rounds {min(got):.0f}–{max(got):.0f})"
            if got else "")


def _num(x: float | None) -> str:
    return f"{x:.2f}" if x else "–"


def _time_ratio(q: dict[str, Any]) -> str:
    """The literal ratio of times and, in brackets, its bound input / (input + output)."""
    t = q["x_ceiling_time"]
    return f"{t:.2f} ({q['time_bound']:.2f})" if t else "–"


def _transfer(row: dict[str, Any]) -> str:
    t = row.get("transfer")
    if not t:
        return "–"
    if not t.get("verified"):
        return f"{t['point']['name']}: wrong or not runnable"
    return f"{t['point']['name']}: {t['ratio_to_best']:.2f}"


def _x_peer(q: dict[str, Any]) -> str:
    """× peer: the ratio, and for a tie the ratio's interval that holds 1."""
    if not q["x_peer"]:
        return "–"
    if q["tie"]:
        lo, hi = q["interval"]
        return f"tie ({q['x_peer']:.2f}, {lo:.2f}–{hi:.2f})"
    return f"{q['x_peer']:.2f}"


def _gbps(gbps: float | None, row: dict[str, Any]) -> str:
    proto = row.get("protocol")
    if gbps:
        return f"{gbps:.0f}"
    return "–" if not proto else f"{proto.get('status', 'failed')}"


def table(result: dict[str, Any]) -> list[str]:
    moved = any(r.get("transfer") for r in result["rows"])
    head = ("| shape | view (outer, r, inner) | point | GB/s | % peak | GB/s, tuner's protocol "
            "| fastest peer | × peer | × peer, Python call | × ceiling "
            "| × streaming, tuner's protocol | × mixed stream | × ceiling, time (bound) "
            "| batch_invariant cost |" +
            (" transferred point, its time / this run's best |" if moved else ""))
    lines = [head, "|" + "---|" * (15 if moved else 14)]
    for row in result["rows"]:
        q = ratios(row)
        gbps = bytes_moved(row) / row["app_s"]["reducetune"] / 1e9
        xp = _x_peer(q)
        bi = f"{100 * (q['bi_cost'] - 1):+.1f} %" if q["bi_cost"] else "none valid"
        peer = (f"{q['peer']} (screened)" if q["peer"] in row.get("screened", ())
                else q["peer"] or "–")
        lines.append(f"| {row.get('dtype', 'float32')} {row['kind']} {tuple(row['shape'])} | "
                     f"{tuple(row['view'])} | "
                     f"{row['point']['name']} | {gbps:.0f} | {q['pct_peak'] or 0:.1f} | "
                     f"{_gbps(q['protocol_gbps'], row)} | {peer} | {xp} | {_num(q['x_peer_py'])} | "
                     f"{q['x_ceiling'] or 0:.2f} | {_num(q['x_streaming_protocol'])} | "
                     f"{_num(q['x_mixed'])} | {_time_ratio(q)} | {bi} |" +
                     (f" {_transfer(row)} |" if moved else ""))
    return lines


def phases(result: dict[str, Any]) -> list[str]:
    """The mean time a shape spent in each phase (where the run recorded them)."""
    timed = [r["phase_s"] for r in result["rows"] if r.get("phase_s")]
    if not timed:
        return []
    mean = {k: sum(t[k] for t in timed) / len(timed) for k in timed[0]}
    return ["Time a shape took, mean of " + str(len(timed)) + ": " +
            ", ".join(f"{k} {v:.1f} s" for k, v in mean.items()) + "."]


def write(result: dict[str, Any], prefix: Path) -> None:
    peak = result["device"]["peak_bytes_per_s"]
    for row in result["rows"]:
        row["peak"] = peak
    dev = result["device"]
    md = [f"# Axis benchmark: {dev['name']}", "",
          f"Device: {dev['name']} (driver {dev['driver_version']}), HBM peak "
          f"{peak / 1e9:.0f} GB/s. Date: {result['date']}. Commit: {result['commit']}.",
          f"Command: `{result['command']}`.", "",
          "Reducetune's point per shape: " + result["protocol"]["reducetune_point"] + ".",
          "Timing: " + result["protocol"]["application"] + ".",
          "Ceilings: " + result["protocol"]["ceilings"] + ".",
          "Peers: " + ", ".join(PEERS) + (f"; missing: {', '.join(result['peers_missing'])}"
                                         if result["peers_missing"] else "") + ".", "",
          "reducetune: the C++ runtime's axis call (reducer::reduce_axis, output allocated "
          "once, timed in C++); 'Python call': an application's call "
          "reducetune.reduce(x, \"sum\", axis=..., table=FILE), FILE naming the tuned point "
          "for the shape: the public call's Python, checks, plain eager path (no custom "
          "operator dispatch outside torch.compile and autograd) and result allocation "
          "included. 'GB/s, tuner's protocol': the same point measured as 'reducetune tune' "
          "measures (" + result["protocol"].get("tuner", "not recorded") + ").",
          "Ratios > 1: reducetune faster; × peer against the fastest correct peer, 'tie' where "
          "the ratio's interval holds 1 (the interval from the two medians' distribution-free "
          "95 % intervals: peer low / reducetune high to peer high / reducetune low; shown as "
          "'tie (ratio, low–high)'); " + CEILING_RULE + "; "
          "batch_invariant cost: the best batch_invariant point's median over the best "
          "point's.", *fallback_note(result["rows"]), *_transfer_line(result), "",
          *summary(result), "", "Issue 26's targets:", *targets(result), "",
          *phases(result), "", *table(result)]
    if result["skipped"]:
        md += ["", f"Not run (time limit): {result['skipped']}"]
    prefix.with_suffix(".md").write_text("\n".join(md) + "\n")
    plot(result, prefix.with_suffix(".png"))


def _transfer_line(result: dict[str, Any]) -> list[str]:
    froms = sorted({r["transfer"]["from_device"] for r in result["rows"] if r.get("transfer")})
    return [f"Transferred point: the best point of {', '.join(froms)}'s run at the same shape, "
            "verified and timed in the same rounds as this run's candidates; its median over "
            "the best of this run's own (< 1: the other GPU's point was faster here)."
            ] if froms else []


# What each series of the plot is called, in the legend's order: the contenders as applications
# call them, then the ceilings. One colour per name in every panel (a panel without CuPy, as
# bfloat16's, keeps the others' colours), and one legend for the figure.
PLOT_NAMES = {"reducetune": "reducetune (C++ call)", "reducetune_py": "reducetune.reduce (Python)",
              "torch": "torch.sum", "torch_compile": "torch.compile", "jax": "JAX",
              "cupy_cub": "cupy.sum (CUB)", "cub_segmented": "CUB segmented reduce",
              "memcpy": "memcpy ceiling"}


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib  # optional: the plot only

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # optional: the plot only

    panels = sorted({(r.get("dtype", "float32"), r["total"]) for r in result["rows"]})
    fig, axes = plt.subplots(len(panels), 2, figsize=(12, 4 * len(panels) + 0.6), squeeze=False)
    names = ("reducetune", "reducetune_py") + PEERS + ("memcpy",)
    colour = {n: f"C{k}" for k, n in enumerate(names)}
    for i, (dtype, total) in enumerate(panels):
        for j, kind in enumerate(("rows", "columns")):
            ax, rows = axes[i][j], [r for r in result["rows"] if r["total"] == total and
                                    r["kind"] == kind and r.get("dtype", "float32") == dtype]
            for name in names:
                pts = [(r["r"], percent_of(bytes_moved(r) / r["app_s"][name], r["peak"]))
                       for r in rows if r["app_s"].get(name)]
                if pts:
                    ax.plot(*zip(*pts), marker="o", label=PLOT_NAMES.get(name, name),
                            color=colour[name], linewidth=2.5 if name == "reducetune" else 1,
                            linestyle=":" if name == "memcpy" else "-")
            rates = [(r["r"], ceiling_rates(r)) for r in rows]
            pts = [(n, percent_of(q["streaming"], r["peak"]))
                   for r, (n, q) in zip(rows, rates) if "streaming" in q]
            if pts:  # rates of the input's bytes read, timed in the rounds
                ax.plot(*zip(*pts), marker="o", color="black", linestyle="--", linewidth=1,
                        label="streaming ceiling (read only, in the rounds)")
            proto = [percent_of(q[PROTOCOL], r["peak"]) for r, (_, q) in zip(rows, rates)
                     if PROTOCOL in q]
            if proto:  # one input size per panel: one level, measured once
                ax.axhline(max(proto), color="grey", linestyle=":", linewidth=1,
                           label="streaming, tuner's protocol (gated, cold L2)")
            if total.bit_length() - 1 == FULL_TOTAL:  # where the bandwidth target holds
                ax.axhline(PCT_PEAK, color="red", linestyle="-.", linewidth=1,
                           label=f"target, {PCT_PEAK:g} % of peak (2^{FULL_TOTAL})")
            ax.set(xscale="log", xlabel="r", ylabel="% of HBM peak (read + written)",
                   title=f"{kind}, {_pow2(total)} {dtype} elements", ylim=(0, 105))
            ax.grid(alpha=0.3)
    by_label = {}
    for ax in axes.flat:
        for h, label in zip(*ax.get_legend_handles_labels()):
            by_label.setdefault(label, h)
    fig.legend(by_label.values(), by_label.keys(), loc="upper center", ncol=5, fontsize=8,
               bbox_to_anchor=(0.5, 1 - 0.3 / fig.get_figheight()), frameon=False)
    top = 1 - 0.9 / fig.get_figheight()  # 0.9 inch for the title and the legend's rows
    fig.suptitle(f"axis sums on {result['device']['name']}, {result['date']}", y=0.995)
    fig.tight_layout(rect=(0, 0, 1, top))
    fig.savefig(path, dpi=90)


if __name__ == "__main__":
    src = Path(sys.argv[1])  # PREFIX.json, or PREFIX.json.xz as docs/results keeps them
    write(load(src), src.parent / src.name.removesuffix(".xz").removesuffix(".json"))
