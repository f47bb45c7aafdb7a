"""A grid run's compiles (tuning/precompile.py): a grid measures no base preset first (each
worker of a shared grid starts where its walk does, tuning/grid_walk.py), so with a background
compiler nothing is compiled before the first unit: every variant is queued at once, in the
run's order, and the first points compile there. Over the fake worker (no GPU)."""

from __future__ import annotations

import reducetune
from reducetune import _core

from conftest import RESTRICT, RESTRICT_ARGS
from test_tune_options import FakeWorker, fake_worker, point_of  # noqa: F401 (a fixture)


def every_variant() -> list[str]:
    s = reducetune.Space("tunable", "float32", "sum", reducetune.limits_for_arch("sm_90"),
                         RESTRICT)
    return [p.variant_label for p in _core.variant_points(s)]


def run(cli, db, strategy: str) -> FakeWorker:
    FakeWorker.instances.clear()
    code, _, err = cli("tune", "--db", db, "--sizes", "2^10", "2^20", "--seed", "1",
                       "--strategy", strategy, "--max-evals", "3", "--time-limit", "5",
                       "--priors", "off", "--json", "--quiet", *RESTRICT_ARGS)
    assert code == 0, err
    (worker,) = FakeWorker.instances
    return worker


def test_a_grid_run_queues_every_variant_and_waits_for_no_batch(fake_worker, cli, tmp_path):
    worker = run(cli, tmp_path / "grid.db", "grid")
    assert worker.calls("precompile") == []  # nothing the walk measures first to wait for
    queued, stop = worker.calls("compile_ahead")
    assert [point_of(p).variant_label for p in queued["points"]] == every_variant()
    assert stop["points"] == []
    # and it measured: its first points compiled in the worker (here: the fake's formula)
    assert worker.calls("evaluate")


def test_a_sampled_run_still_compiles_its_first_points_before_it_starts(fake_worker, cli,
                                                                        tmp_path):
    worker = run(cli, tmp_path / "tpe.db", "tpe")
    (batch,) = worker.calls("precompile")
    first = {point_of(p).variant_label for p in batch["points"]}
    queued = [point_of(p).variant_label for p in worker.calls("compile_ahead")[0]["points"]]
    assert first and not first & set(queued)
    assert sorted(first | set(queued)) == sorted(every_variant())
