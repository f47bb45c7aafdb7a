"""The axis benchmark's on-the-spot tune (python -m reducetune.benchmarks.axis): the axis
tuner is not wired into ``reducetune tune`` or the results file yet, so for each shape the
benchmark measures the axis family's presets, then a small neighbourhood of the best two
(each parameter one declared value up or down, and the widest valid vector: 16-byte loads,
which for the 2-byte types lie two steps above a preset's vec 2), verifies every point against
a float64 reference, and keeps the fastest. Every point runs through the runtime (an AxisReducer whose
table names it), so the point measured is the point the benchmark then times as an
application calls it.

Timing: hot data, one launch between two CUDA events, the candidates in rotating rounds
(benchmarks.runtime.interleaved_stats), the median. This is not the whole-array tuner's cold
protocol (L2 flushed, graph replay), which does not know shapes yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reducetune._space import Space
from reducetune.benchmarks.runtime import _torch_timer, interleaved_stats
from reducetune.errors import Error
from reducetune.runtime.axis import AxisReducer

NEIGHBOURS_OF = 2  # the best presets whose neighbourhoods are measured
STEPPED = ("block_size", "unroll", "vec", "split", "lanes")


@dataclass
class Candidate:
    name: str  # the preset, or "<preset> block_size=512"
    variant: str
    launch: str
    reducer: AxisReducer | None = None
    choice: dict[str, Any] = field(default_factory=dict)


class Tuner:
    """Candidates and their reducers for one (type, operator) on this GPU; a reducer per point,
    kept across shapes (its module is loaded once)."""

    def __init__(self, dtype: str, op: str, limits: Any, shapes: list[tuple[int, int, int]]):
        self.dtype, self.op = dtype, op
        self.space = Space("axis", dtype, op, limits)
        self.shapes = shapes
        self._reducers: dict[tuple[str, str], AxisReducer] = {}

    def reducer(self, c: Candidate) -> AxisReducer:
        key = (c.variant, c.launch)
        if key not in self._reducers:
            table = [{"outer": o, "r": r, "inner": i, "variant": c.variant, "launch": c.launch}
                     for o, r, i in self.shapes]  # this point at every benchmark shape
            self._reducers[key] = AxisReducer(self.dtype, self.op, table=table)
        return self._reducers[key]

    def presets(self) -> list[Candidate]:
        return [Candidate(p.name, p.variant_label, p.launch_label) for p in self.space.presets()
                if not p.reasons]

    def neighbours(self, c: Candidate) -> list[Candidate]:
        """Each stepped parameter one declared value up or down, and vec at its widest, where
        the point stays valid."""
        base = dict(self.space.parse(c.variant, c.launch).params)
        choices = self.space.choices()
        out = []
        for name in STEPPED:
            values = choices.get(name, [])
            if base.get(name) not in values:
                continue
            k = values.index(base[name])
            steps = [values[j] for j in (k - 1, k + 1) if 0 <= j < len(values)]
            if name == "vec":  # 16-byte loads: two steps above vec 2 for the 2-byte types
                steps += next(([v] for v in reversed(values[k + 2:])
                               if self._valid(base, name, v) is not None), [])
            for v in steps:
                p = self._valid(base, name, v)
                if p is not None:
                    out.append(Candidate(f"{c.name} {name}={v}", str(p.variant_label),
                                         str(p.launch_label)))
        return out

    def _valid(self, base: dict[str, Any], name: str, value: Any) -> Any:
        """The point `base` with `name` set to `value`, or None where the space refuses it."""
        p = self.space.point({**base, name: value})
        return None if self.space.check(p) else p

def _verified(t: Tuner, c: Candidate, x: Any, axis: int, want: Any, bound: Any) -> bool:
    """The candidate's answer within the float bound of every output (a wrong point is never
    timed, and never the best)."""
    try:
        got = t.reducer(c)(x, axis)
    except Error as e:  # a point this GPU cannot run: a fallback would time another point
        c.choice = {"error": str(e)}
        return False
    c.choice = t.reducer(c).choice(*_view(x, axis))
    if c.choice.get("source") != "table":
        return False
    return bool(((got.double() - want).abs() <= bound).all())


def _view(x: Any, axis: int) -> tuple[int, int, int]:
    return (1, x.shape[0], x.shape[1]) if axis == 0 else (x.shape[0], x.shape[1], 1)


def _measure(t: Tuner, cands: list[Candidate], x: Any, axis: int, samples: int
             ) -> dict[str, dict[str, float]]:
    timers = {c.name: _torch_timer(lambda c=c: t.reducer(c)(x, axis)) for c in cands}
    return interleaved_stats(timers, samples)


def sum_bound(x: Any, axis: int, want: Any) -> Any:
    """What a correct sum may miss by, per output: the output type's rounding of the exact sum
    plus a float32 accumulation of r terms (half types accumulate in float32), twice over."""
    import torch  # optional: only for PyTorch tensors

    eps_out = torch.finfo(x.dtype).eps
    return (eps_out * want.abs() + 2 * x.shape[axis] * 2.0**-24 *
            x.double().abs().sum(dim=axis) + 1e-30)


def tune_shape(t: Tuner, x: Any, axis: int, samples: int) -> dict[str, Any]:
    """The fastest verified point at this shape, with every candidate's median, and the best
    batch_invariant point beside the best run_to_run one (what batch invariance costs)."""
    want = x.double().sum(dim=axis)
    bound = sum_bound(x, axis, want)
    ok = [c for c in t.presets() if _verified(t, c, x, axis, want, bound)]
    stats = _measure(t, ok, x, axis, samples)
    best = sorted(ok, key=lambda c: stats[c.name]["median_s"])[:NEIGHBOURS_OF]
    more = [n for c in best for n in t.neighbours(c) if n.name not in stats]
    more = [n for n in {n.variant + n.launch: n for n in more}.values()
            if _verified(t, n, x, axis, want, bound)]
    if more:  # the best presets again beside their neighbours, in the same rounds
        stats.update(_measure(t, best + more, x, axis, samples))
    every = ok + more
    fastest = min(every, key=lambda c: stats[c.name]["median_s"])
    invariant = [c for c in every if c.choice.get("batch_invariant")]
    fastest_bi = min(invariant, key=lambda c: stats[c.name]["median_s"]) if invariant else None
    return {"best": fastest, "best_batch_invariant": fastest_bi,
            "candidates": [{"name": c.name, "variant": c.variant, "launch": c.launch,
                            "batch_invariant": bool(c.choice.get("batch_invariant")),
                            **stats[c.name]} for c in every],
            "rejected": [c.name for c in t.presets() if c.name not in stats]}
