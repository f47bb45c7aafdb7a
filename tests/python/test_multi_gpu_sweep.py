"""scripts/multi-gpu-sweep's four-GPU path (issue 25, target 2: four GPUs >= 3.4 x one), on the
CPU: every sweep replays the H200 recording, its --devices workers behaving as GPUs of one
model (cli/tune_devices.py). With ``quad`` the script runs the sweep on one, two and four
workers and the report (experiments/multi_gpu.py) has a row for each: the same points, none
missing, none twice, each run's rate and ratio to one GPU's beside Amdahl's bound, and the
model's prediction. MGS_SIZES sweeps other sizes with the same sampling and restrictions."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from conftest import REPO
from replay_support import H200_GRID, needs_h200_grid

pytestmark = needs_h200_grid("the multi-GPU sweep is tested on a replay of the recording")


def _sweep(out, *args: str, **env: str) -> None:
    """scripts/multi-gpu-sweep OUT ARGS in replay of the H200 recording."""
    env = {**os.environ, "MGS_RT": "python3 -m reducetune", "MGS_REPLAY": str(H200_GRID),
           "OMP_NUM_THREADS": "1", **env}
    run = subprocess.run(["scripts/multi-gpu-sweep", str(out), *args], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]


def test_quad_adds_the_four_gpu_sweep_and_its_row_beside_one_and_two(tmp_path):
    out = tmp_path / "out"
    _sweep(out, "quad")
    for name in ("single", "dual", "quad"):
        assert float((out / f"{name}_s").read_text()) > 0
        assert (out / f"{name}.db.xz").stat().st_size > 0
    text = (out / "report.md").read_text()
    rows = {int(m[0]): m[1:] for m in re.findall(
        r"^\| (\d) \| (\d+) \| (\d+) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.-]+) \| "
        r"([\d.-]+) \| ([\d.-]+) \|$", text, re.M)}
    assert sorted(rows) == [1, 2, 4], text
    seconds = {g: float((out / f"{name}_s").read_text())
               for g, name in ((1, "single"), (2, "dual"), (4, "quad"))}
    nums = json.loads((out / "bound.json").read_text())  # Amdahl's bound (_scale_bound.py)
    for gpus, (points, missing, twice, wall, rate, ratio, bound, model) in rows.items():
        assert (points, missing, twice) == ("768", "0", "0"), (gpus, text)
        assert float(wall) == round(seconds[gpus], 1)
        assert abs(float(rate) - 768 / seconds[gpus]) <= 0.05  # over the whole command
        assert float(ratio) == round(seconds[1] / seconds[gpus], 2)
        assert float(bound) == round(nums["runs"][str(gpus)]["bound"], 2)
        assert model != "-", "the model's prediction from the one-GPU per-point costs"
    # the bound from the one-GPU run's own split: its command is its fixed part and its span
    one = json.loads((out / "single.json").read_text())["time"]
    f = nums["fixed"]
    assert f["fixed_s"] + f["span_s"] == pytest.approx(seconds[1])
    assert f["span_s"] == pytest.approx(one["last_point_s"] - one["first_point_s"])
    assert 1.0 < nums["runs"]["4"]["bound"] < 4.0 and "## Amdahl's bound" in text
    workers = re.findall(r"^\| four GPUs GPU (\d) \|", text, re.M)
    assert sorted(set(workers)) == ["0", "1", "2", "3"]  # each worker's breakdown and start
    # the model's table has the four-GPU run's measured rate beside its prediction
    four = re.search(r"^\| 4 \| ([\d.]+) \| ([\d.]+) \|$", text, re.M)
    assert four and abs(float(four[2]) - 768 / seconds[4]) <= 0.05


def test_mgs_sizes_sweeps_the_sizes_it_names_with_the_same_sampling(tmp_path):
    """MGS_SIZES (the recording holds 2^16 and 2^24): 2^24 alone is its 384 points, in both
    runs, and the report's command names the sizes and today's sampling and restrictions."""
    out = tmp_path / "out"
    _sweep(out, MGS_SIZES="2^24")
    text = (out / "report.md").read_text()
    assert "- points: 384 on GPU 0 alone, 384 in the two-GPU run; 0 missing, 0 measured twice" \
        in text, text
    assert "--sizes 2^24 --max-samples 30 --sample-time 0.02 --restrict block_size=256,1024" \
        in text and "--time-limit 75 " in text
    assert json.loads((out / "bound.json").read_text())["fixed"]["points"] == 384
