"""A one-GPU ``tune`` starts its GPU worker first (cli/app.py main, issue 25): the worker's
process, its imports and CUDA's start (1.6 s on an H200) overlap the CLI's imports, the
arguments' parsing, the results file and the studies' storage, which the command opens before
its evaluator takes the worker. A worker that no evaluator takes (arguments refused after it
started, --help, an interruption, a failure before the first measurement) is ended at once:
no process is left behind and none is waited for.

Without a GPU: a fake worker process (the real WorkerClient, pipe and JSON) answers the
device's query and the streaming ceiling; each test stops the command where it has shown what
it needs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from reducetune import errors
from reducetune.cli import app
from reducetune.cli import tune as tune_cli
from reducetune.evaluate import gpu as _gpu

# A worker that answers query_device (an sm_90 device) and streaming_ceiling, after sleeping
# FAKE_START_S seconds (CUDA's start on a GPU) if that is set.
FAKE = textwrap.dedent("""
    import json, os, sys, time
    time.sleep(float(os.environ.get("FAKE_START_S", "0")))
    for line in sys.stdin:
        r = json.loads(line)
        if r["call"] == "query_device":
            out = {"ok": True, "result": {"name": "fake", "uuid": "GPU-fake", "arch": "sm_90",
                   "sm_count": 132, "max_threads_per_block": 1024, "runtime_version": 12080}}
        else:
            out = {"ok": True, "result": {"bytes_per_s": 1e12, "samples_s": [1e-3]}}
        print(json.dumps(out), flush=True)
