"""The axis benchmark's on-the-spot tune (python -m reducetune.benchmarks.axis). ``reducetune
tune --family axis --shapes default`` tunes the default shape grid into a results file; the
benchmark tunes each of its own shapes here instead, in the run that times the peers, so that
it needs no results file and its points are this GPU's. For each shape it screens every valid
preset of the axis family and, for columns, the tiles fitted to the shape (_axis_fitted.py),
then the neighbourhood of the best three (each stepped parameter one declared value up or
down, split and unroll two (STEPS), vec at every valid width: 16-byte loads lie two steps above
a preset's vec 2 for the 2-byte types; and a split tile's twin with the other finish, TWINS) and
every vec width of each preset not WIDTHS_WITHIN times slower than the best, then
(CLIMB_ROUNDS) the neighbourhoods of the best and of the points screened within CLIMB_TIES of
it (at most CLIMB_WIDTH) whose neighbourhoods were not screened; it verifies every point
against a float64
reference, and keeps the fastest.
Every point runs through the runtime (an AxisReducer whose table names it), so the point
measured is the point the benchmark then times as an application calls it.

Screening (screen()): a few timed calls of each verified point, the verification call its
warm-up; a point whose first timed call takes more than GIVE_UP times the fastest first call
gets no more (a block-per-row point over 2^27 rows of 2 takes 0.3-0.9 s a call on an H100, the best
0.4 ms). The verification call is timed too, its point prepared (compiled, loaded) before it:
one that took more than GIVE_UP times the fastest and over FAR_S gets no call after it (the calls
of such points were half of the tune's 124 s on the H100 on 2026-11-26, each paid twice). Only
the points within KEEP_WITHIN of the best screened go on to the rounds, beside the best
batch_invariant point (its cost is reported) and a point transferred from another
GPU's run (--transfer), which are never screened out.

Timing in the rounds: hot data, one launch between two CUDA events, the candidates in shuffled
rounds until each median is known to 1 % (benchmarks._axis_stats.rounds), the median. The
chosen point is then also measured in the tuner's protocol (protocol_time: the worker's cold
samples, L2 flushed, graph replay, the tune's stopping rule), as ``reducetune tune`` would.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from reducetune import _core
from reducetune._space import Space
from reducetune.benchmarks._axis_fitted import BLOCK_SIZES, fitted_tiles
from reducetune.benchmarks._axis_peers import cxx_axis_timer
from reducetune.benchmarks._axis_stats import rounds, stats
from reducetune.benchmarks.runtime import _torch_timer
from reducetune.errors import Error
from reducetune.evaluate.base import data_of, workload
from reducetune.runtime.axis import AxisReducer

NEIGHBOURS_OF = 3  # the best screened presets whose neighbourhoods are screened
SCREEN_CALLS = 3  # timed calls per point in the screening pass
GIVE_UP = 50.0  # a first timed call this many times the fastest so far: no more calls
KEEP_WITHIN = 1.5  # screened points within this factor of the best go on to the rounds
STEPPED = ("block_size", "unroll", "vec", "split", "lanes")
# Declared values stepped either way where not one. split: the blocks of a shape's rows fill
# the GPU at outer x split of about 500-1000 (4-8 blocks on each of 132 SMs), which one step
# from a preset's split reaches for few row counts (H100 2026-11-26: 4 rows of 2^22 at 2^24
# ran split_long_rows' 128 blocks, under one per SM; 128-256 blocks a row, two steps above its
# 32, fill it); unroll: one step from a preset's 4 never tried 1, nor 8 from 2. Two steps add
# up to 3 points to each of the best three (split up to 4 values, unroll up to 3).
STEPS = {"split": 2, "unroll": 2}
# The vec widths of a preset that is not among the best three are screened only where it came
# within this factor of the best: in both 2026-11-26 runs (H100, H200), none of the ~300
# widths of presets 10-50x slower than the best came within KEEP_WITHIN of the best.
WIDTHS_WITHIN = 10.0
# Rounds of a climb after the first neighbourhood (_climb). One round stopped a step short: H200,
# bfloat16 rows of 128, group_pairs_vec4's lanes=4 neighbour led (134.9 us) and its own
# neighbours came to 129.4; the climb took the H200's worst 2^28 shapes from 0.94-0.95 to
# 0.97-0.98 x the ceiling (docs/results/h200x4_2026-11-27_axis_climb).
CLIMB_ROUNDS = 3
# A climb round climbs from every point screened within CLIMB_TIES of the lead (at most
# CLIMB_WIDTH, the best first), since three calls cannot order points this close: on H200 host 3
# (docs/results/h200_2026-11-27_axis_bench_primed_host3) three rows-of-128 points screened
# within 0.2 us, the climb stopped at the first, and a neighbour of the others 1.7 % faster
# (block 128, unroll 1) was never screened.
CLIMB_TIES = 0.01
CLIMB_WIDTH = 3
# A verification call over GIVE_UP times the fastest is the point's only call where it also took
# this long: far above what a first call may add (a kernel's first launch, partials allocated:
# well under a millisecond), so that a point is never given up for its one-time costs.
FAR_S = 5e-3
TRANSFER = "transfer "  # the name of a transferred point's candidate: "transfer <its name>"
FITTED = "fitted_tile"  # the name of the tile fitted to the shape (block 256; others add bs)
TWINS = {"tile": "tile_ticket", "tile_ticket": "tile"}  # a split tile's two finishes, same bits
FITTED_AS = {"block_size": BLOCK_SIZES[0], "strategy": "tile"}  # FITTED alone; others name theirs


def own_name(name: str) -> str:
    """A point's name without the "transfer " prefixes runs gave it: the other GPU's best may
    itself be a point that GPU's run was given (the H200's run of 2026-11-26 named such a
    point "transfer transfer tile_columns_split lanes=16"); its name is its preset's."""
    while name.startswith(TRANSFER):
        name = name[len(TRANSFER):]
    return name


