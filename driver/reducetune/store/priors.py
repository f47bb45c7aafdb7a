"""Priors (issue 25): what other GPUs learned, as a small table shipped in the package
(``reducetune/priors/priors.json``), to start a new GPU's search near its end.

The table holds, per device model and per (family, dtype, op, size bucket), the PER_BUCKET
fastest points measured there (their stored labels, rank = position, with the median time),
and for each model what the nearest-device rule reads: name, compute capability, SM count
and peak bandwidth. ``build`` makes it from any set of results files (``reducetune priors -o
FILE RESULTS...``); the same files give the same table, byte for byte.

Which points: status ok, run-to-run deterministic and unflagged (what the store decides and
keeps with each variant; what ``tune`` hands out by default), ranked by median time; a point
measured in several files of one model keeps its lowest median. A run admitting flagged or
nondeterministic points still starts from these: they are points of its space too.

Which device (``nearest``): among the table's models, the same compute capability first,
then the same major version, then the least |ln(SMs / SMs')| + |ln(bandwidth / bandwidth')|
(a model of twice the SMs is as far as one of twice the bandwidth); ties by name.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reducetune import _core
from reducetune._space import DTYPES, OPS
from reducetune.errors import Error, InvalidConfiguration
from reducetune.store.results import open_store

__all__ = ["FORMAT", "PER_BUCKET", "SHIPPED", "Prior", "PriorDevice", "Priors", "build",
           "checked", "chosen", "dumps", "load", "nearest"]

FORMAT = "reducetune-priors/1"
PER_BUCKET = 3  # points kept per bucket: a one-minute run measures about one or two
SHIPPED = Path(__file__).resolve().parent.parent / "priors" / "priors.json"


@dataclass(frozen=True)
class Prior:
    """One point of a bucket: its stored labels, its rank there (1: the fastest), its median."""

    variant_label: str
    launch_label: str
    rank: int
    median_s: float

    def point(self, space: Any) -> Any:
        """This prior as a point of ``space`` (a ``reducetune._space.Space`` of the workload it
        was measured in): its stored labels read here, once. None for labels the space does
        not declare (another version of the family)."""
        try:
            return space.parse(self.variant_label, self.launch_label)
        except Error:
            return None


@dataclass(frozen=True)
class PriorDevice:
    """A model the table learned from: what the nearest-device rule compares."""

    name: str
    model: str  # the core's model key (name, SMs, memory clock)
    cc: tuple[int, int]
    sm_count: int
    peak_gbps: float
    bests: dict[str, dict[int, list[Prior]]]  # "family.dtype.op" -> bucket n -> ranked points

    def bucket(self, family: str, dtype: str, op: str, n: int) -> list[Prior]:
        """The ranked points of the bucket nearest n in log2 (ties: the smaller), or []."""
        sizes = self.bests.get(f"{family}.{dtype}.{op}", {})
        if not sizes:
            return []
        near = min(sizes, key=lambda b: (abs(math.log2(b) - math.log2(max(1, n))), b))
        return sizes[near]

    def closest(self, family: str, dtype: str, op: str, n: int) -> tuple[str, str, list[Prior]]:
        """(dtype, op, ranked points) of the workload's bucket nearest n; where the model never
        measured the workload, of the same type with another operator, else of another type
        of the same element size (the same operator first): a reduction of one element size
        is bound by the same memory traffic, so its best launch shapes tend to carry over.
        ("", "", []) when none of those was measured."""
        size = _core.element_bytes(dtype)
        others = [d for d in DTYPES if d != dtype and _core.element_bytes(d) == size]
        for d, o in [(dtype, op), *((dtype, o) for o in OPS if o != op),
                     *((d, op) for d in others), *((d, o) for d in others for o in OPS if o != op)]:
            points = self.bucket(family, d, o, n)
            if points:
                return d, o, points
        return "", "", []


@dataclass(frozen=True)
class Priors:
    """A priors table: its models, and where it came from."""

    devices: list[PriorDevice]
    source: str  # the file it was read from

    def nearest(self, device: dict[str, Any]) -> PriorDevice | None:
        return nearest(self.devices, device)


def nearest(devices: list[PriorDevice], device: dict[str, Any]) -> PriorDevice | None:
    """The model nearest ``device`` (a store or evaluator device row: cc_major, cc_minor,
    sm_count, peak_bytes_per_s) by the module's rule; None for an empty table."""
    cc = (int(device["cc_major"]), int(device["cc_minor"]))
    sms = max(1, int(device["sm_count"]))
    gbps = max(1e-9, float(device.get("peak_bytes_per_s") or 0.0) / 1e9)

    def distance(d: PriorDevice) -> tuple[bool, bool, float, str]:
        far = abs(math.log(d.sm_count / sms)) + abs(math.log(max(1e-9, d.peak_gbps) / gbps))
        return d.cc != cc, d.cc[0] != cc[0], round(far, 9), d.name

    return min(devices, key=distance, default=None)


