# The first lines every device job shared: strict mode, $OUT (what comes back), the work folder
# $W (set by the job before sourcing this), nvcc on PATH, and log() into $W/job.log. Sourced:
#   W=/tmp/work; . "$(dirname "$0")/job_prologue.sh"
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$W"
export PATH=$PATH:/usr/local/cuda/bin
log() { echo "== $(date -u +%T) $*" >> "$W/job.log"; }
