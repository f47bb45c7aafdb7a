"""Fault isolation of the GPU worker, shown without a GPU: a worker that dies or hangs is a
failure of that call only, and the next call gets a fresh worker."""

from __future__ import annotations

import sys

from reducetune._evaluators import WorkerClient


def test_the_real_worker_answers_and_reports_errors_as_data():
    w = WorkerClient(timeout_s=60)
    try:
        reply = w.call("query_device", ordinal=0)
        assert reply["ok"] or reply["error"] == "DeviceError"
        reply = w.call("no_such_call")
        assert not reply["ok"] and "unknown call" in reply["message"]
        assert w.started == 1  # errors do not cost a worker
    finally:
        w.close()


def test_a_worker_that_dies_is_a_failure_and_is_replaced():
    die = [sys.executable, "-c", "import os, sys; sys.stdin.readline(); os.kill(os.getpid(), 9)"]
    w = WorkerClient(timeout_s=30, argv=die)
    first = w.call("evaluate")
    assert first == {"ok": False, "error": "worker_crashed",
                     "message": "worker died with SIGKILL (signal 9)"}
    w.call("evaluate")
    assert w.started == 2


def test_a_worker_that_hangs_is_killed_after_the_timeout():
    hang = [sys.executable, "-c", "import time; time.sleep(60)"]
    w = WorkerClient(timeout_s=0.5, argv=hang)
    reply = w.call("evaluate")
    assert reply["error"] == "timed_out" and "0.5 s" in reply["message"]
