#!/usr/bin/env bash
# Device job (issue 26): axis_ncu.py over the H200 benchmark's shapes under 0.95 x ceiling; writes $OUT/axis_ncu.md, .json, .*.csv
cd "$(dirname "$0")/../.." && exec python3 scripts/device-jobs/axis_ncu.py --out "${OUT:-/tmp/out}/axis_ncu.md" "$@"
