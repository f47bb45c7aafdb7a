"""The phrases of docs/research/README.md's cascading findings that hold a number, each
computed here from the cascading report's data (docs/research/cascading/report.json), so that
test_research_readme_numbers_are_in_the_cascading_report compares every number the findings
state with the value it names, in the sentence that names it.

A phrase is a rule over the data, not a transcription: "16–64 at 2^24" is the span of the
three types' optima at 2^24 on that GPU; a plateau is the elements-per-thread values at which
every workload (three types, two GPUs) holds at least PLATEAU of its optimum."""

from __future__ import annotations

from typing import Any

DTYPES = ("float32", "int32", "float64")
PLATEAU = 0.93  # the plateau's threshold, as the findings state it ("at least 93%")
DEVICE_SIDE = ("two passes", "one pass, last-block ticket", "one pass, atomics")


def span(values: list[float], fmt: str = "{:g}", sep: str = "–") -> str:
    """'lo–hi' of the values as formatted, or one value when both ends print alike."""
    lo, hi = fmt.format(min(values)), fmt.format(max(values))
    return lo if lo == hi else f"{lo}{sep}{hi}"


class Data:
    """report.json, asked by GPU ("H100", "H200"), type, log2 n and protocol."""

    def __init__(self, report: dict[str, Any]) -> None:
        self.gpu = {g: next(d for d in report["devices"] if g in d["device"])
                    for g in ("H100", "H200")}

    def sweep(self, g: str, dtype: str, k: int) -> dict[str, Any]:
        return next(w for w in self.gpu[g]["sweep"] if w["dtype"] == dtype and w["n"] == 1 << k)

    def workloads(self, ks: tuple[int, ...], gs: tuple[str, ...] = ("H100", "H200")):
        return [self.sweep(g, d, k) for g in gs for d in DTYPES for k in ks]

    def optima(self, g: str, k: int) -> str:
        return span([self.sweep(g, d, k)["optimum"]["effective"] for d in DTYPES])

    def us(self, g: str, protocol: str, k: int) -> float:
        row = next(p for p in self.gpu[g]["passes"] if p["protocol"].startswith(protocol))
        return next(c["median_s"] for c in row["cells"] if c["n"] == 1 << k) * 1e6

    def launches(self, g: str, protocol: str, k: int) -> int:
        row = next(p for p in self.gpu[g]["passes"] if p["protocol"].startswith(protocol))
        return next(c["launches"] for c in row["cells"] if c["n"] == 1 << k)

    def passes_sizes(self, g: str) -> list[int]:
        return [c["n"].bit_length() - 1 for c in self.gpu[g]["passes"][0]["cells"]]


def pct(part: float, whole: float) -> float:
    return 100 * part / whole


def plateau(x: Data, k: int) -> list[float]:
    """The elements-per-thread values at which every workload at 2^k (both GPUs, at its
    optimum's block size) holds at least PLATEAU of its optimum."""
    runs = []
    for w in x.workloads((k,)):
        o = w["optimum"]
        runs.append({p["effective"]: p["gbps"] / o["gbps"] for p in w["points"]
                     if p["block_size"] == o["block_size"] and p["status"] == "ok"})
    values = sorted(set().union(*runs))
    held = [e for e in values if all(r[e] >= PLATEAU for r in runs if e in r)]
    # one stretch: no value between its ends falls below
    assert held == [e for e in values if held[0] <= e <= held[-1]], (k, held)
    return held


def at_grid(w: dict[str, Any], block: int, grid: int) -> dict[str, Any]:
    return next(p for p in w["points"] if p["block_size"] == block and p["grid"] == grid)


