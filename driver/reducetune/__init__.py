"""reducetune: auto-tuned GPU parallel reductions.

The public API, re-exported from the subpackages by job; everything else (``reducetune._core``,
the ``_``-prefixed modules and the subpackages ``tuning``, ``evaluate``, ``store``,
``runtime``, ``cli``) is private and may change. ``experiments`` and ``benchmarks`` are run
as commands (``reducetune experiment``, ``python -m reducetune.benchmarks.runtime``).
"""

from __future__ import annotations

from reducetune import _core
from reducetune._sizes import parse_sizes
from reducetune._space import DTYPES, OPS, Point, Preset, Space, families, family, limits_for_arch
from reducetune.errors import (CompileError, DeviceError, Error, InvalidConfiguration, LaunchError,
                               StoreError, VerificationError)
from reducetune.evaluate.base import Evaluator, workload
from reducetune.evaluate.gpu import GpuEvaluator
from reducetune.evaluate.replay import ReplayEvaluator
from reducetune.runtime.axis import AxisReducer
from reducetune.runtime.reducer import Reducer, reduce
from reducetune.store.measurements import measurements
from reducetune.store.paths import default_db_path
from reducetune.store.results import Store, best, export_header, export_json, open_store
from reducetune.tuning.config import SizeResult, TuneConfig
from reducetune.tuning.loop import tune_size
from reducetune.tuning.run import tune

__version__ = "0.1.0"


def query_device(ordinal: int = 0) -> dict:
    """The GPU's identity and limits; DeviceError when there is none."""
    return dict(_core.query_device(ordinal))


def compile_points(family: str, dtype: str, op: str, arch: int, points: list[dict]) -> list[dict]:
    """Compiles points of one space with NVRTC (no GPU): one dict per point (ok, error)."""
    return list(_core.compile_points(family, dtype, op, arch, points))


__all__ = [
    "DTYPES", "OPS", "Space", "Point", "Preset", "families", "family", "limits_for_arch",
    "Store", "open_store", "best", "export_header", "export_json", "default_db_path",
    "measurements",
    "Evaluator", "GpuEvaluator", "ReplayEvaluator", "workload",
    "TuneConfig", "SizeResult", "tune", "tune_size", "parse_sizes",
    "query_device", "compile_points", "Reducer", "AxisReducer", "reduce",
    "Error", "InvalidConfiguration", "CompileError", "LaunchError", "VerificationError",
    "StoreError", "DeviceError",
]