""")


class FakeWorker(_gpu.WorkerClient):
    """The fake worker; each process it starts is noted in ``events`` and kept in ``procs``."""

    events: list[str] = []
    procs: list[subprocess.Popen[str]] = []

    def __init__(self, timeout_s: float = 60.0, argv: list[str] | None = None) -> None:
        super().__init__(timeout_s, [sys.executable, "-c", FAKE])

    def _start(self) -> subprocess.Popen[str]:
        before = self._proc
        proc = super()._start()
        if proc is not before:
            FakeWorker.events.append("worker started")
            FakeWorker.procs.append(proc)
        return proc


@pytest.fixture
def events(monkeypatch):
    """The command's steps in order: the GPU worker's start, the parser built (every command's
    module imported), the results file and the storage opened, the evaluator taken, tuning."""
    FakeWorker.events, FakeWorker.procs = [], []
    monkeypatch.setattr(_gpu, "WorkerClient", FakeWorker)
    monkeypatch.setattr(_gpu, "_STARTED", {})
    # a GPU machine's order: without NVIDIA's driver the GPU is asked before the files
    monkeypatch.setattr(tune_cli, "has_driver", lambda: True)
    monkeypatch.setattr(app, "has_driver", lambda: True)

    def noted(name: str, what: str) -> None:
        original = getattr(tune_cli, name)

        def run(*a, **kw):
            FakeWorker.events.append(what)
            return original(*a, **kw)
        monkeypatch.setattr(tune_cli, name, run)

    build = app.build_parser
    monkeypatch.setattr(app, "build_parser", lambda: FakeWorker.events.append("parser built")
                        or build())
    noted("open_store", "results file opened")
    noted("_storage", "storage opened")
    noted("_evaluator", "evaluator")
    return FakeWorker.events


def stop_tuning(monkeypatch, exc: BaseException) -> None:
    def run(*a, **kw):
        FakeWorker.events.append("tuning")
        raise exc
    monkeypatch.setattr(tune_cli, "_run", run)


def all_ended() -> bool:
    return all(p.poll() is not None for p in FakeWorker.procs) and not _gpu._STARTED


@pytest.mark.parametrize("device", [[], ["--device", "1"], ["--devices", "1"]])
def test_a_gpu_tunes_worker_starts_before_the_parser_the_results_file_and_the_storage(
        events, monkeypatch, tmp_path, cli, device):
    monkeypatch.setattr(tune_cli, "parse_devices", lambda text, replay: [int(text)])
    stop_tuning(monkeypatch, errors.Error("stopped here"))
    db = tmp_path / "r.db"
    code, _, err = cli("tune", "--db", db, "--sizes", "2^16", "--quiet", *device)
    assert (code, err.strip()) == (1, "reducetune: error: stopped here")
    assert events == ["worker started", "parser built", "results file opened", "storage opened",
                      "evaluator", "tuning"]
    assert all_ended()  # the evaluator closed the worker it took
    assert not db.exists()  # created by this run, nothing measured: removed


def test_the_worker_started_first_is_the_one_the_evaluator_takes(events, monkeypatch, tmp_path,
                                                                 cli):
    """One process for the command (the evaluator does not start a second), with the device's
    reply and the ceiling asked ahead; the worker sees its GPU alone."""
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    taken = []

    def run(args, configs, evaluator, *rest):
        taken.append((evaluator.device["ordinal"], evaluator._worker.env["CUDA_VISIBLE_DEVICES"],
                      evaluator.ceiling_bytes_per_s(), evaluator.ceiling_samples_s))
        raise KeyboardInterrupt
    monkeypatch.setattr(tune_cli, "_run", run)
    code, _, err = cli("tune", "--db", tmp_path / "r.db", "--device", "2", "--quiet")
    assert code == 130 and "interrupted" in err
    assert taken == [(2, "2", 1e12, [1e-3])]
    assert events.count("worker started") == 1
    assert all_ended()


@pytest.mark.parametrize("refused, message", [
    (["--max-samples", "many"], "--max-samples"),  # the parser's (SystemExit 2)
    (["--sizes", "2^99"], "reducetune: error:"),  # the command's, before any file
    (["--restrict", "no_such_parameter=1"], "reducetune: error:"),  # the space's, on sm_90
    (["--help"], None),  # no worker started at all
])
def test_arguments_refused_after_the_prestart_leave_no_process(events, monkeypatch, tmp_path,
                                                               cli, capsys, refused, message):
    """A fake worker whose start takes 60 s (CUDA's, on a slow machine) is ended, not waited
    for: the command answers at once."""
    monkeypatch.setenv("FAKE_START_S", "60")
    db = tmp_path / "r.db"
    began = time.monotonic()
    try:
        code, _, err = cli("tune", "--db", db, *refused)
    except SystemExit as e:  # argparse's exit goes through main's finally
        code, err = e.code, capsys.readouterr().err
    assert time.monotonic() - began < 8  # not the 60 s start, nor WorkerClient's 10 s grace
    assert code == (0 if message is None else 2)
    if message is None:
        assert events == ["parser built"]
    else:
        assert message in err and events[0] == "worker started"
        assert "results file opened" not in events
    assert all_ended() and not db.exists()


def test_an_interruption_before_the_evaluator_takes_the_worker_ends_it(events, monkeypatch,
                                                                       tmp_path, cli):
    monkeypatch.setenv("FAKE_START_S", "60")

    def interrupted(*a, **kw):
        raise KeyboardInterrupt
    monkeypatch.setattr(tune_cli, "_storage", interrupted)
    began = time.monotonic()
    code, _, err = cli("tune", "--db", tmp_path / "r.db", "--quiet")
    assert code == 130 and "interrupted" in err
    assert time.monotonic() - began < 8
    assert events[:2] == ["worker started", "parser built"]
    assert all_ended()
    assert [p.returncode for p in FakeWorker.procs] == [-9]  # killed, not waited for


@pytest.mark.parametrize("words", [
    ["tune", "--replay", "missing.db"], ["tune", "--repl=missing.db"],
    ["tune", "--in-process"], ["tune", "--devices", "0,1"], ["tune", "--devices", "all"],
    ["best"], []])
def test_a_command_that_measures_on_no_single_gpu_worker_starts_none(words):
    assert app._gpu_of_tune(words) is None


@pytest.mark.parametrize("words, ordinal", [
    (["tune"], 0), (["tune", "--device", "1"], 1), (["tune", "--device=2"], 2),
    (["tune", "--devices", "3"], 3), (["tune", "--device", "1", "--devices", "0"], 0),
    (["tune", "--device", "1", "--device", "4", "--sizes", "2^10", "2^20"], 4),
    (["tune", "--db", "r.db", "--dtype", "float32", "--race", "off", "--devices=5"], 5)])
def test_the_gpu_read_ahead_is_the_one_the_parser_reads(words, ordinal):
    """main's reading of the command line agrees with the parser's (cmd_tune runs --devices
    of one ordinal as --device)."""
    assert app._gpu_of_tune(words) == ordinal
    args = app.build_parser().parse_args(words)
    assert int(args.devices if args.devices is not None else args.device) == ordinal


def test_a_replay_starts_no_gpu_worker(events, tmp_path, cli):
    code, _, err = cli("tune", "--replay", tmp_path / "missing.db", "--db", tmp_path / "r.db")
    assert code != 0 and "missing.db" in err
    assert "worker started" not in events
    assert not (tmp_path / "r.db").exists()


# Run before the command (sitecustomize): its GPU workers are FAKE, each one's pid written to
# FAKE_PIDS by the command as it starts it (the fake itself may be killed before it runs a line)
SITE = textwrap.dedent("""
    import os, sys
    import reducetune.evaluate.gpu as gpu
    FAKE = {fake!r}
    class Fake(gpu.WorkerClient):
        def __init__(self, timeout_s=60.0, argv=None):
            super().__init__(timeout_s, [sys.executable, "-c", FAKE])
        def _start(self):
            before, proc = self._proc, super()._start()
            if proc is not before:
                with open(os.environ["FAKE_PIDS"], "a") as f:
                    f.write(f"{{proc.pid}}\\n")
            return proc
    gpu.WorkerClient = Fake
    import reducetune._no_gpu as no_gpu  # a GPU machine's path, before the CLI imports it
    no_gpu.has_driver = lambda: True
""")


def test_the_command_refused_after_its_worker_started_leaves_no_process_behind(tmp_path):
    """``python -m reducetune tune`` with an argument the parser refuses: its GPU worker (a
    fake whose start takes 60 s) was started and is gone when the command has ended."""
    (tmp_path / "sitecustomize.py").write_text(SITE.format(fake=FAKE))
    pids = tmp_path / "pids"
    env = {**os.environ, "FAKE_PIDS": str(pids), "FAKE_START_S": "60",  # read by SITE
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    began = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "reducetune", "tune", "--db",
                          str(tmp_path / "r.db"), "--max-samples", "many"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert time.monotonic() - began < 60
    assert run.returncode == 2 and "--max-samples" in run.stderr
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 1  # the worker was started before the parser refused
    assert not _alive(started[0])


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie no longer does: it is not this process's child)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(")")[-1].split()[0] != "Z"