def transfer_name(name: str) -> str:
    """The candidate name of another GPU's point `name`: one "transfer " prefix, never two."""
    return TRANSFER + own_name(name)


@dataclass
class Candidate:
    name: str  # the preset, or "<preset> block_size=512"
    variant: str
    launch: str
    choice: dict[str, Any] = field(default_factory=dict)


class Tuner:
    """Candidates and their reducers for one (type, operator) on this GPU; a reducer per point,
    kept for one shape (release() closes them)."""

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

    def release(self) -> None:
        """Closes this shape's reducers, freeing the device memory they hold: a split point
        keeps partials of outputs x split accumulators (32 GiB for a 512-way split of 2^24
        columns), and the reducers kept across shapes ran an H200 out of memory. Modules are
        compiled once either way (the runtime's compile cache on disk)."""
        for reducer in self._reducers.values():
            reducer.close()
        self._reducers.clear()

    def presets(self) -> list[Candidate]:
        return [Candidate(p.name, p.variant_label, p.launch_label) for p in self.space.presets()
                if not p.reasons]

    def fitted(self, shape: tuple[int, int, int]) -> list[Candidate]:
        """The valid tiles fitted to `shape` (_axis_fitted.fitted_tiles; none for rows), named
        FITTED, with " block_size=512" for the wider block and " strategy=tile_ticket" for a
        split tile's one-launch twin."""
        out = []
        for params in fitted_tiles(shape, _core.element_bytes(self.dtype),
                                   self.space.limits.sm_count, self.space.choices()):
            p = self.space.point(params)
            if not self.space.check(p):
                name = FITTED + "".join(f" {k}={params[k]}" for k, v in FITTED_AS.items()
                                        if params[k] != v)
                out.append(Candidate(name, str(p.variant_label), str(p.launch_label)))
        return out

    def neighbours(self, c: Candidate, stepped: tuple[str, ...] = STEPPED) -> list[Candidate]:
        """Each of the `stepped` parameters one declared value up or down (STEPS: more), and
        vec at every width, where the point stays valid."""
        base = dict(self.space.parse(c.variant, c.launch).params)
        choices = self.space.choices()
        out = []
        for name in stepped:
            values = choices.get(name, [])
            if base.get(name) not in values:
                continue
            k, far = values.index(base[name]), STEPS.get(name, 1)
            steps = ([v for v in values if v != base[name]] if name == "vec" else
                     [values[j] for j in range(k - far, k + far + 1)
                      if j != k and 0 <= j < len(values)])
            for v in steps:
                p = self._valid(base, name, v)
                if p is not None:
                    out.append(Candidate(f"{c.name} {name}={v}", str(p.variant_label),
                                         str(p.launch_label)))
        return out + self._finish_twin(c, base)

    def _finish_twin(self, c: Candidate, base: dict[str, Any]) -> list[Candidate]:
        """A split tile's other finish: tile <-> tile_ticket at the same geometry (TWINS), where
        the space takes it (tile_ticket needs split >= 2). Measured, not assumed: the ticket lost
        by 12-31 us at splits 4-256 (H100, docs/results/h100_2026-11-27_axis_ticket_twins)."""
        twin = TWINS.get(base.get("strategy", ""))  # both declared by the axis family
        p = self._valid(base, "strategy", twin) if twin else None
        return [] if p is None else [Candidate(f"{c.name} strategy={twin}", str(p.variant_label),
                                               str(p.launch_label))]

    def _valid(self, base: dict[str, Any], name: str, value: Any) -> Any:
        """The point `base` with `name` set to `value`, or None where the space refuses it."""
        p = self.space.point({**base, name: value})
        return None if self.space.check(p) else p


