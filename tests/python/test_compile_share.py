"""The GPU workers of one ``tune --devices`` run share the host and what they compile (issue 25,
evaluate/_gpu_share.py): each worker's background compiles on its share of the host's threads,
starts at its share of the queue, and loads from the run's folder what another worker compiled
instead of compiling it again. NVRTC needs no GPU: the worker processes here compile for real
(sm_90); the tune run's calls are checked over the fake worker."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict
from pathlib import Path

import pytest

import reducetune
from reducetune import _core
from reducetune.cli import build_parser
from reducetune.cli.device_worker import worker_main
from reducetune.evaluate import _gpu_share
from reducetune.evaluate._gpu_share import (ALONE, WINDOW_PER_WORKER, CompileShare,
                                            compile_share, run_folder, share_compiles)

from conftest import RESTRICT_ARGS
from test_tune_options import FakeWorker, fake_worker, point_of  # noqa: F401 (a fixture)


@pytest.fixture(autouse=True)
def alone_again():
    """Each test leaves this process as it found it: no --devices worker."""
    yield
    share_compiles(ALONE)


def test_one_worker_keeps_the_runs_order_and_no_folder():
    items = list(range(300))
    assert ALONE.order(items) == items
    assert ALONE.ahead_args() == {"workers": 1, "shared_dir": ""}
    assert compile_share() == ALONE  # outside a --devices worker


def test_each_worker_starts_at_its_share_of_the_queue():
    items = list(range(95))  # the sweep's 95 variants, 4 workers
    orders = [CompileShare(k, 4, "f").order(items) for k in range(4)]
    assert [o[0] for o in orders] == [0, 23, 47, 71]
    for o in orders:
        assert sorted(o) == items  # every variant still queued, once
    # each worker's first quarter is a different quarter: the four compile different variants
    firsts = [set(o[:23]) for o in orders]
    assert all(not (a & b) for i, a in enumerate(firsts) for b in firsts[i + 1:])


def test_a_long_queue_is_split_window_by_window():
    """The README's thousands of variants: each worker stays near the front of the run's order
    (a window of WINDOW_PER_WORKER per worker at a time), not a quarter of the run away."""
    size = WINDOW_PER_WORKER * 2
    items = list(range(2 * size + 10))
    order = CompileShare(1, 2, "f").order(items)
    assert sorted(order) == items
    assert order[:size] == items[size // 2:size] + items[:size // 2]
    assert order[size:2 * size] == items[size + size // 2:2 * size] + items[size:size + size // 2]
    assert order[2 * size:] == items[2 * size + 5:] + items[2 * size:2 * size + 5]


def test_the_runs_folder_is_beside_the_results_file_and_goes_with_the_run(tmp_path):
    db = tmp_path / "r.db"
    with pytest.raises(RuntimeError):
        with run_folder(db) as folder:
            assert Path(folder).parent == tmp_path and Path(folder).is_dir()
            (Path(folder) / "k.cubin").write_bytes(b"x")
            raise RuntimeError("a worker failed")
    assert not Path(folder).exists()
    with run_folder(tmp_path / "missing" / "r.db") as none:
        assert none == ""  # no folder: each worker compiles alone


def test_a_devices_worker_takes_its_share_from_its_arguments(monkeypatch):
    """tune_devices._worker_args gives each worker its share; device_worker applies it before
    the command opens its evaluator."""
    from reducetune.cli import app, tune_devices

    seen = []
    monkeypatch.setattr(app, "dispatch", lambda args: seen.append((args, compile_share())) or 0)
    monkeypatch.setattr(tune_devices, "counted_by_parent", False)
    share = CompileShare(2, 4, "/run/folder")
    parsed = json.loads(tune_devices._worker_args(
        build_parser().parse_args(["tune", "--replay", "x.db"]), 3, share))
    assert parsed["compile_share"] == asdict(share)
    parsed.pop("await_go")
    assert worker_main([json.dumps(parsed)]) == 0
    ((args, applied),) = seen
    assert applied == share
    assert not hasattr(args, "compile_share")  # not a tune option


def test_a_tune_run_in_a_devices_worker_queues_its_share(fake_worker, cli, tmp_path):
    def queued(db: str) -> dict:
        FakeWorker.instances.clear()
        code, _, err = cli("tune", "--db", tmp_path / db, "--sizes", "2^10", "--seed", "1",
                           "--max-evals", "2", "--priors", "off", "--json", "--quiet",
                           *RESTRICT_ARGS)
        assert code == 0, err
        (worker,) = FakeWorker.instances
        (batch,) = worker.calls("precompile")
        queue = worker.calls("compile_ahead")[0]
        return {"batch": batch, "queue": queue,
                "labels": [point_of(p).variant_label for p in queue["points"]]}

    alone = queued("alone.db")
    assert (alone["queue"]["workers"], alone["queue"]["shared_dir"]) == (1, "")
    share_compiles(CompileShare(1, 2, str(tmp_path / "programs")))
    second = queued("second.db")  # the second of two workers
    assert (second["queue"]["workers"], second["queue"]["shared_dir"]) == (
        2, str(tmp_path / "programs"))
    assert second["batch"]["shared_dir"] == str(tmp_path / "programs")
    assert second["labels"] == CompileShare(1, 2, "x").order(alone["labels"])
    assert second["labels"] != alone["labels"]


# ---- two real GPU worker processes (NVRTC on the CPU): the counters say who compiled what

def space_points(**restrict) -> list:
    s = reducetune.Space("tunable", "float32", "min", reducetune.limits_for_arch("sm_90"),
                         restrict)
    return [p.to_dict() for p in _core.variant_points(s)]


def settled(worker, want: int, timeout_s: float = 240.0) -> dict:
    """The worker's background counts once ``want`` requests were taken."""
    end = time.monotonic() + timeout_s
    while True:
        n = worker.call("compile_ahead", points=None, arch="90")["result"]
        if n["compiled"] + n["skipped"] + n["loaded"] + n["failed"] >= want or \
                time.monotonic() > end:
            return n
        time.sleep(0.1)


