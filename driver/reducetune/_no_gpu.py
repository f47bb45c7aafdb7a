"""What a device error says to the user: one helper for every place that first touches a
device (the GPU evaluator, in its worker or in process, and ``reducetune devices``)."""

from __future__ import annotations

import ctypes
import functools

__all__ = ["device_problem", "has_driver"]

# What CUDA says when this machine has no NVIDIA driver or no GPU: the runtime reports a
# missing libcuda as a driver "insufficient for CUDA runtime version", which sends people
# looking for a driver update instead of a GPU.
_NO_GPU = ("driver version is insufficient", "no CUDA-capable device", "no usable CUDA driver",
           "stub library", "0 devices", "CUDA_ERROR_NO_DEVICE", "CUDA_ERROR_NOT_INITIALIZED")


# What to do instead when there is no usable GPU: tuning can replay a recording.
REPLAY_REMEDY = ("tune from a recording with --replay DB (in the repository: "
                 "tests/data/recorded/h200_float32_sum_grid.db.xz), or run on a machine with "
                 "an NVIDIA GPU and its driver")


def device_problem(message: str, ordinal: int | None = None,
                   remedy: str = REPLAY_REMEDY) -> str:
    """A device error's message as the user should read it: for a machine without an NVIDIA
    driver or GPU, that, and what to do next (`remedy`: by default, replay a recording);
    otherwise the message, with the ordinal. Every place that first touches a device
    (GpuEvaluator, ``reducetune devices``, ``reducetune calibrate``) says it this way."""
    if any(marker in message for marker in _NO_GPU):
        cuda = message.removeprefix("no usable CUDA device: ")
        if "insufficient" in cuda:  # also said for a GPU whose driver is older than CUDA
            cuda += "; if it has a GPU, its driver is older than this CUDA runtime"
        return f"no NVIDIA driver / GPU found on this machine (CUDA: {cuda}): {remedy}"
    where = "" if ordinal is None else f" at --device {ordinal}"
    hint = "use --replay DB to tune from a recorded database" if remedy == REPLAY_REMEDY else remedy
    return f"no usable GPU{where}: {message} ({hint})"


@functools.cache
def has_driver() -> bool:
    """Whether this machine has NVIDIA's driver library (libcuda.so.1), asked without starting
    CUDA (a dlopen, about a millisecond). A one-GPU tune opens its files while its GPU worker
    starts (cli/tune.py); where there is no driver it asks the GPU first, so that "no GPU" is
    said before a results file is opened (and an older file migrated) for nothing."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True
