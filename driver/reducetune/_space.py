"""Template families and search spaces: the C++ space, with what Python adds to it.

Everything decided about a point (validity, the --restrict restriction, flags, determinism,
labels) is decided by the C++ ``search_space`` and carried by ``Point`` (``_core.Point``):
Python converts a trial's parameters once (``Space.point``) and asks the point. Nothing here
compiles or touches a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias, Union

from reducetune import _core
from reducetune.errors import InvalidConfiguration

__all__ = [
    "DTYPES",
    "OPS",
    "Value",
    "Params",
    "Point",
    "Preset",
    "Space",
    "families",
    "describe_flags",
    "family",
    "limits_for_arch",
    "parameter_values",
    "rule_point",
]

# Every element type and operator, as the core decides them (space/element.hpp).
DTYPES: tuple[str, ...] = tuple(_core.dtypes())
OPS: tuple[str, ...] = tuple(_core.operators())

Value = Union[int, str]
Params = dict[str, Value]
DeviceLimits: TypeAlias = _core.DeviceLimits
Point: TypeAlias = _core.Point


def families() -> list[dict[str, Any]]:
    """Every family's declaration (name, description, parameters, constraints, presets)."""
    return list(_core.families())


def family(name: str) -> dict[str, Any]:
    return dict(_core.family(name))


def parameter_values(family_name: str, parameter: str) -> list[Value]:
    """The values the family's declaration (its family.json, read by the core) gives a
    parameter, in declaration order: the one list of, say, the block sizes a family has."""
    for p in _core.family(family_name)["parameters"]:
        if p["name"] == parameter:
            return list(p["values"])
    raise InvalidConfiguration(f"family '{family_name}' has no parameter '{parameter}'")


def describe_flags(found: list[tuple[str, str, str]]) -> str:
    """'flagged: warp=volatile_unsafe (why)' for a reason string."""
    return "flagged: " + "; ".join(f"{name}={value} ({why})" for name, value, why in found)


def limits_for_arch(arch: str | int) -> DeviceLimits:
    """Device limits from the architecture table, for ``sm_90``, ``90`` or ``9.0``."""
    return _core.limits_for_arch(str(arch))


def rule_point(rule: dict[str, Any], dtype: str, op: str, limits: DeviceLimits) -> Point:
    """The point of an exported rule (``best()``, ``export json``), built by the space from the
    rule's family and parameters: its labels are for people and are not read back."""
    space = _core.Space(rule["family"], dtype, op, limits, {})
    return space.point({**rule["compile_parameters"], **rule["launch_parameters"]})


@dataclass(frozen=True)
class Preset:
    name: str
    point: Point
    note: str
    reasons: list[tuple[str, str]] = field(default_factory=list)

    @property
    def params(self) -> Params:
        return dict(self.point.params)

    @property
    def variant_label(self) -> str:
        return str(self.point.variant_label)

    @property
    def launch_label(self) -> str:
        return str(self.point.launch_label)


class Space(_core.Space):
    """The search space of one family for one element type, operator and device, optionally
    restricted to some declared values of some parameters (InvalidConfiguration otherwise).

    The C++ space itself (``_core.Space``: ``family``, ``dtype``, ``op``, ``limits``,
    ``restrict``, ``point``, ``base``, ``parse``, ``selected``, ``sizes``), with what Python adds:
    plain lists, the presets as ``Preset``, and per-selection caches. A point is made by the C++
    methods themselves (``point``, ``base``): no Python function of this file hands one on
    (tests/python/test_point_journey.py counts the files the value passes)."""

    def __init__(self, family: str, dtype: str, op: str, limits: DeviceLimits,
                 restrict: dict[str, list[Value]] | None = None) -> None:
        super().__init__(family, dtype, op, limits, dict(restrict or {}))
        self.declaration = _core.family(family)
        self._points: list[Point] | None = None
        self._proposable: dict[tuple[bool, bool], dict[str, list[Value]]] = {}

    @property
    def parameters(self) -> list[dict[str, Any]]:
        """The family's parameters in declaration order (compile and launch)."""
        return list(self.declaration["parameters"])

    def choices(self) -> dict[str, list[Value]]:
        """Every parameter's proposable values: the categorical space a sampler sees."""
        return {k: list(v) for k, v in dict(super().choices()).items()}

    def proposable(self, allow_flagged: bool = False,
                   nondeterministic: bool = False) -> dict[str, list[Value]]:
        """choices() less the values that no valid point of the selection takes: what a
        sampler proposes. InvalidConfiguration when the selection holds no point at all.
        Computed once per selection: it walks every point of the space, and every study of a
        run asks."""
        key = (allow_flagged, nondeterministic)
        if key not in self._proposable:
            self._proposable[key] = {k: list(v) for k, v in dict(
                super().proposable(allow_flagged, nondeterministic)).items()}
        out = {k: list(v) for k, v in self._proposable[key].items()}
        if any(not v for v in out.values()):
            raise InvalidConfiguration(
                f"no valid point of {self.family}.{self.dtype}.{self.op} is "
                + ("" if allow_flagged else "unflagged and ")
                + ("selected" if nondeterministic else "deterministic")
                + " (widen --restrict, or pass --nondeterministic / --allow-flagged)")
        return out

    def check(self, p: Point) -> list[tuple[str, str]]:
        """The constraints (and restriction) the point fails, as (expression, why)."""
        return list(super().check(p))

    def points(self) -> list[Point]:
        """Every valid point in enumeration order (computed once)."""
        if self._points is None:
            self._points = list(super().points())
        return self._points

    def presets(self) -> list[Preset]:
        return [Preset(p["name"], p["point"], p["note"], list(p["reasons"]))
                for p in super().presets()]

    def preset(self, name: str) -> Preset:
        for p in self.presets():
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.presets())

        raise InvalidConfiguration(f"family '{self.family}' has no preset '{name}' ({known})")
