#!/usr/bin/env bash
# Device job (issue 26): axis_ncu.py over the H200 run's shapes under 0.95 x ceiling (tests/data/axis_ncu_rows.json) -> $OUT/axis_ncu.{md,json,*.csv}; PYTHONPATH: the installed package
cd "$(dirname "$0")/../.." && exec python3 scripts/device-jobs/axis_ncu.py --out "${OUT:-/tmp/out}/axis_ncu.md" "$@"
