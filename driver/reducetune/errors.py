"""The exception hierarchy of reducetune.

Each class mirrors the C++ exception of the same name in ``tuner/reducetune/errors.hpp``;
the extension translates C++ exceptions into these, so callers catch one hierarchy whether a
failure came from C++ or from Python.
"""

from __future__ import annotations

__all__ = [
    "Error",
    "InvalidConfiguration",
    "CompileError",
    "LaunchError",
    "VerificationError",
    "StoreError",
    "DeviceError",
]


class Error(RuntimeError):
    """Root of every error reducetune raises on purpose."""


class InvalidConfiguration(Error, ValueError):
    """A parameter value, family, workload, size or point that is not valid."""


class CompileError(Error):
    """NVRTC or nvJitLink rejected a program; ``log`` holds the compiler's log."""

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(message)
        self.log = log


class LaunchError(Error):
    """A kernel launch or a CUDA call failed while running a variant."""


class VerificationError(Error):
    """A kernel ran but its result is wrong."""


class StoreError(Error):
    """The results database is corrupt, foreign, newer than this version, or unwritable."""


class DeviceError(Error):
    """No GPU, a driver too old, or a device attribute that cannot be read."""
