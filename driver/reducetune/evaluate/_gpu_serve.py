"""The GPU worker's end of the pipe (evaluate/gpu.py holds the tuner's and the protocol's
description): the calls it answers (CALLS, each a function of the extension), the failure kinds
after which it leaves (FATAL_KINDS), and its loop over JSON lines (``serve``). Split from
gpu.py (which re-exports these names), so that each file says one end of the pipe.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any

from reducetune import _core

__all__ = ["CALLS", "FATAL_KINDS", "answer", "exits_after", "serve", "worker_main"]

# ---- the protocol: what may be asked, and after which replies the worker leaves
CALLS = ("evaluate", "evaluate_cub", "streaming_ceiling", "query_device", "precompile",
         "compile_ahead")

# Failure kinds after which the worker's CUDA context may be unusable (an illegal address is
# sticky): the worker replies, says so and exits; the next point gets a fresh process.
FATAL_KINDS = ("launch_error", "device_error", "LaunchError", "DeviceError")


def exits_after(reply: dict) -> bool:
    if not reply["ok"]:
        return reply["error"] in FATAL_KINDS
    result = reply["result"]
    return isinstance(result, dict) and result.get("kind") in FATAL_KINDS


def _failure(e: Exception) -> dict[str, Any]:
    return {"ok": False, "error": type(e).__name__, "message": str(e)}


def answer(name: Any, args: dict[str, Any]) -> dict[str, Any]:
    """The reply to one call, made in this process (the worker's, or the tuner's in process)."""
    try:
        if name not in CALLS:
            raise ValueError(f"unknown call {name!r}")
        return {"ok": True, "result": getattr(_core, name)(**args)}
    except Exception as e:  # every failure goes back as data; the worker stays up
        return _failure(e)


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
            reply = answer(request.get("call"), request.get("args", {}))
        exits = exits_after(reply)
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


def worker_main() -> None:
    """The worker process: serves until its input ends, then exits with serve's code."""
    code = serve()
    if code:
        # After a sticky CUDA error: leave without the interpreter's teardown, which would
        # destroy the poisoned context and can hang or fault there. The reply is flushed.
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
