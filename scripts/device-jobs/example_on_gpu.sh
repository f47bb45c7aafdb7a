#!/usr/bin/env bash
# The C++ example (examples/cpp) built against the installed package and run on the GPU (issue
# 13: CI builds and links it but cannot run it). Run as
#   scripts/device-run --no-tests -- bash scripts/device-jobs/example_on_gpu.sh
# with carry [".deps", ".whl", ".calibrated"] (the H200 database of
# docs/results/h200_2026-11-24_calibrate/ in .calibrated/h200_calibrated.db.xz).
# Output: $OUT/example.log (each run's output and exit status).
set -uo pipefail
OUT=${OUT:-/tmp/out}
P=/tmp/reducetune-prefix
L="$OUT/example.log"
cmake --install build/device --prefix "$P" > /dev/null || exit 1
deps="$PWD/.deps/usr"
cmake -S examples/cpp -B /tmp/example -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$P;$deps" -DSQLite3_INCLUDE_DIR="$deps/include" \
  -DSQLite3_LIBRARY="$deps/lib/x86_64-linux-gnu/libsqlite3.a" > /tmp/example-configure.log 2>&1 \
  || { tail -30 /tmp/example-configure.log; exit 1; }
cmake --build /tmp/example > /tmp/example-build.log 2>&1 || { tail -30 /tmp/example-build.log; exit 1; }
DB=/tmp/example.db
python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
  .calibrated/h200_calibrated.db.xz "$DB"
run() { echo "\$ reducetune-example $*" >> "$L"; /tmp/example/reducetune-example "$@" >> "$L" 2>&1; echo "exit $?" >> "$L"; }
run --n 1000003
for case in "float32 sum 1000003" "float32 sum 1073741824" "float64 sum 4194305" "int32 sum 16777217" \
            "int64 max 12345" "float32 min 262147" "float32 max 4096"; do
  set -- $case
  run --db "$DB" --dtype "$1" --op "$2" --n "$3"
done
cat "$L"
