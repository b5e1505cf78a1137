#!/usr/bin/env bash
# tools/gpu_check.sh OUTDIR: the GPU checks in one unattended call, for a machine with an
# NVIDIA GPU (one is enough), including a bare lent one (CUDA 13 under /usr/local/cuda, cmake,
# ninja, python3, PyTorch's venv with pip's NCCL, no Debian packages, no network):
#   1. preflight: nvcc, cmake, ninja, python3, NCCL (system, $NCCL_HOME, or the nvidia/nccl of
#      a Python venv such as /opt/torch/.venv) and the header-only packages (system, or
#      gpu_deps/ from tools/gpu_check_prepare.sh); stops at once saying what is missing;
#   2. configure (Ninja, Release, CUDA for this GPU's architecture, gpu tests on, benchmarks
#      and fuzzers off, MPI when found) and build only parplan and the gpu test executables;
#   3. `ctest -L gpu`, `parplan profile --backend cuda --quick` (and over all GPUs under mpirun
#      when there are several and MPI was found), a one-GPU `parplan run` of
#      tools/examples/gpu_check_job.json and `parplan simulate` of it on the measured profile;
#   4. OUTDIR/gpu_check_summary.json (tools/gpu_check_summary.py): the steps, the gpu tests
#      passed/failed, GEMM TFLOP/s against peak, NCCL busbw, predicted against measured step
#      time and the executor's MFU.
# On a lent machine: here `tools/gpu_check_prepare.sh` (writes gpu_deps/, git-ignored), then
# run `tools/gpu_check.sh OUT` there with gpu_deps carried. Logs, test results and JSON go to
# OUTDIR; exit status 0 when every step passed, 1 when one failed, 2 when preflight failed.
# Sized for under 8 minutes on one H200 with 16 cores; on a lent one (2026-12-04) the whole
# check took 92 s (configure 6 s, build 56 s, gpu tests 11 s, profile 3 s, run 16 s, before
# the profile timed the executor's own kernels too); each step has a timeout. PARPLAN_GPU_BUILD overrides the build
# folder (default build-gpu), PARPLAN_DEPS_DIR the deps folder (default gpu_deps),
# PARPLAN_NCCL_VENVS the venvs searched for pip's NCCL (and python3), PARPLAN_GPU_CHECK_UNTIL
# (configure or build) stops after that step for a dry run. Tested (no GPU) by
# tests/tools/gpu_check_test.py.
set -uo pipefail

out=${1:?usage: tools/gpu_check.sh OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PARPLAN_GPU_BUILD:-$root/build-gpu}
jobs=$(nproc)
start=$(date +%s)
status=0
# A rerun into the same OUTDIR must not summarise the last run's files.
rm -f "$out"/gpu_tests.xml "$out"/profile_cuda_quick*.json "$out"/run_one_gpu*.json \
  "$out"/simulate_one_gpu.json "$out"/gpu_check_summary.json "$out"/gpu_check.log
