#!/usr/bin/env bash
# Device job, issue 25 targets 3 and 4 (held-out priors), run on an H100 and on an H200, in
# three calls each (a call is at most 10 minutes, and each run overruns its limit by its
# units' fixed costs: inputs of 2^30 elements, CUB):
#
#   bash scripts/device-jobs/z_priors.sh one      builds; priors from the OTHER GPU's results
#                                                 only; the README's command with
#                                                 --time-limit 1m on a fresh file
#   bash scripts/device-jobs/z_priors.sh five     the same file continued for 5 more minutes
#                                                 (6 in all)
#   bash scripts/device-jobs/z_priors.sh focused  a focused 2-minute tune of float32 sum 2^30
#                                                 on a fresh file; the summary of all three
#
# Everything is kept in build/z-priors (ignored: it stays on a warm machine between calls);
# on a fresh machine Z_ONE_DB=path/six.db.xz (carried) restarts "five" from the file "one"
# sent back. Each call brings back $OUT/results.tar.xz and $OUT/summary.md (the rows so far).
# The held-out table: on an H100, built from the committed H200 files with --model H200 (they
# hold the H100's bests too); on an H200, from the H100 files with --model H100.
# Z_PRIORS_EXTRA=FILE.db[.xz] adds another results file of that GPU (e.g. the H200's 6-minute
# database of this job: the committed H200 files hold only float32 sum/min/max, float64 sum
# and int32 sum, so run the H200 first and give its six.db.xz to the H100's "one").
#
#   scripts/device-prep    (here, once)
#   run(command="bash scripts/device-jobs/z_priors.sh one", kind="nvidia-h200",
#       carry=[".deps", ".whl"]); then "five", then "focused"; then the same on nvidia-h100-x1
# Dry run without a GPU: Z_DRY=1 Z_REPLAY=docs/results/h100_2026-11-23_issue12_rerun/h100_tune.db.xz
#   Z_ARGS="--dtype float32 --op sum --sizes 2^20 2^30" bash scripts/device-jobs/z_priors.sh one
keep=$(cd "$(dirname "$0")/../.." && pwd)/build/z-priors
W=${W:-$keep/results}
source "$(dirname "$0")/z_common.sh"
stage=${1:?usage: z_priors.sh one|five|focused}
mkdir -p "$keep"
read -r -a units <<< "${Z_ARGS:-${README_UNITS[*]}}"
replay=(); [ -n "${Z_REPLAY:-}" ] && replay=(--replay "$Z_REPLAY")
z_setup new

gpu_name() {  # in a dry run, Z_GPU (default H100): the GPU the recording is of
  if [ "${Z_DRY:-0}" = 1 ]; then echo "${Z_GPU:-H100}"; return; fi
  nvidia-smi --query-gpu=name --format=csv,noheader | head -1
}

heldout() {  # the priors table of the other GPU's results only, into $keep/heldout.json
  local me other files
  me=$(gpu_name)
  case "$me" in
    *H200*) other=H100; files=(docs/results/h100_2026-11-23_tune_all.db.xz
              docs/results/h100_2026-11-23_issue12_rerun/h100_tune.db.xz
              docs/results/h100_2026-11-24_calibrate/h100_calibrated.db.xz) ;;
    *) other=H200; files=(docs/results/h200_2026-11-23_tune_and_benches/h200_tune.db.xz
              docs/results/h200_2026-11-24_calibrate/h200_calibrated.db.xz) ;;
  esac
  z_log "held-out priors on $me: $other's results only"
  z_new priors --model "$other" -o "$keep/heldout.json" "${files[@]}" ${Z_PRIORS_EXTRA:-} \
    >> "$W/job.log" 2>&1
  cp "$keep/heldout.json" "$W/"
}

tune() {  # NAME DB ARGS...: reducetune tune --json into $W/NAME.json, wall seconds beside it
  local name=$1 db=$2 t0 t1; shift 2
  z_log "$name: tune $*"
  t0=$(date +%s.%N)
  z_new tune "${replay[@]}" --db "$db" --priors "$keep/heldout.json" "$@" --json --quiet \
    > "$W/$name.json" 2> "$W/$name.err"
  echo "rc=$?" >> "$W/$name.err"
  t1=$(date +%s.%N)
  python3 -c "print(round($t1 - $t0, 1))" > "$W/$name.wall_s"
}

report() {  # NAME...: one row per run (the tuner's x CUB per unit), and float32 sum 2^30
  {
    echo "# Held-out priors ($(gpu_name)), stage $stage"
    echo
    echo "Date: $(date -u +%F\ %H:%M) UTC; priors: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(', '.join(x['name'] + ' (' + ', '.join(x['files']) + ')' for x in d['devices']))" "$keep/heldout.json")"
    echo "Units: \`${units[*]}\`; each run: \`reducetune tune --db DB --priors heldout.json UNITS --time-limit T --json\`"
    echo
    python3 scripts/device-jobs/z_summary.py header
    for name in "$@"; do
      [ -f "$W/$name.json" ] || continue  # a stage run on another machine
      python3 scripts/device-jobs/z_summary.py units "$W/$name.json" "$name ($(cat "$W/$name.wall_s") s)"
    done
    echo
    echo "float32 sum 2^30, \`reducetune best --db FILE --dtype float32 --op sum --n 2^30\` (the"
    echo "% of peak of each run is in its row above):"
    for db in "$keep"/*.db; do
      echo "- $(basename "$db"): $(z_new best --db "$db" --dtype float32 --op sum --n 2^30 --json 2>&1 | python3 -c "import json,sys; b=json.load(sys.stdin); print(f\"{b['gbps']:.0f} GB/s, {b['variant']} {b['launch']}\")" 2>/dev/null || echo none)"
    done
  } > "$W/summary.md" 2>> "$W/job.log"
}

case "$stage" in
  one)
    rm -rf "$keep"/*.db* "$W"/*.json "$W"/*.wall_s
    heldout
    tune one_minute "$keep/six.db" "${units[@]}" --time-limit "${Z_ONE:-1m}"
    cp "$keep/six.db" "$keep/one.db"
    z_xz "$keep/one.db"; z_xz "$keep/six.db"
    report one_minute ;;
  five)
    [ -f "$keep/heldout.json" ] || heldout
    if [ ! -f "$keep/six.db" ]; then
      [ -n "${Z_ONE_DB:-}" ] || { z_log "no one-minute file: run 'one' first or set Z_ONE_DB"; exit 1; }
      xz -dc "$Z_ONE_DB" > "$keep/six.db"
    fi
    tune six_minutes "$keep/six.db" "${units[@]}" --time-limit "${Z_FIVE:-5m}"
    z_xz "$keep/six.db"
    report one_minute six_minutes ;;
  focused)
    [ -f "$keep/heldout.json" ] || heldout
    rm -f "$keep/focused.db"*
    tune focused_2p30 "$keep/focused.db" --dtype float32 --op sum --sizes 2^30 \
      --time-limit "${Z_FOCUSED:-2m}"
    z_xz "$keep/focused.db"
    report one_minute six_minutes focused_2p30 ;;
  *) echo "usage: z_priors.sh one|five|focused" >&2; exit 2 ;;
esac
z_pack