def sweep_phrases(x: Data) -> list[str]:
    h100, h200 = (x.sweep(g, "float32", 30)["optimum"] for g in ("H100", "H200"))
    assert x.optima("H100", 28) == x.optima("H100", 30)  # "at 2^28 and at 2^30"
    assert "–" not in x.optima("H100", 20)  # "(all three types)"
    ratios = [w["optimum"]["gbps"] / w["brent"]["gbps"] for w in x.workloads((20, 24, 28, 30))]
    large = x.workloads((28, 30))
    on = {k: plateau(x, k) for k in (28, 30)}
    assert on[28][0] == on[30][0]  # "from 16 ... to 4096 (2^28) and to 16384 (2^30)"
    right = [(x.sweep("H200", d, k)["optimum"]["effective"],
              x.sweep("H100", d, k)["optimum"]["effective"]) for d in DTYPES for k in (28, 30)]
    assert all(a > b for a, b in right)  # "further right on the H200 at all six"
    pairs = [(x.sweep("H200", d, k)["optimum"]["effective"],
              x.sweep("H100", d, k)["optimum"]["effective"]) for d in DTYPES
             for k in (20, 24, 28, 30)]
    twice = sum(a > 2 * b for a, b in pairs)
    return [
        f"on the H100 it is {x.optima('H100', 20)} at 2^20 (all three types), "
        f"{x.optima('H100', 24)} at 2^24, {x.optima('H100', 28)} at 2^28 and at 2^30 (float32 "
        f"2^30: {h100['effective']:g} elements per thread, block {h100['block_size']}, "
        f"{h100['gbps']:.0f} GB/s)",
        f"on the H200 it is {x.optima('H200', 20)} at 2^20, {x.optima('H200', 24)} at 2^24, "
        f"{x.optima('H200', 28)} at 2^28 and {x.optima('H200', 30)} at 2^30 (float32 2^30: "
        f"{h200['effective']:g}, {h200['gbps']:.0f} GB/s)",
        f"within {span(ratios, '×{:.2f}')} of the optimum everywhere",
        f"from {on[28][0]:g} elements per thread to {on[28][-1]:g} (2^28) and to "
        f"{on[30][-1]:g} (2^30) every point holds at least {PLATEAU:.0%} of its optimum",
        f"further right on the H200 at all {len(right)} of those workloads "
        f"({span([a for a, _ in right])} against {span([b for _, b in right])}; more than a "
        f"factor 2 at {twice} of {len(pairs)} workloads in all)",
        "by a bandwidth difference of at most "
        f"×{max(w['optimum']['gbps'] / w['brent']['gbps'] for w in large):.2f} (optimum ÷ Brent)",
        *harris_phrases(x), *shrink_phrases(x),
        f"buys nothing past {span([w['optimum']['effective'] for w in large])} elements per "
        "thread (the optima at 2^28 and 2^30)",
        *second_gpu_phrases(x),
    ]


def harris_phrases(x: Data) -> list[str]:
    def reach(ks: tuple[int, ...], gs: tuple[str, ...]) -> str:
        return span([pct(w["harris"]["gbps"], w["optimum"]["gbps"]) for w in x.workloads(ks, gs)],
                    "{:.0f}") + "%"

    def grids(k: int) -> str:
        return span([w["harris"]["grid"] for w in x.workloads((k,))])

    return [f"at 2^28 and 2^30 its best point reaches {reach((28, 30), ('H100',))} of the "
            f"optimum on the H100 and {reach((28, 30), ('H200',))} on the H200, at 2^24 only "
            f"{reach((24,), ('H100',))} and {reach((24,), ('H200',))} (grids of {grids(24)} "
            f"blocks), at 2^20 {reach((20,), ('H100', 'H200'))} (grids of {grids(20)} blocks)"]


def shrink_phrases(x: Data) -> list[str]:
    def held(g: str, grid: int) -> str:
        return span([pct(at_grid(w, 1024, grid)["gbps"], w["optimum"]["gbps"])
                     for w in x.workloads((30,), (g,))], "{:.0f}") + "%"

    wide = {g: x.sweep(g, "float32", 28)["shrink"]["widest"] for g in ("H100", "H200")}
    opt28 = {g: x.sweep(g, "float32", 28)["optimum"]["gbps"] for g in ("H100", "H200")}
    w30 = x.sweep("H100", "float32", 30)
    e128, e64 = (at_grid(w30, 1024, g)["effective"] for g in (128, 64))
    assert held("H100", 128) == held("H200", 128)  # "on both GPUs"
    assert wide["H100"]["grid"] == wide["H200"]["grid"]
    return [
        f"fewer blocks than the {x.gpu['H100']['sm_count']} SMs",
        f"at 2^30 with block 1024, 128 blocks ({e128:g} elements per thread) still give "
        f"{held('H100', 128)} of the optimum on both GPUs and 64 blocks ({e64:g}) "
        f"{held('H100', 64)} on the H100 and {held('H200', 64)} on the H200",
        f"at 2^28, {wide['H100']['grid']} blocks ({wide['H100']['effective']:g}) give "
        f"{pct(wide['H100']['gbps'], opt28['H100']):.0f}% on the H100 and "
        f"{pct(wide['H200']['gbps'], opt28['H200']):.0f}% on the H200 (float32), that is "
        f"{wide['H100']['gbps']:.0f} and {wide['H200']['gbps']:.0f} GB/s",
    ]


