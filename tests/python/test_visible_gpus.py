"""The GPUs CUDA would see, read from the driver's files without starting CUDA
(reducetune/evaluate/_visible_gpus.py, issue 25): a fake /proc/driver/nvidia/gpus and /dev
here; the same count against cuInit's on a GPU is test_gpu_count.py's
test_on_a_gpu_the_driver_files_count_is_cudas."""

from __future__ import annotations

import subprocess
import sys

import pytest

from reducetune import errors
from reducetune.evaluate._visible_gpus import visible_gpu_count
from reducetune.cli import tune_devices

UUIDS = ["GPU-38343ff2-b78d-7f34-ab05-a4bf5c8e69a6", "GPU-63d724fd-c927-d506-f42f-aec9a5489033",
         "GPU-8cc6471a-d12c-3007-4d2c-5923f170a726", "GPU-72eb4372-58e0-5e20-5b6d-7ab2d6a077d6"]

INFORMATION = """Model: \t\t NVIDIA H200
IRQ:   \t\t 17
GPU UUID: \t {uuid}
Video BIOS: \t 96.00.a5.00.01
Bus Type: \t PCIe
Bus Location: \t 0000:{bus:02x}:00.0
Device Minor: \t {minor}
GPU Excluded:\t {excluded}
"""


def fake_host(root, gpus=4, nodes=None, excluded=()):
    """``gpus`` GPUs listed under root/proc (minors 0..gpus-1), with /dev/nvidia<minor> for
    those in ``nodes`` (default all)."""
    proc, dev = root / "proc", root / "dev"
    proc.mkdir()
    dev.mkdir()
    for k in range(gpus):
        folder = proc / f"0000:{0x18 + k:02x}:00.0"
        folder.mkdir()
        folder.joinpath("information").write_text(INFORMATION.format(
            uuid=UUIDS[k], bus=0x18 + k, minor=k, excluded="Yes" if k in excluded else "No"))
    for k in range(gpus) if nodes is None else nodes:
        (dev / f"nvidia{k}").write_text("")
    return proc, dev


@pytest.mark.parametrize("listed, seen", [
    (None, 4),                       # every GPU
    ("0", 1), ("3,1", 2),            # ordinals, any order
    ("0,7,1", 1),                    # CUDA stops at the first invalid entry
    (UUIDS[2][:12], 1),              # a UUID's unique prefix
    (f"{UUIDS[1]},2", 2),            # UUIDs and ordinals mixed
    ("GPU-", 0),                     # a prefix of every UUID: invalid, so none
    ("8", 0),                        # none valid: None, and cuInit says why
])
def test_cuda_visible_devices_is_read_as_cuda_reads_it(tmp_path, listed, seen):
    proc, dev = fake_host(tmp_path)
    env = {} if listed is None else {"CUDA_VISIBLE_DEVICES": listed}
    assert visible_gpu_count(env, proc, dev) == (seen or None)


@pytest.mark.parametrize("listed", ["MIG-1a2b3c4d", "0,,1", "1,1", ""])
def test_what_only_cuda_can_tell_is_left_to_cuinit(tmp_path, listed):
    proc, dev = fake_host(tmp_path)
    assert visible_gpu_count({"CUDA_VISIBLE_DEVICES": listed}, proc, dev) is None


def test_a_gpu_this_process_cannot_open_or_that_is_excluded_is_not_counted(tmp_path):
    proc, dev = fake_host(tmp_path, nodes=[0, 2, 3], excluded=(3,))  # a container's share
    assert visible_gpu_count({}, proc, dev) == 2
    assert visible_gpu_count({"CUDA_VISIBLE_DEVICES": "1"}, proc, dev) == 1  # the 2nd usable
    assert visible_gpu_count({"CUDA_VISIBLE_DEVICES": "2"}, proc, dev) is None


def test_no_driver_files_or_an_unreadable_entry_is_none(tmp_path):
    assert visible_gpu_count({}, tmp_path / "absent", tmp_path) is None
    proc, dev = fake_host(tmp_path, gpus=2)
    (next(proc.iterdir()) / "information").write_text("Model: NVIDIA H200\n")  # no minor
    assert visible_gpu_count({}, proc, dev) is None
    empty = tmp_path / "empty"
    empty.mkdir()
    assert visible_gpu_count({}, empty, dev) is None  # no GPU listed: cuInit says so


def test_the_command_checks_its_ordinals_from_the_files_without_a_child(monkeypatch):
    """Where the files answer, no cuInit child is started: one ordinal and a list alike are
    refused (or taken) at once, before any worker starts."""
    def no_child() -> subprocess.Popen[str]:
        raise AssertionError("cuInit's child started")

    monkeypatch.setattr(tune_devices, "_count_started", no_child)
    monkeypatch.setattr(tune_devices, "counted_by_parent", False)
    monkeypatch.setattr(tune_devices, "_counting", {})
    monkeypatch.setattr(tune_devices, "visible_gpu_count", lambda: 2)
    assert tune_devices.parse_devices("1", replay=False) == [1]
    assert tune_devices.parse_devices("0,1", replay=False) == [0, 1]
    assert not tune_devices._counting  # nothing left for _let_on to read
    assert tune_devices.parse_devices("all", replay=False) == [0, 1]
    with pytest.raises(errors.InvalidConfiguration, match="has 2 GPU.*no GPU 2"):
        tune_devices.parse_devices("0,2", replay=False)


def test_without_an_answer_from_the_files_a_list_is_counted_by_cuinit(monkeypatch):
    started = []

    def child() -> subprocess.Popen[str]:
        started.append(1)
        return subprocess.Popen([sys.executable, "-c", "print(2)"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    monkeypatch.setattr(tune_devices, "_count_started", child)
    monkeypatch.setattr(tune_devices, "counted_by_parent", False)
    monkeypatch.setattr(tune_devices, "_counting", {})
    monkeypatch.setattr(tune_devices, "visible_gpu_count", lambda: None)
    assert tune_devices.parse_devices("0,1", replay=False) == [0, 1]
    assert "0,1" in tune_devices._counting and started == [1]  # read while the workers start
    assert tune_devices.parse_devices("1", replay=False) == [1]  # counted at once
    assert started == [1, 1]
    tune_devices._counting.pop("0,1").communicate()
