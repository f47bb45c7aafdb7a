"""Racing on the GPU (issue 25; skipped without one): the same grid of 16 float32-sum points
at 2^24 swept twice, with racing (the default 1.5) and with ``--race off``. Some points in
the corner are far slower than its best (32-thread blocks capped at one block per SM), so the
raced sweep stores some with fewer than 10 samples and the reason "outpaced"; the unraced
sweep none. Both sweeps find the same best within noise, and every point the raced sweep cut
is, fully measured, far slower than the best: racing lost no best."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import NO_GPU
from reducetune.evaluate.base import MIN_SAMPLES, OUTPACED
from reducetune.store.measurements import measurement_rows

pytestmark = pytest.mark.skipif(NO_GPU is not None, reason=NO_GPU or "")

# 2 x 2 x 2 x 2 = 16 points; the tunable family's "good" preset (the study's first point) is one
CORNER = {"block_size": "32,256", "grid_cap": "0,1", "vec": "1,4", "unroll": "1,4",
          "elements_per_thread": "16", "warp": "shuffle", "block_strategy": "warp_partials",
          "finish": "two_pass"}


def _sweep(cli, db: Path, race: str) -> dict[tuple[str, str], dict]:
    """Every point of the corner measured once, racing as asked: its ok rows by labels."""
    restrict = [a for k, v in CORNER.items() for a in ("--restrict", f"{k}={v}")]
    code, _, err = cli("tune", "--dtype", "float32", "--op", "sum", "--sizes", "2^24",
                       "--strategy", "grid", *restrict, "--max-evals", "16",
                       "--sample-time", "50ms", "--race", race, "--priors", "off",
                       "--db", db, "--quiet")
    assert code == 0, err
    rows = [r for r in measurement_rows(db) if r["status"] == "ok"]
    return {(r["variant_label"], r["launch_label"]): r for r in rows}


def test_racing_cuts_slow_points_short_and_keeps_the_best(cli, tmp_path: Path) -> None:
    raced = _sweep(cli, tmp_path / "raced.db", "1.5")
    full = _sweep(cli, tmp_path / "full.db", "off")
    assert set(raced) == set(full) and len(full) == 16, "both sweeps measured the corner"
    cut = {k for k, r in raced.items() if r["reason"].startswith(OUTPACED)}
    assert cut, "no point of the corner was outpaced"
    assert all(raced[k]["sample_count"] < MIN_SAMPLES for k in cut)
    assert not any(r["reason"].startswith(OUTPACED) for r in full.values())
    assert all(r["sample_count"] >= MIN_SAMPLES for r in full.values())

    best_raced = min(r["median_s"] for r in raced.values())
    best_full = min(r["median_s"] for r in full.values())
    assert best_raced == pytest.approx(best_full, rel=0.03), "the two sweeps' bests differ"
    # fully measured, every point the raced sweep cut is far from the best: none could win
    for k in cut:
        assert full[k]["median_s"] > 1.2 * best_full, k
    print(f"racing: {len(cut)} of 16 points cut; best {best_raced * 1e6:.2f} us raced, "
          f"{best_full * 1e6:.2f} us in full")