: >"$out/steps.tsv"
log() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$out/gpu_check.log"; }
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$out/steps.tsv"; }
# python3 on PATH, else a venv's (PyTorch's on a lent machine): the summary and CMake use it.
python=$(command -v python3 || true)
for venv in ${PARPLAN_NCCL_VENVS:-/opt/torch/.venv /opt/*/.venv}; do
  [ -z "$python" ] && [ -x "$venv/bin/python3" ] && python=$venv/bin/python3
done
summary() {
  if [ -z "$python" ]; then
    log "summary: not written (no python3)"
  elif ! "$python" "$root/tools/gpu_check_summary.py" "$out" >>"$out/gpu_check.log" 2>&1; then
    log "summary: FAILED (see gpu_check.log)"
  fi
}
step() {  # step NAME SECONDS STDOUT_FILE COMMAND...: runs under a timeout, stderr to NAME.err.txt
  local name=$1 seconds=$2 file=$3 t0 rc
  shift 3
  log "$name: $*"
  t0=$(date +%s)
  timeout "$seconds" "$@" >"$out/$file" 2>"$out/$name.err.txt"
  rc=$?
  if [ "$rc" -eq 0 ]; then
    log "$name: ok"
    record "$name" ok $(($(date +%s) - t0)) "$file"
  elif [ "$rc" -eq 124 ]; then
    log "$name: TIMEOUT after $seconds s (see $file, $name.err.txt)"
    record "$name" timeout $(($(date +%s) - t0)) "$file"
    status=1
  else
    log "$name: FAILED (exit $rc, see $file, $name.err.txt)"
    record "$name" failed $(($(date +%s) - t0)) "$file"
    status=1
  fi
  return "$rc"
}
skip() { log "$1: skipped ($2)"; record "$1" skipped 0 "$2"; }
stop_if_until() {  # PARPLAN_GPU_CHECK_UNTIL=configure|build: a dry run that stops after it
  if [ "${PARPLAN_GPU_CHECK_UNTIL:-}" = "$1" ]; then
    summary
    log "stopped after $1 (PARPLAN_GPU_CHECK_UNTIL), status $status"
    exit $status
  fi
}

# --- 1. preflight ------------------------------------------------------------------------------
missing=()
nvcc=$(command -v nvcc || true)
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
[ -z "$nvcc" ] && missing+=("no nvcc (not on PATH nor /usr/local/cuda/bin/nvcc)")
for tool in cmake ninja; do
  command -v "$tool" >/dev/null || missing+=("no $tool on PATH")
done
[ -z "$python" ] && missing+=("no python3 on PATH nor in \$PARPLAN_NCCL_VENVS/bin")
# A system NCCL is one of these include folders (the tests override the list).
nccl_system=${PARPLAN_NCCL_SYSTEM_INCLUDES:-/usr/include /usr/local/cuda/include}
nccl_looked="\$NCCL_HOME"
system_nccl=""
for dir in $nccl_system; do
  nccl_looked+=", $dir"
  [ -f "$dir/nccl.h" ] && system_nccl=$dir
done
if [ -z "${NCCL_HOME:-}" ] && [ -z "$system_nccl" ]; then
  # pip's nvidia-nccl-cu* wheel (PyTorch's venv): include/nccl.h and lib/libnccl.so.2.
  for venv in ${PARPLAN_NCCL_VENVS:-/opt/torch/.venv /opt/*/.venv /usr/local /usr}; do
    for dir in "$venv"/lib/python3*/site-packages/nvidia/nccl; do
      nccl_looked+=", $dir"
      if [ -f "$dir/include/nccl.h" ] && [ -z "${NCCL_HOME:-}" ]; then
        export NCCL_HOME=$dir
      fi
    done
  done
  [ -z "${NCCL_HOME:-}" ] && missing+=("no NCCL: looked in $nccl_looked")
fi
[ -z "${NCCL_HOME:-}" ] && [ -n "$system_nccl" ] && log "preflight: NCCL at $system_nccl (system)"
if [ -n "${NCCL_HOME:-}" ]; then
  log "preflight: NCCL at $NCCL_HOME"
  [ -f "$NCCL_HOME/include/nccl.h" ] ||
    missing+=("no NCCL: NCCL_HOME=$NCCL_HOME has no include/nccl.h")
  export LD_LIBRARY_PATH="$NCCL_HOME/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
deps=${PARPLAN_DEPS_DIR:-$root/gpu_deps}
deps_flag=()
if [ -d "$deps/include" ]; then
  deps_flag=(-DPARPLAN_DEPS_DIR="$deps")
else
  prepare="run tools/gpu_check_prepare.sh on a machine with the Debian packages, carry gpu_deps/"
  for h in eigen3/Eigen/Core nlohmann/json.hpp CLI/CLI.hpp; do
    [ -f "/usr/include/$h" ] || missing+=("no /usr/include/$h and no $deps/include: $prepare")
  done
  [ -f /usr/src/googletest/CMakeLists.txt ] || [ -f /usr/include/gtest/gtest.h ] ||
    missing+=("no GoogleTest and no $deps/include: $prepare")
fi
nvidia-smi >"$out/nvidia-smi.txt" 2>&1 ||
  missing+=("nvidia-smi failed: no GPU or driver (see nvidia-smi.txt)")
