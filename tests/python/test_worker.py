"""Fault isolation of the GPU worker, shown without a GPU: a worker that crashes, exits, hangs,
garbles its reply or lingers after a fatal error costs that call only, and the next call gets a
fresh worker; the real worker answers bad requests as data and keeps stray output off its
replies. (What tests/cpp/test_worker_protocol.cpp proved for the C++ worker, now gone.)

Most workers here are small Python scripts (FAKE) that answer by the request's call name; the
real worker (``python -m reducetune.evaluate.gpu``) is used where its own behaviour is the point.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reducetune import _core
from reducetune.evaluate.gpu import WorkerClient, _exits_after, _InProcess, serve

TEMPLATES = Path(__file__).resolve().parents[1] / "data" / "templates"

# A stand-in worker: the request's "call" says what to do.
FAKE = r"""
import json, os, signal, sys, time
for line in sys.stdin:
    call = json.loads(line)["call"]
    if call == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif call == "exit3":
        sys.exit(3)
    elif call == "hang":
        time.sleep(100)
    elif call == "garbage":
        print("this is not json", flush=True)
    elif call in ("poison", "poison_and_linger"):
        print(json.dumps({"ok": True, "exits": True, "result": {
            "status": "failed", "kind": "launch_error",
            "reason": "an illegal memory access was encountered"}}), flush=True)
        if call == "poison_and_linger":
            time.sleep(100)  # announced its exit, then hangs (as a poisoned teardown can)
        sys.exit(3)
    else:
        print(json.dumps({"ok": True, "result": {"status": "ok", "pid": os.getpid()}}),
              flush=True)
