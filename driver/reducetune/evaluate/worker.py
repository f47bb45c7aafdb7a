"""The GPU worker: a child process that evaluates variants for the tuner.

A variant that faults the CUDA context (an illegal address) would leave the process unable
to run anything else, and one that hangs would stall the study. The tuner therefore talks
to this process over JSON lines on stdin/stdout (one request, one reply) and starts a fresh
one when it dies or times out (``evaluate/gpu.py`` ``WorkerClient``).

Request: ``{"call": "evaluate" | "evaluate_cub" | "streaming_ceiling" | "query_device" |
"precompile", "args": {...}}``. Reply: ``{"ok": true, "result": ...}`` or ``{"ok": false,
"error": "<exception class>", "message": "..."}``. ``precompile`` fills this process's
compile cache, which ``evaluate`` then serves from: it must run here, not in the tuner.
"""

from __future__ import annotations

import json
import os
import sys

from reducetune import _core

CALLS = ("evaluate", "evaluate_cub", "streaming_ceiling", "query_device", "precompile")

# Failure kinds after which this process's CUDA context may be unusable (an illegal address
# is sticky): the worker replies, says it exits, and exits, so the next point gets a fresh
# process instead of inheriting a dead context.
FATAL_KINDS = ("launch_error", "device_error", "LaunchError", "DeviceError")


def _exits_after(reply: dict) -> bool:
    if not reply["ok"]:
        return reply["error"] in FATAL_KINDS
    result = reply["result"]
    return isinstance(result, dict) and result.get("kind") in FATAL_KINDS


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
            if request.get("call") not in CALLS:
                raise ValueError(f"unknown call {request.get('call')!r}")
            result = getattr(_core, request["call"])(**request.get("args", {}))
            reply = {"ok": True, "result": result}
        except Exception as e:  # every failure goes back as data; the worker stays up
            reply = {"ok": False, "error": type(e).__name__, "message": str(e)}
        exits = _exits_after(reply)
        if exits:
            reply["exits"] = True
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()
        if exits:
            return 3
    return 0


if __name__ == "__main__":
    code = serve()
    if code:
        # After a sticky CUDA error: leave without the interpreter's teardown, which would
        # destroy the poisoned context and can hang or fault there. The reply is flushed.
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
