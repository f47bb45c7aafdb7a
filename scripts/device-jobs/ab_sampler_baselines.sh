#!/usr/bin/env bash
# Device job (issue 25, 2026-11-27): gpu_test_baselines' "no reduction streams faster than the
# ceiling" case, the tree as built by the last call (build/device, x_session.sh build with
# X_CXX_TESTS=gpu_test_baselines) against a copy whose sampler.cpp is 1675b83's (a new stream
# gate per sample() call), three times each, alternated: does keeping one gate per thread
# (49dd612) move either timing? Made here first (it travels untracked, not committed):
#   git show 1675b83:tuner/reducetune/measure/sampler.cpp > scripts/device-jobs/before_sampler.cpp.txt
# Results: docs/results/h200_2026-11-27_z_prepare_parts/ab_baselines.txt.
set -u
cd "$(dirname "$0")/../.."
exe_new=$(find build/device -name gpu_test_baselines -type f -perm -u+x | head -1)
rm -rf /tmp/old && mkdir -p /tmp/old && cp -r CMakeLists.txt CMakePresets.json cmake tuner tests kernel_templates db driver pyproject.toml .deps /tmp/old/ 2>/dev/null; mkdir -p /tmp/old/scripts && cp scripts/layers.txt /tmp/old/scripts/
cp scripts/device-jobs/before_sampler.cpp.txt /tmp/old/tuner/reducetune/measure/sampler.cpp
(cd /tmp/old && cmake --preset device -DRT_CATCH2_V2_INCLUDE="/work/main/.deps/catch2v2/include" -DCMAKE_PREFIX_PATH=/work/main/.deps/usr > /tmp/old_cfg.log 2>&1 && cmake --build --preset device -j 16 --target gpu_test_baselines > /tmp/old_build.log 2>&1) || { tail -n 20 /tmp/old_cfg.log /tmp/old_build.log; exit 1; }
exe_old=$(find /tmp/old/build/device -name gpu_test_baselines -type f -perm -u+x | head -1)
for k in 1 2 3; do
  for v in old new; do
    exe=$exe_new; [ $v = old ] && exe=$exe_old
    echo "== $v $k"; $exe -s "no reduction streams faster than the ceiling*" 2>&1 | grep -E "^  ceiling [0-9]|^  CUB [0-9]|passed|failed" | head -4
  done
done
