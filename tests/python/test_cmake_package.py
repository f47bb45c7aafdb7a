"""The installed CMake package works for an application: `cmake --install` of the ci build
(scripts/test builds it first) into a temporary prefix, then examples/cpp configured with
find_package(reducetune CONFIG) against that prefix, built and linked. Without a GPU the
example is run only to see it say so (exit 77); with one it must reduce correctly (exit 0).

REDUCETUNE_BUILD_DIR names another configured and built tree (default: build/ci)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("REDUCETUNE_BUILD_DIR", REPO / "build" / "ci"))
LAYERS = ["errors", "templates", "space", "db", "jit", "cuda", "verify", "measure", "baseline",
          "runtime"]

pytestmark = pytest.mark.slow


def cmake(*args: str | Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["cmake", *map(str, args)], capture_output=True, text=True,
                            check=False)
    command = " ".join(map(str, args))
    assert result.returncode == 0, f"cmake {command}\n{result.stdout}{result.stderr}"
    return result


@pytest.fixture(scope="module")
def prefix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (BUILD / "cmake_install.cmake").exists():
        pytest.skip(f"{BUILD} is not configured (scripts/test builds it before the Python tests)")
    out = tmp_path_factory.mktemp("prefix")
    cmake("--install", BUILD, "--prefix", out)
    return out


def test_the_install_holds_every_layer_its_headers_and_the_package(prefix: Path) -> None:
    for layer in LAYERS:
        assert (prefix / "lib" / f"libreducetune_{layer}.a").is_file(), layer
    for header in ["reducetune/runtime/reducer.hpp", "reducetune/db/catalog.hpp",
                   "reducetune/errors.hpp", "reducetune/space/element.hpp"]:
        assert (prefix / "include" / header).is_file(), header
    package = prefix / "lib" / "cmake" / "reducetune"
    for name in ["reducetuneConfig.cmake", "reducetuneConfigVersion.cmake",
                 "reducetuneTargets.cmake", "NvJitLink.cmake"]:
        assert (package / name).is_file(), name
    # A relocatable package: nothing in it points back into the source or build tree.
    for f in package.iterdir():
        text = f.read_text()
        assert str(REPO) not in text, f"{f.name} names {REPO}"


def test_the_example_builds_and_links_against_the_installed_package(
        prefix: Path, tmp_path: Path) -> None:
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    build = tmp_path / "example"
    cmake("-S", REPO / "examples" / "cpp", "-B", build, *generator,
          f"-DCMAKE_PREFIX_PATH={prefix}", "-DCMAKE_BUILD_TYPE=Release")
    cmake("--build", build)
    exe = build / "reducetune-example"
    assert exe.is_file()

    run = subprocess.run([str(exe), "--n", "1000"], capture_output=True, text=True, timeout=300,
                         check=False)
    assert run.returncode in (0, 77), run.stdout + run.stderr
    if run.returncode == 77:
        assert "no CUDA GPU" in run.stderr
    else:
        assert "OK" in run.stdout and "point:" in run.stdout