"""


def fake_worker(timeout_s: float = 30) -> WorkerClient:
    return WorkerClient(timeout_s=timeout_s, argv=[sys.executable, "-c", FAKE])


def pid_of(reply: dict) -> int:
    assert reply["ok"], reply
    return int(reply["result"]["pid"])


# ---- the client: every way a worker can go wrong is a failure of that call only


@pytest.fixture
def fake():
    w = fake_worker()
    yield w
    w.close()


def assert_replaced(w: WorkerClient, before: int | None = None) -> None:
    """The worker of the failed call is gone, and the next call starts a fresh one (not the
    process ``before``, where given)."""
    assert not w.running
    after = pid_of(w.call("evaluate"))
    assert w.started == 2
    assert after != before


def test_a_healthy_worker_answers_many_calls_in_one_process(fake):
    pids = {pid_of(fake.call("evaluate")) for _ in range(5)}
    assert len(pids) == 1 and fake.started == 1 and fake.running
    fake.close()
    assert not fake.running


def test_a_worker_killed_by_a_signal_is_a_failure_and_the_next_call_gets_a_fresh_one(fake):
    first = pid_of(fake.call("evaluate"))
    assert fake.call("crash") == {"ok": False, "error": "worker_crashed",
                                  "message": "worker died with SIGSEGV (signal 11)"}
    assert_replaced(fake, first)


def test_a_worker_that_exits_without_replying_reports_its_status(fake):
    assert fake.call("exit3") == {"ok": False, "error": "worker_crashed",
                                  "message": "worker exited with status 3"}
    assert_replaced(fake)


def test_a_hung_worker_is_killed_at_the_timeout_and_the_next_call_gets_a_fresh_one(fake):
    start = time.monotonic()
    reply = fake.call("hang", timeout_s=0.5)
    assert reply["error"] == "timed_out" and "0.5 s" in reply["message"]
    assert time.monotonic() - start < 5
    assert_replaced(fake)


def test_a_worker_that_writes_garbage_is_killed_and_the_call_fails(fake):
    reply = fake.call("garbage")
    assert reply["error"] == "worker_crashed"
    assert "this is not json" in reply["message"] and "not a reply" in reply["message"]
    assert_replaced(fake)


def test_a_worker_that_leaves_after_a_sticky_error_is_replaced_without_failing_the_next_call(
        fake):
    first = pid_of(fake.call("evaluate"))
    assert fake.call("poison") == {"ok": True, "result": {
        "status": "failed", "kind": "launch_error",
        "reason": "an illegal memory access was encountered"}}  # "exits" is the client's
    assert_replaced(fake, first)  # and no worker_crashed for the next point


def test_a_worker_that_announces_its_exit_but_lingers_is_killed_after_the_grace(fake):
    fake.exit_grace_s = 0.5
    start = time.monotonic()
    reply = fake.call("poison_and_linger")
    assert reply["ok"] and reply["result"]["kind"] == "launch_error"
    assert time.monotonic() - start < 5
    assert_replaced(fake)


def test_ten_calls_with_a_crash_in_the_middle_answer_the_other_nine():
    w = fake_worker()
    try:
        replies = [w.call("crash" if i == 4 else "evaluate") for i in range(10)]
    finally:
        w.close()
    assert [r["ok"] for r in replies] == [True] * 4 + [False] + [True] * 5
    assert replies[4]["error"] == "worker_crashed"
    assert len({pid_of(r) for r in replies[:4]}) == 1
    assert len({pid_of(r) for r in replies[5:]}) == 1
    assert w.started == 2


def test_a_worker_that_cannot_be_started_is_an_error_not_a_failure():
    w = WorkerClient(timeout_s=5, argv=["/nonexistent/reducetune-worker"])
    with pytest.raises(OSError):
        w.call("evaluate")
    assert w.started == 0


# ---- the real worker


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


def test_the_worker_command_starts_without_a_warning_and_ends_at_the_end_of_its_input():
    # The package imports evaluate/gpu.py, which -m would run again; runpy's warning of that
    # would reach the user's terminal at every worker start (the worker's stderr is the tuner's).
    done = subprocess.run(WorkerClient().argv, input="", text=True, capture_output=True,
                          timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_in_process_calls_answer_as_the_worker_does():
    # One protocol for both: the same calls allowed, the same failures as data.
    here = _InProcess()
    assert here.call("no_such_call") == {"ok": False, "error": "ValueError",
                                         "message": "unknown call 'no_such_call'"}
    reply = here.call("evaluate", problem={"dtype": "float32", "op": "sum", "shape": [1, 4, 1]})
    assert not reply["ok"] and "point" in reply["message"]  # a missing argument, as data


def test_malformed_requests_are_refused_with_a_message_naming_the_problem():
    # No GPU needed: each of these fails before a device is touched. The worker stays up.
    good = {"point": {"family": "tunable", "dtype": "float32", "op": "sum",
                      "params": {"block_size": 256, "elements_per_thread": 16}}}

    def problem(n: int, dtype: str = "float32") -> dict:  # as the GPU evaluator sends one
        return {"dtype": dtype, "op": "sum", "shape": [1, n, 1]}

    requests = [
        "not json at all",
        json.dumps([1, 2]),
        json.dumps({"call": "open_file", "args": {}}),
        json.dumps({"call": "evaluate", "args": {"problem": problem(4)}}),
        json.dumps({"call": "evaluate", "args": dict(good, problem=problem(4, "int64"))}),
        json.dumps({"call": "evaluate", "args": dict(good, problem=problem(0))}),
        json.dumps({"call": "evaluate", "args": dict(good, problem=problem(4),
                                                     data={"pattern": "zigzag"})}),
    ]
    out = io.StringIO()
    assert serve(stdin=io.StringIO("\n".join(requests) + "\n\n"), stdout=out) == 0
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(replies) == len(requests)  # one reply per request; the blank line is skipped
    assert not any(r["ok"] or r.get("exits") for r in replies)
    messages = [r["message"] for r in replies]
    assert replies[0]["error"] == "JSONDecodeError"
    assert "JSON object" in messages[1]
    assert "unknown call 'open_file'" in messages[2]
    assert "point" in messages[3] and "problem" in messages[3]  # a missing argument
    assert "not for the problem int64.sum" in messages[4]
    assert "must be >= 1" in messages[5]
    assert "zigzag" in messages[6]


def test_stray_output_of_a_call_goes_to_stderr_not_into_the_replies(capfd):
    # A call that writes to fd 1 (as CUDA, NVRTC or a printf in C++ may) and prints.
    noisy = ("import os, sys\n"
             "from reducetune import _core\nfrom reducetune.evaluate import gpu as _gpu\n"
             "def query_device(ordinal=0):\n"
             "    os.write(1, b'stray output from C++\\n')\n"
             "    print('stray print')\n"
             "    return {'name': 'quiet'}\n"
             "_core.query_device = query_device\n"
             "sys.exit(_gpu.serve())\n")
    w = WorkerClient(timeout_s=60, argv=[sys.executable, "-c", noisy])
    try:
        assert w.call("query_device", ordinal=0) == {"ok": True, "result": {"name": "quiet"}}
        assert w.call("query_device", ordinal=0)["ok"] and w.started == 1
    finally:
        w.close()
    err = capfd.readouterr().err
    assert "stray output from C++" in err and "stray print" in err


def test_the_real_worker_replies_then_exits_with_status_3_after_a_launch_error():
    # The worker's own main: one reply saying it exits, then an exit without teardown.
    fatal = ("import atexit, runpy, sys\n"
             "atexit.register(lambda: print('interpreter teardown', file=sys.stderr))\n"
             "from reducetune import _core\n"
             "_core.evaluate = lambda **a: {'status': 'failed', 'kind': 'launch_error',\n"
             "                              'reason': 'an illegal memory access'}\n"
             "runpy.run_module('reducetune.evaluate.gpu', run_name='__main__')\n")
    request = json.dumps({"call": "evaluate", "args": {}}) + "\n"
    done = subprocess.run([sys.executable, "-c", fatal], input=request * 2, text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 3, done.stderr
    assert "interpreter teardown" not in done.stderr  # a poisoned context is not torn down
    lines = done.stdout.splitlines()
    assert len(lines) == 1  # the second request is never read
    assert json.loads(lines[0]) == {"ok": True, "exits": True, "result": {
        "status": "failed", "kind": "launch_error", "reason": "an illegal memory access"}}


def test_the_worker_inherits_the_template_folder_from_the_environment(monkeypatch):
    # The GPU fault-isolation test relies on this to reach the test-only families: NVRTC
    # only, so it runs here. Without the variable, 'broken' is an unknown family.
    label = "broken.float32.sum.bs_128"  # how its failure is reported
    point = {"family": "broken", "dtype": "float32", "op": "sum", "params": {"block_size": 128}}
    w = WorkerClient(timeout_s=120)
    try:
        reply = w.call("precompile", points=[point], arch="sm_90", threads=1)
        assert not reply["ok"] and "unknown template family 'broken'" in reply["message"]
    finally:
        w.close()
    monkeypatch.setenv("REDUCETUNE_TEMPLATE_DIR", str(TEMPLATES))
    w = WorkerClient(timeout_s=120)
    try:
        reply = w.call("precompile", points=[point], arch="sm_90", threads=1)
        assert reply["ok"], reply
        assert (reply["result"]["compiled"], reply["result"]["failed"]) == (0, 1)
        assert "this_identifier_does_not_exist" in reply["result"]["failures"][label]
    finally:
        w.close()


def test_the_worker_exits_after_launch_and_device_errors_only():
    assert _exits_after({"ok": True, "result": {"status": "failed", "kind": "launch_error"}})
    assert _exits_after({"ok": False, "error": "LaunchError", "message": "illegal address"})
    assert _exits_after({"ok": False, "error": "DeviceError", "message": "no GPU"})
    assert not _exits_after({"ok": True, "result": {"status": "wrong", "kind": "wrong_result"}})
    assert not _exits_after({"ok": True, "result": {"status": "ok", "kind": ""}})
    assert not _exits_after({"ok": False, "error": "InvalidConfiguration", "message": "x"})
    assert not _exits_after({"ok": True, "result": [1, 2]})


def test_the_protocol_constants_are_the_cores_and_python_uses_them():
    # Defined in C++ only (measure/stopping_rule.hpp, verify/patterns.hpp, space/space.hpp);
    # the values are the protocol of issue 3 and the seeds every stored workload and sample
    # were made with, so a change must be deliberate.
    from reducetune.evaluate import base as _evaluators

    assert (_core.MIN_SAMPLES, _core.MAX_NOISE) == (10, 0.01)
    assert (_core.WORKLOAD_SEED, _core.SPACE_SEED) == (0x5EED, 0x72656475636574)
    assert (_evaluators.MIN_SAMPLES, _evaluators.MAX_NOISE) == (_core.MIN_SAMPLES,
                                                                _core.MAX_NOISE)
    assert _evaluators.workload("int32", "sum", 4)["seed"] == _core.WORKLOAD_SEED
    options = _evaluators.sampling_options(0.1, 200, False)
    assert (options["min_samples"], options["max_noise"]) == (_core.MIN_SAMPLES, _core.MAX_NOISE)
