#!/usr/bin/env bash
# The test command (README, CI): installs what is missing, checks formatting, include layering
# and function length (tools/check_*.py), builds a Debug ASan+UBSan tree and runs every test
# but the GPU ones (the bad-input corpus included) and those labelled release_build (the
# leave-one-out calibration over the public runs, a search per published plan, the planner's
# best plans through each exporter, the executor timed against a fresh profile), which run in a
# Release build instead (about 4 minutes there, over half an hour under the sanitizers), runs
# the planner tests under ThreadSanitizer, replays the fuzz seeds and fuzzes each input parser
# for 60 s (when clang is present). When nvcc exists the Release build compiles the CUDA
# sources too, without running them.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
start=$(date +%s)

echo "== clang-format check"
git ls-files '*.h' '*.cpp' '*.cu' '*.cuh' | xargs clang-format --dry-run --Werror

echo "== source checks: include layering, function length"
python3 tools/check_layering.py
python3 tools/check_function_length.py

echo "== build (Debug, address+undefined sanitizers)"
# At -O0: GCC 12 at -O1 with the sanitizers reports false -Wmaybe-uninitialized inside
# libstdc++'s <regex> (std::function moves), which -Werror turns into errors.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPARPLAN_SANITIZE="address;undefined" \
  -DPARPLAN_ENABLE_CUDA=OFF -DPARPLAN_ENABLE_BENCHMARKS=OFF
step=$(date +%s)
cmake --build build-asan -j"$(nproc)"
echo "== sanitizer build step: $(( $(date +%s) - step )) s"
echo "== ctest -LE 'gpu|release_build'"
step=$(date +%s)
(cd build-asan && ctest -LE 'gpu|release_build' --output-on-failure -j"$(nproc)")
echo "== sanitizer test step: $(( $(date +%s) - step )) s"

# The Release build also compiles every CUDA source when nvcc exists (CI must; nothing CUDA runs
# here: the release_build tests use the CPU backends, so they also show that a CUDA-built
# parplan runs on a machine without a GPU).
cuda_flags=(-DPARPLAN_ENABLE_CUDA=OFF)
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  cuda_flags=(-DPARPLAN_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="80;90")
fi
echo "== Release build (${cuda_flags[*]}): the tests labelled release_build"
step=$(date +%s)
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release "${cuda_flags[@]}" \
  -DPARPLAN_ENABLE_BENCHMARKS=OFF | sed -n '/parplan .* configuration/,$p'
cmake --build build-release -j"$(nproc)" --target release_build_tests
if [ "${cuda_flags[0]}" = "-DPARPLAN_ENABLE_CUDA=ON" ]; then
  grep -q "define PARPLAN_HAVE_CUDA 1" build-release/generated/parplan/parplan_config.h ||
    { echo "nvcc exists but the Release build did not enable CUDA: see the summary above"; exit 1; }
  echo "== CUDA sources compiled (compile-only: no GPU here, nothing CUDA runs)"
fi
(cd build-release && ctest -L release_build --output-on-failure -j"$(nproc)")
echo "== Release step: $(( $(date +%s) - step )) s"

echo "== ThreadSanitizer: planner tests (threaded search)"
step=$(date +%s)
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARPLAN_SANITIZE=thread \
  -DPARPLAN_ENABLE_CUDA=OFF -DPARPLAN_ENABLE_MPI=OFF -DPARPLAN_ENABLE_BENCHMARKS=OFF >/dev/null
cmake --build build-tsan -j"$(nproc)" --target planner_test
(cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ctest -L unit -R '^(PlanSpace|Search)\.' --output-on-failure -j"$(nproc)")
echo "== ThreadSanitizer step: $(( $(date +%s) - step )) s"

if command -v clang++ >/dev/null 2>&1; then
  echo "== fuzz: replay the seed corpus, then 60 s per input parser"
  step=$(date +%s)
  tools/fuzz.sh 60
  echo "== fuzz step: $(( $(date +%s) - step )) s"
else
  echo "== fuzz: skipped (no clang++; tools/deps.sh installs it)"
fi

echo "== all tests passed in $(( $(date +%s) - start )) s"
