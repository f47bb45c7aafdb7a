"""The axis benchmark's on-the-spot tune without a GPU (benchmarks/_axis_tune.py): which points
it measures beside a preset, and which of them its screening pass keeps for the rounds. Each
neighbour is a valid point of the type's space that differs from the preset in one parameter,
and vec goes to every valid width: up to 16-byte loads, two declared steps above the staged
preset's vec 2 for bfloat16, one for float32, none for float64 (whose vec 2 is already 16
bytes). The screening is fed fake timers (callables returning made-up seconds), no GPU."""

from __future__ import annotations

import pytest

from reducetune._space import limits_for_arch
from reducetune.benchmarks._axis_tune import GIVE_UP, Candidate, Tuner, _new_points, kept, screen


def _neighbours(dtype: str, preset: str) -> tuple[Tuner, dict, list[Candidate]]:
    t = Tuner(dtype, "sum", limits_for_arch("sm_90"), [(1 << 20, 2, 1)])
    p = t.space.preset(preset)
    base = dict(t.space.parse(p.variant_label, p.launch_label).params)
    return t, base, t.neighbours(Candidate(preset, p.variant_label, p.launch_label))


@pytest.mark.parametrize("dtype, vecs", [("bfloat16", {1, 4, 8}), ("float16", {1, 4, 8}),
                                         ("float32", {1, 4}), ("float64", {1})])
def test_the_staged_preset_neighbours_reach_16_byte_loads(dtype, vecs):
    t, base, near = _neighbours(dtype, "staged_short_rows")
    assert base["strategy"] == "staged" and base["vec"] == 2
    got = set()
    for c in near:
        p = t.space.parse(c.variant, c.launch)
        assert not t.space.check(p), c.name  # only valid points are measured
        changed = {k for k, v in dict(p.params).items() if base[k] != v}
        assert len(changed) == 1, c.name
        if changed == {"vec"}:
            got.add(dict(p.params)["vec"])
    assert got == vecs


def test_vec_widens_only_as_far_as_16_bytes():
    # group_short_rows has vec 1: float32 steps to 2 and widens to 4, never to 8 (32 bytes)
    t, _, near = _neighbours("float32", "group_short_rows")
    vecs = sorted(dict(t.space.parse(c.variant, c.launch).params)["vec"] for c in near
                  if c.name.split()[-1].startswith("vec="))
    assert vecs == [2, 4]


def _fake(times: list[float], calls: list[str], name: str):
    """A timer returning `times` in turn (the last one again once they run out), recording
    each call."""
    left = list(times)

    def once() -> float:
        calls.append(name)
        return left.pop(0) if len(left) > 1 else left[0]

    return once


def test_screening_gives_a_far_slower_candidate_no_more_calls_and_keeps_the_fastest_of_each():
    calls: list[str] = []
    timers = {"fast": _fake([2e-3, 1e-3, 1.1e-3], calls, "fast"),
              "close": _fake([1.4e-3], calls, "close"),
              "slow": _fake([GIVE_UP * 1e-3 * 1.01], calls, "slow"),  # just over the cut
              "edge": _fake([GIVE_UP * 1e-3 * 0.99, 1e-3], calls, "edge")}  # just under it
    got = screen(timers, warm=True)
    assert got["fast"] == {"screen_s": 1e-3, "screen_calls": 3}
    assert got["slow"]["screen_calls"] == 1 and calls.count("slow") == 2  # warm-up + one
    assert got["edge"] == {"screen_s": 1e-3, "screen_calls": 3}
    assert calls.count("fast") == 4  # warm-up + three
    # no warm-up where the verification call warmed it; the cut starts from `best`
    calls.clear()
    got = screen({"late": _fake([1.0], calls, "late")}, warm=False, best=1e-3)
    assert calls == ["late"] and got["late"]["screen_calls"] == 1


def test_a_slow_candidate_screened_first_still_gets_one_call():
    # the fastest comes last: the cut is taken after one call of each, not in order
    calls: list[str] = []
    got = screen({"slow": _fake([1.0], calls, "slow"), "fast": _fake([1e-3], calls, "fast")},
                 warm=False)
    assert calls.count("slow") == 1 and got["slow"]["screen_calls"] == 1
    assert got["fast"]["screen_calls"] == 3


def test_the_rounds_get_the_close_candidates_and_the_best_batch_invariant_one():
    def cand(name: str, bi: bool) -> Candidate:
        return Candidate(name, name, "l", choice={"batch_invariant": bi})

    every = [cand("a", False), cand("b", False), cand("c", False), cand("d", True),
             cand("e", True)]
    screened = {"a": 1.0, "b": 1.49, "c": 1.51, "d": 3.0, "e": 2.0}
    got = kept(every, {k: {"screen_s": v} for k, v in screened.items()})
    assert [c.name for c in got] == ["a", "b", "e"]  # c is out; e the fastest invariant
    got = kept(every, {k: {"screen_s": v} for k, v in {**screened, "e": 1.2}.items()})
    assert [c.name for c in got] == ["a", "b", "e"]  # within the factor: once, in order


