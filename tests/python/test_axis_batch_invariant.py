"""The axis call's opt-in batch_invariant level (issue 26, item 3): a row's result does not
depend on how many rows are reduced with it. Without a GPU: the level is named on
AxisReducer and reduce(), run_to_run by default, and anything else is refused in one line;
the bound rule forwards it (the rule's own tests: tests/cpp/runtime/test_axis_batch_invariant.cpp).
On a GPU: the same row data reduced in batches of 1, 7, 4,096 and 2^20 rows gives bit-identical
rows (float32 and bfloat16 sums), for row lengths on both sides of the rule's boundaries.
GPU tests skip with their reason where there is no GPU."""

from __future__ import annotations

import pytest

import reducetune
from reducetune import InvalidConfiguration, _core
from conftest import NO_GPU


BATCHES = (1, 7, 4096, 1 << 20)
# both sides of each row boundary of the rule (8, 256, 2^14, 2^18 elements)
ROW_LENGTHS = (8, 9, 256, 257, 1 << 14, (1 << 14) + 1, 1 << 18, (1 << 18) + 1)
MOST_ELEMENTS = (1 << 30) + (1 << 12)  # 4 GiB of float32: 4096 rows of 2^18 + 1


def test_the_level_is_run_to_run_unless_asked():
    assert reducetune.AxisReducer("float32", "sum").determinism == "run_to_run"
    asked = reducetune.AxisReducer("bfloat16", "sum", determinism="batch_invariant")
    assert asked.determinism == "batch_invariant"


@pytest.mark.parametrize("bad", ["", "batch-invariant", "Batch_Invariant", "nondeterministic",
                                 None, 1, True])
def test_an_unknown_level_is_refused_in_one_line(bad):
    with pytest.raises(InvalidConfiguration) as e:
        reducetune.AxisReducer("float32", "sum", determinism=bad)
    assert "batch_invariant" in str(e.value) and "\n" not in str(e.value)


def test_reduce_refuses_an_unknown_level_and_a_level_without_an_axis():
    np = pytest.importorskip("numpy")
    with pytest.raises(InvalidConfiguration, match="run_to_run"):
        reducetune.reduce(np.ones((4, 4), np.float32), axis=1, determinism="bitwise")
    with pytest.raises(InvalidConfiguration, match="axis"):
        reducetune.reduce(np.ones(4, np.float32), determinism="batch_invariant")


def test_a_level_is_checked_without_calling_the_extension(monkeypatch):
    """torch.compile(fullgraph=True) cannot trace a call into the extension (a graph break,
    seen on an H200), so the levels the core gave at import (_core.axis_levels) are checked in
    Python, known and unknown names alike."""
    from reducetune.runtime import axis_args

    def no_call(*args, **kwargs):
        raise AssertionError("the extension was called to check a level")

    monkeypatch.setattr(axis_args._core, "axis_rule", no_call)
    monkeypatch.setattr(axis_args._core, "axis_levels", no_call)
    assert axis_args.check_determinism("run_to_run") == "run_to_run"
    assert axis_args.check_determinism("batch_invariant") == "batch_invariant"
    for bad in ("bitwise", "", None, 1):
        with pytest.raises(InvalidConfiguration, match="run_to_run .the default. or batch_inv"):
            axis_args.check_determinism(bad)


def test_the_levels_python_checks_are_those_the_core_parses():
    assert _core.axis_levels()[0] == "run_to_run"  # the default first
    for level in _core.axis_levels():
        assert _core.axis_rule(1, 1, 1, level)  # accepted by the core's own parser
    assert "bitwise" not in _core.axis_levels()
    with pytest.raises(InvalidConfiguration, match="bitwise"):
        _core.axis_rule(1, 1, 1, "bitwise")


def test_the_bound_rule_forwards_the_level():
    # 2^16-element rows: by count (one split, many a block each) unless batch_invariant
    def preset(outer, level):
        return _core.axis_rule(outer, 1 << 16, 1, level)[0]

    assert preset(1, "run_to_run") != preset(4096, "run_to_run")
    assert len({preset(outer, "batch_invariant") for outer in BATCHES}) == 1


def _bits(torch, t):
    return t.view(torch.int16 if t.dtype == torch.bfloat16 else torch.int32)


def _torch():
    return pytest.importorskip("torch", reason="PyTorch is not installed")


@pytest.mark.parametrize("r", ROW_LENGTHS)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.skipif(NO_GPU is not None, reason=NO_GPU or "")
@pytest.mark.gpu
def test_a_row_sums_to_the_same_bits_in_every_batch_size(dtype, r):
    torch = _torch()
    batches = [b for b in BATCHES if b * r <= MOST_ELEMENTS]
    g = torch.Generator(device="cuda").manual_seed(r)
    # one tensor of the largest batch: each smaller batch is its first rows, the same data
    x = (torch.randn((batches[-1], r), device="cuda", generator=g) * 8).to(getattr(torch, dtype))
    reducer = reducetune.AxisReducer(dtype, "sum", determinism="batch_invariant")
    first = reducer(x[:1], axis=1)
    presets = set()
    for b in batches:
        choice = reducer.choice(b, r, 1)
        assert choice["batch_invariant"] and choice["level"] == "batch_invariant"
        presets.add(choice["preset"])
        out = reducer(x[:b], axis=1)
        k = min(b, 7)
        # the first rows of this batch, bit for bit (as integers: -0.0 != 0.0, NaN == NaN),
        # against the batch of 7 (or of 1)
        small = first if k == 1 else reducer(x[:7], axis=1)
        assert torch.equal(_bits(torch, out[:k]), _bits(torch, small[:k]))
    assert len(presets) == 1, presets  # the rule chose from r alone
    assert reducetune.reduce(x[:1], axis=1, determinism="batch_invariant").equal(first)
