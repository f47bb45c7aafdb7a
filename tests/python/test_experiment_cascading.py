"""The cascading experiment's report is built from the database(s) alone (replay, no GPU).

The databases here are SYNTHETIC FIXTURES: made-up times from a formula, written through the
real store API into a temporary folder; never committed, never presented as measurements.
Real recordings committed at tests/data/recorded/experiments/<device>_cascading.db.xz (see
docs/research/README.md) are replayed the same way when present.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path

import pytest

from conftest import REPO, SYNTHETIC_DEVICE
from reducetune import _core
from reducetune.evaluate.base import CEILING_WORKLOAD, workload

CASCADING_RECORDINGS = sorted((REPO / "tests" / "data" / "recorded" / "experiments")
                              .glob("*_cascading.db.xz"))
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
SMALL = ["--sizes", "2^20", "2^28", "--passes-sizes", "2^10", "2^20"]


def made_up_gbps(effective: float, peak_at: float, block_size: int) -> float:
    """Not a measurement: a smooth bump in log2(elements per thread), a little lower for
    other block sizes, so that the optimum is known in advance."""
    return 2500.0 * math.exp(-0.05 * (math.log2(effective / peak_at)) ** 2) \
        * (1.0 if block_size == 256 else 0.9)


def build_cascading_fixture(path: Path, device: dict, peak_at: float,
                            sizes: tuple[int, ...] = (1 << 20, 1 << 28),
                            passes: tuple[int, ...] = (1 << 10, 1 << 20)) -> None:
    from reducetune._space import limits_for_arch
    from reducetune.store.experiment_tables import write_fact
    from reducetune.experiments.cascading import (BLOCK_SIZES, DTYPES, PASSES_DTYPE,
                                                  passes_points, sweep_points)

    store = _core.Store(str(path))
    dev = store.register_device(device)
    limits = limits_for_arch("sm_90")
    limits.sm_count = device["sm_count"]

    def record(p, n, gbps, launches):
        t = n * _core.element_bytes(p.dtype) / (gbps * 1e9)
        w = {k: v for k, v in workload(p.dtype, p.op, n).items() if k != "pattern"}
        mid = store.record_measurement(p, {
            "device_id": dev, **w, "template_hash": _core.template_hash(p.family),
            "driver_version": 13000, "toolkit_version": 13000,
            "samples_s": [t] * 10, "status": "ok", "reason": "", "gbps": gbps,
            "pct_of_peak": 1.0})
        write_fact(path, mid, "cascading", {"launches": launches})

    for n in sizes:
        for dtype in DTYPES:
            for p, _, eff in sweep_points(dtype, n, BLOCK_SIZES, limits):
                record(p, n, made_up_gbps(eff, peak_at, p.params["block_size"]), 2)
            w = {k: v for k, v in workload(dtype, "sum", n).items() if k != "pattern"}
            store.record_baseline({"device_id": dev, **w, "kind": "cub", "samples_s": [1.0] * 10,
                                   "gbps": 2000.0, "driver_version": 13000,
                                   "toolkit_version": 13000})
    for k, (_, p) in enumerate(passes_points(limits)):
        for n in passes:
            record(p, n, 100.0 * (k + 1) * math.log2(n), k + 1)
    store.record_baseline({"device_id": dev, **CEILING_WORKLOAD, "kind": "ceiling",
                           "samples_s": [1e-3] * 10, "gbps": 3000.0,
                           "driver_version": 13000, "toolkit_version": 13000})
    store.close()
    assert PASSES_DTYPE == "int32"


OTHER_DEVICE = {**SYNTHETIC_DEVICE, "name": "SYNTHETIC second device (not a measurement)",
                "uuid": "GPU-00000000-0000-0000-0000-5y7the71c001", "sm_count": 66}


@pytest.fixture(scope="module")
def two_dbs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("cascading")
    a, b = folder / "made_up_a.db", folder / "made_up_b.db"
    build_cascading_fixture(a, SYNTHETIC_DEVICE, peak_at=64)
    build_cascading_fixture(b, OTHER_DEVICE, peak_at=512)
    return a, b

def run_cascading(cli, out: Path, *args: object) -> tuple[dict, str]:
    """`experiment cascading ARGS --out OUT`: its report.json and report.md."""
    code, _, err = cli("experiment", "cascading", *args, "--out", out)
    assert code == 0, err
    return json.loads((out / "report.json").read_text()), (out / "report.md").read_text()



def test_the_grid_the_sweep_assumes_is_the_tunable_familys():
    """The report's x axis is n ÷ (grid × block) with each point's grid from the C++ space
    (Point.grid: the family's "grid" on the Space's device), and its text says what that grid
    is: ceil(n ÷ (block × elements per thread)) uncapped, at most grid_cap × SMs capped, for
    the tunable family's points and the cascade family's wide ones alike. Asked of the
    binding on two devices and two sizes, so a grid rule that changes fails here until the
    report's text (and this test) agree."""
    from reducetune._space import limits_for_arch
    from reducetune.experiments.cascading import sweep_points

    capped = 0
    for sm_count in (132, 78):
        limits = limits_for_arch("sm_90")
        limits.sm_count = sm_count
        for n in (1 << 20, (1 << 28) + 3):
            points = sweep_points("float32", n, [128, 1024], limits)
            assert {p.family for p, _, _ in points} == {"tunable", "cascade"}
            for p, grid, effective in points:
                bs, ept, cap = (p.params[k] for k in ("block_size", "elements_per_thread",
                                                      "grid_cap"))
                uncapped = -(-n // (bs * ept))
                assert grid == p.grid(n), p
                assert grid == (uncapped if cap == 0 else min(uncapped, cap * sm_count)), p
                assert effective == n / (grid * bs)
                capped += cap > 0 and grid == cap * sm_count < uncapped
    assert capped  # a cap that binds was asked too


def test_sweep_reaches_thousands_of_elements_per_thread_through_the_grid_cap():
    from reducetune._space import limits_for_arch
    from reducetune.experiments.cascading import sweep_points

    limits = limits_for_arch("sm_90")
    limits.sm_count = 132
    pts = sweep_points("float32", 1 << 30, [256], limits)
    effs = sorted(e for _, _, e in pts)
    assert effs[0] == 1 and effs[-1] > 4096  # 2^30 / (132 x 256) = 31775
    assert len({g for _, g, _ in pts}) == len(pts)  # no launch measured twice


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64"])
def test_sweep_reaches_4096_elements_per_thread_at_every_size_the_grid_shrinking(dtype):
    """Issue 14: 1 ... 4096 and beyond at 2^20, 2^24, 2^28 and 2^30 for every block size, as
    far as n / block allows (one block): at 2^20 and 2^24 the tunable family's caps cannot
    (one block per SM at least), the cascade family's wide elements_per_thread do."""
    from reducetune._space import limits_for_arch
    from reducetune.experiments.cascading import BLOCK_SIZES, SIZES, sweep_points

    limits = limits_for_arch("sm_90")
    limits.sm_count = 132
    for n in SIZES:
        pts = sweep_points(dtype, n, BLOCK_SIZES, limits)
        for bs in BLOCK_SIZES:
            mine = sorted((e, g) for p, g, e in pts if p.params["block_size"] == bs)
            assert mine[0][0] == 1 and mine[-1][0] >= min(4096, n // bs), (n, bs)
            assert [g for _, g in mine] == sorted((g for _, g in mine), reverse=True)
            assert len({g for _, g in mine}) == len(mine)  # no launch measured twice
        wide = [p for p, _, e in pts if p.family == "cascade"]
        assert wide and all(p.params["grid_cap"] == 0 and p.params["finish"] == "two_pass"
                            and p.params["elements_per_thread"] > 256 for p in wide)
    assert max(e for _, _, e in sweep_points(dtype, 1 << 24, [256], limits)) == 16384


def test_the_cascade_family_is_the_tunable_kernel_with_a_wider_range():
    """The same grid expression (Point.grid evaluates it) and the same pass kernel (the C++
    test test_cascade_kernels compares the mangled names); only the ranges differ."""
    tunable, cascade = (json.loads((REPO / "kernel_templates" / f / "family.json").read_text())
                        for f in ("tunable", "cascade"))
    assert cascade["grid"] == tunable["grid"]
    ept = {d["name"]: d["values"] for d in cascade["parameters"]}["elements_per_thread"]
    assert ept[0] == 1 and ept[-1] == 16384
    assert "tunable" in cascade["includes"]
    assert "Why a family of its own" in cascade["description"]


def test_passes_plan_holds_the_host_finish_on_the_same_pass_and_grid_as_two_passes():
    from reducetune._space import limits_for_arch
    from reducetune.experiments.cascading import PASSES_SIZES, passes_points, plan

    limits = limits_for_arch("sm_90")
    limits.sm_count = 132
    pts = dict(passes_points(limits))
    host = next(p for label, p in pts.items() if label.startswith("host finish"))
    two = next(p for label, p in pts.items() if label.startswith("two passes"))
    assert host.family == "cascade" and host.params["finish"] == "host"
    assert (host.params["block_size"], host.params["elements_per_thread"],
            host.params["grid_cap"]) == (two.params["block_size"],
                                         two.params["elements_per_thread"], two.params["grid_cap"])
    opts = {"sizes": [], "dtypes": [], "block_sizes": [], "passes_sizes": PASSES_SIZES}
    assert sorted(j.n for j in plan(opts, limits) if j.point == host) == PASSES_SIZES


def test_cascading_replay_reports_the_measured_optimum_and_compares_devices(cli, tmp_path,
                                                                           two_dbs):
    a, b = two_dbs
    out = tmp_path / "report"
    report, text = run_cascading(cli, out, "--replay", a, "--replay", b, *SMALL)
    assert [d["device"] for d in report["devices"]] == [SYNTHETIC_DEVICE["name"],
                                                        OTHER_DEVICE["name"]]
    for d, peak in zip(report["devices"], (64, 512)):
        for w in d["sweep"]:
            o = w["optimum"]
            ok = [p for p in w["points"] if p["status"] == "ok"]
            assert o["gbps"] == max(p["gbps"] for p in ok)  # the optimum is the data's
            assert o["block_size"] == 256
            assert f"{o['gbps']:.1f}" in text and f"{w['brent']['gbps']:.1f}" in text
        # the finding states the optimum found in the data, not a typed one
        big = max(d["sweep"], key=lambda w: (w["n"], w["dtype"] == "float32"))
        assert f"optimum is {big['optimum']['effective']:.0f} elements per thread" in text
    assert "## Across devices" in text
    for name in ("cascading_compare.png", "cascading_synthetic_test_device_not_a_measurement.png",
                 "passes_synthetic_test_device_not_a_measurement.png")[:3 * HAS_MATPLOTLIB]:
        assert (out / name).stat().st_size > 0


def test_passes_table_holds_the_database_times_and_launches(cli, tmp_path, two_dbs):
    a, _ = two_dbs
    out = tmp_path / "report"
    report, text = run_cascading(cli, out, "--replay", a, *SMALL)
    store = _core.Store(str(a), True)
    dev = store.devices()[0]["id"]
    rows = {(r["variant_label"], r["launch_label"], r["n"]): r
            for r in store.history(dev, "int32", "sum", None)}
    store.close()
    for k, p in enumerate(report["devices"][0]["passes"]):
        assert len(p["cells"]) == 2
        for c in p["cells"]:
            r = rows[(p["variant"], p["launch"], c["n"])]
            assert c["median_s"] == r["median_s"] and c["launches"] == k + 1
            assert f"{r['median_s'] * 1e6:.2f} ({k + 1})" in text
    assert "Fastest way to combine" in text


def _measurements(db: Path) -> dict[int, dict]:
    """Every row of rt_measurements by id, read with sqlite3 alone (not through the code
    under test)."""
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        con.row_factory = sqlite3.Row
        return {r["id"]: dict(r) for r in con.execute(
            "SELECT m.id, m.status, m.median_s, m.gbps, m.launch_label, v.label AS variant, "
            "w.n, w.dtype FROM rt_measurements m JOIN rt_variants v ON v.id = m.variant_id "
            "JOIN rt_workloads w ON w.id = m.workload_id")}


def _plain(recording: Path, folder: Path) -> Path:
    import lzma
    import shutil

    out = folder / recording.name[: -len(".xz")]
    with lzma.open(recording, "rb") as fin, out.open("wb") as fout:
        shutil.copyfileobj(fin, fout)
    return out


def _check_cascading_report_holds_database_numbers(report: dict, text: str,
                                                   rows_of: dict[str, dict[int, dict]]) -> int:
    """Every point the report names is the database row of that id (same point, workload,
    median, GB/s), every number the tables print is such a row's, the optimum is the best
    verified row, and the host finish's cost is the difference of two printed rows."""
    checked = 0
    for d in report["devices"]:
        rows = rows_of[d["source"]]
        for w in d["sweep"]:
            for p in w["points"]:
                r = rows[p["id"]]
                assert (r["variant"], r["launch_label"], r["n"], r["dtype"]) == (
                    p["variant"], p["launch"], w["n"], w["dtype"])
                assert (r["status"], r["median_s"], r["gbps"]) == (p["status"], p["median_s"],
                                                                   p["gbps"])
                checked += 1
            ok = [rows[p["id"]]["gbps"] for p in w["points"] if p["status"] == "ok"]
            if not ok:
                continue
            assert w["optimum"]["gbps"] == max(ok)
            for key in ("optimum", "brent", "harris"):
                if w[key]:
                    assert f"{rows[w[key]['id']]['gbps']:.1f}" in text, (key, w["dtype"], w["n"])
            sh = w["shrink"]
            for key in ("last_full", "first_short", "widest"):
                c = sh[key]
                if c:
                    assert (c["grid"] >= sh["sm_count"]) == (key == "last_full") or \
                        key == "widest"
                    assert (f"{_fmt_eff(c['effective'])} ({c['grid']}): "
                            f"{rows[c['id']]['gbps']:.1f}") in text
        for p in d["passes"]:
            for c in p["cells"]:
                r = rows[c["id"]]
                assert (r["variant"], r["launch_label"], r["n"]) == (p["variant"], p["launch"],
                                                                     c["n"])
                assert r["median_s"] == c["median_s"]
                if c["status"] == "ok":
                    assert f"{r['median_s'] * 1e6:.2f} ({c['launches']})" in text
                    checked += 1
        host = next((p for p in d["passes"] if p["finish"] == "host"), None)
        if host:
            for c in host["cells"]:
                best = min(x["median_s"] for q in d["passes"] if q["family"] == "tunable"
                           for x in q["cells"] if x["n"] == c["n"] and x["status"] == "ok")
                assert (f"+{(c['median_s'] - best) * 1e6:.1f} µs "
                        f"(×{c['median_s'] / best:.2f})") in text
    return checked


def _fmt_eff(v: float) -> str:
    return f"{v:.0f}" if v >= 10 else f"{v:.2f}"


def test_the_report_says_where_the_grid_shrinks_and_what_a_host_finish_costs(cli, tmp_path,
                                                                            two_dbs):
    a, _ = two_dbs
    out = tmp_path / "report"
    report, text = run_cascading(cli, out, "--replay", a, *SMALL)
    assert _check_cascading_report_holds_database_numbers(
        report, text, {str(a): _measurements(a)}) > 10
    d = report["devices"][0]
    assert "Where the grid shrinks below one block per SM" in text
    for w in d["sweep"]:
        sh = w["shrink"]
        assert sh["block_size"] == w["optimum"]["block_size"]
        assert sh["first_short"]["grid"] < d["sm_count"] <= sh["last_full"]["grid"]
        assert sh["widest"]["effective"] == max(p["effective"] for p in w["points"]
                                                if p["block_size"] == sh["block_size"])
    assert "The host finish against the fastest device-side finish" in text
    # the fixture's studies name no command: the run is still listed, by GPU and family
    assert f"on {SYNTHETIC_DEVICE['uuid']}" in text and "(by family:" in text


@pytest.mark.skipif(not CASCADING_RECORDINGS, reason="no GPU recording of the cascading "
                    "experiment committed yet "
                    "(tests/data/recorded/experiments/<device>_cascading.db.xz)")
def test_committed_cascading_recordings_replay_to_their_numbers(cli, tmp_path):
    out = tmp_path / "report"
    args = [a for p in CASCADING_RECORDINGS for a in ("--replay", p)]
    report, text = run_cascading(cli, out, *args)
    rows_of = {str(p): _measurements(_plain(p, tmp_path)) for p in CASCADING_RECORDINGS}
    assert _check_cascading_report_holds_database_numbers(report, text, rows_of) > 100
    for d in report["devices"]:
        # each measuring run is named with its command and GPU, and its rows add up
        assert d["runs"] and all(r["command"] for r in d["runs"])
        assert sum(sum(r["status"].values()) for r in d["runs"]) == len(rows_of[d["source"]])
        for r in d["runs"]:
            assert f"`{r['command']}` on {r['gpu']}" in text
        # what the recording lacks (rows this version plans that it predates) is said, not
        # left blank: each missing point is in the list, and no listed point has a row
        listed = {(m["dtype"], m["n"], m["variant"], m["launch"]) for m in d["missing"]["sweep"]}
        held = {(w["dtype"], w["n"], p["variant"], p["launch"]) for w in d["sweep"]
                for p in w["points"]}
        assert not listed & held
        assert (f"{len(listed)} sweep point(s)" in text) == bool(listed)
        for m in d["missing"]["passes"]:
            cells = next(p for p in d["passes"] if p["protocol"] == m["protocol"])["cells"]
            assert not {c["n"] for c in cells} & set(m["n"])
            assert m["protocol"] in text


RESEARCH = REPO / "docs" / "research"


def _without_command_line(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("- Command: ")]


@pytest.mark.skipif(not CASCADING_RECORDINGS or not (RESEARCH / "cascading").is_dir(),
                    reason="no committed cascading recording or report")
def test_the_committed_cascading_report_is_the_one_the_recordings_rebuild(cli, tmp_path,
                                                                         monkeypatch):
    """docs/research/cascading/report.md is what --replay of the committed recordings writes
    (all but the line naming the replay command and its date): no number in it was typed, and
    none is stale after a recording changed."""
    committed = (RESEARCH / "cascading" / "report.md").read_text()
    replays = re.findall(r"--replay (\S+)", committed.splitlines()[2])
    assert sorted(replays) == sorted(str(p.relative_to(REPO)) for p in CASCADING_RECORDINGS)
    out = tmp_path / "report"
    args = [a for r in replays for a in ("--replay", r)]
    monkeypatch.chdir(REPO)  # the report names each database as the command line gave it
    code, _, err = cli("experiment", "cascading", *args, "--out", out)
    assert code == 0, err
    assert _without_command_line((out / "report.md").read_text()) == \
        _without_command_line(committed)


@pytest.mark.skipif(not (RESEARCH / "cascading" / "report.json").is_file(),
                    reason="no committed cascading report")
def test_research_readme_numbers_are_in_the_cascading_report():
    """Every number in docs/research/README.md's cascading findings is the value that
    cascading_findings.py computes from report.json for the phrase stating it; report.json
    holds what report.md prints (each optimum's GB/s, each passes cell), and report.md is what
    the recordings rebuild (the test above). A number no phrase accounts for fails too; only
    sizes (2^k), log2 n, the seed's 1024–4096 band and a cited results folder may stand alone."""
    from cascading_findings import phrases

    readme = (RESEARCH / "README.md").read_text()
    block = readme.split("<!-- cascading findings")[1].split("<!-- end cascading findings")[0]
    block = " ".join(block.split("-->", 1)[1].split())
    data = json.loads((RESEARCH / "cascading" / "report.json").read_text())
    md = (RESEARCH / "cascading" / "report.md").read_text()
    for d in data["devices"]:
        lines = md.split(f"## {d['device']}\n")[1].split("\n## ")[0].splitlines()
        for w in d["sweep"]:
            row = next(line for line in lines
                       if line.startswith(f"| {w['dtype']} | 2^{w['n'].bit_length() - 1} | "))
            assert f"| {w['optimum']['gbps']:.1f} |" in row, row
        for p in d["passes"]:
            row = next(line for line in lines if line.startswith(f"| {p['protocol']} | "))
            assert all(f"{c['median_s'] * 1e6:.2f} ({c['launches']})" in row
                       for c in p["cells"]), row
    expected = phrases(data)
    missing = [p for p in expected if p not in block]
    assert not missing, missing
    rest = block
    for p in expected:
        rest = rest.replace(p, " ")
    rest = re.sub(r"2\^\d+|log2 n|1024–4096|docs/results/[\w.-]+/", " ", rest)
    # a number, not a digit in a name (H200, int32, HBM3e)
    assert not re.findall(r"(?<![A-Za-z_\d])\d+(?:\.\d+)?", rest), rest