def test_the_widths_of_every_close_preset_are_screened_each_point_once():
    # the second stage: the best three's neighbourhoods and every close preset's vec widths,
    # a point reached twice measured once, a preset's own point not again
    t = Tuner("float32", "sum", limits_for_arch("sm_90"), [(1, 2, 1 << 20)])
    presets = t.presets()
    tile = next(c for c in presets if c.name == "tile_columns")
    widths = t.neighbours(tile, ("vec",))
    assert widths and all(n.name.startswith("tile_columns vec=") for n in widths)
    near = _new_points(t.neighbours(tile) + widths + presets, presets)
    keys = [(c.variant, c.launch) for c in near]
    assert len(keys) == len(set(keys)) == len(t.neighbours(tile))
    assert not {(c.variant, c.launch) for c in presets} & set(keys)


class _FakeX:
    """Stands for the input tensor: the tune asks it for its float64 reference, which the
    fake verification below does not read, and its shape (the view that fitted tiles are
    derived from: rows here, 2^20 of 2, the tests' Tuner's shape, so none)."""

    shape = (1 << 20, 2)

    def double(self):
        return self

    def sum(self, dim: int):
        return self


def _fake_tune(monkeypatch, seconds, wrong: str = "") -> dict[str, int]:
    """The tune's timers return seconds(point name) and count their calls (returned); every
    point verifies but `wrong`, and thread_columns alone is batch_invariant."""
    from reducetune.benchmarks import _axis_tune

    calls: dict[str, int] = {}

    def timers(tuner, cands, x, axis):
        def timer(name):
            def once():
                calls[name] = calls.get(name, 0) + 1
                return seconds(name)
            return once
        return {c.name: timer(c.name) for c in cands}

    def verified(tuner, c, x, axis, want, bound):  # the verification call, timed
        c.choice = {"batch_invariant": c.name == "thread_columns", "source": "table"}
        return None if c.name == wrong else seconds(c.name)

    monkeypatch.setattr(_axis_tune, "_timers", timers)
    monkeypatch.setattr(_axis_tune, "_verified", verified)
    monkeypatch.setattr(_axis_tune, "sum_bound", lambda x, axis, want: None)
    return calls


def test_the_tune_screens_times_the_close_ones_and_the_transfer_and_never_picks_a_wrong_one(
        monkeypatch):
    from reducetune.benchmarks import _axis_tune

    t = Tuner("float32", "sum", limits_for_arch("sm_90"), [(1 << 20, 2, 1)])
    # made-up seconds by point name: staged leads; its vec=4 would be faster but is wrong;
    # block_rows is 100x slower (screened out); the transfer is 2x slower, timed regardless
    def seconds(name: str) -> float:
        if name.startswith("transfer"):
            return 2e-3
        return {"staged_short_rows": 1e-3, "staged_short_rows unroll=4": 1.2e-3,
                "staged_short_rows vec=4": 0.5e-3, "block_rows": 0.1,
                "thread_columns": 1.4e-3}.get(name, 1.6e-3)

    calls = _fake_tune(monkeypatch, seconds, wrong="staged_short_rows vec=4")
    staged = t.space.preset("staged_short_rows")
    moved = Candidate("transfer staged", staged.variant_label, staged.launch_label)
    got = _axis_tune.tune_shape(t, _FakeX(), 1, 10, moved)
    by = {c["name"]: c for c in got["candidates"]}
    assert got["best"].name == "staged_short_rows"
    assert "staged_short_rows vec=4" in got["rejected"] and "staged_short_rows vec=4" not in by
    # 100x slower and over FAR_S: its verification call, timed, was its only call
    assert by["block_rows"]["screened_out"] and by["block_rows"]["screen_calls"] == 1
    assert by["block_rows"]["screen_s"] == 0.1 and "block_rows" not in calls
    assert by["staged_short_rows unroll=4"]["samples"] == 10  # within 1.5x: in the rounds
    assert by["transfer staged"]["samples"] == 10
    assert got["transfer"] == {"verified": True, "median_s": 2e-3, "ratio_to_best": 2.0}
    # thread_columns (1.4x) is in the rounds; the best batch_invariant point is timed there
    assert got["best_batch_invariant"].name == "thread_columns"
    assert all(c["screened_out"] for c in by.values() if seconds(c["name"]) > 1.5e-3
               and not c["name"].startswith("transfer"))


