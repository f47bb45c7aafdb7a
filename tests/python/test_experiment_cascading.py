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
from reducetune._evaluators import CEILING_WORKLOAD, workload

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
    from reducetune.experiments._xp_db import write_fact
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


def test_the_grid_the_sweep_assumes_is_the_tunable_familys():
    """cascading.tunable_grid restates the family's grid expression (the driver has no binding
    for a point's grid): if the declaration changes, this fails until both agree again."""
    decl = json.loads((REPO / "kernel_templates" / "tunable" / "family.json").read_text())
    assert re.sub(r"\s+", " ", decl["grid"]) == (
        "grid_cap == 0 ? ceil_div(n, block_size * elements_per_thread) : "
        "min(ceil_div(n, block_size * elements_per_thread), grid_cap * sm_count)")


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
    """The same grid expression (tunable_grid restates it) and the same pass kernel (the C++
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
    code, _, err = cli("experiment", "cascading", "--replay", a, "--replay", b, "--out", out,
                       *SMALL)
    assert code == 0, err
    report = json.loads((out / "report.json").read_text())
    text = (out / "report.md").read_text()
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
    code, _, err = cli("experiment", "cascading", "--replay", a, "--out", out, *SMALL)
    assert code == 0, err
    report = json.loads((out / "report.json").read_text())
    text = (out / "report.md").read_text()
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


@pytest.mark.skipif(not CASCADING_RECORDINGS, reason="no GPU recording of the cascading "
                    "experiment committed yet "
                    "(tests/data/recorded/experiments/<device>_cascading.db.xz)")
def test_committed_cascading_recordings_replay_to_their_numbers(cli, tmp_path):
    out = tmp_path / "report"
    args = [a for p in CASCADING_RECORDINGS for a in ("--replay", p)]
    code, _, err = cli("experiment", "cascading", *args, "--out", out)
    assert code == 0, err
    report = json.loads((out / "report.json").read_text())
    text = (out / "report.md").read_text()
    for d in report["devices"]:
        for w in d["sweep"]:
            ok = [p for p in w["points"] if p["status"] == "ok"]
            if ok:
                assert w["optimum"]["gbps"] == max(p["gbps"] for p in ok)
                assert f"{w['optimum']['gbps']:.1f}" in text
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
