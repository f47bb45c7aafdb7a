#!/usr/bin/env bash
# Device job, issue 25 target 2, on a two-GPU machine (kind nvidia-h100-x2 or nvidia-h200-x2):
# scripts/multi-gpu-sweep (the same grid sweep on GPU 0 alone, then on GPUs 0 and 1 sharing
# its studies) with the default storage and with --storage journal:..., each giving points
# per second over the whole command, none missing / none twice, each worker's breakdown and
# the scale-out model (experiments/multi_gpu.py: 1, 2, 4, 8 GPUs, 4 machines of 8) beside
# the measured rates; then e304aed's one-GPU sweep for its wall time (targets: new one-GPU
# wall <= a fifth of e304aed's; two GPUs >= 1.8 x one). "z_scaling.sh pg", a second call on
# the same machine (builds kept): the sweep with its studies in a PostgreSQL server started
# there (Debian's PostgreSQL 15 and psycopg2, carried: scripts/device-prep; z_pg.py).
#
#   scripts/device-prep    (here, once)
#   device call: run(command="bash scripts/device-jobs/z_scaling.sh", kind="nvidia-h100-x2",
#                    carry=[".deps", ".whl"])      ~3 min of builds + 3 x (1-2.5) min
# Z_GPUS=4 (kind nvidia-h100-x4 or nvidia-h200-x4): each sweep also on GPUs 0-3 (multi-gpu-
# sweep's quad; target: four >= 3.4 x one), a column of its own in the summary.
# Z_SIZES (e.g. "2^16 2^18 2^20 2^22 2^24 2^26": 384 points a size, 2304 in all; or
# "2^14..2^26", 4992): also the sweep "long", those sizes with the same sampling and
# restrictions (multi-gpu-sweep's MGS_SIZES; default storage), into $W/long beside the default's,
# a row of its own in the summary: long enough for the fixed part not to dominate (each
# report's Amdahl section says how many points the targets need). Z_RUNS=long alone runs it
# (without Z_SIZES: the six sizes above); each of its sweeps stops at 150 s.
# Dry run without a GPU: Z_DRY=1 Z_REPLAY=tests/data/recorded/h200_float32_sum_grid.db.xz
#   bash scripts/device-jobs/z_scaling.sh   (the recording holds 2^16 and 2^24 only: a dry
#   "long" replays with Z_SIZES="2^16 2^24")
source "$(dirname "$0")/z_common.sh"
# e304aed is built only where a run asks for it (Z_RUNS without e304aed_single: the new tree alone)
if [[ "${Z_RUNS:-e304aed_single}" == *e304aed* ]]; then z_setup; else z_setup new; fi
export MGS_REPLAY=${Z_REPLAY:-} MGS_GPUS=${Z_GPUS:-2}

LONG_SIZES=${Z_SIZES:-2^16 2^18 2^20 2^22 2^24 2^26}

sweep() {  # TREE NAME STORAGE [single]: scripts/multi-gpu-sweep into $W/NAME
  local site=$NEW_SITE
  [ "$1" = old ] && site=$OLD_SITE
  local gpus="one and two GPUs"
  [ "$MGS_GPUS" = 4 ] && gpus="one, two and four GPUs"
  # "long": more sizes (Z_SIZES), so more time for each sweep and the three together
  local sizes="" limit=75 whole=240
  [ "$2" = long ] && { sizes=$LONG_SIZES; limit=150; whole=480; }
  z_log "sweep $2 (${3:-default storage}${sizes:+, sizes $sizes}) ${4:-$gpus}"
  if [ "${Z_DRY:-0}" = 1 ]; then
    MGS_RT="python3 -m reducetune" MGS_STORAGE=$3 MGS_SIZES=$sizes MGS_TIME_LIMIT=$limit \
      scripts/multi-gpu-sweep "$W/$2" ${4:-}
  else
    local args="--race off"  # every point fully measured: the GPUs' agreement compares medians
    [ "$1" = old ] && args=""  # e304aed has no racing (nor the flag)
    PYTHONPATH=$site:/tmp/site MGS_RT="python3 -m reducetune" MGS_STORAGE=$3 MGS_ARGS=$args \
      MGS_SIZES=$sizes MGS_TIME_LIMIT=$limit timeout $whole scripts/multi-gpu-sweep "$W/$2" ${4:-}
  fi > "$W/$2.log" 2>&1
  echo "$2 rc=$?" >> "$W/job.log"
}

if [ "${1:-}" = pg ]; then  # a second call (builds kept): the sweep through PostgreSQL
  if [ "${Z_DRY:-0}" != 1 ]; then  # Debian's server, carried (scripts/device-prep)
    # whole, or its two halves carried by two calls (pg_unpack.sh; Z_RUNS=postgres: no e304aed)
    bash scripts/device-jobs/pg_unpack.sh 2>> "$W/job.log" ||
      { z_log "no PostgreSQL archive on this machine"; z_pack; exit 1; }
    export PATH=/tmp/pg/usr/lib/postgresql/15/bin:$PATH
    export LD_LIBRARY_PATH=/tmp/pg/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export PYTHONPATH=$NEW_SITE:/tmp/site
  fi
  url=$(python3 scripts/device-jobs/z_pg.py start "$W/pg.json" 2>> "$W/job.log") ||
    { z_log "PostgreSQL did not start"; z_pack; exit 1; }
  sweep new postgres "$url"
  python3 scripts/device-jobs/z_pg.py stop "$W/pg.json"
  runs=(postgres)
else
  # Z_RUNS: the sweeps to run (default: all three, and "long" where Z_SIZES is set; e.g.
  # "default" alone on a short budget)
  read -r -a runs <<< "${Z_RUNS:-e304aed_single default journal${Z_SIZES:+ long}}"
  for r in "${runs[@]}"; do
    case "$r" in
      e304aed_single) sweep old e304aed_single "" single ;;
      default) sweep new default "" ;;
      journal) sweep new journal journal ;;
      long) sweep new long "" ;;
    esac
  done
  mapfile -t runs < <(printf '%s\n' "${runs[@]}" | grep -v '^e304aed_single$')
fi
{
  echo "# Scale-out: scripts/multi-gpu-sweep on 1, 2 (Z_GPUS=4: and 4) GPUs; e304aed's one-GPU wall"
  echo
  echo "Device: $(tr '\n' ';' < "$W/gpus.txt" 2>/dev/null || echo 'none (dry run)'); date: $(date -u +%F\ %H:%M) UTC"
  echo
  python3 scripts/device-jobs/z_summary.py scaling-header
  for r in "${runs[@]}"; do python3 scripts/device-jobs/z_summary.py scaling "$W/$r" "$r"; done
  if [ "${runs[0]}" = default ]; then
    old=$(cat "$W/e304aed_single/single_s" 2>/dev/null || echo 0)
    new=$(cat "$W/default/single_s" 2>/dev/null || echo 0)
    echo
    echo "e304aed one-GPU sweep wall: $old s; new (default storage): $new s; new / e304aed: $(python3 -c "print(round($new / $old, 3) if $old else 'n/a')") (target <= 0.2)"
  fi
  for r in "${runs[@]}"; do
    what="$r storage"
    [ "$r" = long ] && what="long: default storage, sizes $LONG_SIZES"
    echo; echo "## $what"; echo
    sed -n '/^- points:/,/^- points per second/p;/^## Where each/,$p' "$W/$r/report.md" 2>/dev/null
  done
} > "$W/summary.md" 2>> "$W/job.log"
z_pack