def second_gpu_phrases(x: Data) -> list[str]:
    runs = {g: x.gpu[g]["runs"] for g in ("H100", "H200")}
    tunable = max(p["elements_per_thread"] for w in x.workloads((30,)) for p in w["points"]
                  if p["family"] == "tunable")
    return [
        f"its points above {tunable} elements per thread without a grid cap (the cascade "
        f"family's, the second run's {sum(runs['H200'][1]['status'].values())} points with the "
        f"host finish) were measured on a second H200, whose streaming ceiling read "
        f"{runs['H200'][1]['ceiling_gbps']:.0f} GB/s, "
        f"{pct(runs['H200'][1]['ceiling_gbps'], runs['H200'][0]['ceiling_gbps']):.1f}% of the "
        f"first one's (the H100's two GPUs agree: "
        f"{pct(runs['H100'][1]['ceiling_gbps'], runs['H100'][0]['ceiling_gbps']):.1f}%); right "
        f"of {tunable} the H200's curves",
    ]


def passes_phrases(x: Data) -> list[str]:
    gs = ("H100", "H200")
    ks = {g: x.passes_sizes(g) for g in gs}
    two, ticket, atomics = DEVICE_SIDE
    assert all(x.launches(g, two, 10) == 1 for g in gs)  # "two passes make one launch"

    def fastest(g: str, k: int) -> float:
        return min(x.us(g, p, k) for p in DEVICE_SIDE)

    def spread(g: str) -> float:
        return max(max(x.us(g, p, k) for p in DEVICE_SIDE) - fastest(g, k)
                   for k in ks[g] if 14 <= k <= 26)

    def extra(g: str) -> list[float]:
        return [x.us(g, "host finish", k) - fastest(g, k) for k in ks[g] if k <= 26]

    def times(g: str, k: int) -> float:
        return x.us(g, "host finish", k) / fastest(g, k)

    for g in gs:  # beats the host loop only at 2^30, never a device-side finish
        assert [k for k in ks[g] if x.us(g, "host finish", k) < x.us(g, "multipass", k)] == [30]
        assert all(x.us(g, "host finish", k) > fastest(g, k) for k in ks[g])
    nested = [x.us(g, "nested", k) for g in gs for k in ks[g] if k <= 26]
    return [
        f"two passes make one launch ({x.us('H100', two, 10):.1f} µs on the H100, "
        f"{x.us('H200', two, 10):.1f} µs on the H200)",
        f"are within {spread('H100'):.2f} µs of one another on the H100 and "
        f"{spread('H200'):.2f} µs on the H200",
        f"at 2^30 indistinguishable (atomics {x.us('H100', atomics, 30):.2f}, ticket "
        f"{x.us('H100', ticket, 30):.2f}, two passes {x.us('H100', two, 30):.2f} µs on the H100)",
        f"pays a launch per pass ({x.us('H100', 'multipass', 30):.2f} µs at 2^30)",
        f"take {min(nested):.2f}–{max(nested):.2f} µs on the two GPUs",
        f"{span(extra('H100'), '+{:.1f}', ' to ')} µs over the fastest of two passes, ticket or "
        f"atomics from 2^10 to 2^26 on the H100 ({span(extra('H200'), '+{:.1f}', ' to ')} µs on "
        f"the H200), from ×{times('H100', 10):.2f} at 2^10 to ×{times('H100', 26):.2f} at 2^26 "
        f"(H200: ×{times('H200', 10):.2f} to ×{times('H200', 26):.2f}), and "
        f"+{x.us('H100', 'host finish', 30) - fastest('H100', 30):.1f} µs "
        f"(×{times('H100', 30):.2f}) at 2^30 (H200: "
        f"+{x.us('H200', 'host finish', 30) - fastest('H200', 30):.1f} µs, "
        f"×{times('H200', 30):.2f})",
        f"only at 2^30 ({x.us('H100', 'host finish', 30):.2f} against "
        f"{x.us('H100', 'multipass', 30):.2f} µs; H200 {x.us('H200', 'host finish', 30):.2f} "
        f"against {x.us('H200', 'multipass', 30):.2f} µs)",
    ]


def phrases(report: dict[str, Any]) -> list[str]:
    x = Data(report)
    return [*sweep_phrases(x), *passes_phrases(x)]
