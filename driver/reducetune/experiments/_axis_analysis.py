"""The axis experiment's numbers, from axis benchmark JSONs (``python -m
reducetune.benchmarks.axis`` writes one per GPU): per shape the winning strategy and its % of
the HBM peak, what batch invariance costs over the run_to_run best, and how a best tuned on one
GPU does on the other. Rows are read defensively: a key a row lacks is "not measured", since
older files lack keys newer ones have (per-row dtype, per-candidate screening, transfer).

A point's strategy is asked of the core (the axis space reads its own variant label back):
nothing here reads a label."""

from __future__ import annotations

import json
import lzma
import math
from pathlib import Path
from typing import Any

from reducetune import _core
from reducetune._space import Space, limits_for_arch
from reducetune.benchmarks._axis_tune import own_name, transfer_name
from reducetune.errors import Error, InvalidConfiguration
from reducetune.evaluate.base import percent_of

__all__ = ["load", "analyse", "transfers", "geomean", "shape_key"]

# A row without a dtype comes from the benchmark before it measured bfloat16 (7b19fbc), when
# it measured float32 only; every row so far is a sum (benchmarks/axis.py: Tuner(t, "sum")).
OLD_DTYPE, OLD_OP = "float32", "sum"
KINDS = ("rows", "columns")
WHAT = "an axis benchmark JSON (python -m reducetune.benchmarks.axis writes one per GPU)"


def load(path: Path) -> dict[str, Any]:
    """The benchmark's JSON (axis.json, or axis.json.xz as docs/results keeps the larger ones),
    or InvalidConfiguration saying why it is not one."""
    try:
        raw = Path(path).read_bytes()
        data = json.loads(lzma.decompress(raw) if str(path).endswith(".xz") else raw)
    except FileNotFoundError:
        raise InvalidConfiguration(f"{path} does not exist: name {WHAT}") from None
    except lzma.LZMAError:
        raise InvalidConfiguration(f"{path} is not {WHAT}: it is not xz-compressed") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise InvalidConfiguration(f"{path} is not {WHAT}: it is not JSON") from None
    why = _not_axis(data)
    if why:
        raise InvalidConfiguration(f"{path} is not {WHAT}: {why}")
    return data


def _not_axis(data: Any) -> str | None:
    """Why `data` is no axis benchmark result (None: it is one)."""
    if not isinstance(data, dict):
        return "its top level is not an object"
    if not isinstance(data.get("device"), dict) or "name" not in data["device"]:
        return "it names no device ('device' with a 'name')"
    if not isinstance(data.get("rows"), list):
        return "it has no 'rows' list"
    for i, row in enumerate(data["rows"]):
        if not (isinstance(row, dict) and row.get("kind") in KINDS
                and isinstance(row.get("view"), list) and len(row["view"]) == 3
                and all(isinstance(v, int) and v > 0 for v in row["view"])):
            return f"row {i} is no shape (kind rows|columns and view [outer, r, inner])"
    return None


def shape_key(s: dict[str, Any]) -> tuple[str, str, str, tuple[int, ...]]:
    """What makes two GPUs' rows the same problem: type, operator, kind and view."""
    return (s["dtype"], s["op"], s["kind"], tuple(s["view"]))


class Strategies:
    """The strategy of a point, asked of the core's axis space for the row's type, operator
    and the GPU's architecture; None for a point the space does not know (a family changed
    since the file was written)."""

    def __init__(self, device: dict[str, Any]):
        arch = device.get("arch") or 10 * int(device.get("cc_major", 9)) + int(
            device.get("cc_minor", 0))
        self.limits = limits_for_arch(str(arch))
        self._spaces: dict[tuple[str, str], Space] = {}

    def of(self, dtype: str, op: str, variant: str | None, launch: str | None) -> str | None:
        if not variant:
            return None
        if (dtype, op) not in self._spaces:
            self._spaces[(dtype, op)] = Space("axis", dtype, op, self.limits)
        try:
            point = self._spaces[(dtype, op)].parse(variant, launch or "")
        except Error:
            return None
        return str(point.params.get("strategy")) if "strategy" in point.params else None


def _median(c: Any) -> float | None:
    v = c.get("median_s") if isinstance(c, dict) else None
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) and v > 0 else None


def _transferred(row: dict[str, Any]) -> set[str]:
    """The names under which a --transfer run may have timed the other GPU's point among the
    row's candidates: "transfer <its name>" (benchmarks/axis.py, transfer_name) and, in files
    before that name lost its doubled prefix, "transfer " before the name the other run
    recorded, itself "transfer ..." where that run's best was a point it was given."""
    t = row.get("transfer")
    point = t.get("point") if isinstance(t, dict) else None
    name = point.get("name") if isinstance(point, dict) else None
    return {f"transfer {name}", transfer_name(name)} if isinstance(name, str) else set()


