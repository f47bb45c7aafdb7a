# Sourced by scripts/device-jobs/z_*.sh (issue 25): the working tree and e304aed (main before
# the issue; scripts/device-prep puts its sources in .deps/e304aed) built side by side on the
# GPU machine, each into its own folder under build/ (ignored, so kept between the calls of
# one warm machine: a second call skips the builds), and what the jobs share.
#
#   z_setup [new]      the carried wheels into /tmp/site; both trees built at once (about
#                      3 minutes on 16 cores, less than one after the other), or the new only
#   z_new ARGS...      python -m reducetune ARGS with the working tree's package
#   z_old ARGS...      the same with e304aed's
#   z_pack             $W (the job's results) into $OUT/results.tar.xz (a call returns 8 files)
#
# Z_DRY=1 (on a machine without a GPU, to test a job): no build, the working tree's driver
# from PYTHONPATH for both "trees"; a job then passes --replay where the CLI allows it.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT=${OUT:-/tmp/out}
W=${W:-/tmp/z_results}
mkdir -p "$OUT" "$W"
NEW_SITE=$PWD/build/z-site-new
OLD_SITE=$PWD/build/z-site-e304aed
README_UNITS=(--dtype float32,float64,int32,int64 --op sum,min,max --sizes 2^10..2^30:2)

z_log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$W/job.log" >&2; }

_z_build() {  # SRC SITE: the package of SRC installed into SITE, unless already there
  local src=$1 site=$2
  if compgen -G "$site/reducetune/_core*.so" > /dev/null; then
    z_log "kept $site (built by an earlier call)"; return 0
  fi
  local sqlite_so
  sqlite_so=$(ldconfig -p | awk '/libsqlite3\.so\.0/{print $NF; exit}')
  python3 -m pip install -q --no-index --no-deps --no-build-isolation --target "$site" "$src" \
    -Ccmake.define.CMAKE_PREFIX_PATH="$PWD/.deps/usr" \
    -Ccmake.define.SQLite3_INCLUDE_DIR="$PWD/.deps/usr/include" \
    -Ccmake.define.SQLite3_LIBRARY="$sqlite_so" \
    -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90 > "$W/build-$(basename "$site").log" 2>&1
}

z_setup() {
  if [ "${Z_DRY:-0}" = 1 ]; then z_log "dry run: no build"; return 0; fi
  # Z_KEEP_SITE=1 (x_session.sh's jobs side by side): an earlier call's /tmp/site stays as it
  # is, since another job of the same call may be importing from it
  if [ "${Z_KEEP_SITE:-0}" != 1 ] || [ ! -d /tmp/site/optuna ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site .whl/*.whl
    # Bytecode, as pip writes it on a user's install: --no-compile (the carried wheels' install
    # rule) left every run compiling Optuna's, SQLAlchemy's and alembic's 493 modules again (1.3
    # s of each process's start in cProfile, H200, 2026-11-26; the GPU machine writes no .pyc)
    python3 -m compileall -q -j 0 /tmp/site > /dev/null 2>&1
  fi
  export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
  [ "${1:-}" = new ] || [ -f .deps/e304aed/.done ] ||
    { z_log "no .deps/e304aed: run scripts/device-prep here"; exit 1; }
  z_log "building the working tree$([ "${1:-}" = new ] && echo " only" || echo " and e304aed")"
  _z_build . "$NEW_SITE" & local a=$!
  [ "${1:-}" = new ] || { _z_build .deps/e304aed "$OLD_SITE" & }
  local b=$!
  wait $a || { z_log "new tree: build failed"; tail -30 "$W/build-z-site-new.log"; exit 1; }
  [ "${1:-}" = new ] || wait $b ||
    { z_log "e304aed: build failed"; tail -30 "$W/build-z-site-e304aed.log"; exit 1; }
  python3 -m compileall -q -j 0 "$NEW_SITE" "$OLD_SITE" > /dev/null 2>&1  # as above: both trees alike
  nvidia-smi -L > "$W/gpus.txt" 2>&1
  z_log "built"
}

z_new() {
  if [ "${Z_DRY:-0}" = 1 ]; then python3 -m reducetune "$@"; return; fi
  PYTHONPATH=$NEW_SITE:/tmp/site python3 -m reducetune "$@"
}

z_old() {
  if [ "${Z_DRY:-0}" = 1 ]; then python3 -m reducetune "$@"; return; fi
  PYTHONPATH=$OLD_SITE:/tmp/site python3 -m reducetune "$@"
}

z_xz() {  # FILE.db -> $W/NAME.db.xz (vacuumed: the free pages do not travel)
  python3 -c "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('VACUUM')" "$1"
  xz -T0 -c "$1" > "$W/$(basename "$1").xz"
}

z_pack() {
  tar -C "$W" -cJf "$OUT/results.tar.xz" . && cp "$W/summary.md" "$OUT/" 2>/dev/null
  cat "$W/summary.md" 2>/dev/null || true
}