def _verified(t: Tuner, c: Candidate, x: Any, axis: int, want: Any, bound: Any
              ) -> float | None:
    """The seconds of the candidate's verification call (between CUDA events, its point
    prepared before: choice() compiles and loads it) where its answer lies within the float
    bound of every output; None for a wrong point (never the best) or one this GPU cannot run."""
    got: list[Any] = []
    try:
        reducer = t.reducer(c)
        c.choice = reducer.choice(*_view(x, axis))
        seconds = _torch_timer(lambda: got.append(reducer(x, axis)))()
    except Error as e:  # a point this GPU cannot run: a fallback would time another point
        c.choice = {"error": str(e)}
        return None
    if c.choice.get("source") != "table":
        return None
    return seconds if bool(((got[0].double() - want).abs() <= bound).all()) else None


def _view(x: Any, axis: int) -> tuple[int, int, int]:
    return (1, x.shape[0], x.shape[1]) if axis == 0 else (x.shape[0], x.shape[1], 1)


def _timers(t: Tuner, cands: list[Candidate], x: Any, axis: int
            ) -> dict[str, Callable[[], float]]:
    return {c.name: cxx_axis_timer(t.reducer(c), x, _view(x, axis)) for c in cands}


def screen(timers: dict[str, Callable[[], float]], warm: bool = True, best: float = math.inf,
           calls: int = SCREEN_CALLS, give_up: float = GIVE_UP) -> dict[str, dict[str, float]]:
    """Each contender's fastest of up to `calls` timed calls, after one warm-up call where
    `warm`: one call of each first, then the rest only for those whose first call took at
    most `give_up` times the fastest first call (or `best`, a time screened before): a slow
    one costs two calls, not dozens, wherever it comes in the order."""
    first = {}
    for name, timer in timers.items():
        if warm:
            timer()
        first[name] = timer()
    best = min([best, *first.values()])
    out = {}
    for name, timer in timers.items():
        times = [first[name]]
        while len(times) < calls and times[0] <= give_up * best:
            times.append(timer())
        out[name] = {"screen_s": min(times), "screen_calls": len(times)}
    return out


def kept(every: list[Candidate], screened: dict[str, dict[str, float]],
         within: float = KEEP_WITHIN) -> list[Candidate]:
    """The candidates within `within` of the best screened, and the best batch_invariant one
    (what batch invariance costs is measured in the same rounds)."""
    lead = min(screened[c.name]["screen_s"] for c in every)
    out = [c for c in every if screened[c.name]["screen_s"] <= within * lead]
    invariant = [c for c in every if c.choice.get("batch_invariant")]
    bi = min(invariant, key=lambda c: screened[c.name]["screen_s"]) if invariant else None
    return out + ([bi] if bi is not None and bi not in out else [])


