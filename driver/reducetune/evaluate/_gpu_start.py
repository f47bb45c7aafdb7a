"""Starting a GPU worker (evaluate/gpu.py's WorkerClient) for one GPU: the environment in
which it sees that GPU alone (``one_device``), and a worker started ahead of its evaluator
(``Prestarted``: gpu.py's ``prestart``), whose first replies a thread reads while the process
that started it does other things, and the worker a GpuEvaluator takes (``worker_for``). Split
from gpu.py, which re-exports ``one_device``.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Prestarted", "one_device", "worker_for"]


def one_device(ordinal: int, environ: Mapping[str, str] = os.environ) -> tuple[Any, int]:
    """The environment of the GPU worker of ``ordinal`` and the ordinal its CUDA knows the GPU
    by: CUDA_VISIBLE_DEVICES naming that GPU alone (its entry in this process's list, else the
    ordinal), asked as 0. Nothing the worker does can land on another GPU (until 2026-11-26 it
    measured on device 0 whatever the ordinal: the workers of ``tune --devices 0,1`` shared GPU
    0, issue 25) and CUDA's start enumerates one device. No entry: (None, ordinal)."""
    listed = environ.get("CUDA_VISIBLE_DEVICES")
    entries = [e.strip() for e in listed.split(",")] if listed is not None else None
    if entries is None:
        return {**environ, "CUDA_VISIBLE_DEVICES": str(ordinal)}, 0
    if ordinal < len(entries) and entries[ordinal]:
        return {**environ, "CUDA_VISIBLE_DEVICES": entries[ordinal]}, 0
    return None, ordinal


class Prestarted:
    """A GPU worker started ahead (``client``, asking for its GPU as ``asked``): a thread reads
    its reply to query_device and, with ``ceiling``, has it measure the streaming ceiling next,
    until the evaluator takes it. A thread, not two requests sent at once: the pipe's buffered
    reader may take both replies in one read, and the second would then wait on a descriptor
    with nothing left to read."""

    def __init__(self, client: Any, asked: int, ceiling: bool) -> None:
        self.client, self.asked = client, asked
        self.replies: list[dict[str, Any]] = []
        self._thread = threading.Thread(target=self._ask, args=(ceiling,), daemon=True)
        self._thread.start()

    def _ask(self, ceiling: bool) -> None:
        try:
            self.replies.append(self.client.call("query_device", ordinal=self.asked))
            if ceiling and self.replies[0]["ok"]:
                self.replies.append(self.client.call("streaming_ceiling", ordinal=self.asked))
        except Exception as e:  # the process could not start: the evaluator says why
            self.replies.append({"ok": False, "error": "worker_crashed", "message": str(e)})

    def taken(self, timeout_s: float) -> tuple[Any, int, dict[str, Any], dict[str, Any] | None]:
        """Its worker (with the evaluator's timeout from now on), the ordinal it asks for, its
        device's reply and the ceiling's (None where not asked or not reached)."""
        self._thread.join()
        self.client.timeout_s = timeout_s
        device = self.replies[0]
        ceiling = self.replies[1] if len(self.replies) > 1 and device["ok"] else None
        return self.client, self.asked, device, ceiling


def worker_for(ordinal: int, timeout_s: float, started: dict[int, Prestarted],
               client_type: Callable[..., Any]
               ) -> tuple[Any, int, dict[str, Any], dict[str, Any] | None]:
    """The GPU worker of ``ordinal`` (taken from ``started``, prestart's, or a ``client_type``
    made), the ordinal it asks for, its reply to query_device, and the streaming ceiling's where
    prestart asked it. One that sees no GPU under one_device's list (other than device 0's,
    which fails alike) is replaced by one that sees all: CUDA's words say why (no such
    ordinal)."""
    ahead = started.pop(ordinal, None)
    ceiling = None
    if ahead is not None:
        client, asked, reply, ceiling = ahead.taken(timeout_s)
    else:
        client = client_type(timeout_s)
        client.env, asked = one_device(ordinal)
        reply = client.call("query_device", ordinal=asked)
    if not reply["ok"] and (client.env or {}).get("CUDA_VISIBLE_DEVICES", "0") != "0":
        client.close()
        client, asked = client_type(timeout_s), ordinal
        reply = client.call("query_device", ordinal=ordinal)
    return client, asked, reply, ceiling
