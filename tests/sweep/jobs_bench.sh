#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -j 2 against -j 1 (docs/sweeps.md, "Speed"): the same sweep run with each,
# interleaved, PAIRS times, each in a fresh directory; prints every pair's
# seconds and ratio and the median ratio.
# Usage: jobs_bench.sh SWAPLAB SPEC [SCALE=0.25] [PAIRS=5]
set -euo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
SPEC=$2 SCALE=${3:-0.25} PAIRS=${4:-5}
ratios=()
for k in $(seq "$PAIRS"); do
  declare -A t
  for j in 1 2; do
    rm -rf "$W/d"
    t0=$(date +%s.%N)
    "$S" sweep "$SPEC" --out "$W/d" --scale "$SCALE" -j "$j" 2>/dev/null
    t[$j]=$(echo "$(date +%s.%N) - $t0" | bc)
  done
  r=$(echo "scale=3; ${t[2]} / ${t[1]}" | bc)
  ratios+=("$r")
  echo "pair $k: -j 1 ${t[1]} s, -j 2 ${t[2]} s, ratio $r, load $(cut -d' ' -f1 /proc/loadavg)"
done
echo "median ratio -j 2 / -j 1: $(printf '%s\n' "${ratios[@]}" | sort -n | sed -n "$(((PAIRS + 1) / 2))p")"