def sum_bound(x: Any, axis: int, want: Any) -> Any:
    """What a correct sum may miss by, per output: the output type's rounding of the exact sum
    plus a float32 accumulation of r terms (half types accumulate in float32), twice over."""
    import torch  # optional: only for PyTorch tensors

    eps_out = torch.finfo(x.dtype).eps
    return (eps_out * want.abs() + 2 * x.shape[axis] * 2.0**-24 *
            x.double().abs().sum(dim=axis) + 1e-30)


Check = Callable[[list[Candidate]], dict[str, float]]


def _screened(t: Tuner, check: Check, x: Any, axis: int
              ) -> tuple[list[Candidate], dict[str, dict[str, float]], list[str]]:
    """Every verified preset and fitted tile screened, then the verified neighbours of the best
    three and the other widths of vec of every preset within WIDTHS_WITHIN of the best: the
    candidates, their screening times and the names of those that failed verification."""
    presets = t.presets()
    presets += _new_points(t.fitted(_view(x, axis)), presets)
    firsts = check(presets)
    ok = [c for c in presets if c.name in firsts]
    screened = _screen_verified(t, ok, firsts, x, axis, math.inf)
    lead = min(v["screen_s"] for v in screened.values())
    top = sorted(ok, key=lambda c: screened[c.name]["screen_s"])[:NEIGHBOURS_OF]
    # every width of each preset that screened within WIDTHS_WITHIN (a tile preset 7x slower
    # over 2 rows of 2^27 columns may lead at vec 4); the whole neighbourhood of the best three
    widths = [n for c in ok if screened[c.name]["screen_s"] <= WIDTHS_WITHIN * lead
              for n in t.neighbours(c, ("vec",))]
    near = _new_points([n for c in top for n in t.neighbours(c)] + widths, ok)
    tried = presets + near
    firsts = check(near)
    every = ok + [c for c in near if c.name in firsts]
    screened.update(_screen_verified(t, every[len(ok):], firsts, x, axis, lead))
    _climb(t, check, x, axis, every, screened, tried, {c.name for c in top})
    return every, screened, [c.name for c in tried if c not in every]


def _climb(t: Tuner, check: Check, x: Any, axis: int, every: list[Candidate],
           screened: dict[str, dict[str, float]], tried: list[Candidate], climbed: set[str]
           ) -> None:
    """Up to CLIMB_ROUNDS times, from the points screened within CLIMB_TIES of the best that are
    not `climbed` (whose neighbourhoods were screened; at most CLIMB_WIDTH, the best first):
    their neighbours not yet `tried`, verified, screened, added to `every`, `screened` and
    `tried` in place. Stops where the best and its ties were all climbed or have no new
    neighbour. Not the best three's every round: those took 20-37 s a shape on an H200, 2.5-6 x
    the tune without them."""
    for _ in range(CLIMB_ROUNDS):
        ranked = sorted(every, key=lambda c: screened[c.name]["screen_s"])
        best_s = screened[ranked[0].name]["screen_s"]
        ties = [c for c in ranked if screened[c.name]["screen_s"] <= best_s * (1 + CLIMB_TIES)
                and c.name not in climbed][:CLIMB_WIDTH]
        near = _new_points([n for c in ties for n in t.neighbours(c)], tried)
        climbed.update(c.name for c in ties)
        if not near:
            return
        tried += near
        firsts = check(near)
        more = [c for c in near if c.name in firsts]
        lead = min(v["screen_s"] for v in screened.values())
        screened.update(_screen_verified(t, more, firsts, x, axis, lead))
        every += more


