"""Where a point's measurement comes from: the GPU (through a worker process) or a recorded
database (replay, Kernel Tuner's simulation mode: deterministic and GPU-free).

Both give the same dicts: ``{"status": "ok", "samples_s", "median_s", "gbps",
"pct_of_peak", "pct_of_ceiling", ...}`` or ``{"status": "failed" | "invalid" | "wrong",
"kind", "reason"}``.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Protocol

from reducetune import _core
from reducetune._no_gpu import device_problem
from reducetune._space import limits_for_arch
from reducetune._store import open_store, same_model_ids
from reducetune.errors import DeviceError, StoreError

__all__ = [
    "Evaluator",
    "GpuEvaluator",
    "ReplayEvaluator",
    "WorkerClient",
    "CEILING_WORKLOAD",
    "MIN_SAMPLES",
    "MAX_NOISE",
    "WORKLOAD_SEED",
    "sampling_options",
    "workload",
]

# The streaming ceiling is stored as a baseline under this conventional workload key (the
# read itself is 4 GiB, or an eighth of the device memory: baseline/streaming_ceiling.hpp).
CEILING_WORKLOAD = {"dtype": "float32", "op": "sum", "n": 1 << 28, "data_pattern": "uniform",
                    "seed": 0}


# The measurement protocol of issue 3, defined in C++ (measure/stopping_rule.hpp): at least
# MIN_SAMPLES cold samples, stop once their relative standard deviation is below MAX_NOISE.
# Tuning changes only the caps (time, count) and hot samples. WORKLOAD_SEED is the data seed of
# a workload that names none (verify/patterns.hpp). Kept here as names other modules import.
MIN_SAMPLES: int = _core.MIN_SAMPLES
MAX_NOISE: float = _core.MAX_NOISE
WORKLOAD_SEED: int = _core.WORKLOAD_SEED


def sampling_options(time_cap_s: float, max_samples: int, hot: bool) -> dict[str, Any]:
    """The stopping rule the worker applies to cold (and, with hot, hot) samples: the keys
    ``_core.evaluate`` and ``_core.evaluate_cub`` read from their ``options``."""
    return {"hot": bool(hot), "min_samples": MIN_SAMPLES, "max_samples": int(max_samples),
            "max_noise": MAX_NOISE, "time_cap_s": float(time_cap_s)}


def workload(dtype: str, op: str, n: int, pattern: str = "uniform",
             seed: int = WORKLOAD_SEED) -> dict:
    return {"dtype": dtype, "op": op, "n": int(n), "data_pattern": pattern, "pattern": pattern,
            "seed": seed}


class Evaluator(Protocol):
    """What the tuner needs from a source of measurements."""

    device: dict[str, Any]  # name, uuid, cc_major, cc_minor, ..., driver/toolkit versions
    limits: Any  # DeviceLimits
    calls: int  # evaluate() calls so far (what "measured" means in tests)

    def set_sampling(self, options: dict[str, Any]) -> None: ...
    def precompile(self, variant_labels: list[str]) -> dict[str, Any] | None: ...
    def evaluate(self, variant_label: str, launch_label: str, w: dict) -> dict[str, Any]: ...
    def cub(self, w: dict) -> dict[str, Any] | None: ...
    def ceiling_bytes_per_s(self) -> float | None: ...
    def close(self) -> None: ...


class WorkerClient:
    """One worker process at a time; a dead or stuck one is replaced at the next call.

    The worker inherits this process's environment (REDUCETUNE_TEMPLATE_DIR included)."""

    # A worker that announced its exit, or closed its output, is waited for this long and then
    # killed: tearing down a poisoned CUDA context can hang.
    exit_grace_s = 10.0

    def __init__(self, timeout_s: float = 60.0, argv: list[str] | None = None) -> None:
        self.timeout_s = timeout_s
        self.argv = argv or [sys.executable, "-m", "reducetune._worker"]
        self.started = 0  # worker processes started so far
        self._proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
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
        timeout_s = self.timeout_s if timeout_s is None else timeout_s
        proc = self._start()
        assert proc.stdin and proc.stdout
        try:
            proc.stdin.write(json.dumps({"call": name, "args": args}) + "\n")
            proc.stdin.flush()
        except BrokenPipeError:
            return {"ok": False, "error": "worker_crashed", "message": self._gone(proc, False)}
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

