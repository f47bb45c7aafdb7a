#!/usr/bin/env bash
# Device job for one session's GPU evidence (issues 25 and 26) on one warm machine, in phases
# that each fit a device command (10 minutes); a warm machine keeps build/ between the calls,
# so later phases reuse the first one's builds. Carry [".deps", ".whl"] (move .deps/pg.tar.xz,
# .deps/debs, .deps/usr/share/doc and the psycopg2 wheel aside first: the tree and the carry
# share 64 MiB).
#   bash scripts/device-jobs/x_session.sh build   both package trees (z_setup: the working tree
#                                                 and e304aed; X_TREES=new: the working tree's
#                                                 only) and the C++ GPU tests of the axis
#                                                 family at once, then those tests
#                                                 (X_PYTEST_GPU=1: the pytest phase on GPU 1
#                                                 meanwhile, into $OUT/pytest)
#   bash scripts/device-jobs/x_session.sh pytest  the Python GPU tests of the axis runtime,
#                                                 benchmark and calibrate; the call probe
#   bash scripts/device-jobs/x_session.sh bench   the axis benchmark on GPU 0 (64 shapes; AXIS_TOTALS=28: 32)
#   bash scripts/device-jobs/x_session.sh benches X_BENCHES="28:bfloat16 28:float32": the axis
#                                                 benchmark of each total:dtype at once, GPU 0, 1, ...
#   bash scripts/device-jobs/x_session.sh spread  after build with X_CXX_RUN=0 (built, not run),
#                                                 the C++ GPU tests over GPUs 0-2 and a few
#                                                 Python GPU tests on GPU 3, at once (on 2 GPUs:
#                                                 X_SPREAD="0:a,b 1:c,d" X_SPREAD_PY="")
#   bash scripts/device-jobs/x_session.sh scale   scripts/multi-gpu-sweep on 1, 2 (and 4) GPUs
#                                                 and e304aed's one-GPU sweep (z_scaling.sh)
#   bash scripts/device-jobs/x_session.sh one      on a one-GPU machine after build: the out=
#                                                 and calibrate GPU tests, and the sweep's
#                                                 one-GPU run beside e304aed's (sweep_walls.txt)
#   bash scripts/device-jobs/x_session.sh together   on a host of 3 or more GPUs, at once on
#                                                 separate GPUs: bench on 0, the held-out priors'
#                                                 one + five minutes (z_priors.sh) on 1, pytest on 2
#                                                 (each its own folder of $OUT). The jobs share the
#                                                 host's CPUs (64 cores on a 4-GPU host); each
#                                                 one's ratios are measured within its own run.
# Each phase writes its logs into $OUT. REDUCETUNE_COMMIT names the commit (the machine's copy
# of the tree has no .git); the build phase keeps it in build/commit.txt, which the later phases
# of the same warm machine read where their call does not set it (a bench phase of 2026-11-27
# without it wrote "Commit: unknown" into axis.md).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
phase=${1:?usage: x_session.sh build|pytest|bench|scale}
if [ "$phase" = build ] && [ -n "${REDUCETUNE_COMMIT:-}" ]; then
  mkdir -p build && echo "$REDUCETUNE_COMMIT" > build/commit.txt
elif [ -z "${REDUCETUNE_COMMIT:-}" ] && [ -f build/commit.txt ]; then
  REDUCETUNE_COMMIT=$(cat build/commit.txt)
fi
[ -n "${REDUCETUNE_COMMIT:-}" ] && export REDUCETUNE_COMMIT
site="$PWD/build/z-site-new:/tmp/site"
# X_CXX_TESTS="" builds and runs none (an empty value is not the default list: with ":-" it was,
# and a 2026-11-27 H100 call spent its last device minutes building the axis tests)
read -r -a CXX_TESTS <<< "${X_CXX_TESTS-gpu_test_axis gpu_test_axis_staged gpu_test_axis_tuned gpu_test_axis_wide_tiles gpu_test_half_axis gpu_test_axis_finish gpu_test_evaluate_axis}"

