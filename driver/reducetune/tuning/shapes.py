"""The shapes an axis tune covers: ``--shapes 4096x64x1,1x64x4096`` or a named grid.

A shape is ``(outer, r, inner)``: a contiguous tensor viewed as outer x r x inner whose middle
axis r is reduced into outer x inner (space/problem.hpp). A tune's unit is a problem: for a
whole-array family a size n, the shape (1, n, 1); for an axis family a shape. ``Unit`` is
either, as the tuner hands it along (tuning/loop.py's ``n``): an int n, or a Shape.

The default grid (``--shapes default``, what ``reducetune tune --family axis`` tunes): 2^24
elements (64 MiB of float32, the size where the issue measured every peer at or below 58 % of
peak), r on a log2 grid from 2 to 2^22 by powers of 8 (2, 16, 128, 1024, 2^13, 2^16, 2^19,
2^22), each as rows ``(2^24 / r, r, 1)`` and as columns ``(1, r, 2^24 / r)``: 16 shapes, every
one with outer x inner >= 4 (none is the whole array). It is kept to one total so that a
5-minute run gives each shape about 18 s; ``--shapes large`` is the same grid at 2^28 and
``--shapes full`` both totals (32 shapes: give it --time-limit 20m or more).
"""

from __future__ import annotations

import re

from reducetune import _core
from reducetune._sizes import parse_sizes
from reducetune.errors import InvalidConfiguration

__all__ = ["GRIDS", "RULE_PRESET", "Shape", "Unit", "base_preset_for", "grid", "parse_shapes",
           "unit_elements", "unit_shape", "unit_text"]

Shape = tuple[int, int, int]
Unit = int | Shape

# r from 2 to 2^22 by powers of 8, as the benchmark steps it.
GRID_R = tuple(1 << k for k in range(1, 23, 3))


def grid(total: int) -> list[Shape]:
    """Rows then columns for every r of GRID_R below total (total / r outputs each)."""
    rs = [r for r in GRID_R if r < total and total % r == 0]
    return [(total // r, r, 1) for r in rs] + [(1, r, total // r) for r in rs]


GRIDS: dict[str, list[Shape]] = {
    "default": grid(1 << 24),
    "large": grid(1 << 28),
    "full": grid(1 << 24) + grid(1 << 28),
}

# The base preset of an axis study unless --base names one: the preset the runtime's built-in
# rule picks for the study's shape (_core.axis_rule, runtime/axis_dispatch.hpp), so that the
# first point a shape measures is what reduce(x, axis=...) runs untuned, and the tuned best
# is never slower than it. The axis family has no one preset good for every shape.
RULE_PRESET = "rule"


def base_preset_for(base_preset: str, unit: Unit, dtype: str = "float32") -> str:
    """The preset a study of this unit measures first: RULE_PRESET resolved for its shape
    and element type."""
    if base_preset != RULE_PRESET:
        return base_preset
    return str(_core.axis_rule(*unit_shape(unit), dtype=dtype)[0])


_SEPARATORS = re.compile(r"[,\s]+")


def parse_shapes(text: str | list[str]) -> list[Shape]:
    """Shapes from ``OUTERxRxINNER`` items (each extent an integer or 2^k: ``2^12x64x1``),
    separated by commas or spaces, or one grid name of GRIDS. Each shape once, in the given
    order; a malformed item, an extent of 0 or the whole array (1, n, 1) is refused in one
    line that says what is expected."""
    items = [i for part in ([text] if isinstance(text, str) else text)
             for i in _SEPARATORS.split(part.strip()) if i]
    if len(items) == 1 and items[0] in GRIDS:
        return list(GRIDS[items[0]])
    if not items:
        raise InvalidConfiguration(f"--shapes is empty: {_EXPECTED}")
    return list(dict.fromkeys(_shape(item) for item in items))


_EXPECTED = ("give OUTERxRxINNER (e.g. 4096x64x1 for 4096 rows of 64, 1x64x4096 for the sums of "
             f"4096 columns of 64; 2^k allowed) or a grid: {', '.join(GRIDS)}")


def _shape(item: str) -> Shape:
    parts = item.lower().split("x")
    if len(parts) != 3 or not all(parts):
        raise InvalidConfiguration(f"--shapes: '{item[:40]}' is not a shape; {_EXPECTED}")
    try:
        extents = [parse_sizes(p) for p in parts]
    except InvalidConfiguration as e:
        raise InvalidConfiguration(f"--shapes: '{item[:40]}': {e}") from None
    if any(len(e) != 1 for e in extents):  # a range inside a shape: not a list of shapes
        raise InvalidConfiguration(f"--shapes: '{item[:40]}' is not a shape; {_EXPECTED}")
    (outer,), (r,), (inner,) = extents
    if outer == 1 and inner == 1:
        raise InvalidConfiguration(
            f"--shapes: '{item[:40]}' is the whole array (1, n, 1): tune it with --sizes {r} "
            "and a whole-array family (e.g. --family tunable)")
    return outer, r, inner


def unit_shape(unit: Unit) -> Shape:
    """The unit's shape: (1, n, 1) for a size n."""
    if isinstance(unit, int):
        return 1, unit, 1
    outer, r, inner = unit
    return int(outer), int(r), int(inner)


def unit_elements(unit: Unit) -> int:
    """Elements the unit reads: n, or outer x r x inner."""
    outer, r, inner = unit_shape(unit)
    return outer * r * inner


def unit_text(unit: Unit) -> str:
    """'1048576' for a size, '4096x64x1' for a shape (as --shapes spells it)."""
    return str(unit) if isinstance(unit, int) else "x".join(map(str, unit_shape(unit)))