class _InProcess:
    """The worker's calls made in this process (no fault isolation: a faulting variant
    leaves the CUDA context unusable for the rest of the run). For debugging."""

    running = True  # this process: its compile cache lives as long as the run

    def call(self, name: str, timeout_s: float | None = None, **args: Any) -> dict[str, Any]:
        try:
            return {"ok": True, "result": getattr(_core, name)(**args)}
        except Exception as e:
            return {"ok": False, "error": type(e).__name__, "message": str(e)}

    def close(self) -> None:
        pass


# Allowance per variant when precompiling, on top of the per-call timeout: NVRTC compiles
# about 20 variants/s per core (docs/results), so this is ten times a single core's time.
PRECOMPILE_S_PER_VARIANT = 0.5


class GpuEvaluator:
    """Measures on a GPU: every call runs in the worker process (in_process=True: here).

    ``options`` go to every evaluate and CUB call (keys: ``sampling_options``); the tuner
    replaces their sampling keys with its config's through ``set_sampling``."""

    def __init__(self, ordinal: int = 0, timeout_s: float = 60.0,
                 options: dict[str, Any] | None = None, in_process: bool = False) -> None:
        self.ordinal = ordinal
        self.timeout_s = timeout_s
        self.options = dict(options or {})
        self._worker: Any = _InProcess() if in_process else WorkerClient(timeout_s)
        reply = self._worker.call("query_device", ordinal=ordinal)
        if not reply["ok"]:
            raise _ERRORS.get(reply["error"], DeviceError)(
                device_problem(reply["message"], ordinal))
        info = reply["result"]
        self.device = dict(info, toolkit_version=info["runtime_version"])
        self.limits = limits_for_arch(str(info["arch"]))
        self.limits.sm_count = info["sm_count"]
        self.limits.max_threads_per_block = info["max_threads_per_block"]
        self.calls = 0
        self._ceiling: float | None = None
        self.ceiling_samples_s: list[float] = []  # kept so the tuner can record them
        self._precompiled: list[str] = []  # compiled into the current worker's cache

    @property
    def workers_started(self) -> int:
        """Worker processes started so far (a fault or a timeout costs one; 0 in process)."""
        return int(getattr(self._worker, "started", 0))

    def set_sampling(self, options: dict[str, Any]) -> None:
        """The stopping rule for the variants and CUB alike (``sampling_options``)."""
        self.options.update(options)

    def precompile(self, variant_labels: list[str]) -> dict[str, Any]:
        """Compiles the variants in parallel in the worker, whose cache evaluate() serves
        from: {requested, compiled, cached, failed, failures, seconds, threads}, or {error,
        message} when the call itself failed (then each variant compiles when measured)."""
        labels = list(dict.fromkeys(variant_labels))
        self._precompiled = labels
        timeout = self.timeout_s + PRECOMPILE_S_PER_VARIANT * len(labels)
        reply = self._worker.call("precompile", timeout_s=timeout, variant_labels=labels,
                                  arch=str(self.device["arch"]), threads=0)
        if not reply["ok"]:
            self._precompiled = []
            return {"error": reply["error"], "message": reply["message"]}
        return dict(reply["result"])

    def _rewarm(self) -> None:
        # A worker replaced after a crash or a timeout starts with an empty cache: fill it
        # again rather than compile every remaining variant alone.
        if self._precompiled and not self._worker.running:
            self.precompile(self._precompiled)

    def _run(self, name: str, **args: Any) -> dict[str, Any]:
        reply = self._worker.call(name, ordinal=self.ordinal, **args)
        if reply["ok"]:
            return dict(reply["result"])
        return {"status": "failed", "kind": reply["error"], "reason": reply["message"]}

    def evaluate(self, variant_label: str, launch_label: str, w: dict) -> dict[str, Any]:
        self.calls += 1
        self._rewarm()
        options = dict(self.options)
        if self._ceiling:
            options["ceiling_bytes_per_s"] = self._ceiling
        return self._run("evaluate", variant_label=variant_label, launch_label=launch_label,
                         workload=w, options=options)

    def cub(self, w: dict) -> dict[str, Any] | None:
        return self._run("evaluate_cub", workload=w, options=self.options)

    def ceiling_bytes_per_s(self) -> float | None:
        if self._ceiling is None:
            r = self._worker.call("streaming_ceiling", ordinal=self.ordinal)
            self._ceiling = float(r["result"]["bytes_per_s"]) if r["ok"] else 0.0
            self.ceiling_samples_s = list(r["result"]["samples_s"]) if r["ok"] else []
        return self._ceiling or None

    def close(self) -> None:
        self._worker.close()


