"""Input sizes on the command line: ``1048576``, ``2^20``, ``2^10..2^30``, ``2^10..2^30:2``.

A range ``2^a..2^b`` steps the exponent (by 1, or by the number after ``:``); a range of
plain integers ``a..b:s`` steps linearly. Items are separated by commas or spaces.
"""

from __future__ import annotations

import re

from reducetune.errors import InvalidConfiguration

__all__ = ["parse_sizes"]

_POWER = re.compile(r"^2\^(\d{1,2})$")
_INT = re.compile(r"^\d+$")


def _one(text: str, item: str) -> tuple[int, int | None]:
    """The value of one size, and its exponent when written as a power of two."""
    m = _POWER.match(text)
    if m:
        k = int(m.group(1))
        if k > 40:
            raise InvalidConfiguration(f"size '{item}': 2^{k} is beyond 2^40")
        return 1 << k, k
    if _INT.match(text):
        return int(text), None
    raise InvalidConfiguration(
        f"size '{item}' is not an integer, 2^k, or a range such as 2^10..2^30 or 2^10..2^30:2"
    )


def _range(item: str) -> list[int]:
    body, _, step_text = item.partition(":")
    lo_text, _, hi_text = body.partition("..")
    if not hi_text:
        raise InvalidConfiguration(f"size range '{item}' needs two ends: 2^10..2^30")
    if step_text and not _INT.match(step_text):
        raise InvalidConfiguration(f"size range '{item}': the step must be a positive integer")
    step = int(step_text) if step_text else 1
    if step < 1:
        raise InvalidConfiguration(f"size range '{item}': the step must be a positive integer")
    lo, lo_k = _one(lo_text, item)
    hi, hi_k = _one(hi_text, item)
    if lo > hi:
        raise InvalidConfiguration(f"size range '{item}' is empty (its start is above its end)")
    if lo_k is not None and hi_k is not None:
        return [1 << k for k in range(lo_k, hi_k + 1, step)]
    if lo_k is not None or hi_k is not None:
        raise InvalidConfiguration(f"size range '{item}' mixes 2^k and plain integers")
    return list(range(lo, hi + 1, step))


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
    return sorted(sizes)
