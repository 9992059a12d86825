#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `swaplab vm run`'s speed against the guest kernel's own cost of the same
# swap-outs, under the accelerator the machine has (TCG here). Per trace
# (default: every tests/kernel/traces/*.trace), RUNS runs (default 5) of
# `vm run TRACE --floor --json`: the guest's record loop (`records_seconds`
# of its kernel run) and its floor (`floor_seconds`: as many pages as the
# trace swapped out, faulted in and paged out by one MADV_PAGEOUT in the
# same guest, `kernel run --floor`) and its per-folio floor
# (`floor_calls_seconds`: the same pages as as many mappings as the run
# had folios, each its own VMA, paged out in as many MADV_PAGEOUT calls as
# the run made); medians, records per second, the ratios record loop /
# floor and record loop / per-folio floor, and the command's wall time
# (boot included).
# A trace the guest kernel cannot run (mTHP sizes 6.1 lacks) is reported
# and skipped.
#
# usage: bench/vm_run_speed.sh [TRACE...]
#   SWAPLAB=build/release/swaplab RUNS=5 KERNEL=6.12 DEVICE=loop-ssd
set -euo pipefail
cd "$(dirname "$0")/.."
swaplab=$(realpath "${SWAPLAB:-build/release/swaplab}")
runs=${RUNS:-5}
kernel=${KERNEL:-6.12}
device=${DEVICE:-loop-ssd}
traces=("$@")
[ ${#traces[@]} -gt 0 ] || traces=(tests/kernel/traces/*.trace)
tmp=$(mktemp -d /tmp/vm_run_speed.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM HUP

printf '%-16s %8s %8s %8s %9s %10s %9s %6s %9s %6s %8s\n' trace records pages calls "run s" \
  "records/s" "floor s" ratio "calls s" ratio "wall s"
for t in "${traces[@]}"; do
  : >"$tmp/runs.txt"
  for _ in $(seq "$runs"); do
    t0=$(date +%s.%N)
    if ! "$swaplab" vm run "$t" --kernel "$kernel" --device "$device" --floor --json \
        >"$tmp/r.json" 2>"$tmp/r.err"; then
      echo "$(basename "$t"): vm run failed: $(tail -1 "$tmp/r.err")"
      continue 2
    fi
    wall=$(echo "$(date +%s.%N) - $t0" | bc -l)
    python3 -c 'import json, sys
k = json.load(open(sys.argv[1]))["kernel_run"]
print(k["records_seconds"], k["floor_seconds"], k["records"], k["pages_swapped"], sys.argv[2],
      k["floor_calls"], k["floor_calls_seconds"])' \
      "$tmp/r.json" "$wall" >>"$tmp/runs.txt"
  done
  python3 - "$(basename "$t")" "$tmp/runs.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[2]) if l.strip()]
run = statistics.median(float(r[0]) for r in rows)
floor = statistics.median(float(r[1]) for r in rows)
wall = statistics.median(float(r[4]) for r in rows)
calls_s = statistics.median(float(r[6]) for r in rows)
records, pages, calls = int(rows[0][2]), int(rows[0][3]), int(rows[0][5])
ratio = run / floor if floor > 0 else float("nan")
calls_ratio = run / calls_s if calls_s > 0 else float("nan")
print(f"{sys.argv[1]:<16} {records:8d} {pages:8d} {calls:8d} {run:9.3f} {records / run:10.0f} "
      f"{floor:9.4f} {ratio:6.1f} {calls_s:9.4f} {calls_ratio:6.1f} {wall:8.1f}")
PY
done
