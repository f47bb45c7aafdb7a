"""Fixtures for the Python tests.

Databases made here are SYNTHETIC: their "measurements" come from a deterministic formula,
written through the real store API into a temporary folder, so that the tuner, the replay
evaluator and the command line can be tested without a GPU. They are never committed and
never presented as measurements. Tests that need a real recording (tests/data/recorded/,
made on a GPU by an exhaustive sweep) skip with a visible reason when it is absent.

Recordings are kept xz-compressed (``NAME.db.xz``, with ``NAME.json`` beside it saying what
was measured, where, when and how); each is decompressed once per session into a temporary
folder, and RECORDED lists the decompressed files (plain ``NAME.db`` files are listed as they
are). Tests must not write to them.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import lzma
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest

# The package not installed fails the suite rather than skipping it: CI installs it
# (scripts/setup), so a skipped suite would pass while testing nothing. Any other import
# failure (the extension's .so that does not load, a missing dependency) is raised as it is.
try:
    import reducetune
except ModuleNotFoundError as e:
    if e.name != "reducetune":
        raise
    raise ImportError("the reducetune package is not installed: run scripts/setup (or pip "
                      "install . from the repository root); the Python tests need it") from None
from reducetune import _core  # noqa: E402
from reducetune.evaluate.base import CEILING_WORKLOAD, workload  # noqa: E402

REPO = Path(__file__).resolve().parents[2]

# Under pytest-xdist (scripts/test runs two workers) each worker gets its own temporary
# folder, inherited by the commands it starts: tests that check that no reducetune-* folder is
# left behind in $TMPDIR must not see another worker's live ones.
if os.environ.get("PYTEST_XDIST_WORKER"):
    _worker_tmp = Path(tempfile.gettempdir()) / (
        f"rt-pytest-{os.environ['PYTEST_XDIST_WORKER']}-{os.getpid()}")
    _worker_tmp.mkdir()
    atexit.register(shutil.rmtree, _worker_tmp, ignore_errors=True)
    os.environ["TMPDIR"] = tempfile.tempdir = str(_worker_tmp)

RECORDED_DIR = REPO / "tests" / "data" / "recorded"


def _recorded() -> list[Path]:
    """Plain NAME.db as they are; NAME.db.xz decompressed (stdlib lzma) into one temporary
    folder per session, removed at exit. A plain file wins over a compressed one of its name."""
    plain = {p.name: p for p in RECORDED_DIR.glob("*.db")}
    packed = [p for p in sorted(RECORDED_DIR.glob("*.db.xz")) if p.name[:-3] not in plain]
    out = dict(plain)
    if packed:
        folder = Path(tempfile.mkdtemp(prefix="reducetune-recorded-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        for src in packed:
            dst = folder / src.name[:-3]
            with lzma.open(src, "rb") as fin, open(dst, "wb") as fout:
                shutil.copyfileobj(fin, fout, 1 << 20)
            out[dst.name] = dst
    return [out[k] for k in sorted(out)]


def recording_meta(recorded: Path) -> dict[str, Any] | None:
    """The sidecar NAME.json of a recording (NAME.db, or NAME.db.xz decompressed), if any."""
    path = RECORDED_DIR / (recorded.name.removesuffix(".db") + ".json")
    return json.loads(path.read_text()) if path.exists() else None


RECORDED = _recorded()


def _gpu_reason() -> str | None:
    """Only the extension's DeviceError (no CUDA driver, no device) means "no GPU"; any other
    exception is a broken extension or binding, and fails the suite instead of skipping."""
    try:
        _core.query_device(0)
    except reducetune.DeviceError as e:
        return f"no GPU: {e}"
    return None


# Why GPU tests skip here (None on a machine with a usable GPU).
NO_GPU = _gpu_reason()

SYNTHETIC_DEVICE = {
    "name": "SYNTHETIC test device (not a measurement)",
    "uuid": "GPU-00000000-0000-0000-0000-5y7the71c000",
    "cc_major": 9, "cc_minor": 0, "sm_count": 132, "l2_bytes": 50 * 2**20,
    "bus_width_bits": 5120, "memory_clock_khz": 2_619_000,
    "driver_version": 13000, "toolkit_version": 13000,
}
SIZES = [1 << 10, 1 << 20]
# A small corner of the tunable space: 2*2*2*2*2*2*3*2 = 768 points, of which the redux half
# is invalid for float32 (so invalid points are sampled and must never be evaluated).
RESTRICT = {
    "block_size": ["128", "256"], "unroll": ["1", "4"], "vec": ["1", "4"],
    "warp": ["shuffle", "redux"], "block_strategy": ["tree", "warp_partials"],
    "finish": ["two_pass", "atomic"], "elements_per_thread": ["4", "16", "64"],
    "grid_cap": ["0", "4"],
}
RESTRICT_ARGS = [a for k, v in RESTRICT.items() for a in ("--restrict", f"{k}={','.join(v)}")]


def synthetic_median(label: str, launch: str, n: int) -> float:
    """A deterministic, bumpy "time" with one clear optimum region (not a measurement)."""
    h = int(hashlib.sha256(f"{label}|{launch}|{n}".encode()).hexdigest()[:8], 16) / 2**32
    ept = int(launch.split(".")[0].split("_")[1])
    bs = int(label.split(".bs_")[1].split(".")[0])
    shape = 1.0 + abs(math.log2(ept) - 4) * 0.15 + abs(math.log2(bs) - 8) * 0.1
    return (n * 4 / 3.0e12 + 2e-6) * shape * (1.0 + 0.3 * h)


def build_synthetic_db(path: Path, sizes: list[int] = SIZES,
                       restrict: dict[str, list[str]] | None = None,
                       median: Callable[[str, str, int], float] = synthetic_median
                       ) -> dict[str, Any]:
    """Every valid point of the RESTRICT corner (or ``restrict``) for float32 sum, as a sweep
    would record it; a few points recorded as failed/wrong so that failures are served too."""
    from reducetune._space import Space, limits_for_arch

    store = _core.Store(str(path))
    dev_id = store.register_device(SYNTHETIC_DEVICE)
    space = Space("tunable", "float32", "sum", limits_for_arch("sm_90"),
                  RESTRICT if restrict is None else restrict)
    th = _core.template_hash("tunable")
    count = 0
    for n in sizes:
        w = {k: v for k, v in workload("float32", "sum", n).items() if k != "pattern"}
        for i, p in enumerate(space.points()):
            t = median(p.variant_label, p.launch_label, n)
            status = "wrong" if i % 97 == 5 else "ok"
            store.record_measurement(p, {
                "device_id": dev_id, **w, "template_hash": th, "driver_version": 13000,
                "toolkit_version": 13000, "samples_s": [t * (1 + 0.001 * k) for k in range(10)],
                "status": status, "reason": "synthetic wrong result" if status != "ok" else "",
                "gbps": n * 4 / t / 1e9, "pct_of_peak": 100 * n * 4 / t / 3.35e12})
            count += 1
        cub = n * 4 / 3.0e12 + 3e-6
        store.record_baseline({"device_id": dev_id, **w, "kind": "cub",
                               "samples_s": [cub] * 10, "gbps": n * 4 / cub / 1e9,
                               "driver_version": 13000, "toolkit_version": 13000})
    store.record_baseline({"device_id": dev_id, **CEILING_WORKLOAD, "kind": "ceiling",
                           "samples_s": [1 / 3.0e3] * 10, "gbps": 3000.0,
                           "driver_version": 13000, "toolkit_version": 13000})
    store.close()
    return {"points": len(space.points()), "measurements": count}


@pytest.fixture(scope="session")
def synthetic_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("synthetic") / "synthetic-sweep.db"
    build_synthetic_db(path)
    return path


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    """Runs the command line in-process: (exit status, stdout, stderr)."""
    from reducetune.cli import main

    def run(*args: str) -> tuple[int, str, str]:
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def asked(monkeypatch):
    """Every (variant, launch, n) the replay evaluator is asked for, in order."""
    from reducetune.evaluate.replay import ReplayEvaluator

    calls: list[tuple[str, str, int]] = []
    original = ReplayEvaluator.evaluate

    def evaluate(self, point, problem, data=None):
        calls.append((point.variant_label, point.launch_label, problem.elements))
        return original(self, point, problem, data)

    monkeypatch.setattr(ReplayEvaluator, "evaluate", evaluate)
    return calls
