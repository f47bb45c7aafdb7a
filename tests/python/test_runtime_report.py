"""The runtime benchmark's report (issue 13) is computed from its JSON: the ratios, the
targets' verdicts and the tables. The result dicts here are SYNTHETIC fixtures (numbers
chosen to land on each side of a target), never committed as measurements."""

from __future__ import annotations

import math
from pathlib import Path

from reducetune.benchmarks import _runtime_report as rep


def _row(n: int, app: dict[str, float], tuned_s: float, cub_s: float, pct: float = 50.0,
         correct: bool = True) -> dict:
    return {"dtype": "float32", "op": "sum", "n": n, "correct": correct,
            "choice": {"source": "tuned", "variant": "tunable.float32.sum.bs_256", "launch":
                       "ept_16.cap_0", "launches": 1},
            "app_s": app,
            "protocol": {"tuned": {"status": "ok", "median_s": tuned_s, "gbps": 1.0,
                                   "pct_of_peak": pct},
                         "cub": {"status": "ok", "median_s": cub_s}}}


def _result(rows: list[dict]) -> dict:
    return {"device": {"name": "fixture GPU", "uuid": "GPU-x"}, "ceiling_gbps": 3000.0,
            "samples": 10, "rows": rows, "versions": {"torch": "t", "cupy": "c"},
            "date": "2026-11-23", "command": "fixture"}


APP = {"reducer": 8e-6, "cub": 12e-6, "reduce_torch": 10e-6, "torch": 15e-6,
       "reduce_cupy": 11e-6, "cupy": 30e-6}


def test_ratios_are_the_other_time_over_reducetunes():
    r = rep.ratios(_row(1 << 16, APP, 5e-6, 6e-6))
    assert math.isclose(r["app_x_cub"], 1.5)
    assert math.isclose(r["protocol_x_cub"], 1.2)
    assert math.isclose(r["x_torch"], 1.5)
    assert math.isclose(r["x_cupy"], 30 / 11)


def test_targets_met_and_missed_are_told_apart():
    good = [_row(1 << k, APP, 5e-6, 6e-6, pct=96.0) for k in (14, 18, 22, 30)]
    verdicts = {t: ok for t, _, ok in rep.targets(_result(good))}
    assert all(verdicts.values()), verdicts
    slow = dict(APP, reducer=13e-6)  # 0.92 x CUB as applications call it
    bad = good[:2] + [_row(1 << 22, slow, 5e-6, 6e-6), _row(1 << 30, APP, 5e-6, 4e-6,
                                                            pct=90.0, correct=False)]
    verdicts = {t.split(",")[0].split(" (")[0]: ok for t, _, ok in rep.targets(_result(bad))}
    assert verdicts["every answer correct"] is False
    assert verdicts["Reducer ≥ 1.0 × CUB at every n"] is False
    assert not all(verdicts.values())
    measured = {t: m for t, m, _ in rep.targets(_result(bad))}
    assert any(m == "min 0.923" for m in measured.values()), measured
    assert any(m == "90.0 %" for m in measured.values()), measured


def test_the_report_holds_the_numbers_of_the_json(tmp_path: Path):
    rows = [_row(1 << 14, APP, 5e-6, 6e-6), _row(1 << 30, APP, 1.4e-3, 1.5e-3, pct=93.21)]
    rep.write(_result(rows), tmp_path / "bench")
    md = (tmp_path / "bench.md").read_text()
    assert "\n| 2^14 | tuned: " in md and "\n| 2^30 | tuned: " in md
    assert "93.2" in md and "1400.00" in md and "1.50" in md  # % peak, µs, × CUB
    assert "**no**" in md  # 93.2 % < 95 %
    assert (tmp_path / "bench.png").stat().st_size > 10_000


def test_contenders_are_timed_in_rounds():
    """A host that drifts (each sample slower than the last) must not decide a ratio: two
    identical contenders get the same median; timed one after the other they would differ
    by the whole run's drift. (The rounds' orders: tests/python/test_bench_rounds.py.)"""
    from reducetune.benchmarks.runtime import interleaved_medians

    clock = {"t": 0.0}
    order: list[str] = []

    def drifting(name: str):
        def once() -> float:
            clock["t"] += 1.0
            order.append(name)
            return clock["t"]
        return once

    med = interleaved_medians({"a": drifting("a"), "b": drifting("b"), "c": drifting("c")}, 99)
    assert max(med.values()) - min(med.values()) <= 2.0, med
    rounds = [order[9 + 3 * i: 12 + 3 * i] for i in range(3)]  # after 3 warm-ups each
    assert all(sorted(r) == ["a", "b", "c"] for r in rounds)