def build(paths: Iterable[str | Path]) -> dict[str, Any]:
    """The priors table of these results files (the module's rules), as the JSON document
    ``load`` reads."""
    models: dict[str, dict[str, Any]] = {}
    for path in paths:
        store = open_store(path, read_only=True)  # an older file migrated in memory only
        try:
            for dev in (dict(d) for d in store.devices()):
                model = models.setdefault(_core.device_model_key(dev), _model(dev))
                model["files"].add(Path(path).name)
                _gather(store, dev, model["points"])
        finally:
            store.close()
    return {"format": FORMAT, "per_bucket": PER_BUCKET,
            "selection": "status ok, run_to_run deterministic, unflagged; fastest median first",
            "devices": [_document(key, m) for key, m in sorted(models.items())]}


def _model(dev: dict[str, Any]) -> dict[str, Any]:
    return {"name": str(dev["name"]), "cc": [int(dev["cc_major"]), int(dev["cc_minor"])],
            "sm_count": int(dev["sm_count"]),
            "peak_gbps": round(float(dev["peak_bytes_per_s"]) / 1e9, 1),
            "files": set(), "points": {}}


def _gather(store: Any, dev: dict[str, Any], points: dict[tuple[str, int], dict]) -> None:
    """Every selected ok point of the device into points[(family.dtype.op, n)]: (variant,
    launch) -> the lowest median seen."""
    for dtype in DTYPES:
        for op in OPS:
            for row in store.history(dev["id"], dtype, op):
                if not _selected(row):
                    continue
                key = (f"{row['family']}.{dtype}.{op}", int(row["n"]))
                point = (str(row["variant_label"]), str(row["launch_label"]))
                seen = points.setdefault(key, {})
                seen[point] = min(seen.get(point, math.inf), float(row["median_s"]))


def _selected(row: dict[str, Any]) -> bool:
    return (row["status"] == "ok" and bool(row.get("median_s"))
            and row["determinism"] == "run_to_run" and json.loads(row["flags_json"]) == [])


def _document(key: str, m: dict[str, Any]) -> dict[str, Any]:
    bests: dict[str, dict[str, list[list[Any]]]] = {}
    for (workload, n), seen in sorted(m["points"].items()):
        ranked = sorted(seen.items(), key=lambda kv: (kv[1], kv[0]))[:PER_BUCKET]
        bests.setdefault(workload, {})[str(n)] = [
            [v, lab, float(f"{t:.4g}")] for (v, lab), t in ranked]
    return {"name": m["name"], "model": key, "cc": m["cc"], "sm_count": m["sm_count"],
            "peak_gbps": m["peak_gbps"], "files": sorted(m["files"]), "bests": bests}


def dumps(table: dict[str, Any]) -> str:
    """The file's text: the JSON of ``table``, one value a line in build's order (sizes in
    numeric order), so that a diff of two tables reads line by line."""
    return json.dumps(table, indent=0) + "\n"


