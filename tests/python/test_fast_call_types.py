"""The fast call's CuPy path maps array types to the core's names (no GPU, no CuPy needed:
CuPy's dtypes follow NumPy's, so numpy.dtype stands in for cupy.dtype)."""

import numpy

from reducetune import _core
from reducetune.runtime.fast_call import names_by_char


def test_every_type_numpy_has_is_mapped_and_bfloat16_is_skipped():
    names = names_by_char(numpy.dtype)
    core = set(_core.dtypes())
    assert "bfloat16" in core and "bfloat16" not in names.values()
    assert set(names.values()) == core - {"bfloat16"}
    assert names[numpy.dtype("float16").char] == "float16"
    assert names[numpy.dtype("float32").char] == "float32"
