"""reducetune: auto-tuned GPU parallel reductions.

The public API; everything else (``reducetune._core`` and the ``_``-prefixed modules) is
private and may change.
"""

from __future__ import annotations

from reducetune._evaluators import Evaluator, GpuEvaluator, ReplayEvaluator, workload
from reducetune._paths import default_db_path
from reducetune._reduce import Reducer, reduce
from reducetune._sizes import parse_sizes
from reducetune._space import (DTYPES, OPS, Point, Preset, Space, families, family,
                               limits_for_arch)
from reducetune._store import Store, best, export_header, export_json, open_store
from reducetune._tune import SizeResult, TuneConfig, tune, tune_size
from reducetune.errors import (
    CompileError,
    DeviceError,
    Error,
    InvalidConfiguration,
    LaunchError,
    StoreError,
    VerificationError,
)

__version__ = "0.1.0"


def query_device(ordinal: int = 0) -> dict:
    """The GPU's identity and limits; DeviceError when there is none."""
    from reducetune import _core

    return dict(_core.query_device(ordinal))


def compile_points(family: str, dtype: str, op: str, arch: int, points: list[dict]) -> list[dict]:
    """Compiles points of one space with NVRTC (no GPU): one dict per point (ok, error)."""
    from reducetune import _core

    return list(_core.compile_points(family, dtype, op, arch, points))


__all__ = [
    "DTYPES", "OPS", "Space", "Point", "Preset", "families", "family", "limits_for_arch",
    "Store", "open_store", "best", "export_header", "export_json", "default_db_path",
    "Evaluator", "GpuEvaluator", "ReplayEvaluator", "workload",
    "TuneConfig", "SizeResult", "tune", "tune_size", "parse_sizes",
    "query_device", "compile_points", "Reducer", "reduce",
    "Error", "InvalidConfiguration", "CompileError", "LaunchError", "VerificationError",
    "StoreError", "DeviceError",
]