def chosen(value: str, live: bool) -> str | None:
    """The table file --priors VALUE names, or None: "off"; "auto" (the default) is the
    shipped table for a GPU measured live, none in replay (its recordings are the files the
    shipped table was learned from, and its tests fix their points' order); "on" is the
    shipped table always; anything else is a file."""
    if value == "off" or (value == "auto" and not live):
        return None
    return str(SHIPPED) if value in ("auto", "on") else value


def checked(value: str) -> str:
    """``value``, once the table it may name is read (``load``'s one-line error): a bad file
    is refused before anything runs."""
    if not value.strip():
        raise InvalidConfiguration("--priors is empty: auto, on, off, or a priors table's file")
    path = chosen(value, live=True)
    if path is not None:
        load(path)
    return value


# Tables read, by (path, modification time, size): a tune reads its table once, where --priors
# is checked (checked), and every unit's warm start (tuning/warm_start.py) is served from here.
_READ: dict[tuple[str, int, int], Priors] = {}


def load(path: str | Path) -> Priors:
    """The table in the file (read once per version of the file); InvalidConfiguration, in
    one line, for one that is missing, is not a priors table, or names no device (it could
    start no study)."""
    try:
        stat = Path(path).stat()
    except OSError:
        return _read(path)  # missing or unreadable: _text says which, in one line
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _READ:
        _READ[key] = _read(path)
    return _READ[key]


def _read(path: str | Path) -> Priors:
    text = _text(Path(path))
    try:
        doc = json.loads(text)
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
            raise ValueError(f"format {found!r}, not {FORMAT!r} (another version's table: "
                             "build it again with this one)")
        priors = Priors([_device(d) for d in doc["devices"]], str(path))
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as e:
        raise _refused(path, f"{type(e).__name__}: {e}") from None
    if not priors.devices:
        raise _refused(path, "it names no device model")
    return priors


def _text(path: Path) -> str:
    """The file's text; a missing file, a folder or a binary file refused in one line (a
    missing name may be a misspelt auto, on or off)."""
    if not path.exists():
        raise _refused(path, "no such file; the values are auto, on, off, or a priors "
                             "table's file")
    if path.is_dir():
        raise _refused(path, "a folder")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise _refused(path, "not JSON text") from None
    except OSError as e:
        raise _refused(path, f"cannot be read ({e.strerror})") from None


def _refused(path: str | Path, why: str) -> InvalidConfiguration:
    return InvalidConfiguration(f"--priors {path}: not a priors table ({why}); build one "
                                "with 'reducetune priors -o FILE RESULTS.db...'")


def _device(d: dict[str, Any]) -> PriorDevice:
    bests = {w: {_bucket(n): [Prior(str(v), str(lab), rank, float(t))
                              for rank, (v, lab, t) in enumerate(points, 1)]
                 for n, points in sizes.items()}
             for w, sizes in d["bests"].items()}
    cc = tuple(int(v) for v in d["cc"])
    sm_count, peak_gbps = int(d["sm_count"]), float(d["peak_gbps"])
    # the nearest-device rule takes logarithms of these: a zero or a negative would fail later
    if len(cc) != 2 or sm_count < 1 or not math.isfinite(peak_gbps) or peak_gbps <= 0:
        raise ValueError(f"device {d['name']!r}: cc {list(cc)}, sm_count {sm_count}, "
                         f"peak_gbps {peak_gbps} (two integers, at least 1, above 0)")
    return PriorDevice(str(d["name"]), str(d["model"]), (cc[0], cc[1]), sm_count, peak_gbps,
                       bests)


def _bucket(n: str) -> int:
    """A bucket's size, at least 1 (its log2 is compared)."""
    if int(n) < 1:
        raise ValueError(f"bucket size {n}")
    return int(n)
