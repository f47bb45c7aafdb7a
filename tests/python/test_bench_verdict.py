"""``reducetune bench``'s verdict against CUB: ahead, a tie, within the two medians' noise (nvbench's
relative standard deviation, combined in quadrature), or behind."""

from __future__ import annotations

from reducetune.cli.bench import verdict


def _m(median_us: float, noise: float, status: str = "ok") -> dict:
    return {"status": status, "median_s": median_us * 1e-6, "rel_stddev": noise}


def test_ahead_within_noise_and_behind():
    assert verdict(_m(4.0, 0.05), _m(4.1, 0.05)) == "ahead"
    assert verdict(_m(4.1, 0.05), _m(4.1, 0.05)) == "tie"  # neither ahead nor behind
    assert verdict(_m(4.1, 0.0), _m(4.1, 0.0)) == "tie"  # not even with no noise at all
    # 0.19 us behind at 4.38 vs 4.19 with 4.5 % and 4 % noise: sqrt(0.197^2 + 0.168^2) = 0.26
    assert verdict(_m(4.38, 0.045), _m(4.19, 0.04)) == "within noise"
    assert verdict(_m(4.38, 0.01), _m(4.19, 0.01)) == "behind"  # quiet medians: a real gap
    assert verdict(_m(4.38, 0.0), _m(4.19, 0.0)) == "behind"


def test_nothing_to_compare_gives_no_verdict():
    assert verdict({"status": "none"}, _m(4.0, 0.05)) == ""
    assert verdict(_m(4.0, 0.05), {"status": "failed"}) == ""
    assert verdict(_m(4.0, 0.05), {"status": "ok", "median_s": None}) == ""