def test_a_worker_loads_what_another_worker_compiled_into_the_runs_folder(tmp_path):
    from reducetune.evaluate.gpu import WorkerClient

    points = space_points(block_size=["32"], unroll=["2"], vec=["1"])[:3]
    assert len(points) == 3
    folder = str(tmp_path / "programs")
    first, second = WorkerClient(timeout_s=300), WorkerClient(timeout_s=300)
    try:
        share = {"arch": "90", "workers": 2, "shared_dir": folder}
        assert first.call("compile_ahead", points=points, **share)["ok"]
        by_first = settled(first, 3)
        assert (by_first["compiled"], by_first["loaded"], by_first["failed"]) == (3, 0, 0)
        assert second.call("compile_ahead", points=points, **share)["ok"]
        by_second = settled(second, 3)
        assert (by_second["compiled"], by_second["loaded"]) == (0, 3)  # loaded, not compiled
        # the second's threads: its share of this host's, decided by compile_ahead alone
        cores = os.cpu_count() or 1
        assert by_second["threads"] == max(1, min(16, cores // 2))
        again = second.call("precompile", points=points, arch="90", shared_dir=folder)
        assert (again["result"]["compiled"], again["result"]["cached"]) == (0, 3)
        assert not list(Path(folder).glob("*.claim"))  # every claim released once stored
    finally:
        first.close()
        second.close()


def test_a_one_gpu_worker_keeps_every_thread_but_one_and_shares_nothing(tmp_path):
    from reducetune.evaluate.gpu import WorkerClient

    w = WorkerClient(timeout_s=60)
    try:
        n = w.call("compile_ahead", points=None, arch="90")["result"]
        assert n["threads"] == max(1, min(16, (os.cpu_count() or 1) - 1))
        assert n["loaded"] == 0
    finally:
        w.close()
    assert _gpu_share.compile_share() == ALONE


def test_the_command_gives_its_gpu_workers_one_folder_and_removes_it(monkeypatch, tmp_path,
                                                                     capsys):
    """run_devices (no replay): worker k of N is told its place and the run's folder, which
    exists while they run and is gone when the command returns."""
    import io

    from reducetune.cli import tune_devices

    shares: list[dict] = []
    existed: list[bool] = []

    class Started:
        def __init__(self, argv: list[str], **_: object) -> None:
            shares.append(json.loads(argv[-1])["compile_share"])
            self.stdin, self.returncode = io.StringIO(), 0

        def communicate(self) -> tuple[str, None]:
            existed.append(Path(shares[-1]["folder"]).is_dir())
            return json.dumps({"runs": []}), None

    monkeypatch.setattr(tune_devices.subprocess, "Popen", Started)
    args = build_parser().parse_args(["tune", "--db", str(tmp_path / "r.db"), "--devices",
                                      "0,1", "--json"])
    assert tune_devices.run_devices(args, [0, 1]) == 0
    capsys.readouterr()
    assert [(s["worker"], s["workers"]) for s in shares] == [(0, 2), (1, 2)]
    folder = Path(shares[0]["folder"])
    assert shares[1]["folder"] == str(folder) and folder.parent == tmp_path
    assert existed == [True, True]
    assert not folder.exists()


def test_two_workers_compiling_one_queue_at_once_compile_each_variant_once(tmp_path):
    """The run's case: both workers queue the same variants at the same moment, each from its
    share; between them each variant is compiled once (the others loaded or left to the
    worker that claimed it), and afterwards each worker has every one without compiling."""
    from reducetune.evaluate.gpu import WorkerClient

    points = space_points(block_size=["64"], unroll=["1", "2"], vec=["1", "2"])[:12]
    assert len(points) == 12
    folder = str(tmp_path / "programs")
    workers = [WorkerClient(timeout_s=300) for _ in range(2)]
    try:
        share = {"arch": "90", "workers": 2, "shared_dir": folder}
        for w in workers:  # both processes up (imports, threads) before either queues
            assert w.call("compile_ahead", points=None, **share)["ok"]
        for k, w in enumerate(workers):  # then both queues at once
            assert w.send("compile_ahead", points=CompileShare(k, 2, folder).order(points),
                          **share) is None
        assert all(w.reply()["ok"] for w in workers)
        counts = [settled(w, 12) for w in workers]
        assert sum(n["compiled"] for n in counts) == 12, counts  # each variant once
        assert all(n["failed"] == 0 and n["compiled"] + n["skipped"] + n["loaded"] == 12
                   for n in counts), counts
        for w in workers:  # what a worker left to the other, it now loads
            got = w.call("precompile", points=points, arch="90", shared_dir=folder)["result"]
            assert (got["compiled"], got["cached"]) == (0, 12), got
    finally:
        for w in workers:
            w.close()
