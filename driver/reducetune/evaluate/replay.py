"""Measurements from a recorded database (replay, Kernel Tuner's simulation mode):
deterministic and GPU-free; a point the recording lacks is a failure, never a guess."""

from __future__ import annotations

import lzma
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from reducetune._space import Point, limits_for_arch
from reducetune.errors import DeviceError, StoreError
from reducetune.evaluate.base import CEILING_WORKLOAD
from reducetune.store.results import open_store, same_model_ids

__all__ = ["ReplayEvaluator", "REPLAY_PREFIX", "decompress_recording"]


def decompress_recording(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> Path:
    """``NAME.db.xz`` (a recording as the repository keeps it) decompressed to
    ``folder/NAME.db``."""
    src = Path(path)
    dst = Path(folder) / (src.name[:-3] if src.name.endswith(".xz") else src.name)
    try:
        with lzma.open(src, "rb") as fin, open(dst, "wb") as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
    except (lzma.LZMAError, EOFError) as e:
        raise StoreError(f"cannot decompress {src}: {e}") from e
    return dst


REPLAY_PREFIX = "reducetune-replay-"



class ReplayEvaluator:
    """Serves measurements from a recorded database: the same point always gives the same
    answer; a point the recording lacks is a failure ("not_recorded"), never a guess.
    A ``.xz`` file is decompressed into a temporary folder first (removed by close())."""

    live = False  # replays a recording (evaluate/base.py Evaluator)

    def __init__(self, path: str | os.PathLike[str], device: int | str | None = None) -> None:
        if not Path(path).exists():
            raise StoreError(f"replay database {path} does not exist")
        self.path = Path(path)
        self._tmp: str | None = None
        self._store: Any = None
        try:
            self._open(path, device)
        except BaseException:
            self.close()
            raise

    def _open(self, path: str | os.PathLike[str], device: int | str | None) -> None:
        if self.path.name.endswith(".xz"):
            self._tmp = tempfile.mkdtemp(prefix=f"{REPLAY_PREFIX}{os.getpid()}-")
            path = decompress_recording(self.path, self._tmp)
        self._store = open_store(path, read_only=True)
        devices = self._store.devices()
        if not devices:
            raise StoreError(f"replay database {path} holds no device")
        chosen = None
        if device is None:
            chosen = devices[0]
        elif isinstance(device, int):
            if not 0 <= device < len(devices):  # -1 would be the last one
                raise DeviceError(f"replay database {self.path} holds {len(devices)} device(s); "
                                  f"--device {device} is not one of them")
            chosen = devices[device]
        else:
            chosen = next((d for d in devices if device in (d["uuid"], d["name"])), None)
            if chosen is None:
                raise DeviceError(f"no device '{device}' in replay database {self.path}")
        self.device = dict(chosen)
        self.limits = limits_for_arch(str(chosen["cc_major"] * 10 + chosen["cc_minor"]))
        if chosen["sm_count"]:
            self.limits.sm_count = chosen["sm_count"]
        self.calls = 0
        self._tables: dict[tuple[str, str, int], dict[tuple[str, str], dict[str, Any]]] = {}

    def set_sampling(self, options: dict[str, Any]) -> None:
        pass  # a recording keeps the protocol it was measured with

    def precompile(self, points: list[Point]) -> None:
        return None  # nothing is compiled in replay

    def table(self, dtype: str, op: str, n: int) -> dict[tuple[str, str], dict[str, Any]]:
        """Every recorded point of one workload: (variant label, launch label) -> row."""
        key = (dtype, op, int(n))
        if key not in self._tables:
            # A recording swept by several GPUs of one model (tune --devices) holds each point
            # once, under the GPU that measured it: the other GPUs' rows first, so that this
            # device's own row wins where both have one.
            rows = [r for d in self._same_model()
                    for r in self._store.history(d, dtype, op, int(n))]
            rows += self._store.history(self.device["id"], dtype, op, int(n))
            # history is oldest first: the newest measurement of a point wins, as in the store
            self._tables[key] = {(r["variant_label"], r["launch_label"]): r for r in rows}
        return self._tables[key]

    def sizes(self, dtype: str, op: str) -> list[int]:
        """The sizes this device's recording holds measurements of, ascending."""
        return sorted({int(r["n"]) for r in self._store.history(self.device["id"], dtype, op,
                                                                  None)})

    def devices(self) -> list[dict[str, Any]]:
        """Every device the recording holds (the store's rows, by id)."""
        return [dict(d) for d in self._store.devices()]

    @property
    def database(self) -> Path:
        """The database file read: the recording, or its decompressed copy for a .xz."""
        if self._tmp is not None:
            return Path(self._tmp) / self.path.name[: -len(".xz")]
        return self.path

    def _same_model(self) -> list[int]:
        return same_model_ids(self._store.devices(), self.device)

    def evaluate(self, point: Point, problem: Any, data: dict[str, Any] | None = None,
                 outpaced_above_s: float | None = None) -> dict[str, Any]:
        # outpaced_above_s is ignored: a replay gives back what was stored (a row raced when
        # recorded keeps its "outpaced" reason), so there is no time to save
        self.calls += 1
        # a recording keys its rows by whole-array size (and keeps the pattern it was
        # measured with); the rows' stored labels are matched by the point's own
        outer, n, inner = problem.shape
        row = None
        if outer == inner == 1:
            row = self.table(problem.dtype, problem.op, n).get(point.labels)
        if row is None:
            return {"status": "failed", "kind": "not_recorded",
                    "reason": f"not in the replay database {self.path.name}"}
        out = {k: row[k] for k in ("status", "reason", "samples_s", "median_s", "rel_stddev",
                                   "gbps", "pct_of_peak", "pct_of_ceiling")}
        out["kind"] = "" if row["status"] == "ok" else row["status"]
        return out

    def cub(self, w: dict) -> dict[str, Any] | None:
        b = self._store.find_baseline(self.device["id"], w, "cub")
        return None if b is None else {"status": "ok", **b}

    def ceiling_bytes_per_s(self) -> float | None:
        b = self._store.find_baseline(self.device["id"], CEILING_WORKLOAD, "ceiling")
        return None if b is None else float(b["gbps"]) * 1e9

    def __enter__(self) -> ReplayEvaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
