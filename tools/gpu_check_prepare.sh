#!/usr/bin/env bash
# tools/gpu_check_prepare.sh [DIR]: copies the header-only dependencies (Eigen, nlohmann/json,
# CLI11, with their CMake package files) and the GoogleTest sources from this machine's Debian
# packages into DIR (default gpu_deps/ in the repository root, git-ignored), for a bare GPU
# machine that has CUDA but none of those packages and no network. Run it here, carry DIR to
# that machine with the working tree, and configure there with -DPARPLAN_DEPS_DIR=DIR
# (tools/gpu_check.sh does so when DIR exists). Layout (the packages' CMake files find their
# headers relative to themselves, three folders up):
#   DIR/include/{eigen3,nlohmann,CLI}   DIR/share/eigen3/cmake
#   DIR/share/cmake/{nlohmann_json,CLI11}   DIR/src/googletest
# Eigen's unsupported/ modules are left out (parplan includes none). About 12 MiB; the tree
# that travels to a lent machine may hold 64 MiB. Tested by tests/tools/gpu_check_test.py.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/gpu_deps}

need() {  # need PATH WHAT: fails with the package to install when PATH is missing
  if [ ! -e "$1" ]; then
    echo "error: gpu_check_prepare: no $1 ($2); install it (tools/deps.sh) and rerun" >&2
    exit 1
  fi
}
first_existing() {  # first_existing PATH...: the first that exists, or nothing
  local p
  for p in "$@"; do
    if [ -e "$p" ]; then
      echo "$p"
      return
    fi
  done
}

eigen_cmake=$(first_existing /usr/share/eigen3/cmake /usr/lib/cmake/eigen3)
json_cmake=$(first_existing /usr/share/cmake/nlohmann_json /usr/lib/cmake/nlohmann_json)
cli_cmake=$(first_existing /usr/share/cmake/CLI11 /usr/lib/cmake/CLI11)
need /usr/include/eigen3/Eigen "Debian package libeigen3-dev"
need "${eigen_cmake:-/usr/share/eigen3/cmake}" "libeigen3-dev's CMake files"
need /usr/include/nlohmann "Debian package nlohmann-json3-dev"
need "${json_cmake:-/usr/share/cmake/nlohmann_json}" "nlohmann-json3-dev's CMake files"
need /usr/include/CLI "Debian package libcli11-dev"
need "${cli_cmake:-/usr/share/cmake/CLI11}" "libcli11-dev's CMake files"
need /usr/src/googletest/CMakeLists.txt "Debian package googletest (sources)"

rm -rf "$dir"
mkdir -p "$dir/include/eigen3" "$dir/share/eigen3" "$dir/share/cmake" "$dir/src"
cp -r /usr/include/eigen3/Eigen /usr/include/eigen3/signature_of_eigen3_matrix_library \
  "$dir/include/eigen3/"
cp -r /usr/include/nlohmann /usr/include/CLI "$dir/include/"
cp -r "$eigen_cmake" "$dir/share/eigen3/cmake"
cp -r "$json_cmake" "$dir/share/cmake/nlohmann_json"
cp -r "$cli_cmake" "$dir/share/cmake/CLI11"
cp -r /usr/src/googletest "$dir/src/googletest"
size_mib=$(du -sm "$dir" | cut -f1)
echo "gpu_check_prepare: wrote $dir ($size_mib MiB); configure with -DPARPLAN_DEPS_DIR=$dir"
