#!/usr/bin/env bash
# Quick start: installs what is missing, builds parplan (Release) and runs the built-in
# default job: a prediction of the job's plan, a search for the best plans, and an HTML
# report with charts comparing them (report/report.html).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPARPLAN_ENABLE_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target parplan
job=tools/examples/llama3.1-70b-dgx-h100.json
echo
echo "== parplan simulate --job $job"
build/tools/parplan simulate --job "$job"
if build/tools/parplan plan --help >/dev/null 2>&1; then
  echo
  echo "== parplan plan --job $job --top 5"
  build/tools/parplan plan --job "$job" --top 5
fi
if build/tools/parplan compare --help >/dev/null 2>&1; then
  echo
  echo "== parplan compare --job $job --out report"
  build/tools/parplan compare --job "$job" --out report
  echo "open report/report.html in a browser for the charts"
fi
