#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two `swaplab` builds' `kernel run` record loops side by side: for each
# trace, RUNS runs of each build alternated (A, B, A, B, ...), the median
# of `records_seconds` (the record loop, as bench/kernel_run_speed.sh) of
# each, and B / A. Each run holds /tmp/swaplab-swap.lock, the lock the
# project's scripts take around host swapping.
#
# usage: sudo bench/kernel_run_ab.sh SWAPLAB_A SWAPLAB_B [TRACE...]
#   RUNS=5 DEVICE=file; TRACE: a name under tests/kernel/traces (frag) or a path
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 SWAPLAB_A SWAPLAB_B [TRACE...]" >&2; exit 2; }
a=$(realpath "$1") b=$(realpath "$2")
shift 2
runs=${RUNS:-5}
device=${DEVICE:-file}
[ "$(id -u)" -eq 0 ] || { echo "kernel_run_ab: needs root (swapon)" >&2; exit 2; }
traces=("$@")
[ ${#traces[@]} -gt 0 ] || traces=(tests/kernel/traces/*.trace)
# records_seconds of one run of build $1 on trace $2.
seconds() {
  flock /tmp/swaplab-swap.lock "$1" kernel run "$2" --device "$device" --json --progress never |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["records_seconds"])'
}
printf '%-16s %10s %10s %8s\n' trace "A s" "B s" "B / A"
for t in "${traces[@]}"; do
  [ -f "$t" ] || t=tests/kernel/traces/$t.trace
  sa=() sb=()
  for _ in $(seq "$runs"); do
    sa+=("$(seconds "$a" "$t")")
    sb+=("$(seconds "$b" "$t")")
  done
  python3 - "$(basename "$t" .trace)" "${sa[*]}" "${sb[*]}" <<'PY'
import statistics, sys
a = statistics.median(float(x) for x in sys.argv[2].split())
b = statistics.median(float(x) for x in sys.argv[3].split())
print(f"{sys.argv[1]:<16} {a:10.3f} {b:10.3f} {b / a:8.2f}")
PY
done
