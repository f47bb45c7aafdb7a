"""A results file of axis measurements written with the store's own API, for the tests that
read one without a GPU (test_axis_tuned, test_calibrate_axis): a synthetic sm_90 device (an
H100 or H200 finds it by its compute capability) and float32 sum points of the axis family's
presets, their medians given by the test (never presented as measurements)."""

from __future__ import annotations

from pathlib import Path

import reducetune
from conftest import SYNTHETIC_DEVICE
from reducetune import _core

Medians = list[tuple[tuple[int, int, int], str, float]]  # (shape, preset, median seconds)


def axis_space() -> reducetune.Space:
    return reducetune.Space("axis", "float32", "sum", reducetune.limits_for_arch("sm_90"))


def write_axis_results(path: Path, medians: Medians) -> Path:
    store = _core.Store(str(path))
    dev = store.register_device(SYNTHETIC_DEVICE)
    for (outer, r, inner), preset, t in medians:
        store.record_measurement(axis_space().base(preset), {
            "device_id": dev, "dtype": "float32", "op": "sum", "n": r, "outer": outer,
            "inner": inner, "data_pattern": "uniform", "seed": 1, "template_hash": "h",
            "driver_version": 13000, "toolkit_version": 13000, "samples_s": [t] * 10,
            "status": "ok", "gbps": 1.0})
    store.close()
    return path
