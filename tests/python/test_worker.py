"""Fault isolation of the GPU worker, shown without a GPU: a worker that dies or hangs is a
failure of that call only, and the next call gets a fresh worker."""

from __future__ import annotations

import sys

from reducetune._evaluators import WorkerClient


def test_the_real_worker_answers_and_reports_errors_as_data():
    w = WorkerClient(timeout_s=60)
    try:
        reply = w.call("no_such_call")
        assert not reply["ok"] and "unknown call" in reply["message"]
        reply = w.call("query_device", ordinal=0)
        assert reply["ok"] or reply["error"] == "DeviceError"
        assert w.started == 1  # errors do not cost a worker (a DeviceError ends it afterwards)
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


def test_a_worker_that_exits_after_a_sticky_error_is_replaced_without_failing_the_next_call():
    # Replies once with "exits" (as after an illegal address) and exits, like _worker.serve.
    once = [sys.executable, "-c",
            "import json, sys; sys.stdin.readline();"
            "print(json.dumps({'ok': True, 'exits': True, 'result': {'status': 'failed',"
            " 'kind': 'launch_error', 'reason': 'illegal address'}}), flush=True); sys.exit(3)"]
    w = WorkerClient(timeout_s=30, argv=once)
    first = w.call("evaluate")
    assert first == {"ok": True, "result": {"status": "failed", "kind": "launch_error",
                                            "reason": "illegal address"}}
    second = w.call("evaluate")  # a fresh process answers: no worker_crashed for this point
    assert second["ok"] and second["result"]["kind"] == "launch_error"
    assert w.started == 2


def test_the_worker_exits_after_launch_and_device_errors_only():
    from reducetune._worker import _exits_after

    assert _exits_after({"ok": True, "result": {"status": "failed", "kind": "launch_error"}})
    assert _exits_after({"ok": False, "error": "DeviceError", "message": "no GPU"})
    assert not _exits_after({"ok": True, "result": {"status": "wrong", "kind": "wrong_result"}})
    assert not _exits_after({"ok": True, "result": {"status": "ok", "kind": ""}})
    assert not _exits_after({"ok": False, "error": "InvalidConfiguration", "message": "x"})
    assert not _exits_after({"ok": True, "result": [1, 2]})
