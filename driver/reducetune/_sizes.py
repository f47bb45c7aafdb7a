"""Input sizes on the command line: ``1048576``, ``2^20``, ``2^10..2^30``, ``2^10..2^30:2``.

A range ``2^a..2^b`` steps the exponent (by 1, or by the number after ``:``); a range of
plain integers ``a..b:s`` steps linearly. Items are separated by commas or spaces.

One limit for every size, however it is written: 2^40 elements (the store and the C++ side
take sizes as 64-bit integers; no GPU holds 2^40 elements of even one byte). A run takes at
most MAX_SIZES sizes, and a range is counted before it is expanded, so ``1..10^11`` is refused
at once instead of filling the memory.
"""

from __future__ import annotations

import re

from reducetune.errors import InvalidConfiguration

__all__ = ["MAX_POWER", "MAX_SIZE", "MAX_SIZES", "parse_sizes"]

MAX_POWER = 40
MAX_SIZE = 1 << MAX_POWER
MAX_SIZES = 1000  # each size is a study of its own: more is a typo, not a plan

# ASCII digits only: \d (and int()) would also read Arabic-Indic or fullwidth digits, which
# no other tool reading a command line or a script takes for a number.
_POWER = re.compile(r"^2\^([0-9]+)$")
_INT = re.compile(r"^[0-9]+$")
_LIMIT = f"the largest size is 2^{MAX_POWER} = {MAX_SIZE}"


def _short(item: str) -> str:
    """An item as messages quote it: a pasted megabyte of digits is cut short."""
    return item if len(item) <= 40 else item[:37] + "..."


def _digits(text: str, item: str) -> int:
    """A plain integer up to MAX_SIZE; one with more digits is refused before int() reads it."""
    if len(text.lstrip("0")) > len(str(MAX_SIZE)) or int(text) > MAX_SIZE:
        raise InvalidConfiguration(f"size '{_short(item)}' is too large ({_LIMIT})")
    return int(text)


def _one(text: str, item: str) -> tuple[int, int | None]:
    """The value of one size, and its exponent when written as a power of two."""
    name = _short(item)
    m = _POWER.match(text)
    if m:
        k = int(m.group(1)) if len(m.group(1)) <= 3 else MAX_POWER + 1
        if k > MAX_POWER:
            raise InvalidConfiguration(f"size '{name}' is too large ({_LIMIT})")
        return 1 << k, k
    if _INT.match(text):
        return _digits(text, item), None
    raise InvalidConfiguration(
        f"size '{name}' is not an integer, 2^k, or a range such as 2^10..2^30 or 2^10..2^30:2"
    )


def _counted(item: str, values: range) -> range:
    """values, unless there are more than a run takes: counted before they are expanded."""
    name = _short(item)
    if len(values) > MAX_SIZES:
        raise InvalidConfiguration(
            f"size range '{name}' holds {len(values)} sizes; a run takes at most {MAX_SIZES} "
            "(use a larger step, e.g. 1000..100000:1000, or powers of two: 2^10..2^30)")
    return values


def _range(item: str) -> list[int]:
    name = _short(item)
    body, _, step_text = item.partition(":")
    lo_text, _, hi_text = body.partition("..")
    if not hi_text:
        raise InvalidConfiguration(f"size range '{name}' needs two ends: 2^10..2^30")
    if step_text and not _INT.match(step_text):
        raise InvalidConfiguration(f"size range '{name}': the step must be a positive integer")
    # a step above the largest size leaves the start alone: read as MAX_SIZE + 1
    digits = step_text.lstrip("0") or ("0" if step_text else "1")
    step = int(digits) if len(digits) <= len(str(MAX_SIZE)) else MAX_SIZE + 1
    if step < 1:
        raise InvalidConfiguration(f"size range '{name}': the step must be a positive integer")
    lo, lo_k = _one(lo_text, item)
    hi, hi_k = _one(hi_text, item)
    if lo > hi:
        raise InvalidConfiguration(f"size range '{name}' is empty (its start is above its end)")
    if lo_k is not None and hi_k is not None:
        return [1 << k for k in _counted(item, range(lo_k, hi_k + 1, step))]
    if lo_k is not None or hi_k is not None:
        raise InvalidConfiguration(f"size range '{name}' mixes 2^k and plain integers")
    return list(_counted(item, range(lo, hi + 1, step)))


def parse_sizes(text: str | list[str]) -> list[int]:
    """Sizes in ascending order, duplicates removed; InvalidConfiguration for bad input."""
    items = text if isinstance(text, list) else [text]
    parts = [p for item in items for p in re.split(r"[,\s]+", item.strip()) if p]
    if not parts:
        raise InvalidConfiguration("no size given (for example --sizes 2^10..2^30)")
    sizes: set[int] = set()
    for part in parts:
        values = _range(part) if ".." in part else [_one(part, part)[0]]
        for n in values:
            if n < 1:
                raise InvalidConfiguration(f"size '{part}': n must be at least 1")
            sizes.add(n)
        if len(sizes) > MAX_SIZES:
            raise InvalidConfiguration(
                f"more than {MAX_SIZES} sizes; a run takes at most {MAX_SIZES}")
    return sorted(sizes)
