"""The experiments' lists of types and block sizes (issue 23, item 3): where a list means "every
value the family declares" it is read from the declaration (family.json through the
extension); where it is an experiment's chosen subset it must stay a subset of the declared
values, so that a family that drops a value fails here rather than in a sweep on a GPU.
Runs without a GPU."""

from __future__ import annotations

import pytest

from reducetune import _core
from reducetune._space import DTYPES, OPS, parameter_values
from reducetune.errors import InvalidConfiguration
from reducetune.experiments import cascading
from reducetune.experiments._seed_tables import TABLES, SeedTable


def test_the_type_and_operator_lists_are_the_cores():
    assert DTYPES == tuple(_core.dtypes()) and OPS == tuple(_core.operators())
    # every type the core lists is one it reduces (an element size it knows)
    assert all(_core.element_bytes(t) in (2, 4, 8) for t in DTYPES)  # 2: float16, bfloat16


def test_a_seed_tables_default_block_sizes_are_the_seeds_familys_declared_values():
    declared = tuple(int(v) for v in parameter_values("seeds", "block_size"))
    g80 = next(t for t in TABLES if t.key == "g80")
    assert g80.block_sizes == declared
    made = SeedTable("k", "t", "s", "g", "int32", 1, ())
    assert made.block_sizes == declared


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.key)
def test_a_seed_tables_chosen_block_sizes_are_declared_by_each_of_its_rows_families(table):
    for row in table.rows:
        declared = {int(v) for v in parameter_values(row.family, "block_size")}
        assert set(table.block_sizes) <= declared, (table.key, row.family)


def test_cascadings_chosen_types_and_block_sizes_are_subsets_of_the_declared_ones():
    assert set(cascading.DTYPES) <= set(DTYPES)
    for family in ("tunable", "cascade"):  # the sweep's two families
        declared = {int(v) for v in parameter_values(family, "block_size")}
        assert set(cascading.BLOCK_SIZES) <= declared, family


def test_an_undeclared_parameter_is_refused():
    with pytest.raises(InvalidConfiguration, match="no parameter 'nope'"):
        parameter_values("tunable", "nope")
