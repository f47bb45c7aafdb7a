#!/usr/bin/env bash
# Device job (issue 15; not run yet: the two-GPU kind was not lent on 2026-11-23), on the
# two-GPU H200 machine, run as
#   scripts/device-python -- scripts/device-jobs/h200x2_multigpu.sh
# with kind nvidia-h200-x2 and carry [".deps", ".whl"]: the grid sweep on one GPU, then on
# both (scripts/multi-gpu-sweep: report, wall-time ratio, each point's agreement), then the
# runtime's GPU tests with two GPUs (its multi-device test runs there). One archive comes back
# ($OUT/results.tar.xz): a device call returns at most 8 files.
set -uo pipefail
OUT=${OUT:-/tmp/out}
W=/tmp/results
mkdir -p "$W"
nvidia-smi -L > "$W/gpus.txt" 2>&1
timeout 200 scripts/multi-gpu-sweep "$W/multi_gpu" > "$W/multi_gpu.log" 2>&1
echo "sweep rc=$?" >> "$W/job.log"
timeout 60 python3 -m pytest -q -rs tests/python/test_reduce.py > "$W/test_reduce.log" 2>&1
echo "tests rc=$?" >> "$W/job.log"
tar -C "$W" -cJf "$OUT/results.tar.xz" . ; cat "$W/job.log"
