"""Template families and search spaces, read from the families' own declarations.

Thin typed wrappers over the extension: nothing here compiles or touches a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from reducetune import _core

__all__ = [
    "DTYPES",
    "OPS",
    "Value",
    "Params",
    "Preset",
    "Space",
    "families",
    "describe_flags",
    "family",
    "flagged_labels",
    "limits_for_arch",
]

DTYPES = ("int32", "int64", "float32", "float64")
OPS = ("sum", "min", "max", "prod")

Value = Union[int, str]
Params = dict[str, Value]
DeviceLimits = _core.DeviceLimits


def families() -> list[dict[str, Any]]:
    """Every family's declaration (name, description, parameters, constraints, presets)."""
    return list(_core.families())


def family(name: str) -> dict[str, Any]:
    return dict(_core.family(name))


def _flags_of(declaration: dict[str, Any]) -> dict[str, dict[str, str]]:
    """{parameter: {value as text: why}} for the values the family's declaration flags
    (family.json "flags": e.g. a seed-faithful racy warp unroll)."""
    return {p["name"]: {str(k): str(v) for k, v in dict(p.get("flags") or {}).items()}
            for p in declaration["parameters"] if p.get("flags")}


def _flagged(flags: dict[str, dict[str, str]], params: Params) -> list[tuple[str, str, str]]:
    return [(name, str(params[name]), by_value[str(params[name])])
            for name, by_value in flags.items()
            if name in params and str(params[name]) in by_value]


def flagged_labels(variant_label: str, launch_label: str) -> list[tuple[str, str, str]]:
    """The flagged values of a recorded point, as (parameter, value, why); empty when none,
    or when the point's family is not in the template library (nothing is known of it)."""
    family_name = variant_label.split(".", 1)[0]
    try:
        declaration = _core.family(family_name)
    except Exception:
        return []
    flags = _flags_of(declaration)
    if not flags:
        return []
    try:
        params = dict(_core.parse_labels(variant_label, launch_label)["params"])
    except Exception:
        # A label of another version of the family: match its "label_value" segments.
        segments = set(variant_label.split(".")) | set(launch_label.split("."))
        found = []
        for p in declaration["parameters"]:
            short = p.get("label") or p["name"]
            for value, why in _flags_of({"parameters": [p]}).get(p["name"], {}).items():
                if f"{short}_{value}" in segments:
                    found.append((p["name"], value, why))
        return found
    return _flagged(flags, params)


def describe_flags(found: list[tuple[str, str, str]]) -> str:
    """'flagged: warp=volatile_unsafe (why)' for a reason string."""
    return "flagged: " + "; ".join(f"{name}={value} ({why})" for name, value, why in found)


def limits_for_arch(arch: str | int) -> DeviceLimits:
    """Device limits from the architecture table, for ``sm_90``, ``90`` or ``9.0``."""
    return _core.limits_for_arch(str(arch))


@dataclass(frozen=True)
class Preset:
    name: str
    variant_label: str
    launch_label: str
    params: Params
    note: str
    reasons: list[tuple[str, str]] = field(default_factory=list)


class Space:
    """The search space of one family for one element type, operator and device."""

    def __init__(self, family: str, dtype: str, op: str, limits: DeviceLimits,
                 restrict: dict[str, list[Value]] | None = None) -> None:
        self.family = family
        self.dtype = dtype
        self.op = op
        self.limits = limits
        self.declaration = _core.family(family)
        self.restrict = self._checked(restrict or {})
        self._flags = _flags_of(self.declaration)
        self._valid: list[Params] | None = None

    def _checked(self, restrict: dict[str, list[Any]]) -> dict[str, list[Value]]:
        """Declared values only, spelled as declared (``"256"`` from the command line is 256)."""
        from reducetune.errors import InvalidConfiguration

        declared = {p["name"]: list(p["values"]) for p in self.declaration["parameters"]}
        out: dict[str, list[Value]] = {}
        for name, values in restrict.items():
            if name not in declared:
                raise InvalidConfiguration(
                    f"family '{self.family}' has no parameter '{name}' "
                    f"(parameters: {', '.join(declared)})")
            by_text = {str(v): v for v in declared[name]}
            chosen = []
            for v in values:
                if str(v) not in by_text:
                    raise InvalidConfiguration(
                        f"'{v}' is not a declared value of {name} "
                        f"({', '.join(map(str, declared[name]))})")
                chosen.append(by_text[str(v)])
            out[name] = [v for v in declared[name] if v in chosen]
        return out

    @property
    def parameters(self) -> list[dict[str, Any]]:
        """The family's parameters in declaration order (compile and launch)."""
        return list(self.declaration["parameters"])

    def choices(self) -> dict[str, list[Value]]:
        """Every declared value of every parameter: the categorical space a sampler sees."""
        return {p["name"]: list(self.restrict.get(p["name"], p["values"])) for p in self.parameters}

    def sizes(self) -> dict[str, int]:
        return dict(_core.space_size(self.family, self.dtype, self.op, self.limits))

    def check(self, params: Params) -> list[tuple[str, str]]:
        """The constraints the point fails, as (expression, why); empty when it is valid."""
        return list(_core.check(self.family, self.dtype, self.op, self.limits, params, True))

    def flags(self) -> dict[str, dict[str, str]]:
        """{parameter: {value as text: why}}: the values the family flags (e.g. racy)."""
        return {k: dict(v) for k, v in self._flags.items()}

    def flagged(self, params: Params) -> list[tuple[str, str, str]]:
        """The point's flagged values as (parameter, value, why); empty when none."""
        return _flagged(self._flags, params)

    def valid_points(self) -> list[Params]:
        """Every valid (variant, launch config) point, in enumeration order."""
        if self._valid is None:
            every = _core.valid_points(self.family, self.dtype, self.op, self.limits, True)
            r = self.restrict
            self._valid = [p for p in every if all(p[k] in v for k, v in r.items())]
        return self._valid

    def labels(self, params: Params) -> tuple[str, str]:
        """(variant label, launch label)."""
        return tuple(_core.labels(self.family, self.dtype, self.op, params))  # type: ignore

    def presets(self) -> list[Preset]:
        return [
            Preset(
                p["name"],
                p["variant_label"],
                p["launch_label"],
                dict(p["params"]),
                p["note"],
                list(p["reasons"]),
            )
            for p in _core.presets(self.family, self.dtype, self.op, self.limits)
        ]

    def preset(self, name: str) -> Preset:
        for p in self.presets():
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.presets())
        from reducetune.errors import InvalidConfiguration

        raise InvalidConfiguration(f"family '{self.family}' has no preset '{name}' ({known})")
