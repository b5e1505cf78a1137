#!/usr/bin/env bash
# Installs the Debian packages parplan builds with (only what is missing). Needs root or sudo.
# chromium (with a font) renders report.html in tests/tools/report_html_test.cpp.
set -euo pipefail
# clang and libclang-rt-14-dev (the libFuzzer and sanitizer runtimes) build the fuzzers;
# python3 runs the source checks (tools/check_layering.py, tools/check_function_length.py).
packages=(cmake g++ make clang-format python3 nlohmann-json3-dev libeigen3-dev libcli11-dev libgtest-dev
           libbenchmark-dev libopenmpi-dev openmpi-bin chromium fonts-dejavu-core clang libclang-rt-14-dev "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all packages present"
  exit 0
fi
echo "deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
