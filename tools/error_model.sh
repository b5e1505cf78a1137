#!/usr/bin/env bash
# Writes planner/data/error_model.json, the validation error model (docs/intervals.md): the log
# residuals log(predicted / reference) of every public validation run
# (tests/data/published_runs.json and tests/data/benchmark_tables/*.json) with the features the
# intervals and extrapolations compare jobs by, and the intervals' leave-one-family-out
# coverage. The figures are the binary's own; nothing is typed. The binary embeds the file at
# configure time: rebuild after writing it. The ctest ErrorModelFile.IsUpToDate runs this script
# into a temporary file and fails when the committed file differs; after a change to the cost
# model, the presets or the data, run `tools/error_model.sh`, rebuild and commit the file.
#
# Usage: tools/error_model.sh [--parplan BINARY] [--out FILE]
#   defaults: build/tools/parplan, planner/data/error_model.json (relative to the repository)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
parplan="$root/build/tools/parplan"
out="$root/planner/data/error_model.json"
while [ $# -gt 0 ]; do
  case "$1" in
    --parplan) parplan=${2:?--parplan needs a path}; shift 2 ;;
    --out) out=${2:?--out needs a path}; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$parplan" ] || { echo "error: $parplan: no parplan binary (build it, or give --parplan)" >&2; exit 1; }
cd "$root"

args=(--published tests/data/published_runs.json)
while IFS= read -r f; do args+=(--published "$f"); done < <(LC_ALL=C ls tests/data/benchmark_tables/*.json)
"$parplan" validate "${args[@]}" --write-error-model "$out"
