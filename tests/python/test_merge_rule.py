"""``reducetune db merge`` keeps the better row of a key, whichever file is merged into which.

The rule (db/README.md, "Merge"): ok beats not ok; then the lower relative spread when the two
differ by more than the margin; then more samples; then the newer. Under the old rule (more
samples win; baselines already present kept) the noisy row, the failed row with more samples
and the target file's baseline would have won. SYNTHETIC rows, not measurements.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from reducetune import _core

from conftest import SYNTHETIC_DEVICE

N = 1 << 20
T = {"a": 1e-5, "b": 2e-5}  # each side's median: it tells which row a merged file holds

# case: (side a, side b, winner); a side is (status, relative spread, samples, created_at).
CASES = {
    "lower noise beats more samples": (("ok", 0.005, 10, "2026-01-01T00:00:00.000Z"),
                                       ("ok", 0.05, 200, "2026-02-01T00:00:00.000Z"), "a"),
    "ok beats failed": (("ok", 0.005, 10, "2026-01-01T00:00:00.000Z"),
                        ("failed", 0.001, 50, "2026-02-01T00:00:00.000Z"), "a"),
    "equal: the newer": (("ok", 0.005, 10, "2026-02-01T00:00:00.000Z"),
                         ("ok", 0.005, 10, "2026-03-01T00:00:00.000Z"), "b"),
}
# The CUB baseline: lower noise against more samples and newer.
CUB = ((0.003, 10, "2026-01-01T00:00:00.000Z"), (0.04, 100, "2026-02-01T00:00:00.000Z"), "a")


def _samples(t: float, spread: float, count: int) -> list[float]:
    """count samples around t whose relative standard deviation is about spread."""
    return [t * (1 + spread if i % 2 == 0 else 1 - spread) for i in range(count)]


def _workload() -> dict:
    return {"dtype": "float32", "op": "sum", "n": N, "data_pattern": "uniform", "seed": 0}


def _points() -> dict[str, object]:
    """One distinct point of the tunable family per case."""
    from reducetune._space import Space, limits_for_arch

    space = Space("tunable", "float32", "sum", limits_for_arch("sm_90"),
                  {"block_size": ["64", "128", "256"], "unroll": ["1"], "vec": ["1"],
                   "warp": ["shuffle"], "block_strategy": ["tree"], "finish": ["two_pass"],
                   "elements_per_thread": ["4"], "grid_cap": ["0"]})
    points = space.points()
    assert len(points) >= len(CASES)
    return dict(zip(CASES, points))


def _write_side(path: Path, side: str) -> None:
    i = 0 if side == "a" else 1
    store = _core.Store(str(path))
    dev = store.register_device(SYNTHETIC_DEVICE)
    versions = {"template_hash": _core.template_hash("tunable"), "driver_version": 13000,
                "toolkit_version": 13000}
    for case, point in _points().items():
        status, spread, count, created = CASES[case][i]
        store.record_measurement(point, {
            "device_id": dev, **_workload(), **versions, "status": status,
            "samples_s": _samples(T[side], spread, count), "created_at": created,
            "reason": "" if status == "ok" else "synthetic failure"})
    spread, count, created = CUB[i]
    store.record_baseline({"device_id": dev, **_workload(), "kind": "cub", "gbps": 1.0,
                           "samples_s": _samples(T[side], spread, count),
                           "driver_version": 13000, "toolkit_version": 13000})
    store.close()
    with sqlite3.connect(path) as con:  # record_baseline stamps now; the rule needs these ages
        con.execute("UPDATE rt_baselines SET created_at = ?", (created,))
    con.close()


def _held(path: Path) -> dict[str, str]:
    """Which side's row each key holds: 'a' or 'b', by its median."""
    side = {round(t, 12): s for s, t in T.items()}
    store = _core.Store(str(path), True)
    dev = store.devices()[0]["id"]
    rows = {r["variant_label"]: r for r in store.history(dev, "float32", "sum", N)}
    held = {case: side[round(rows[p.variant_label]["median_s"], 12)]
            for case, p in _points().items()}
    held["cub baseline"] = side[round(store.find_baseline(dev, _workload(), "cub")["median_s"],
                                      12)]
    store.close()
    return held


def test_merge_keeps_the_better_row_in_either_direction(tmp_path, cli):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    _write_side(a, "a")
    _write_side(b, "b")
    a_into_b, b_into_a = tmp_path / "a_into_b.db", tmp_path / "b_into_a.db"
    shutil.copy(b, a_into_b)
    shutil.copy(a, b_into_a)

    outs = {}
    for target, other in ((a_into_b, a), (b_into_a, b)):
        code, out, err = cli("db", "merge", "--db", target, other)
        assert code == 0, err
        assert "0 inserted" in out
        outs[target] = out
    # A's CUB baseline wins: it replaces B's in a_into_b, and B's is not taken into b_into_a
    assert "0 baselines inserted, 1 replaced" in outs[a_into_b]
    assert "0 baselines inserted, 0 replaced" in outs[b_into_a]

    expected = {case: winner for case, (_, _, winner) in CASES.items()}
    expected["cub baseline"] = CUB[2]
    assert _held(a_into_b) == expected
    assert _held(b_into_a) == expected


def test_merge_help_states_the_rule(cli, capsys):
    with pytest.raises(SystemExit):
        cli("db", "merge", "--help")
    text = " ".join(capsys.readouterr().out.split())
    for words in ("ok beats failed", "lower relative spread", "more samples", "the newer"):
        assert words in text
