#!/usr/bin/env bash
# The test command (README, CI): installs what is missing, checks formatting, include layering
# and function length (tools/check_*.py), builds a Debug ASan+UBSan tree and runs every test
# but the GPU ones (the bad-input corpus included) and those labelled release_build (the
# leave-one-out calibration over the public runs and a search per published plan), which run in
# a Release build instead (thousands of cost-model evaluations: about 2 minutes there, over half
# an hour under the sanitizers), runs the planner tests under ThreadSanitizer, replays the fuzz
# seeds and fuzzes each input parser for 60 s (when clang is present), then (when nvcc exists)
# compiles the CUDA sources without running them.
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

echo "== Release build: leave-one-out calibration, published plans (ctest -L release_build)"
step=$(date +%s)
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DPARPLAN_ENABLE_CUDA=OFF \
  -DPARPLAN_ENABLE_BENCHMARKS=OFF >/dev/null
cmake --build build-release -j"$(nproc)" --target parplan calibrate_loo_test published_plans_test
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

if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "== CUDA compile-only build (no GPU here: nothing CUDA runs)"
  cmake -S . -B build-cuda -DCMAKE_BUILD_TYPE=Release -DPARPLAN_ENABLE_TESTS=OFF \
    -DCMAKE_CUDA_ARCHITECTURES="80;90"
  cmake --build build-cuda -j"$(nproc)"
fi
echo "== all tests passed in $(( $(date +%s) - start )) s"
