"""Measurements from the GPU, taken in a worker process so that a variant that faults the
CUDA context (an illegal address leaves the process unable to run anything else) or hangs is a
failed point, not the end of the run. Both ends of the worker's pipe live here, so that its
protocol is decided once: the tuner's ``WorkerClient`` starts ``worker_main`` (``serve``), which
sees its GPU alone (``one_device``), and talks JSON lines on its stdin/stdout, one request, one
reply; a worker that dies or times out is replaced at the next call. Request: ``{"call": <one of
CALLS>, "args": {...}}``. Reply: ``{"ok": true, "result": ...}`` or ``{"ok": false, "error":
"<exception class>", "message": "..."}``, with ``"exits": true`` when the worker leaves after it
(``FATAL_KINDS``). ``precompile`` fills the worker's compile cache, which ``evaluate`` then serves
from: it must run there. ``GpuEvaluator`` is the tuner's side; ``in_process=True`` answers here.
"""
from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import threading
from typing import Any

from reducetune import _core
from reducetune._no_gpu import device_problem
from reducetune._space import Point, limits_for_arch
from reducetune.errors import DeviceError
from reducetune.evaluate._gpu_share import compile_share
from reducetune.evaluate._gpu_start import (Prestarted, close_unused, one_device, start_ahead,
                                             worker_for)
from reducetune.evaluate.base import outpaced_noted

__all__ = ["GpuEvaluator", "WorkerClient", "PRECOMPILE_S_PER_VARIANT", "close_prestarted",
           "one_device", "prestart", "serve", "worker_main"]

# ---- the protocol: what may be asked, and after which replies the worker leaves
CALLS = ("evaluate", "evaluate_cub", "streaming_ceiling", "query_device", "precompile",
         "compile_ahead")

# Failure kinds after which the worker's CUDA context may be unusable (an illegal address is
# sticky): the worker replies, says so and exits; the next point gets a fresh process.
FATAL_KINDS = ("launch_error", "device_error", "LaunchError", "DeviceError")


def _exits_after(reply: dict) -> bool:
    if not reply["ok"]:
        return reply["error"] in FATAL_KINDS
    result = reply["result"]
    return isinstance(result, dict) and result.get("kind") in FATAL_KINDS


def _failure(e: Exception) -> dict[str, Any]:
    return {"ok": False, "error": type(e).__name__, "message": str(e)}


def _answer(name: Any, args: dict[str, Any]) -> dict[str, Any]:
    """The reply to one call, made in this process (the worker's, or the tuner's in process)."""
    try:
        if name not in CALLS:
            raise ValueError(f"unknown call {name!r}")
        return {"ok": True, "result": getattr(_core, name)(**args)}
    except Exception as e:  # every failure goes back as data; the worker stays up
        return _failure(e)


# ---- the worker's end
def serve(stdin=sys.stdin, stdout=None) -> int:
    """Answers requests until end of input (0), or until a reply after which the context may
    be unusable (3: the caller starts a fresh worker)."""
    if stdout is None:
        # Replies go to the original stdout; anything else written to fd 1 (by CUDA, NVRTC or
        # a stray printf in C++) goes to stderr instead of corrupting the protocol.
        stdout = os.fdopen(os.dup(1), "w")
        os.dup2(2, 1)
        sys.stdout = sys.stderr

    for line in stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError(f"a request is a JSON object, not {line.strip()[:80]}")
        except ValueError as e:  # a JSONDecodeError too
            reply = _failure(e)
        else:
            reply = _answer(request.get("call"), request.get("args", {}))
        exits = _exits_after(reply)
        if exits:
            reply["exits"] = True
        try:  # the tuner's end may be gone (killed, or it refused its devices): leave quietly,
            stdout.write(json.dumps(reply) + "\n")  # with no traceback for the user; _exit:
            stdout.flush()  # the interpreter's teardown would flush into the closed pipe again
        except BrokenPipeError:
            os._exit(0)
        if exits:
            return 3
    return 0


# ---- the tuner's end


