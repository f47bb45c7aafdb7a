"""Compiling ahead (issue 25, tuning/precompile.py, jit/compile_ahead.hpp): the variants a
time-limited run has not compiled before its first unit go to the worker's background threads
in the order the run reaches them, and what they compiled is what evaluate() then finds. NVRTC
needs no GPU: the _core tests compile for real (sm_90); the tuner's are over the fake worker."""

from __future__ import annotations

import json
import time

import reducetune
from reducetune import _core
from reducetune.tuning.config import TuneConfig
from reducetune.tuning.precompile import ahead_order, variant_points

from conftest import RESTRICT, RESTRICT_ARGS
from test_tune_options import FakeWorker, fake_worker, point_of  # noqa: F401 (a fixture)

ARCH = "sm_90"


def space(dtype: str = "float32", op: str = "sum", **restrict) -> reducetune.Space:
    return reducetune.Space("tunable", dtype, op, reducetune.limits_for_arch(ARCH), restrict)


def first_selected(s: reducetune.Space, allow_flagged: bool, nondeterministic: bool) -> list:
    """Each variant's first selected point in points(): what variant_points must give."""
    first: dict[str, str] = {}
    for p in s.points():
        if s.selected(p, allow_flagged, nondeterministic):
            first.setdefault(p.variant_label, p.launch_label)
    return list(first.items())


def test_variant_points_are_each_variants_first_selected_point():
    s = space(block_size=["128", "256"])
    for allow_flagged, nondeterministic in ((False, False), (True, True)):
        got = _core.variant_points(s, allow_flagged, nondeterministic)
        assert [(p.variant_label, p.launch_label) for p in got] == \
            first_selected(s, allow_flagged, nondeterministic)
    # the selection matters: flagged and nondeterministic variants only when admitted
    assert len(_core.variant_points(s, True, True)) > len(_core.variant_points(s))