def _screen_verified(t: Tuner, cands: list[Candidate], firsts: dict[str, float], x: Any,
                     axis: int, best: float) -> dict[str, dict[str, float]]:
    """screen() of the verified `cands` (the verification call warmed them), less those whose
    verification call, timed (`firsts`), was already far too slow: over GIVE_UP times the best
    (`best` or the fastest verification call) and over FAR_S; that call is their one sample."""
    cut = max(GIVE_UP * min([best, *firsts.values()]), FAR_S)
    far = {c.name: {"screen_s": firsts[c.name], "screen_calls": 1} for c in cands
           if firsts[c.name] > cut}
    rest = [c for c in cands if c.name not in far]
    return {**far, **screen(_timers(t, rest, x, axis), warm=False, best=best)}


def _new_points(cands: list[Candidate], known: list[Candidate]) -> list[Candidate]:
    """The first candidate of each point (variant, launch) that `known` does not hold."""
    seen, out = {(c.variant, c.launch) for c in known}, []
    for c in cands:
        if (c.variant, c.launch) not in seen:
            seen.add((c.variant, c.launch))
            out.append(c)
    return out


def tune_shape(t: Tuner, x: Any, axis: int, samples: int, transfer: Candidate | None = None
               ) -> dict[str, Any]:
    """The fastest verified point at this shape, with every candidate's screening time and,
    for those kept, its median in the rounds; the best batch_invariant point beside the best
    run_to_run one (what batch invariance costs); and `transfer` (another GPU's best point
    here), timed in the same rounds whatever its screening said: its median over the best
    of this run's own candidates (< 1: the other GPU's point beat this run's tune)."""
    want = x.double().sum(dim=axis)
    bound = sum_bound(x, axis, want)

    def check(cands: list[Candidate]) -> dict[str, float]:
        """The verified candidates' verification calls, in seconds, by name."""
        firsts = {c.name: _verified(t, c, x, axis, want, bound) for c in cands}
        return {name: s for name, s in firsts.items() if s is not None}

    every, screened, rejected = _screened(t, check, x, axis)
    close = kept(every, screened)
    moved = [transfer] if transfer is not None and check([transfer]) else []
    timed = rounds(_timers(t, close + moved, x, axis), samples)
    fastest = min(close, key=lambda c: timed[c.name]["median_s"])
    best = min(close + moved, key=lambda c: timed[c.name]["median_s"])
    invariant = [c for c in close + moved if c.choice.get("batch_invariant")]
    fastest_bi = min(invariant, key=lambda c: timed[c.name]["median_s"]) if invariant else None
    own_s = timed[fastest.name]["median_s"]
    return {"best": best, "best_batch_invariant": fastest_bi,
            "candidates": [_entry(c, screened.get(c.name, {}), timed.get(c.name))
                           for c in every + moved],
            "rejected": rejected,
            "transfer": None if transfer is None else {
                "verified": bool(moved),
                "median_s": timed[transfer.name]["median_s"] if moved else None,
                "ratio_to_best": timed[transfer.name]["median_s"] / own_s if moved else None}}


def _entry(c: Candidate, screened: dict[str, float], timed: dict[str, Any] | None
           ) -> dict[str, Any]:
    """A candidate in the JSON: its screening time, and its median where it went on to the
    rounds ("screened_out" where it did not)."""
    return {"name": c.name, "variant": c.variant, "launch": c.launch,
            "batch_invariant": bool(c.choice.get("batch_invariant")), **screened,
            **(timed if timed is not None else {"screened_out": True})}


def protocol_time(ev: Any, t: Tuner, c: Candidate, view: tuple[int, int, int]
                  ) -> dict[str, Any]:
    """The point `c` measured in the tuner's protocol by `ev` (a GpuEvaluator whose sampling
    is the tune's): on the tune's workload data (uniform, its seed), verified, cold samples
    with L2 flushed; its median and the median's 95 % interval, or why it failed."""
    w = workload(t.dtype, t.op, view)
    got = ev.evaluate(t.space.parse(c.variant, c.launch), _core.Problem(t.dtype, t.op, view),
                      data_of(w))
    if got.get("status") != "ok" or not got.get("samples_s"):
        return {"status": got.get("status", "failed"), "reason": got.get("reason", "")}
    return {"status": "ok", **stats(list(got["samples_s"])), "stopped": got.get("stopped")}
