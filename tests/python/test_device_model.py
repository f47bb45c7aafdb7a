"""One definition of a device model (db/reducetune/db/records.hpp, model_fields): the study
names of GPUs that share studies and the replay's grouping ask the core for its key; the key
and the store's SQL are checked against each other in tests/cpp/db/test_db_device_model.cpp."""

from __future__ import annotations

import pytest

from reducetune import _core
from reducetune.store.study_share import study_device

H200 = {"name": "NVIDIA H200", "uuid": "GPU-a", "sm_count": 132, "memory_clock_khz": 2619000,
        "l2_bytes": 60 << 20, "bus_width_bits": 6144, "driver_version": 13000}


def test_a_shared_study_is_named_as_before_the_key_moved_to_the_core():
    # persisted in Optuna storages and resumed by name: the text must not change
    assert study_device(H200, True) == "model:NVIDIA H200|132SM|2619000kHz"
    assert study_device(H200, False) == "GPU-a"
    assert study_device({"name": "X", "uuid": "u"}, True) == "model:X|0SM|0kHz"


@pytest.mark.parametrize("field, value", [("name", "NVIDIA H100 80GB HBM3"), ("sm_count", 114),
                                          ("memory_clock_khz", 1593000)])
def test_a_device_differing_in_one_model_field_is_another_model(field, value):
    assert _core.device_model_key({**H200, field: value}) != _core.device_model_key(H200)


def test_what_is_not_the_model_does_not_change_the_key():
    twin = {**H200, "uuid": "GPU-b", "l2_bytes": 50 << 20, "driver_version": 12040,
            "bus_width_bits": 5120}
    assert _core.device_model_key(twin) == _core.device_model_key(H200)