def candidates(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The row's own measured candidates (a median time): neither one screened out before its
    median nor the other GPU's point a --transfer run timed beside them (this GPU's tune did
    not find it: it is the transfer's, not the winner's). A file without candidates leaves
    what the row recorded of its bests (_recorded_bests)."""
    tune = row.get("tune") if isinstance(row.get("tune"), dict) else {}
    moved = _transferred(row)
    cands = [c for c in tune.get("candidates") or []
             if _median(c) is not None and c.get("name") not in moved]
    return cands or _recorded_bests(row.get("point"), tune)


def _recorded_bests(point: Any, tune: dict[str, Any]) -> list[dict[str, Any]]:
    """A row without candidates: the best point with its time, and the best batch_invariant
    point's name and time, as the row recorded them (none where it did not)."""
    out = []
    if isinstance(point, dict) and _median({"median_s": tune.get("best_s")}):
        out.append({**point, "median_s": tune["best_s"],
                    "batch_invariant": bool(point.get("batch_invariant"))})
    if _median({"median_s": tune.get("best_batch_invariant_s")}):
        out.append({"name": tune.get("best_batch_invariant"), "batch_invariant": True,
                    "median_s": tune["best_batch_invariant_s"]})
    return out


def _entry(c: dict[str, Any], strategy: str | None) -> dict[str, Any]:
    return {"name": c.get("name"), "variant": c.get("variant"), "launch": c.get("launch", ""),
            "median_s": _median(c), "batch_invariant": bool(c.get("batch_invariant")),
            "strategy": strategy}


def _bytes(s: dict[str, Any]) -> int:
    """Bytes read plus bytes written, as the core counts an axis problem's (the benchmark's
    % of peak counts the same)."""
    return _core.Problem(s["dtype"], "sum", tuple(s["view"])).bytes_read_and_written


def analyse(data: dict[str, Any]) -> dict[str, Any]:
    """One GPU's file: its provenance and its shapes (``_shape``)."""
    device = data["device"]
    strategies = Strategies(device)
    return {"device": device.get("name"), "uuid": device.get("uuid"),
            "date": data.get("date"), "commit": data.get("commit"),
            "command": data.get("command"), "protocol": _protocol(data),
            "skipped": [{"dtype": OLD_DTYPE, **k} for k in data.get("skipped") or []
                        if isinstance(k, dict) and {"kind", "r", "total"} <= k.keys()],
            "shapes": [_shape(row, device, strategies) for row in data["rows"]]}


def _protocol(data: dict[str, Any]) -> str | None:
    """How the run tuned its points, in its own words (None: the file does not say)."""
    said = data.get("protocol")
    point = said.get("reducetune_point") if isinstance(said, dict) else None
    return point if isinstance(point, str) else None


def _shape(row: dict[str, Any], device: dict[str, Any], strategies: Strategies
           ) -> dict[str, Any]:
    """One row: the winner (fastest candidate), its % of peak, the best batch_invariant point
    and its cost in % over the best (every candidate is run_to_run: the axis family has no
    atomics), and the transfer entry the run recorded."""
    s: dict[str, Any] = {"dtype": row.get("dtype", OLD_DTYPE), "op": row.get("op", OLD_OP),
                         "kind": row["kind"], "view": list(row["view"])}
    s["r"], s["outer_inner"] = s["view"][1], s["view"][0] * s["view"][2]
    s["total"] = s["r"] * s["outer_inner"]
    cands = candidates(row)
    best = min(cands, key=_median) if cands else None
    bis = [c for c in cands if c.get("batch_invariant")]
    bi = min(bis, key=_median) if bis else None
    s["best"], s["best_batch_invariant"] = (
        None if c is None else _entry(c, strategies.of(s["dtype"], s["op"], c.get("variant"),
                                                       c.get("launch")))
        for c in (best, bi))
    peak = row.get("peak") or device.get("peak_bytes_per_s")
    s["pct_peak"] = percent_of(_bytes(s) / _median(best), peak) if best else None
    s["bi_cost_pct"] = 100 * (_median(bi) / _median(best) - 1) if best and bi else None
    s["candidates"] = [_entry(c, None) for c in cands]
    t = row.get("transfer")
    s["recorded_transfer"] = t if isinstance(t, dict) else None
    s["recorded_best"] = _point(row.get("point"))
    return s


def _point(p: Any) -> dict[str, Any] | None:
    """A point as a row records it: its name (as recorded), variant and launch."""
    if not isinstance(p, dict):
        return None
    return {"name": p.get("name"), "variant": p.get("variant"), "launch": p.get("launch", "")}


def _name(device: Any) -> str:
    return str(device.get("name") if isinstance(device, dict) else device)