def test_split_and_unroll_step_two_declared_values_either_way():
    # split_long_rows (split 32, unroll 4): split 8 .. 128 and unroll 1, 2, 8, so that 4 rows of
    # 2^22 reach 128 blocks a row (STEPS); block_size and lanes still step once
    t, base, near = _neighbours("float32", "split_long_rows")
    assert (base["split"], base["unroll"], base["block_size"]) == (32, 4, 512)
    by: dict[str, set] = {}
    for c in near:
        name, value = c.name.split()[-1].split("=")
        by.setdefault(name, set()).add(dict(t.space.parse(c.variant, c.launch).params)[name])
    assert by["split"] == {8, 16, 64, 128}
    assert by["unroll"] == {1, 2, 8}
    assert by["block_size"] == {256, 1024}


VEC4 = {"block_rows_vec4", "split_rows_vec4", "tile_columns_vec4_split", "tile_tall_columns_vec4",
        "group_pairs_vec4"}


@pytest.mark.parametrize("dtype, refused", [("float32", set()), ("bfloat16", set()),
                                            ("float64", VEC4)])
def test_the_vec_4_presets_are_screened_for_every_type_whose_loads_stay_within_16_bytes(
        dtype, refused):
    t = Tuner(dtype, "sum", limits_for_arch("sm_90"), [(2048, 8192, 1)])
    screened = {c.name for c in t.presets()}
    assert VEC4 - refused <= screened and not refused & screened
    for name in refused:
        reasons = [why for _, why in t.space.preset(name).reasons]
        assert reasons == ["a vector load is at most 16 bytes"], name


def test_only_presets_within_widths_within_of_the_best_get_their_other_vec_widths(monkeypatch):
    from reducetune.benchmarks import _axis_tune
    from reducetune.benchmarks._axis_tune import WIDTHS_WITHIN

    t = Tuner("float32", "sum", limits_for_arch("sm_90"), [(1 << 20, 2, 1)])
    # staged leads; block_rows_vec4 and tile_columns lie between WIDTHS_WITHIN and GIVE_UP
    # (screened, no widths); warp_rows 5x slower gets its widths; the rest lies past GIVE_UP
    far = {"block_rows_vec4": 2 * WIDTHS_WITHIN, "tile_columns": 0.9 * GIVE_UP,
           "warp_rows": 5.0, "staged_short_rows": 1.0, "thread_columns": 1.3,
           "staged_short_rows_vec8": 1.1, "group_short_rows": 1.2}
    _fake_tune(monkeypatch, lambda name: 1e-3 * far.get(name.split()[0], 2 * GIVE_UP))
    names = {c["name"] for c in _axis_tune.tune_shape(t, _FakeX(), 1, 10)["candidates"]}
    assert {"block_rows_vec4", "tile_columns", "warp_rows"} <= names
    assert "warp_rows vec=4" in names  # (vec=2 is warp_rows_vec2, screened once)
    assert not {n for n in names if n.startswith(("block_rows_vec4 ", "tile_columns "))}


def test_a_far_slower_verification_call_is_a_points_only_call_unless_it_is_short(monkeypatch):
    """A point whose verification call (timed) took over GIVE_UP times the fastest gets no call
    after it where it also took over FAR_S; a shorter one (a first call may carry one-time
    costs) gets a screening call, and only that call decides."""
    from reducetune.benchmarks import _axis_tune
    from reducetune.benchmarks._axis_tune import FAR_S

    t = Tuner("float32", "sum", limits_for_arch("sm_90"), [(1 << 20, 2, 1)])
    best = FAR_S / (4 * GIVE_UP)  # 4x under the cut: GIVE_UP x best is below FAR_S
    first = {"staged_short_rows": best, "block_rows": 2 * FAR_S,  # far: one call
             "warp_rows": FAR_S / 2}  # over GIVE_UP x best, under FAR_S: screened again
    def verified(tuner, c, *args):  # the verification call, timed
        c.choice = {"source": "table"}
        return first.get(c.name.split()[0], 1.2 * best)

    calls = _fake_tune(monkeypatch, lambda name: 1.1 * best if name == "warp_rows" else
                       first.get(name.split()[0], 1.2 * best))
    monkeypatch.setattr(_axis_tune, "_verified", verified)
    by = {c["name"]: c for c in _axis_tune.tune_shape(t, _FakeX(), 1, 10)["candidates"]}
    assert "block_rows" not in calls and by["block_rows"]["screen_calls"] == 1
    assert calls["warp_rows"] >= 1 and by["warp_rows"]["screen_s"] == 1.1 * best