cxx_build() {
  [ ${#CXX_TESTS[@]} -eq 0 ] && return 0
  cmake --preset device -DRT_CATCH2_V2_INCLUDE="$PWD/.deps/catch2v2/include" \
    > "$OUT/configure.log" 2>&1 &&
    cmake --build --preset device -j 32 --target "${CXX_TESTS[@]}" > "$OUT/cxx_build.log" 2>&1
}

case "$phase" in
  build)
    { nvidia-smi -L; date -u +%FT%TZ; echo "commit ${REDUCETUNE_COMMIT:-unknown}"; } > "$OUT/device.txt"
    cxx_build & cxx=$!
    (source scripts/device-jobs/z_common.sh; z_setup ${X_TREES:-}) > "$OUT/z_setup.log" 2>&1
    echo "z_setup rc=$?" >> "$OUT/device.txt"
    # X_PYTEST_GPU: the pytest phase on that GPU meanwhile (the C++ tests take GPU 0)
    py=""
    if [ -n "${X_PYTEST_GPU:-}" ]; then
      mkdir -p "$OUT/pytest"
      OUT=$OUT/pytest X_GPU=$X_PYTEST_GPU bash "$0" pytest > "$OUT/pytest/phase.log" 2>&1 & py=$!
    fi
    wait $cxx; echo "cxx build rc=$?" >> "$OUT/device.txt"
    [ "${X_CXX_RUN:-1}" = 0 ] && CXX_TESTS=()  # built only (the spread phase runs them)
    for t in "${CXX_TESTS[@]}"; do
      exe=$(find build/device -name "$t" -type f -perm -u+x | head -1)
      echo "== $t $(date -u +%T)" >> "$OUT/cxx_tests.log"
      CUDA_VISIBLE_DEVICES=0 timeout 200 "$exe" --durations yes >> "$OUT/cxx_tests.log" 2>&1
      echo "== $t exit $?" >> "$OUT/cxx_tests.log"
    done
    grep -E "^== |test cases|FAILED" "$OUT/cxx_tests.log" | tail -20
    [ -n "$py" ] && { wait $py; tail -4 "$OUT/pytest/phase.log"; }
    cat "$OUT/device.txt" ;;
  pytest)
    CUDA_VISIBLE_DEVICES=${X_GPU:-0} PYTHONPATH=$site timeout 330 python3 -m pytest -q -rs \
      -p no:cacheprovider tests/python/test_axis_bench_gpu.py tests/python/test_axis_tune_gpu.py \
      tests/python/test_calibrate.py tests/python/test_calibrate_axis.py \
      tests/python/test_calibrate_rounds.py tests/python/test_reduce_eager_gpu.py \
      tests/python/test_reduce_axis.py tests/python/test_axis_call_cache.py \
      tests/python/test_axis_bench_streaming_gpu.py tests/python/test_axis_batch_invariant.py \
      > "$OUT/pytest_gpu.log" 2>&1
    echo "pytest rc=$?" >> "$OUT/pytest_gpu.log"
    tail -15 "$OUT/pytest_gpu.log"
    CUDA_VISIBLE_DEVICES=${X_GPU:-0} PYTHONPATH=$site timeout 150 python3 \
      scripts/device-jobs/axis_call_probe.py --log "$OUT/axis_call_probe.log" \
      > "$OUT/axis_call_probe.out" 2>&1
    echo "probe rc=$?" >> "$OUT/axis_call_probe.out"
    tail -30 "$OUT/axis_call_probe.out" ;;
  bench)
    CUDA_VISIBLE_DEVICES=0 PYTHONPATH=$site AXIS_PROTOCOL=0 AXIS_TOTALS=${AXIS_TOTALS:-28,24} \
      AXIS_DTYPES=${AXIS_DTYPES:-float32,bfloat16} AXIS_TESTS=0 AXIS_TIME_LIMIT=${AXIS_TIME_LIMIT:-470} \
      AXIS_BENCH_TIMEOUT=${AXIS_BENCH_TIMEOUT:-560} bash scripts/device-jobs/axis_bench.sh ;;
  benches)  # on a host of as many GPUs as jobs: X_BENCHES ("28:bfloat16 28:float32 ...", log2
            # total and dtype), each its own GPU, folder of $OUT and helper folder, at once; each
            # one's ratios are measured within its own run (the jobs share the host's CPUs)
    read -r -a jobs <<< "${X_BENCHES:-28:bfloat16 28:float32}"
    pids=(); gpu=0
    for j in "${jobs[@]}"; do
      d="$OUT/bench_${j%%:*}_${j##*:}"; mkdir -p "$d"
      (export OUT=$d AXIS_W=/tmp/axis_bench_$gpu AXIS_TOTALS=${j%%:*} AXIS_DTYPES=${j##*:}
       CUDA_VISIBLE_DEVICES=$gpu PYTHONPATH=$site AXIS_PROTOCOL=0 AXIS_TESTS=0 \
         AXIS_TIME_LIMIT=${AXIS_TIME_LIMIT:-470} AXIS_BENCH_TIMEOUT=${AXIS_BENCH_TIMEOUT:-560} \
         bash scripts/device-jobs/axis_bench.sh) > "$d/phase.log" 2>&1 & pids+=($!)
      gpu=$((gpu + 1))
    done
    for p in "${pids[@]}"; do wait "$p"; done
    for j in "${jobs[@]}"; do tail -4 "$OUT/bench_${j%%:*}_${j##*:}/phase.log"; done ;;
  spread)  # on a host of 4 GPUs after the build phase's binaries (X_CXX_TESTS built): the C++
           # GPU tests spread over GPUs 0-2 (X_SPREAD: "GPU:test,test GPU:test ..."), a few
           # Python GPU tests (X_SPREAD_PY) on GPU 3, all at once; each test's log in $OUT
    read -r -a lanes <<< "${X_SPREAD:-0:gpu_test_axis_ticket,gpu_test_axis_finish,gpu_test_evaluate_axis,gpu_test_axis_wide_tiles 1:gpu_test_axis 2:gpu_test_half_axis}"
    pids=()
    for lane in "${lanes[@]}"; do
      (IFS=, read -r -a tests <<< "${lane#*:}"
       for t in "${tests[@]}"; do
         exe=$(find build/device -name "$t" -type f -perm -u+x | head -1)
         echo "== $t on GPU ${lane%%:*} $(date -u +%T)"
         CUDA_VISIBLE_DEVICES=${lane%%:*} timeout 240 "$exe" --durations yes 2>&1 | tail -40
         echo "== $t exit ${PIPESTATUS[0]}"
       done) > "$OUT/cxx_gpu${lane%%:*}.log" 2>&1 & pids+=($!)
    done
    # X_SPREAD_PY="" (set and empty): no pytest lane, for a host of fewer than 4 GPUs
    read -r -a py_tests <<< "${X_SPREAD_PY-tests/python/test_axis_bench_streaming_gpu.py tests/python/test_axis_batch_invariant.py}"
    if [ ${#py_tests[@]} -gt 0 ]; then
      CUDA_VISIBLE_DEVICES=3 PYTHONPATH=$site timeout 240 python3 -m pytest -q -rs -p no:cacheprovider \
        "${py_tests[@]}" > "$OUT/pytest_gpu3.log" 2>&1; echo "pytest rc=$?" >> "$OUT/pytest_gpu3.log"
    fi
    for p in "${pids[@]}"; do wait "$p"; done
    grep -hE "^== |test cases|FAILED" "$OUT"/cxx_gpu*.log
    if [ ${#py_tests[@]} -gt 0 ]; then tail -3 "$OUT/pytest_gpu3.log"; fi ;;
  together)
    mkdir -p "$OUT/bench" "$OUT/priors" "$OUT/pytest"
    OUT=$OUT/bench bash "$0" bench > "$OUT/bench/phase.log" 2>&1 & b=$!
    (export OUT=$OUT/priors CUDA_VISIBLE_DEVICES=1 Z_KEEP_SITE=1
     bash scripts/device-jobs/z_priors.sh one && bash scripts/device-jobs/z_priors.sh five
    ) > "$OUT/priors/phase.log" 2>&1 & p=$!
    OUT=$OUT/pytest X_GPU=2 bash "$0" pytest > "$OUT/pytest/phase.log" 2>&1
    wait $b; wait $p
    tail -5 "$OUT/pytest/phase.log"; tail -12 "$OUT/bench/phase.log"; tail -12 "$OUT/priors/phase.log" ;;
  one)  # a one-GPU machine, after build (X_CXX_TESTS=gpu_test_axis there): the out= and
        # calibrate GPU tests, and the multi-GPU sweep's one-GPU run beside e304aed's
    CUDA_VISIBLE_DEVICES=0 PYTHONPATH=$site timeout 120 python3 -m pytest -q -rs -p no:cacheprovider \
      tests/python/test_reduce_axis_out.py tests/python/test_calibrate.py > "$OUT/pytest_one.log" 2>&1
    echo "pytest rc=$?" | tee -a "$OUT/pytest_one.log"
    for t in new e304aed; do
      CUDA_VISIBLE_DEVICES=0 PYTHONPATH=$PWD/build/z-site-$t:/tmp/site MGS_RT="python3 -m reducetune" \
        MGS_ARGS=$([ $t = new ] && echo "--race off") timeout 150 scripts/multi-gpu-sweep "$OUT/sweep_$t" single \
        > "$OUT/sweep_$t.log" 2>&1
      echo "$t: $(cat "$OUT/sweep_$t/single_s") s" | tee -a "$OUT/sweep_walls.txt"
    done
    tar -C "$OUT" -cJf "$OUT/one.tar.xz" sweep_new sweep_e304aed && rm -rf "$OUT/sweep_new" "$OUT/sweep_e304aed" ;;
  scale)
    Z_RUNS=${Z_RUNS:-"default e304aed_single"} bash scripts/device-jobs/z_scaling.sh ;;
  *) echo "unknown phase $phase: build, pytest, bench, benches, spread, together, one or scale"; exit 2 ;;
esac
