"""How ``tune --devices`` counts the GPUs (cli/tune_devices.py, issue 25) where the driver's
files cannot say (_visible_gpus.py; test_visible_gpus.py): a child process
asks the driver API through ctypes (cuInit, cuDeviceGetCount on libcuda.so.1), importing
neither reducetune nor the CUDA runtime. Without a GPU: a fake libcuda.so.1 (built here with
the C compiler, found first through LD_LIBRARY_PATH) answers what the driver would, and with
no libcuda at all the command says what it said before the change."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from reducetune import errors
from reducetune.cli import tune_devices

# cuInit returns FAKE_CUINIT (0: success), cuDeviceGetCount FAKE_COUNT devices
FAKE = r"""
#include <stdlib.h>
int cuInit(unsigned flags) { (void)flags; return atoi(getenv("FAKE_CUINIT")); }
int cuDeviceGetCount(int *n) { *n = atoi(getenv("FAKE_COUNT")); return 0; }
int cuGetErrorName(int rc, const char **name) {
  *name = rc == 999 ? "CUDA_ERROR_UNKNOWN" : "CUDA_ERROR_NO_DEVICE"; return 0; }
"""


@pytest.fixture
def fake_driver(tmp_path, monkeypatch):
    """A libcuda.so.1 of FAKE first on the library path; a reducetune package on PYTHONPATH
    that fails to import, so that a count importing it would fail."""
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler to build the fake libcuda.so.1")
    (tmp_path / "fake.c").write_text(FAKE)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(tmp_path / "libcuda.so.1"),
                    str(tmp_path / "fake.c")], check=True)
    (tmp_path / "reducetune").mkdir()
    (tmp_path / "reducetune" / "__init__.py").write_text("raise SystemExit(7)\n")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("FAKE_CUINIT", "0")
    monkeypatch.setattr(tune_devices, "visible_gpu_count", lambda: None)  # cuInit's path
    return monkeypatch


def test_the_count_is_the_drivers_without_the_package(fake_driver):
    fake_driver.setenv("FAKE_COUNT", "3")
    assert tune_devices._gpu_count("0,1") == 3


def test_a_driver_that_fails_to_start_is_named(fake_driver):
    fake_driver.setenv("FAKE_CUINIT", "999")
    with pytest.raises(errors.DeviceError,
                       match=r"no GPU found on this machine \(cuInit: CUDA_ERROR_UNKNOWN\)"):
        tune_devices._gpu_count("all")


def test_no_device_is_a_machine_without_a_gpu(fake_driver):
    fake_driver.setenv("FAKE_CUINIT", "100")  # CUDA_ERROR_NO_DEVICE
    with pytest.raises(errors.DeviceError) as e:
        tune_devices._gpu_count("all")
    assert str(e.value) == ("--devices all: no GPU found on this machine (use --replay DB to "
                            "tune from a recorded database)")


def test_without_libcuda_the_words_of_a_machine_without_a_gpu_stay(tmp_path, monkeypatch):
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path))  # empty: only the system's libraries
    probe = subprocess.run(["python3", "-S", "-c", "import ctypes; ctypes.CDLL('libcuda.so.1')"],
                           capture_output=True)
    if probe.returncode == 0:
        pytest.skip("this machine has libcuda.so.1: the fake tests cover the count")
    monkeypatch.setattr(tune_devices, "visible_gpu_count", lambda: None)
    with pytest.raises(errors.DeviceError) as e:
        tune_devices._gpu_count("0,1")
    assert str(e.value) == ("--devices 0,1: no GPU found on this machine (use --replay DB to "
                            "tune from a recorded database)")


# On a GPU: how many devices the extension sees, asked in a child (this process makes no
# CUDA context), with CUDA_VISIBLE_DEVICES as the test was given it
EXTENSION_COUNT = """from reducetune import _core
n = 0
while n < 64:
    try:
        _core.query_device(n)
    except Exception:
        break
    n += 1
print(n)"""


@pytest.mark.gpu
def test_on_a_gpu_the_drivers_count_is_the_extensions():
    import sys

    seen = int(subprocess.run([sys.executable, "-c", EXTENSION_COUNT], capture_output=True,
                              text=True, check=True).stdout.strip() or 0)
    if seen == 0:
        pytest.skip("no GPU: the fake driver's tests cover the count")
    assert tune_devices._gpu_count("all") == seen


# CUDA's own count in a child, cuInit and cuDeviceGetCount (tune_devices' fallback)
@pytest.mark.gpu
@pytest.mark.parametrize("listed", [None, "0", "1,0", "0,7,1", "9"])
def test_on_a_gpu_the_driver_files_count_is_cudas(listed, monkeypatch):
    """visible_gpu_count (the driver's files) against cuInit's count, with CUDA_VISIBLE_DEVICES
    unset, one GPU, two in reverse, a list cut at an invalid ordinal, and only an invalid one
    (CUDA sees none: the files answer None, and cuInit says so)."""
    from reducetune.evaluate._visible_gpus import visible_gpu_count

    if listed is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", listed)
    cuda = int(tune_devices._count_started().communicate()[0].strip() or 0)
    if cuda == 0 and listed is None:
        pytest.skip("no GPU")
    assert (visible_gpu_count() or 0) == cuda


@pytest.mark.gpu
def test_on_a_gpu_the_ceiling_measured_ahead_is_the_evaluators():
    """prestart(ceiling=True) and ask_ceiling_ahead give the evaluator a measured ceiling (a
    few TB/s on an H100 or H200) without asking again."""
    from reducetune.evaluate import gpu

    try:
        gpu.prestart(0, ceiling=True)
        ev = gpu.GpuEvaluator(0, timeout_s=300)
    except errors.DeviceError as e:
        pytest.skip(f"no GPU: {e}")
    try:
        assert 1e11 < (ev.ceiling_bytes_per_s() or 0) < 2e13 and ev.ceiling_samples_s
        ev.ask_ceiling_ahead()  # known already: nothing asked, the same value
        assert ev.ceiling_bytes_per_s() == ev._ceiling
    finally:
        ev.close()
