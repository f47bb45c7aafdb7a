"""Starting a GPU worker (evaluate/gpu.py's WorkerClient) for one GPU: the environment in
which it sees that GPU alone (``one_device``), and a worker started ahead of its evaluator
(``Prestarted``: gpu.py's ``prestart``, through ``start_ahead``), whose first replies a thread
reads while the process that started it does other things, the worker a GpuEvaluator takes
(``worker_for``), and the end of those no evaluator took (``close_unused``: gpu.py's
``close_prestarted``). Split from gpu.py, which re-exports ``one_device``.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Prestarted", "close_unused", "one_device", "start_ahead", "worker_for"]


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
    until the evaluator takes it (``taken``) or the command ends without one (``end``). A
    thread, not two requests sent at once: the pipe's buffered reader may take both replies in
    one read, and the second would then wait on a descriptor with nothing left to read."""

    def __init__(self, client: Any, asked: int, ceiling: bool) -> None:
        self.client, self.asked = client, asked
        self.replies: list[dict[str, Any]] = []
        self._ended = False
        self._thread: threading.Thread | None = None
        # Its process started here, not on the thread: once prestart returns, end() has it to
        # end (WorkerClient's _start and _proc: this module is gpu.py's, split for its size)
        try:
            getattr(client, "_start", _in_process)()
        except Exception as e:  # the process could not start: the evaluator says why
            self.replies.append(_crashed(e))
            return
        self._thread = threading.Thread(target=self._ask, args=(ceiling,), daemon=True)
        self._thread.start()

    def _ask(self, ceiling: bool) -> None:
        if self._ended:  # ended before the thread ran: nothing to ask
            return
        try:
            self.replies.append(self.client.call("query_device", ordinal=self.asked))
            if ceiling and self.replies[0]["ok"] and not self._ended:
                self.replies.append(self.client.call("streaming_ceiling", ordinal=self.asked))
        except Exception as e:  # the pipe failed: the evaluator says why
            self.replies.append(_crashed(e))

    def taken(self, timeout_s: float) -> tuple[Any, int, dict[str, Any], dict[str, Any] | None]:
        """Its worker (with the evaluator's timeout from now on), the ordinal it asks for, its
        device's reply and the ceiling's (None where not asked or not reached)."""
        if self._thread is not None:
            self._thread.join()
        self.client.timeout_s = timeout_s
        device = self.replies[0]
        ceiling = self.replies[1] if len(self.replies) > 1 and device["ok"] else None
        return self.client, self.asked, device, ceiling

    def end(self) -> None:
        """Its worker ended now, not waited for: no evaluator took it (an argument refused after
        prestart, an interruption, a command that failed before it measured). Killed, not asked
        to finish: it holds nothing yet, and CUDA's start takes seconds. A ceiling the thread
        asked in the instant of the kill starts a fresh process, which close() then ends: the
        end is slower then, never left behind."""
        self._ended = True
        process = getattr(self.client, "_proc", None)  # a test's stand-in in process has none
        if process is not None and process.poll() is None:
            process.kill()
        if self._thread is not None:
            self._thread.join()  # its read ends on the pipe's end
        self.client.close()


def _in_process() -> None:
    """A stand-in worker that answers in this process (tests) has no process to start."""


def _crashed(e: Exception) -> dict[str, Any]:
    return {"ok": False, "error": "worker_crashed", "message": str(e)}


def start_ahead(ordinal: int, ceiling: bool, started: dict[int, Prestarted],
                client_type: Callable[..., Any]) -> None:
    """gpu.py's prestart: the GPU worker of ``ordinal`` (a ``client_type``) started and kept in
    ``started`` for the evaluator of that ordinal, unless one is there already."""
    if ordinal not in started:
        client = client_type()
        client.env, asked = one_device(ordinal)
        started[ordinal] = Prestarted(client, asked, ceiling)


def close_unused(started: dict[int, Prestarted]) -> None:
    """Every worker of ``started`` that no evaluator took, ended (Prestarted.end): a command
    leaves no process behind, whatever refused or interrupted it."""
    while started:
        started.popitem()[1].end()


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