def _recorded(s: dict[str, Any]) -> dict[str, Any] | None:
    """The transfer this GPU's run measured (--transfer): its ratio to this GPU's best as the
    run gave it, else its median over this file's best median; a point that failed this
    GPU's verification has no ratio."""
    t = s["recorded_transfer"]
    if not t or not s["best"]:
        return None
    point = _point(t.get("point")) or {"name": t.get("point")}
    name = point["name"] or point.get("variant")
    found = {"from": _name(t.get("from_device")), "median_s": _median(t),
             "point": own_name(name) if isinstance(name, str) else name,
             "variant": point.get("variant"), "launch": point.get("launch")}
    if t.get("verified") is False:
        return {**found, "ratio": None, "source": "failed this GPU's verification"}
    ratio = t.get("ratio_to_best")
    if not isinstance(ratio, (int, float)) and _median(t):
        ratio = _median(t) / s["best"]["median_s"]
    if not isinstance(ratio, (int, float)) or ratio <= 0:
        return None
    return {**found, "ratio": float(ratio), "source": "measured by this GPU's run (--transfer)",
            "twin": _twin(s, found)}


def _twin(s: dict[str, Any], t: dict[str, Any]) -> float | None:
    """Where the moved point is also one of this GPU's own candidates (the same variant and
    launch, timed under two names in the same rounds): that candidate's median over this
    GPU's best, the same ratio measured under the point's own name. The two differ only
    through the rounds' noise: what a transfer ratio can resolve."""
    twins = [c for c in s["candidates"]
             if (c["variant"], c["launch"]) == (t["variant"], t["launch"])]
    return twins[0]["median_s"] / s["best"]["median_s"] if twins else None


def _among_candidates(s: dict[str, Any], other: dict[str, Any] | None,
                      from_device: str) -> dict[str, Any] | None:
    """The other GPU's best at this shape, where this GPU's run measured the same point among
    its own candidates."""
    if not other or not other["best"] or not s["best"]:
        return None
    theirs = (other["best"]["variant"], other["best"]["launch"])
    here = [c for c in s["candidates"] if (c["variant"], c["launch"]) == theirs]
    if not here:
        return None
    return {"from": from_device, "point": other["best"]["name"],
            "ratio": here[0]["median_s"] / s["best"]["median_s"],
            "median_s": here[0]["median_s"], "source": "among this GPU's candidates"}


def transfers(gpus: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per direction (a best tuned on one GPU, run on another): per shape the ratio of its
    median to this GPU's best (1.00: as fast as this GPU's own best), and their geometric
    mean. A transfer entry the run recorded for a GPU first; else that GPU's file's best
    found among this file's candidates. Two files of one GPU (one UUID) make no direction."""
    directions: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for here in gpus:
        others = [g for g in gpus if g is not here and
                  (g["uuid"] is None or g["uuid"] != here["uuid"])]
        for s in here["shapes"]:
            recorded = _recorded(s)
            if recorded:
                recorded["files_best"] = _files_best(recorded, others, s)
            found = [recorded] if recorded else []
            found += [t for o in others if not recorded or o["device"] != recorded["from"]
                      if (t := _among_candidates(s, _same_shape(o, s), o["device"]))]
            for t in found:
                key = (t["from"], here["device"])
                directions.setdefault(key, []).append(
                    {**t, **{k: s[k] for k in ("dtype", "op", "kind", "r", "outer_inner")}})
    return [{"from": a, "to": b, "shapes": rows,
             "geomean": geomean([t["ratio"] for t in rows if t["ratio"] is not None]),
             "files_best": _count(rows, True), "not_files_best": _count(rows, False),
             "twins": [(t["ratio"], t["twin"]) for t in rows if t.get("twin") and t["ratio"]]}
            for (a, b), rows in directions.items()]


def _files_best(t: dict[str, Any], others: list[dict[str, Any]], s: dict[str, Any]
                ) -> bool | None:
    """Whether the point a --transfer run was given is the best that the file here of the GPU
    it came from records at this shape (None: no file here of that GPU). A run may have been
    given another run's file: the H100's run of 2026-11-26 took an earlier H200 run's."""
    theirs = [o for g in others if g["device"] == t["from"] if (o := _same_shape(g, s))]
    bests = [o["recorded_best"] for o in theirs if o.get("recorded_best")]
    if not bests:
        return None
    return any((b["variant"], b["launch"]) == (t["variant"], t["launch"]) for b in bests)


def _count(rows: list[dict[str, Any]], value: bool) -> int:
    return sum(1 for t in rows if t.get("files_best") is value)


def _same_shape(gpu: dict[str, Any], s: dict[str, Any]) -> dict[str, Any] | None:
    return next((o for o in gpu["shapes"] if shape_key(o) == shape_key(s)), None)


def geomean(xs: list[float]) -> float | None:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None
