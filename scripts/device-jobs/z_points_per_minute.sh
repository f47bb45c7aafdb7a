#!/usr/bin/env bash
# Device job, issue 25 target 1 (one GPU, default settings): the README's command with
# --time-limit 2m on a fresh results file, e304aed's tree first and then the working tree's,
# on the same GPU in one call; points measured per minute of each (whole command's wall
# time) and their ratio (target: new >= 5 x old). Both databases come back.
#
#   scripts/device-prep    (here, once: .deps with e304aed's sources, .whl)
#   device call: run(command="bash scripts/device-jobs/z_points_per_minute.sh",
#                    carry=[".deps", ".whl"])           ~3 min of builds + 2 x ~2.5 min
# Dry run without a GPU: Z_DRY=1 Z_REPLAY=tests/data/recorded/h200_float32_sum_large.db.xz
#   Z_ARGS="--dtype float32 --op sum --sizes 2^16 --time-limit 5" bash scripts/device-jobs/z_points_per_minute.sh
source "$(dirname "$0")/z_common.sh"
z_setup
read -r -a units <<< "${Z_ARGS:-${README_UNITS[*]} --time-limit 2m}"
replay=(); [ -n "${Z_REPLAY:-}" ] && replay=(--replay "$Z_REPLAY")

run() {  # TREE: the README's command on a fresh file; its wall time into $W/TREE.wall_s
  local tree=$1 t0 t1
  rm -f "$W/$tree.db"*
  z_log "$tree: tune ${units[*]}"
  t0=$(date +%s.%N)
  "z_$tree" tune "${replay[@]}" --db "$W/$tree.db" "${units[@]}" --json --quiet \
    > "$W/$tree.json" 2> "$W/$tree.err"
  echo "rc=$?" >> "$W/$tree.err"
  t1=$(date +%s.%N)
  python3 -c "print(round($t1 - $t0, 2))" > "$W/$tree.wall_s"
  z_xz "$W/$tree.db"
}

run old
run new
{
  echo "# Points per minute: the README's command, e304aed against the working tree"
  echo
  echo "Device: $(head -1 "$W/gpus.txt" 2>/dev/null || echo 'none (dry run)'); date: $(date -u +%F\ %H:%M) UTC"
  echo "Command (each tree, fresh file): \`reducetune tune ${replay[*]} --db T.db ${units[*]} --json --quiet\`"
  echo
  echo "| tree | points measured | command wall s | points per minute |"
  echo "|---|---|---|---|"
  for t in old new; do
    p=$(python3 scripts/device-jobs/z_summary.py points "$W/$t.json" 2>/dev/null || echo 0)
    s=$(cat "$W/$t.wall_s")
    echo "| $([ $t = old ] && echo e304aed || echo new) | $p | $s | $(python3 -c "print(round($p * 60 / $s, 1))") |"
    echo "$p $s" > "$W/$t.pts"
  done
  read -r po so < "$W/old.pts"; read -r pn sn < "$W/new.pts"
  echo
  echo "new / e304aed points per minute: $(python3 -c "print(round(($pn / $sn) / max($po / $so, 1e-9), 2))") (target >= 5)"
  echo
  python3 scripts/device-jobs/z_summary.py header
  python3 scripts/device-jobs/z_summary.py units "$W/old.json" e304aed
  python3 scripts/device-jobs/z_summary.py units "$W/new.json" new
  echo
  echo "Where measuring went (the run's \"time\"; parts from the evaluators' own times, summed):"
  echo
  python3 scripts/device-jobs/z_summary.py time-header
  python3 scripts/device-jobs/z_summary.py time "$W/old.json" e304aed
  python3 scripts/device-jobs/z_summary.py time "$W/new.json" new
} > "$W/summary.md" 2>> "$W/job.log"
rm -f "$W"/*.db "$W"/*.db.studies.journal
z_pack
