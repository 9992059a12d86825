#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the release preset and runs bench/alloc_bench the way
# docs/performance.md reports it: 5 repetitions, aggregates only (the
# median is the figure), repetitions randomly interleaved. The JSON report
# goes to the file given as first argument; further arguments go to the
# benchmark (e.g. --benchmark_filter=BM_Fill12GiB).
#
# The machine is shared: run it while no build or other benchmark runs.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 OUT.json [benchmark flags...]" >&2
  exit 2
fi
out=$(realpath -m "$1")
shift
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release -j2 --target alloc_bench
./build/release/alloc_bench \
  --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true \
  --benchmark_enable_random_interleaving=true \
  --benchmark_out="$out" --benchmark_out_format=json \
  "$@"
echo "run_alloc_bench: JSON report in $out"