def test_the_run_order_takes_each_types_operators_in_turn():
    configs = [TuneConfig(dtype=d, op=o, restrict=RESTRICT) for d in ("float64", "int32")
               for o in ("sum", "max")]
    spaces = [space(c.dtype, c.op, **c.restrict) for c in configs]
    order = ahead_order(configs, spaces)
    each = {(c.dtype, c.op): variant_points(c, s) for c, s in zip(configs, spaces)}
    assert len(order) == sum(len(v) for v in each.values())
    assert len({p.variant_label for p in order}) == len(order)  # one point per variant
    # float64 first (the configs' first type), its sum and max alternating; then int32
    assert [(p.dtype, p.op) for p in order[:4]] == [("float64", "sum"), ("float64", "max")] * 2
    assert {(p.dtype, p.op) for p in order[len(order) // 2:]} == {("int32", "sum"),
                                                                   ("int32", "max")}


def wait_for_background(timeout_s: float = 120.0) -> dict:
    """The background's counts once nothing waits and everything queued was taken."""
    end = time.monotonic() + timeout_s
    while True:
        n = _core.compile_ahead(None)
        taken = n["compiled"] + n["skipped"] + n["failed"] + n["dropped"]
        if n["waiting"] == 0 and taken == n["queued"] or time.monotonic() > end:
            return n
        time.sleep(0.05)


def test_what_the_background_compiled_is_in_the_cache_precompile_and_evaluate_use():
    # a corner no other test compiles: int64 max, block size 64, unroll 8
    points = _core.variant_points(space("int64", "max", block_size=["64"], unroll=["8"]))[:4]
    assert len(points) == 4
    before = wait_for_background()
    queued = _core.compile_ahead([p.to_dict() for p in points + points[:1]], ARCH)
    assert queued["queued"] == before["queued"] + 4  # one request per distinct variant
    after = wait_for_background()
    assert after["compiled"] + after["skipped"] == before["compiled"] + before["skipped"] + 4
    assert after["failed"] == before["failed"] and after["busy_s"] > before["busy_s"]
    summary = _core.precompile(points, ARCH)  # nothing left for it to compile
    assert (summary["compiled"], summary["cached"]) == (0, 4)


def test_an_empty_queue_drops_what_waits():
    points = _core.variant_points(space("int32", "min", block_size=["32"], unroll=["1"]))
    wait_for_background()
    _core.compile_ahead(points, ARCH)
    stopped = _core.compile_ahead([], ARCH)
    assert stopped["waiting"] == 0
    n = wait_for_background()
    assert n["compiled"] + n["skipped"] + n["failed"] + n["dropped"] == n["queued"]


def limited_tune(cli, db, *extra):
    return cli("tune", "--db", db, "--sizes", "2^10", "2^20", "--seed", "1", "--time-limit",
               "3", "--max-evals", "4", "--priors", "off", "--json", "--quiet", *RESTRICT_ARGS,
               *extra)


def test_a_time_limited_run_compiles_its_first_points_then_queues_the_rest(fake_worker, cli,
                                                                          tmp_path):
    code, out, err = limited_tune(cli, tmp_path / "r.db")
    assert code == 0, err
    (worker,) = FakeWorker.instances
    (first,) = worker.calls("precompile")  # the base preset: what each unit measures first
    queued, stop = worker.calls("compile_ahead")
    first_labels = {point_of(p).variant_label for p in first["points"]}
    rest = [point_of(p).variant_label for p in queued["points"]]
    s = space(**RESTRICT)
    every = [p.variant_label for p in _core.variant_points(s)]
    assert first_labels == {s.base("good", False, False).variant_label}
    assert rest == [v for v in every if v not in first_labels]  # the rest, in the run's order
    assert stop["points"] == []  # at the run's end: what still waits is dropped
    assert json.loads(out)["time"]["compile_ahead"]["queued"] == 0  # the stop's reply


def test_a_run_without_a_time_limit_also_compiles_its_first_points_then_queues_the_rest(
        fake_worker, cli, tmp_path):
    """--max-evals 2 without a time limit: its first points compiled before it starts, not every
    variant of the space (which it compiled until 2026-11-26); the rest in the background."""
    code, out, err = cli("tune", "--db", tmp_path / "r.db", "--sizes", "2^10", "--seed", "1",
                         "--max-evals", "2", "--priors", "off", "--json", "--quiet",
                         *RESTRICT_ARGS)
    assert code == 0, err
    (worker,) = FakeWorker.instances
    (batch,) = worker.calls("precompile")
    every = [p.variant_label for p in _core.variant_points(space(**RESTRICT))]
    first = {point_of(p).variant_label for p in batch["points"]}
    assert len(first) < len(every)
    queued, stop = worker.calls("compile_ahead")
    assert [point_of(p).variant_label for p in queued["points"]] == [
        v for v in every if v not in first]
    assert stop["points"] == []


def test_proposable_values_are_those_some_selected_point_takes():
    """space.proposable (asked of every space before a run's first point) skips the points that
    could add no value: what it keeps is what a walk over every point keeps."""
    for s in (space("float32", "sum", block_size=["256", "1024"]),
              space("int64", "max", warp=["shuffle", "redux", "volatile_unsafe"])):
        choices = {k: list(v) for k, v in dict(_core.Space.choices(s)).items()}
        for allow_flagged, nondeterministic in ((False, False), (True, False), (False, True)):
            taken: dict[str, set] = {k: set() for k in choices}
            for p in s.points():
                if s.selected(p, allow_flagged, nondeterministic):
                    for k, v in p.params.items():
                        taken[k].add(v)
            want = {k: [v for v in vs if v in taken[k]] for k, vs in choices.items()}
            got = {k: list(v) for k, v in
                   dict(_core.Space.proposable(s, allow_flagged, nondeterministic)).items()}
            assert got == want, (s.dtype, s.op, allow_flagged, nondeterministic)


def test_the_later_units_first_points_lead_the_background_queue(fake_worker, cli, tmp_path):
    """With priors of their own per size, only the first unit's first points (2^20: the run
    goes largest first) are compiled before it starts; the other unit's lead the queue."""
    from test_priors import FORMAT, dumps
    from test_warm_start import BASE, OLDER, TWIN

    def bucket(p: reducetune.Point) -> list[list]:
        return [[p.variant_label, p.launch_label, 1e-6]]

    table = tmp_path / "priors.json"
    table.write_text(dumps({"format": FORMAT, "per_bucket": 3, "selection": "SYNTHETIC",
                            "devices": [{"name": "near", "model": "near|132SM", "cc": [9, 0],
                                         "sm_count": 132, "peak_gbps": 3352.3, "files": [],
                                         "bests": {"tunable.float32.sum": {
                                             str(1 << 10): bucket(TWIN),
                                             str(1 << 20): bucket(OLDER)}}}]}))
    code, _, err = cli("tune", "--db", tmp_path / "r.db", "--sizes", "2^10", "2^20", "--seed",
                       "1", "--time-limit", "3", "--max-evals", "3", "--priors", table,
                       "--json", "--quiet", *RESTRICT_ARGS)
    assert code == 0, err
    (worker,) = FakeWorker.instances
    (first,) = worker.calls("precompile")
    queued = worker.calls("compile_ahead")[0]["points"]
    assert [point_of(p).variant_label for p in first["points"]] == [OLDER.variant_label,
                                                                    BASE.variant_label]
    assert point_of(queued[0]).variant_label == TWIN.variant_label
    assert BASE.variant_label not in {point_of(p).variant_label for p in queued}


def test_the_worker_process_compiles_ahead_between_its_calls():
    """The worker's reply comes at once; its threads go on compiling between the calls, into
    the cache its precompile (and evaluate) then finds."""
    from reducetune.evaluate.gpu import WorkerClient

    points = _core.variant_points(space("float64", "sum", block_size=["64"], unroll=["2"],
                                        vec=["1"]))[:3]
    w = WorkerClient(timeout_s=300)
    try:
        reply = w.call("compile_ahead", points=[p.to_dict() for p in points], arch="90")
        assert reply["ok"], reply
        assert reply["result"]["queued"] == 3
        end = time.monotonic() + 240
        while True:
            n = w.call("compile_ahead", points=None, arch="90")["result"]
            if n["compiled"] + n["skipped"] + n["failed"] == 3 or time.monotonic() > end:
                break
            time.sleep(0.1)
        assert (n["compiled"], n["failed"], n["queued"]) == (3, 0, 3)
        again = w.call("precompile", points=[p.to_dict() for p in points], arch="90")
        assert (again["result"]["compiled"], again["result"]["cached"]) == (0, 3)
    finally:
        w.close()
