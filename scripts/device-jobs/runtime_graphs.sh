#!/usr/bin/env bash
# Device job (issue 24, section 5): reducetune.reduce in the places PyTorch programs put it
# (CUDA-graph capture and replay on new data, torch.compile, autograd refused), then every
# other GPU test of the runtime. Run as
#   scripts/device-python -- scripts/device-jobs/runtime_graphs.sh
# with carry [".deps", ".whl"]. Logs come back in $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}
{ nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader; date -u +%FT%TZ; } \
  > "$OUT/device.txt"
python3 -c "import torch; print('torch', torch.__version__)" >> "$OUT/device.txt" 2>&1
timeout 400 python3 -m pytest tests/python/test_reduce_graphs.py tests/python/test_reduce.py \
  -v -rs -p no:cacheprovider 2>&1 | tee "$OUT/pytest_runtime_gpu.log" | tail -40