def decompress_recording(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> Path:
    """``NAME.db.xz`` (a recording as the repository keeps it) decompressed to
    ``folder/NAME.db``."""
    import lzma
    import shutil

    src = Path(path)
    dst = Path(folder) / (src.name[:-3] if src.name.endswith(".xz") else src.name)
    try:
        with lzma.open(src, "rb") as fin, open(dst, "wb") as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
    except (lzma.LZMAError, EOFError) as e:
        raise StoreError(f"cannot decompress {src}: {e}") from e
    return dst


REPLAY_PREFIX = "reducetune-replay-"



class ReplayEvaluator:
    """Serves measurements from a recorded database: the same point always gives the same
    answer; a point the recording lacks is a failure ("not_recorded"), never a guess.
    A ``.xz`` file is decompressed into a temporary folder first (removed by close())."""

    def __init__(self, path: str | os.PathLike[str], device: int | str | None = None) -> None:
        if not Path(path).exists():
            raise StoreError(f"replay database {path} does not exist")
        self.path = Path(path)
        self._tmp: str | None = None
        self._store: Any = None
        try:
            self._open(path, device)
        except BaseException:
            self.close()
            raise

    def _open(self, path: str | os.PathLike[str], device: int | str | None) -> None:
        if self.path.name.endswith(".xz"):
            import tempfile

            self._tmp = tempfile.mkdtemp(prefix=f"{REPLAY_PREFIX}{os.getpid()}-")
            path = decompress_recording(self.path, self._tmp)
        self._store = open_store(path, read_only=True)
        devices = self._store.devices()
        if not devices:
            raise StoreError(f"replay database {path} holds no device")
        chosen = None
        if device is None:
            chosen = devices[0]
        elif isinstance(device, int):
            if not 0 <= device < len(devices):  # -1 would be the last one
                raise DeviceError(f"replay database {self.path} holds {len(devices)} device(s); "
                                  f"--device {device} is not one of them")
            chosen = devices[device]
        else:
            chosen = next((d for d in devices if device in (d["uuid"], d["name"])), None)
            if chosen is None:
                raise DeviceError(f"no device '{device}' in replay database {self.path}")
        self.device = dict(chosen)
        self.limits = limits_for_arch(str(chosen["cc_major"] * 10 + chosen["cc_minor"]))
        if chosen["sm_count"]:
            self.limits.sm_count = chosen["sm_count"]
        self.calls = 0
        self._tables: dict[tuple[str, str, int], dict[tuple[str, str], dict[str, Any]]] = {}

    def set_sampling(self, options: dict[str, Any]) -> None:
        pass  # a recording keeps the protocol it was measured with

    def precompile(self, variant_labels: list[str]) -> None:
        return None  # nothing is compiled in replay

    def table(self, dtype: str, op: str, n: int) -> dict[tuple[str, str], dict[str, Any]]:
        """Every recorded point of one workload: (variant label, launch label) -> row."""
        key = (dtype, op, int(n))
        if key not in self._tables:
            # A recording swept by several GPUs of one model (tune --devices) holds each point
            # once, under the GPU that measured it: the other GPUs' rows first, so that this
            # device's own row wins where both have one.
            rows = [r for d in self._same_model()
                    for r in self._store.history(d, dtype, op, int(n))]
            rows += self._store.history(self.device["id"], dtype, op, int(n))
            # history is oldest first: the newest measurement of a point wins, as in the store
            self._tables[key] = {(r["variant_label"], r["launch_label"]): r for r in rows}
        return self._tables[key]

    def _same_model(self) -> list[int]:
        return same_model_ids(self._store.devices(), self.device)

    def evaluate(self, variant_label: str, launch_label: str, w: dict) -> dict[str, Any]:
        self.calls += 1
        row = self.table(w["dtype"], w["op"], w["n"]).get((variant_label, launch_label))
        if row is None:
            return {"status": "failed", "kind": "not_recorded",
                    "reason": f"not in the replay database {self.path.name}"}
        out = {k: row[k] for k in ("status", "reason", "samples_s", "median_s", "rel_stddev",
                                   "gbps", "pct_of_peak", "pct_of_ceiling")}
        out["kind"] = "" if row["status"] == "ok" else row["status"]
        return out

    def cub(self, w: dict) -> dict[str, Any] | None:
        b = self._store.find_baseline(self.device["id"], w, "cub")
        return None if b is None else {"status": "ok", **b}

    def ceiling_bytes_per_s(self) -> float | None:
        b = self._store.find_baseline(self.device["id"], CEILING_WORKLOAD, "ceiling")
        return None if b is None else float(b["gbps"]) * 1e9

    def __enter__(self) -> ReplayEvaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._tmp is not None:
            import shutil

            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