if [ ${#missing[@]} -gt 0 ]; then
  for m in "${missing[@]}"; do log "preflight: $m"; done
  record preflight failed $(($(date +%s) - start)) gpu_check.log
  summary
  exit 2
fi
record preflight ok $(($(date +%s) - start)) gpu_check.log
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')
gpus=$(nvidia-smi --list-gpus 2>/dev/null | wc -l)
arch=${cc:-90}
log "GPUs: $gpus, compute capability $arch, $jobs CPU cores, nvcc $nvcc," \
  "NCCL ${NCCL_HOME:-system}, deps ${deps_flag[*]:-system}"

# --- 2. configure and build --------------------------------------------------------------------
# Warnings are CI's gate; here they must not stop a GPU check (-DPARPLAN_WERROR=OFF).
launcher=()
command -v ccache >/dev/null &&
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
if ! step configure 300 configure.txt cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DPARPLAN_ENABLE_GPU_TESTS=ON -DPARPLAN_WERROR=OFF -DPARPLAN_ENABLE_BENCHMARKS=OFF \
  -DPARPLAN_ENABLE_FUZZERS=OFF -DPython3_EXECUTABLE="$python" \
  ${NCCL_HOME:+-DNCCL_HOME="$NCCL_HOME"} "${deps_flag[@]}" \
  "${launcher[@]}"; then
  summary
  exit 1
fi
for feature in CUDA NCCL; do
  if ! grep -q "\[x\] $feature" "$out/configure.txt"; then
    log "configure: found no $feature (see configure.txt)"
    record "configure_$feature" failed 0 configure.txt
    summary
    exit 1
  fi
done
have_mpi=0
grep -q '\[x\] MPI' "$out/configure.txt" && have_mpi=1
log "MPI: $([ $have_mpi = 1 ] && echo found || echo 'not found; the one-GPU checks need none')"
stop_if_until configure
# Only what the check runs: parplan and the gpu test executables (tests/gpu/CMakeLists.txt).
targets=(parplan)
for t in executor_cuda_ops_gpu_test profiler_gpu_test; do
  ninja -C "$build" -t targets all 2>/dev/null | grep -q "^$t:" && targets+=("$t")
done
if ! step build 360 build.txt cmake --build "$build" -j "$jobs" --target "${targets[@]}"; then
  summary
  exit 1
fi
stop_if_until build
parplan="$build/tools/parplan"

# --- 3. the checks -----------------------------------------------------------------------------
step gpu_tests 300 gpu_tests.txt ctest --test-dir "$build" -L gpu --output-on-failure \
  --output-junit "$out/gpu_tests.xml" --timeout 240

step profile_one_gpu 240 profile_cuda_quick.txt "$parplan" profile --backend cuda \
  --quick --out "$out/profile_cuda_quick.json"
if [ "$gpus" -gt 1 ] && [ $have_mpi = 1 ] && command -v mpirun >/dev/null; then
  step profile_all_gpus 300 "profile_cuda_quick_np$gpus.txt" mpirun -np "$gpus" \
    --allow-run-as-root "$parplan" profile --backend cuda --quick \
    --out "$out/profile_cuda_quick_np$gpus.json"
elif [ "$gpus" -gt 1 ]; then
  skip profile_all_gpus "$gpus GPUs but no MPI: the NCCL collectives need mpirun"
fi

job="$root/tools/examples/gpu_check_job.json"
if [ -f "$job" ]; then
  step run_one_gpu 180 run_one_gpu.json "$parplan" run --job "$job" --backend cuda --steps 5 \
    --json --trace "$out/run_one_gpu_trace.json"
  if [ -f "$out/profile_cuda_quick.json" ]; then
    step simulate_one_gpu 60 simulate_one_gpu.json "$parplan" simulate --job "$job" \
      --profile "$out/profile_cuda_quick.json" --json
  else
    skip simulate_one_gpu "no profile_cuda_quick.json"
  fi
else
  skip run_one_gpu "no $job"
fi

summary
log "done, status $status; summary in $out/gpu_check_summary.json"
exit $status
