"""The search-efficiency experiment runs in replay mode and writes its report (synthetic)."""

from __future__ import annotations

import json

import pytest


def test_search_efficiency_writes_markdown_png_and_curves(cli, tmp_path, synthetic_db):
    pytest.importorskip("matplotlib")
    out = tmp_path / "se"
    code, _, err = cli("experiment", "search-efficiency", "--replay", synthetic_db,
                       "--n", "2^10", "--strategies", "tpe", "random", "--seeds", "2",
                       "--max-evals", "15", "--restrict", "warp=shuffle,redux",
                       "--restrict", "block_size=128,256", "--restrict", "unroll=1,4",
                       "--restrict", "vec=1,4", "--restrict", "finish=two_pass,atomic",
                       "--restrict", "elements_per_thread=4,16,64",
                       "--restrict", "grid_cap=0,4", "--out", out)
    assert code == 0, err
    report = json.loads((out / "curves.json").read_text())
    curve = report["sizes"][str(1 << 10)]["strategies"]["tpe"]["mean"]
    assert len(curve) == 15 and all(0 <= x <= 1 for x in curve)
    assert curve == sorted(curve)  # best-so-far never gets worse
    assert (out / "curves.png").stat().st_size > 0
    assert "tpe" in (out / "report.md").read_text()
    entry = report["sizes"][str(1 << 10)]
    for s in ("tpe", "random"):
        ks = entry["strategies"][s]["k_to_target"]  # per seed: evaluations to 0.98, or null
        assert len(ks) == 2 and all(k is None or 1 <= k <= 15 for k in ks)
        fr = entry["strategies"][s]["mean"]
        for k in ks:
            if k is not None:
                assert entry["strategies"][s]["min"][k - 1] <= fr[k - 1]
    assert 1 <= entry["points_within_target"] <= entry["valid_points"]
    assert 0 <= entry["random_chance_at_k_5pct"] <= 1


def test_search_efficiency_counts_only_the_points_a_tune_proposes(cli, tmp_path, synthetic_db):
    """A restriction that leaves finish free admits atomic points (nondeterministic for
    float32), which a tune never proposes and a grid sweep never records: the space's size,
    its 5% and the optimum are those of the deterministic, unflagged points (synthetic)."""
    import reducetune
    from reducetune.evaluate.replay import ReplayEvaluator

    restrict = {"warp": ["shuffle"], "block_size": ["128", "256"], "unroll": ["1", "4"],
                "vec": ["1", "4"], "finish": ["two_pass", "atomic"],
                "elements_per_thread": ["4", "16", "64"], "grid_cap": ["0", "4"]}
    ev = ReplayEvaluator(synthetic_db)
    try:
        space = reducetune.Space("tunable", "float32", "sum", ev.limits, restrict)
        table = ev.table("float32", "sum", 1 << 10)
    finally:
        ev.close()
    selected = {p.labels for p in space.points() if space.selected(p)}
    assert 0 < len(selected) < len(space.points())  # the atomic half is valid, not selected
    out = tmp_path / "se"
    args = [a for k, v in restrict.items() for a in ("--restrict", f"{k}={','.join(v)}")]
    code, _, err = cli("experiment", "search-efficiency", "--replay", synthetic_db,
                       "--n", "2^10", "--strategies", "random", "--seeds", "1",
                       "--max-evals", "5", "--out", out, *args)
    assert code == 0, err
    entry = json.loads((out / "curves.json").read_text())["sizes"][str(1 << 10)]
    assert entry["valid_points"] == len(selected)
    assert entry["k_5pct"] == max(1, int(len(selected) * 0.05))
    assert entry["recorded_fraction"] == 1.0
    assert entry["optimum_s"] == min(r["median_s"] for k, r in table.items()
                                     if r["status"] == "ok" and k in selected)