def test_the_tune_climbs_from_a_neighbour_that_took_the_lead_and_stops_after_climb_rounds(
        monkeypatch):
    """A neighbour that beats the best three gets its own neighbourhood screened (bfloat16 rows
    of 128 on an H200: group_pairs_vec4's lanes=4 neighbour led, and its unroll 1 at block 128
    came faster): here each step along unroll, block_size, vec and then lanes is faster, so the
    best lies four steps from the preset; the climb takes CLIMB_ROUNDS of them and stops."""
    from reducetune.benchmarks import _axis_tune
    from reducetune.benchmarks._axis_tune import CLIMB_ROUNDS

    t = Tuner("float32", "sum", limits_for_arch("sm_90"), [(1 << 20, 2, 1)])
    path = ["staged_short_rows", "staged_short_rows unroll=4",
            "staged_short_rows unroll=4 block_size=512",
            "staged_short_rows unroll=4 block_size=512 vec=4",
            "staged_short_rows unroll=4 block_size=512 vec=4 unroll=2",
            "staged_short_rows unroll=4 block_size=512 vec=4 unroll=2 block_size=1024"]
    assert CLIMB_ROUNDS == 3  # the path's last step lies one round beyond the climb

    def seconds(name: str) -> float:
        return 1e-3 * (1.0 - 0.1 * path.index(name)) if name in path else 2e-3

    _fake_tune(monkeypatch, seconds)
    got = _axis_tune.tune_shape(t, _FakeX(), 1, 10)
    names = {c["name"] for c in got["candidates"]}
    # the first round reached unroll=4; the climb block_size=512, vec=4, then unroll=2
    assert got["best"].name == path[4]
    assert set(path[:5]) <= names and path[5] not in names  # the climb stopped
    # every point once, however many rounds reached it
    assert len(names) == len(got["candidates"])
    # the climb screened the best's neighbourhood alone: every candidate is a preset or a
    # neighbour (its name less one " parameter=value") of a preset or of a climbed point
    presets = {c.name for c in t.presets()}
    parents = {n.rsplit(" ", 1)[0] for n in names if n not in presets}
    assert parents <= presets | set(path[:4]) and path[1] in parents


def test_the_climb_goes_on_from_a_point_tied_with_a_lead_already_climbed(monkeypatch):
    """H200 host 3, bfloat16 rows of 128: three points screened within 0.2 % of each other, the
    lead's neighbourhood already screened, and the faster point a neighbour of the others only.
    The climb takes the ties within CLIMB_TIES (not the lead alone, which stopped it there) and
    no point slower than that."""
    from reducetune.benchmarks import _axis_tune
    from reducetune.benchmarks._axis_tune import CLIMB_TIES

    t = Tuner("float32", "sum", limits_for_arch("sm_90"), [(1 << 20, 2, 1)])
    lead, tie, past = ("staged_short_rows", "staged_short_rows block_size=512",
                       "staged_short_rows vec=4")
    faster = tie + " unroll=2"  # two steps from the lead: a neighbour of the tie's alone
    beyond = past + " unroll=4"  # a neighbour of `past` alone, which screened past the ties
    assert CLIMB_TIES == 0.01
    times = {lead: 1.000e-3, tie: 1.002e-3, past: 1.02e-3, faster: 0.95e-3, beyond: 0.5e-3}
    _fake_tune(monkeypatch, lambda name: times.get(name, 2e-3))
    got = _axis_tune.tune_shape(t, _FakeX(), 1, 10)
    names = {c["name"] for c in got["candidates"]}
    assert {tie, past} <= names  # the lead's own neighbourhood (the first round's)
    assert got["best"].name == faster
    assert beyond not in names  # 2 % behind the lead: not a tie, never climbed


def test_a_split_tiles_neighbours_hold_its_twin_with_the_other_finish_and_an_unsplit_ones_not():
    """tile_columns_vec4_split (split 4) has a tile_ticket twin at the same geometry among its
    neighbours, and the twin has it back; tile_columns (split 1) has none: tile_ticket needs a
    split to finish."""
    t = Tuner("bfloat16", "sum", limits_for_arch("sm_90"), [(1, 8192, 32768)])

    def params(c: Candidate) -> dict:
        return dict(t.space.parse(c.variant, c.launch).params)

    split = t.space.preset("tile_columns_vec4_split")
    base = Candidate("tile_columns_vec4_split", split.variant_label, split.launch_label)
    twins = [c for c in t.neighbours(base) if c.name.endswith("strategy=tile_ticket")]
    assert len(twins) == 1
    assert params(twins[0]) == {**params(base), "strategy": "tile_ticket"}
    back = [c for c in t.neighbours(twins[0]) if c.name.endswith("strategy=tile")]
    assert [params(c) for c in back] == [params(base)]
    plain = t.space.preset("tile_columns")
    assert not [c for c in t.neighbours(Candidate("tile_columns", plain.variant_label,
                                                  plain.launch_label)) if "strategy=" in c.name]
