#!/usr/bin/env bash
# tools/fuzz.sh [SECONDS] [TARGET...]: builds the libFuzzer targets of tests/fuzz with clang
# (AddressSanitizer + UndefinedBehaviorSanitizer) in build-fuzz, then runs each target: it
# first replays the seed corpus (valid examples, presets, Hugging Face configs, the bad-input
# corpus), then fuzzes for SECONDS (default 60). Targets run side by side, one per core.
# Exits non-zero on any crash, sanitizer report, leak, timeout (10 s per input) or excess
# memory; the offending input is left in build-fuzz/artifacts/ (turn it into a case of
# tests/bad_inputs and fix the loader). Targets: job hf_config node_spec plan_fixes.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(job hf_config node_spec plan_fixes)
build=${PARPLAN_FUZZ_BUILD:-build-fuzz}
jobs=${PARPLAN_FUZZ_JOBS:-$(nproc)}

if ! command -v clang++ >/dev/null 2>&1 || ! command -v clang >/dev/null 2>&1; then
  echo "fuzz: clang/clang++ not found (Debian: apt-get install clang libclang-rt-14-dev)" >&2
  exit 1
fi

start=$(date +%s)
echo "== fuzz: building ${targets[*]} in $build (clang, address+undefined, libFuzzer)"
mkdir -p "$build"
cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARPLAN_ENABLE_FUZZERS=ON \
  -DPARPLAN_SANITIZE="address;undefined" -DPARPLAN_ENABLE_TESTS=OFF \
  -DPARPLAN_ENABLE_BENCHMARKS=OFF -DPARPLAN_ENABLE_CUDA=OFF -DPARPLAN_ENABLE_MPI=OFF \
  -DPARPLAN_WERROR=OFF >"$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j"$jobs" --target $(printf '%s_fuzzer ' "${targets[@]}")
echo "== fuzz: built in $(( $(date +%s) - start )) s"

# Seed folders per target (libFuzzer reads folders recursively; new inputs go to the first,
# a work folder inside the build tree, so the repository is never written).
seeds_of() {
  case "$1" in
    job) echo tests/fuzz/seeds/job tools/examples tools/models tests/bad_inputs ;;
    hf_config) echo tests/data/hf tools/models tests/bad_inputs ;;
    node_spec) echo hardware_profiles/nodes tests/bad_inputs ;;
    plan_fixes) echo tests/fuzz/seeds/plan_fixes ;;
    *) echo "fuzz: unknown target $1" >&2; exit 2 ;;
  esac
}

mkdir -p "$build/artifacts" "$build/logs"
run_one() {
  local target=$1
  local work="$build/corpus/$target"
  mkdir -p "$work"
  # stdin from /dev/null: an input naming /dev/stdin must not wait for a terminal.
  "$build/tests/fuzz/${target}_fuzzer" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2560 -max_len=16384 -dict=tests/fuzz/parplan.dict -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/${target}-" "$work" $(seeds_of "$target") \
    </dev/null >"$build/logs/$target.log" 2>&1
}

declare -A pids
failed=0
running=0
for target in "${targets[@]}"; do
  run_one "$target" &
  pids[$target]=$!
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
for target in "${targets[@]}"; do
  status=0
  wait "${pids[$target]}" || status=$?
  log="$build/logs/$target.log"
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  corpus=$(find "$build/corpus/$target" -type f | wc -l)
  if [ "$status" -eq 0 ]; then
    echo "fuzz: $target ok: $execs executions ($speed/s), $corpus new corpus inputs"
  else
    failed=1
    echo "fuzz: $target FAILED (exit $status) after $execs executions; log $log:" >&2
    grep -E -A30 'ERROR: |runtime error|Assertion|internal error|deadly signal|Test unit written' \
      "$log" | head -60 >&2 || tail -40 "$log" >&2
  fi
done
echo "== fuzz: done in $(( $(date +%s) - start )) s"
exit $failed