class WorkerClient:
    """One worker process at a time; a dead or stuck one is replaced at the next call.

    The worker inherits this process's environment (REDUCETUNE_TEMPLATE_DIR included)."""

    # A worker that announced its exit, or closed its output, is waited for this long and then
    # killed: tearing down a poisoned CUDA context can hang.
    exit_grace_s = 10.0

    def __init__(self, timeout_s: float = 60.0, argv: list[str] | None = None) -> None:
        self.timeout_s = timeout_s
        # -c, not -m: the package's __init__ imports this module, which -m would then run a
        # second time as __main__ (runpy warns of it at every worker start)
        self.argv = argv or [sys.executable, "-c",
                             "from reducetune.evaluate.gpu import worker_main; worker_main()"]
        self.env: dict[str, str] | None = None  # the worker's environment (None: this one's)
        self.started = 0  # worker processes started so far
        self._proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
                env=self.env,
            )
            self.started += 1
        return self._proc

    def _gone(self, proc: subprocess.Popen[str], kill: bool) -> str:
        if kill:
            proc.kill()
        try:
            code = proc.wait(timeout=self.exit_grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        self._proc = None
        if code < 0:
            return f"worker died with {signal.Signals(-code).name} (signal {-code})"
        return f"worker exited with status {code}"

    @property
    def running(self) -> bool:
        """False once the worker died or was killed (and before the first call)."""
        return self._proc is not None and self._proc.poll() is None

    def call(self, name: str, timeout_s: float | None = None, **args: Any) -> dict[str, Any]:
        """{"ok": True, "result": ...} or {"ok": False, "error", "message"}; a crash or a
        timeout (``timeout_s``, default the client's) is reported as error "worker_crashed" /
        "timed_out"."""
        return self.send(name, **args) or self.reply(timeout_s)

    def send(self, name: str, **args: Any) -> dict[str, Any] | None:
        """Sends one request (the worker started if need be) without waiting for its reply,
        which ``reply`` reads: None, or the failure when the worker is gone already."""
        proc = self._start()
        assert proc.stdin
        try:
            proc.stdin.write(json.dumps({"call": name, "args": args}) + "\n")
            proc.stdin.flush()
        except BrokenPipeError:
            return {"ok": False, "error": "worker_crashed", "message": self._gone(proc, False)}
        return None

    def reply(self, timeout_s: float | None = None) -> dict[str, Any]:
        """The reply to the request sent last (``call``'s)."""
        timeout_s = self.timeout_s if timeout_s is None else timeout_s
        proc = self._proc
        assert proc is not None and proc.stdout
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        ready = sel.select(timeout_s)
        sel.close()
        if not ready:
            self._gone(proc, True)
            return {"ok": False, "error": "timed_out",
                    "message": f"no reply within {timeout_s:g} s (worker killed)"}
        line = proc.stdout.readline()
        if not line:
            return {"ok": False, "error": "worker_crashed", "message": self._gone(proc, False)}
        try:
            reply = dict(json.loads(line))
        except ValueError:
            reason = self._gone(proc, True)
            return {"ok": False, "error": "worker_crashed",
                    "message": f"worker wrote {line[:200]!r}, not a reply ({reason})"}
        if reply.pop("exits", False):
            self._gone(proc, False)  # it exits after a sticky CUDA error; the next call starts one
        return reply

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            assert self._proc.stdin
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None


_ERRORS = {"DeviceError": DeviceError}
_STARTED: dict[int, Prestarted] = {}  # prestart's, by ordinal


def prestart(ordinal: int, ceiling: bool = False) -> None:
    """Starts the GPU worker of ``ordinal`` now and asks it for its device, so that its
    process, its imports and CUDA's start overlap what this process does before it measures
    (the command's imports and arguments, the results file, the studies' storage):
    ``GpuEvaluator(ordinal)`` takes it with the reply. ``ceiling``: the streaming ceiling
    measured next (a tune run's first measurement, tuning/run.py), while this process is still
    opening its files (0.2-0.3 s of each worker's start on an H200, issue 25)."""
    start_ahead(ordinal, ceiling, _STARTED, WorkerClient)  # WorkerClient: a test's fake too


def close_prestarted() -> None:
    """Ends the GPU workers prestart started that no evaluator took (_gpu_start.py)."""
    close_unused(_STARTED)


class _InProcess:
    """The worker's calls answered in this process (no fault isolation: a faulting variant
    leaves the CUDA context unusable for the rest of the run). For debugging."""

    running = True  # this process: its compile cache lives as long as the run

    def call(self, name: str, timeout_s: float | None = None, **args: Any) -> dict[str, Any]:
        return _answer(name, args)

    def close(self) -> None:
        pass


# Allowance per variant when precompiling, on top of the per-call timeout: NVRTC compiles
# about 20 variants/s per core (docs/results), so this is ten times a single core's time.
PRECOMPILE_S_PER_VARIANT = 0.5


class GpuEvaluator:
    """Measures on a GPU: every call runs in the worker process (in_process=True: here).

    ``options`` go to every evaluate and CUB call (keys: ``sampling_options``); the tuner
    replaces their sampling keys with its config's through ``set_sampling``."""

    live = True  # measures now (evaluate/base.py Evaluator)

    def __init__(self, ordinal: int = 0, timeout_s: float = 60.0,
                 options: dict[str, Any] | None = None, in_process: bool = False) -> None:
        self.ordinal = ordinal
        self.timeout_s = timeout_s
        self.options = dict(options or {})
        self._worker: Any = _InProcess()
        self._asked = ordinal  # the ordinal the worker's CUDA knows the GPU by
        ceiling = None  # measured ahead (prestart)
        if in_process:
            reply = self._worker.call("query_device", ordinal=ordinal)
        else:
            self._worker, self._asked, reply, ceiling = worker_for(
                ordinal, timeout_s, _STARTED, WorkerClient)  # WorkerClient: a test's fake too
        if not reply["ok"]:
            raise _ERRORS.get(reply["error"], DeviceError)(
                device_problem(reply["message"], ordinal))
        info = reply["result"]
        self.device = dict(info, ordinal=ordinal, toolkit_version=info["runtime_version"])
        self.limits = limits_for_arch(str(info["arch"]))
        self.limits.sm_count = info["sm_count"]
        self.limits.max_threads_per_block = info["max_threads_per_block"]
        self.calls = 0
        self._ceiling: float | None = None
        self.ceiling_samples_s: list[float] = []  # kept so the tuner can record them
        self._ahead_thread: threading.Thread | None = None  # ask_ceiling_ahead's
        self._precompiled: list[Point] = []  # Points compiled into the current worker's cache
        self._ahead: list[Point] = []  # Points queued for its background compiles
        self.share = compile_share()  # this run's GPU workers on this host (_gpu_share.py)
        if ceiling is not None:
            self._keep_ceiling(ceiling)

    @property
    def workers_started(self) -> int:
        """Worker processes started so far (a fault or a timeout costs one; 0 in process)."""
        return int(getattr(self._worker, "started", 0))

    def set_sampling(self, options: dict[str, Any]) -> None:
        """The stopping rule for the variants and CUB alike (``sampling_options``)."""
        self.options.update(options)

    def precompile(self, points: list[Point]) -> dict[str, Any]:
        """Compiles the points' variants in parallel in the worker, whose cache evaluate()
        serves from: {requested, compiled, cached, failed, failures, seconds, threads}, or
        {error, message} when the call itself failed (then each variant compiles when
        measured). The points cross the pipe as Point.to_dict(), one per distinct variant
        (points differing only in their launch compile the same program)."""
        self._precompiled = list({p.variant_label: p for p in points}.values())
        reply = self._call("precompile", points=[p.to_dict() for p in self._precompiled],
                           timeout_s=self.timeout_s + PRECOMPILE_S_PER_VARIANT *
                           len(self._precompiled),
                           arch=str(self.device["arch"]), threads=0, shared_dir=self.share.folder)
        if not reply["ok"]:
            self._precompiled = []
            return {"error": reply["error"], "message": reply["message"]}
        return dict(reply["result"])

    def compile_ahead(self, points: list[Point]) -> dict[str, Any]:
        """Queues the points' variants for the worker's background compiles (replacing what
        still waits; tuning/precompile.py; in a --devices run in this worker's order, sharing:
        self.share) and returns at once with its counts so far, or {error, message}. [] stops
        what waits."""
        self._ahead = list({p.variant_label: p for p in points}.values())
        reply = self._call("compile_ahead", points=[p.to_dict() for p in self.share.order(
            self._ahead)], arch=str(self.device["arch"]), threads=0, **self.share.ahead_args())
        return dict(reply["result"]) if reply["ok"] else {"error": reply["error"],
                                                           "message": reply["message"]}

    def _rewarm(self) -> None:
        # A worker replaced after a crash or a timeout starts with an empty cache: fill it
        # again rather than compile every remaining variant alone, and queue the rest again.
        if (self._precompiled or self._ahead) and not self._worker.running:
            if self._precompiled:
                self.precompile(self._precompiled)
            if self._ahead:
                self.compile_ahead(self._ahead)

    def _run(self, name: str, **args: Any) -> dict[str, Any]:
        reply = self._call(name, ordinal=self._asked, **args)
        if reply["ok"]:
            return dict(reply["result"])
        return {"status": "failed", "kind": reply["error"], "reason": reply["message"]}

    def evaluate(self, point: Point, problem: _core.Problem, data: dict[str, Any] | None = None,
                 outpaced_above_s: float | None = None) -> dict[str, Any]:
        self.calls += 1
        self._ceiling_read()  # before the options: the ceiling goes with every evaluate
        self._rewarm()
        options = dict(self.options)
        if self._ceiling:
            options["ceiling_bytes_per_s"] = self._ceiling
        if outpaced_above_s:  # racing, this call only (evaluate/base.py OUTPACED)
            options["outpaced_above_s"] = float(outpaced_above_s)
        # typed over JSON: the point's parameters by name and the problem's shape, which the
        # worker's _core.evaluate takes as they are
        plain = {"dtype": problem.dtype, "op": problem.op, "shape": list(problem.shape)}
        return outpaced_noted(self._run("evaluate", point=point.to_dict(), problem=plain,
                                        data=data or {}, options=options), outpaced_above_s)

    def cub(self, w: dict) -> dict[str, Any] | None:
        return self._run("evaluate_cub", workload=w, options=self.options)

    def ceiling_bytes_per_s(self) -> float | None:
        self._ceiling_read()
        if self._ceiling is None:
            self._keep_ceiling(self._worker.call("streaming_ceiling", ordinal=self._asked))
        return self._ceiling or None

    def ask_ceiling_ahead(self) -> None:
        """The streaming ceiling measured now, on a thread, where a command asks for it first
        (tune: tuning/run.py) and opens its files meanwhile (issue 25); the evaluator's next
        call waits for it. Nothing where it is known already (prestart) or in process."""
        if self._ceiling is None and self._ahead_thread is None and \
                not isinstance(self._worker, _InProcess):
            self._ahead_thread = threading.Thread(target=lambda: self._keep_ceiling(
                self._worker.call("streaming_ceiling", ordinal=self._asked)), daemon=True)
            self._ahead_thread.start()

    def _ceiling_read(self) -> None:
        if self._ahead_thread is not None:
            self._ahead_thread.join()
            self._ahead_thread = None

    def _call(self, name: str, **args: Any) -> dict[str, Any]:
        """The worker's reply to one call, once the ceiling asked ahead is read: the worker
        answers one request at a time, in order."""
        self._ceiling_read()
        return dict(self._worker.call(name, **args))

    def _keep_ceiling(self, r: dict[str, Any]) -> None:
        self._ceiling = float(r["result"]["bytes_per_s"]) if r["ok"] else 0.0
        self.ceiling_samples_s = list(r["result"]["samples_s"]) if r["ok"] else []

    def close(self) -> None:
        self._ceiling_read()
        self._worker.close()


def worker_main() -> None:
    """The worker process: serves until its input ends, then exits with serve's code."""
    code = serve()
    if code:
        # After a sticky CUDA error: leave without the interpreter's teardown, which would
        # destroy the poisoned context and can hang or fault there. The reply is flushed.
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    worker_main()
