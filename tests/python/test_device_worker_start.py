"""What a ``tune --devices`` worker does before its run (cli/device_worker.py, issue 25): its GPU
worker is started first (evaluate/gpu.py prestart), so that its process and CUDA's start
overlap the worker's own imports and files, and the GPUs are not counted a second time (the
command that started it counted them: a process, the extension's import and CUDA's start
each). In replay there is no GPU worker to start. Without a GPU: prestart and the command
itself are recorded instead of run.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from reducetune import errors
from reducetune.cli import app, device_worker, tune_devices


@pytest.fixture
def recorded(monkeypatch):
    """The worker's prestart calls and the namespace it dispatched, instead of running them;
    the module's flag restored afterwards."""
    seen: dict[str, list] = {"prestart": [], "dispatch": []}
    monkeypatch.setattr(tune_devices, "counted_by_parent", False)
    monkeypatch.setattr(device_worker, "prestart",
                        lambda k, **kw: seen["prestart"].append((k, kw)))
    monkeypatch.setattr(app, "dispatch", lambda ns: seen["dispatch"].append(ns) or 7)
    return seen


def test_a_gpu_workers_own_worker_starts_before_its_command_runs(recorded):
    args = {"command": "tune", "devices": "1", "device": 1, "replay": None, "db": "r.db"}
    assert device_worker.worker_main([json.dumps(args)]) == 7  # the command's status
    assert recorded["prestart"] == [(1, {"ceiling": True})]  # a tune run measures it first
    (ns,) = recorded["dispatch"]
    assert ns.device == 1 and str(ns.db) == "r.db"
    assert tune_devices.counted_by_parent


@pytest.mark.parametrize("without", [{"replay": "grid.db"}, {"in_process": True, "device": 1}])
def test_a_replay_or_in_process_worker_starts_no_gpu_worker(recorded, without):
    args = {"command": "tune", "devices": "1", "replay": None, "db": "r.db", **without}
    device_worker.worker_main([json.dumps(args)])
    assert recorded["prestart"] == [] and len(recorded["dispatch"]) == 1


def test_the_gpus_are_counted_by_the_command_not_again_by_its_workers(monkeypatch):
    def count(option: str, child: object = None) -> int:
        raise errors.DeviceError("counted")

    monkeypatch.setattr(tune_devices, "_gpu_count", count)
    monkeypatch.setattr(tune_devices, "counted_by_parent", False)
    with pytest.raises(errors.DeviceError, match="counted"):
        tune_devices.parse_devices("1", replay=False)
    monkeypatch.setattr(tune_devices, "counted_by_parent", True)
    assert tune_devices.parse_devices("1", replay=False) == [1]
    with pytest.raises(errors.InvalidConfiguration):  # the form is still checked
        tune_devices.parse_devices("1,1", replay=False)


# A starting worker: it waits for the command's word on its stdin and says what it got.
WAITS = [sys.executable, "-c", "import sys; print(sys.stdin.readline().strip() or 'EOF')"]
# A count of the GPUs, as the command's child process gives it
COUNT = "import sys; print(sys.argv[1])"


@pytest.mark.parametrize("gpus", [1, 2])
def test_a_lists_count_is_read_while_its_workers_start_and_only_then_they_go_on(monkeypatch,
                                                                                gpus):
    monkeypatch.setattr(tune_devices, "counted_by_parent", False)
    monkeypatch.setattr(tune_devices, "_counting", {})
    monkeypatch.setattr(tune_devices, "visible_gpu_count", lambda: None)  # cuInit's path
    monkeypatch.setattr(tune_devices, "_count_started", lambda: subprocess.Popen(
        [sys.executable, "-c", COUNT, str(gpus)], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True))
    assert tune_devices.parse_devices("0,1", replay=False) == [0, 1]  # not waited for
    procs = [subprocess.Popen(WAITS, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    try:
        if gpus == 1:
            with pytest.raises(errors.InvalidConfiguration, match="has 1 GPU.*no GPU 1"):
                tune_devices._let_on(procs, "0,1", [0, 1])
            assert all(p.returncode is not None and p.returncode < 0 for p in procs)  # killed
        else:
            tune_devices._let_on(procs, "0,1", [0, 1])
            assert [p.communicate()[0].strip() for p in procs] == ["go", "go"]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert not tune_devices._counting  # read once


def test_a_worker_that_died_while_starting_does_not_hold_back_the_others(monkeypatch):
    """Its go meets a closed pipe: the others still get theirs, and its exit status is what
    run_devices reports (not a BrokenPipeError for the whole command)."""
    monkeypatch.setattr(tune_devices, "_counting", {})
    dead = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(2)"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    dead.wait()
    waiting = subprocess.Popen(WAITS, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        tune_devices._let_on([dead, waiting], "0,1", [0, 1])
        assert waiting.communicate(timeout=60)[0].strip() == "go"
        dead.communicate()
        assert dead.returncode == 2
    finally:
        if waiting.poll() is None:
            waiting.kill()


# Run before WORKER_CODE (sitecustomize): prestart says whether the CLI's package was imported
# yet, and ends the process there (no GPU worker is started)
SEES = """import sys
import reducetune.evaluate.gpu as gpu
def prestart(ordinal, ceiling=False):
    print("prestart", ordinal, ceiling, "reducetune.cli" in sys.modules, file=sys.stderr)
    sys.exit(5)
gpu.prestart = prestart
"""


@pytest.mark.parametrize("replay", [None, "grid.db"])
def test_the_command_starts_a_workers_gpu_worker_before_the_clis_imports(tmp_path, replay):
    """tune_devices.WORKER_CODE, as run_devices runs a worker: the GPU worker's start comes
    after the package's import only, not the CLI's (every command's module), as
    ``-m reducetune.cli.device_worker`` did; a replay worker starts none and waits for its go
    (none here: its input is closed, status 1)."""
    import os

    (tmp_path / "sitecustomize.py").write_text(SEES)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path),
                                                        os.environ.get("PYTHONPATH", "")])}
    args = {"command": "tune", "devices": "1", "device": 1, "replay": replay, "db": "r.db",
            "await_go": True}
    run = subprocess.run([sys.executable, "-c", tune_devices.WORKER_CODE, json.dumps(args)],
                         env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                         timeout=120)
    if replay is None:
        assert (run.returncode, run.stderr.strip()) == (5, "prestart 1 True False")
    else:
        assert run.returncode == 1 and "prestart" not in run.stderr, run.stderr
