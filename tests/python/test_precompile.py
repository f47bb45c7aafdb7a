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
    labels = [p.variant_label for p in points]
    first = _core.precompile(labels, "sm_90")
    assert (first["requested"], first["compiled"], first["cached"], first["failed"]) == (3, 3, 0, 0)
    assert first["failures"] == {} and first["seconds"] > 0 and first["threads"] >= 1
    again = _core.precompile(labels + labels[:1], "sm_90", threads=1)
    assert (again["requested"], again["compiled"], again["cached"]) == (3, 0, 3)
    assert again["threads"] == 1
    # compile_points goes through the same shared compiler as evaluate: already there.
    served = _core.compile_points("tunable", "float32", "sum", 90, [p.params for p in points])
    assert [r["cached"] for r in served] == [True] * 3


def test_an_unknown_label_or_architecture_is_a_clear_error():
    with pytest.raises(InvalidConfiguration, match="unknown template family 'nope'"):
        _core.precompile(["nope.float32.sum.bs_128"], "sm_90")
    with pytest.raises(InvalidConfiguration, match="expected 6"):
        _core.precompile(["tunable.float32.sum.bs_99"], "sm_90")
    with pytest.raises(InvalidConfiguration, match="unknown architecture 'sm_11'"):
        _core.precompile([], "sm_11")


def test_a_variant_that_does_not_compile_is_reported_not_raised():
    try:
        _core.set_templates(str(TEMPLATES))
        r = _core.precompile(["broken.float32.sum.bs_128"], "sm_90", threads=1)
    finally:
        _core.set_templates("")
    assert (r["compiled"], r["failed"]) == (0, 1)
    assert "this_identifier_does_not_exist" in r["failures"]["broken.float32.sum.bs_128"]


def test_the_worker_process_precompiles():
    labels = variant_labels(space(block_size=["64"], warp=["shuffle"], unroll=["1"],
                                  vec=["1"], block_strategy=["tree"]))
    w = WorkerClient(timeout_s=300)
    try:
        reply = w.call("precompile", variant_labels=labels, arch="sm_90")
        assert reply["ok"], reply
        assert reply["result"]["compiled"] == len(labels) > 0
    finally:
        w.close()
