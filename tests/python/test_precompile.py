"""_core.precompile: parallel NVRTC compiles into the process-wide cache that evaluate uses.
NVRTC needs no GPU, so these compile for real (sm_90)."""

from __future__ import annotations

from pathlib import Path

import pytest

import reducetune
from reducetune import _core
from reducetune.evaluate.gpu import WorkerClient
from reducetune.tuning.loop import variant_labels
from reducetune.errors import InvalidConfiguration

TEMPLATES = Path(__file__).resolve().parents[1] / "data" / "templates"


def space(**restrict):
    return reducetune.Space("tunable", "float32", "sum", reducetune.limits_for_arch("sm_90"),
                            restrict)


def three_points() -> list[reducetune.Point]:
    """Three points of three different variants, not compiled by any other test."""
    s = space(block_size=["512"], warp=["shuffle"], unroll=["2"])
    by_label = {p.variant_label: p for p in s.points()}
    return list(by_label.values())[:3]


def test_precompile_compiles_then_serves_from_the_cache_evaluate_uses():
    points = three_points()
    first = _core.precompile(points, "sm_90")
    assert (first["requested"], first["compiled"], first["cached"], first["failed"]) == (3, 3, 0, 0)
    assert first["failures"] == {} and first["seconds"] > 0 and first["threads"] >= 1
    # the plain form (what crosses the worker's pipe), a variant given twice
    again = _core.precompile([p.to_dict() for p in points + points[:1]], "sm_90", threads=1)
    assert (again["requested"], again["compiled"], again["cached"]) == (3, 0, 3)
    assert again["threads"] == 1
    # compile_points goes through the same shared compiler as evaluate: already there.
    served = _core.compile_points("tunable", "float32", "sum", 90, [p.params for p in points])
    assert [r["cached"] for r in served] == [True] * 3


def plain(family: str, **params) -> dict:
    return {"family": family, "dtype": "float32", "op": "sum", "params": params}


def test_an_unknown_family_value_or_architecture_is_a_clear_error():
    with pytest.raises(InvalidConfiguration, match="unknown template family 'nope'"):
        _core.precompile([plain("nope", block_size=128)], "sm_90")
    with pytest.raises(InvalidConfiguration, match="99"):
        _core.precompile([plain("tunable", block_size=99)], "sm_90")
    # labels are no longer taken (issue 23: typed points only)
    with pytest.raises(InvalidConfiguration, match="takes Points or Point.to_dict"):
        _core.precompile(["tunable.float32.sum.bs_128"], "sm_90")
    with pytest.raises(InvalidConfiguration, match="unknown architecture 'sm_11'"):
        _core.precompile([], "sm_11")


def test_a_variant_that_does_not_compile_is_reported_not_raised():
    try:
        _core.set_templates(str(TEMPLATES))
        r = _core.precompile([plain("broken", block_size=128)], "sm_90", threads=1)
    finally:
        _core.set_templates("")
    assert (r["compiled"], r["failed"]) == (0, 1)
    assert "this_identifier_does_not_exist" in r["failures"]["broken.float32.sum.bs_128"]


def test_the_worker_process_precompiles():
    labels = variant_labels(space(block_size=["64"], warp=["shuffle"], unroll=["1"],
                                  vec=["1"], block_strategy=["tree"]))
    points = {p.variant_label: p for p in space(block_size=["64"], warp=["shuffle"], unroll=["1"],
                                                vec=["1"], block_strategy=["tree"]).points()}
    w = WorkerClient(timeout_s=300)
    try:
        reply = w.call("precompile", points=[p.to_dict() for p in points.values()],
                       arch="sm_90")
        assert reply["ok"], reply
        assert reply["result"]["compiled"] == len(labels) == len(points) > 0
    finally:
        w.close()
