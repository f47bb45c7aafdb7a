#!/usr/bin/env bash
# Device job (issue 13) on the H100 machine, run as
#   scripts/device-python -- scripts/device-jobs/h100_runtime.sh
# with carry [".deps", ".whl"]: the runtime benchmark against the database of the README's
# main command on this GPU kind (docs/results/h100_2026-11-23_issue12_rerun/h100_tune.db.xz),
# ranked for applications. One archive comes back ($OUT/runtime.tar.xz).
set -uo pipefail
OUT=${OUT:-/tmp/out}
W=/tmp/results
mkdir -p "$W/runtime"
DB=/tmp/h100_tune.db
python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
  docs/results/h100_2026-11-23_issue12_rerun/h100_tune.db.xz "$DB"
timeout 170 python3 -m reducetune.benchmarks.runtime --db "$DB" --samples 100 \
  --out "$W/runtime/h100_2026-11-23_runtime" > "$W/runtime.log" 2>&1
echo "runtime rc=$?" >> "$W/runtime.log"
tar -C "$W" -cJf "$OUT/runtime.tar.xz" . ; tail -3 "$W/runtime.log"
