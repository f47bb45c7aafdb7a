"""How many GPUs CUDA would enumerate in this process, read from the NVIDIA driver's own files
without starting CUDA.

Why (issue 25): ``reducetune tune --devices 0`` (and ``0,1``, ``all``) checks its ordinals
before it opens any file. It asked cuInit and cuDeviceGetCount in a child process, and cuInit
opens every visible GPU: on a host of four H200s that took 1.30 s (0.49 s with one GPU
visible), the largest step of the one-GPU sweep's start and of every multi-GPU worker's wait
for its go (docs/results/h200x4_2026-11-27_z_visible_gpus). The driver lists its GPUs in
``/proc/driver/nvidia/gpus/<bus id>/information`` (model, ``GPU UUID``, ``Device Minor``,
``GPU Excluded``); a GPU whose ``/dev/nvidia<minor>`` this process cannot open is not one CUDA
can use here (a container given some of the host's GPUs). Reading them takes a millisecond.

CUDA_VISIBLE_DEVICES is honoured as CUDA reads it: a comma-separated list of ordinals or
(prefixes of) GPU UUIDs, visible up to its first invalid entry. Where the files cannot say
(no such folder, no usable GPU listed, an unreadable entry, a MIG instance, an entry of any
other form or named twice) the answer is None, and the caller asks cuInit as before, whose
words about a missing driver or GPU are the ones users know.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

__all__ = ["visible_gpu_count"]

PROC_GPUS = Path("/proc/driver/nvidia/gpus")
DEV = Path("/dev")


def _fields(information: Path) -> dict[str, str]:
    """'Key: value' lines of one GPU's information file."""
    out = {}
    for line in information.read_text(errors="replace").splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def _usable_uuids(proc: Path, dev: Path) -> list[str] | None:
    """The UUIDs of the GPUs listed under ``proc`` that this process can open, in bus order (as
    listed; only their count and UUIDs matter here); None if any entry cannot be read."""
    uuids = []
    try:
        for gpu in sorted(proc.iterdir()):
            f = _fields(gpu / "information")
            minor = f.get("Device Minor", "")
            if not minor.isdigit():
                return None
            if f.get("GPU Excluded", "No").lower().startswith("yes"):
                continue
            node = dev / f"nvidia{minor}"
            if node.exists() and os.access(node, os.R_OK | os.W_OK):
                uuids.append(f.get("GPU UUID", ""))
    except OSError:
        return None
    return uuids


def _listed_count(listed: str, uuids: list[str]) -> int | None:
    """How many of CUDA_VISIBLE_DEVICES' entries CUDA would make visible among ``uuids``: those
    before its first invalid one; None where only CUDA can tell."""
    if not listed.strip():
        return None
    taken: set[int] = set()
    for entry in (e.strip() for e in listed.split(",")):
        if re.fullmatch(r"[0-9]{1,10}", entry):
            index = int(entry)
            if index >= len(uuids):
                break
        elif entry.startswith("GPU-") and all(u.startswith("GPU-") for u in uuids):
            matches = [i for i, u in enumerate(uuids) if u.startswith(entry)]
            if len(matches) != 1:
                break
            index = matches[0]
        else:  # MIG-..., an empty entry, anything else: CUDA's rules, not ours
            return None
        if index in taken:
            return None
        taken.add(index)
    return len(taken)


def visible_gpu_count(environ: Mapping[str, str] = os.environ, proc: Path = PROC_GPUS,
                      dev: Path = DEV) -> int | None:
    """The GPUs this process's CUDA would enumerate, from the driver's files (the module's
    docstring), or None where they cannot say (then cuInit decides)."""
    uuids = _usable_uuids(proc, dev)
    if not uuids:
        return None
    listed = environ.get("CUDA_VISIBLE_DEVICES")
    count = len(uuids) if listed is None else _listed_count(listed, uuids)
    return count or None
