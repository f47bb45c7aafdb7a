"""On a machine with two GPUs or more: a GpuEvaluator of GPU 1 measures on GPU 1 (issue 25).

Until 2026-11-26 the extension's evaluate, evaluate_cub and streaming_ceiling ran on CUDA's
current device, 0, whatever the ordinal: the GPU worker of ``tune --devices 0,1`` for GPU 1
measured on GPU 0 under GPU 1's UUID, and both workers shared GPU 0. Now the worker sees its
GPU alone (evaluate/gpu.py one_device) and the bindings make the ordinal's device current
(driver/src/bind_device.cpp make_current), which the in-process evaluator relies on.

What shows where a process measured: the memory it holds. A process runs CUB on 2^28 float32
(1 GiB of input, whose device copies the evaluation cache keeps) and waits; meanwhile
nvidia-smi's memory.used must have grown by at least 1 GiB on GPU 1 and by less than 256 MiB
on GPU 0 (a CUDA context alone takes about 500 MiB). Skips with the reason where there are
fewer than two GPUs or no nvidia-smi.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pytest

from reducetune.evaluate.gpu import WorkerClient

pytestmark = pytest.mark.gpu

GIB = 1024  # nvidia-smi's MiB

MEASURE = textwrap.dedent("""
    import sys
    from reducetune.evaluate.base import sampling_options, workload
    from reducetune.evaluate.gpu import GpuEvaluator
    ev = GpuEvaluator(1, timeout_s=300, in_process=sys.argv[1] == "1",
                      options=sampling_options(0.05, 10, False))
    r = ev.cub(workload("float32", "sum", 1 << 28))
    print(r["status"], ev.device["uuid"], flush=True)
    sys.stdin.read()  # holds its memory until the test has looked
""")


def _gpus_or_skip() -> None:
    if shutil.which("nvidia-smi") is None:
        pytest.skip("needs nvidia-smi to see which GPU holds a process's memory")
    probe = WorkerClient(timeout_s=300)  # asked of a worker: this process makes no context
    try:
        reply = probe.call("query_device", ordinal=1)
    finally:
        probe.close()
    if not reply["ok"]:
        pytest.skip(f"needs two GPUs: {reply['message']}")


def _used_mib() -> list[int]:
    out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,"
                          "nounits"], capture_output=True, text=True, check=True).stdout
    return [int(x) for x in out.split()]


@pytest.mark.parametrize("in_process", [False, True], ids=["worker", "in_process"])
def test_an_evaluator_of_gpu_1_measures_on_gpu_1(in_process):
    _gpus_or_skip()
    before = _used_mib()
    proc = subprocess.Popen([sys.executable, "-c", MEASURE, "1" if in_process else "0"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        status, uuid = proc.stdout.readline().split()
        after = _used_mib()
    finally:
        proc.communicate("")
    assert status == "ok"
    assert after[1] - before[1] >= GIB, (before, after, uuid)
    assert after[0] - before[0] < 256, (before, after, uuid)
