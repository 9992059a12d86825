#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `swaplab kernel run`'s speed against the kernel's own cost of the same
# swap-outs. Per trace (default: every tests/kernel/traces/*.trace), RUNS
# runs (default 5) of `kernel run TRACE --device file --json`: records per
# second over the record loop (`records_seconds`: no setup, no cleanup);
# then the floor: the same number of pages swapped out by one
# MADV_PAGEOUT (bench/pageout_floor.c, faults + page-out) on a swap file
# of the trace's size, RUNS times; and the per-folio floor: the same
# pages as as many mappings as the run had folios (each its own VMA), in
# as many MADV_PAGEOUT calls as the run made (`pageout_calls`: one per
# folio, or per run of order-0 folios; `pageout_floor PAGES FOLIOS
# CALLS`: the kernel's own work when it is shown the folios as the run
# shows them), RUNS times. Prints medians and the ratios run / floor
# (issue 32's goal: within 3x) and run / per-folio floor.
#
# usage: sudo bench/kernel_run_speed.sh [TRACE...]
#   SWAPLAB=build/release/swaplab RUNS=5 DEVICE=file
# Root (swapon). The machine is shared: run it while nothing else runs.
set -euo pipefail
cd "$(dirname "$0")/.."
swaplab=$(realpath "${SWAPLAB:-build/release/swaplab}")
runs=${RUNS:-5}
device=${DEVICE:-file}
[ "$(id -u)" -eq 0 ] || { echo "kernel_run_speed: needs root (swapon)" >&2; exit 2; }
traces=("$@")
[ ${#traces[@]} -gt 0 ] || traces=(tests/kernel/traces/*.trace)
tmp=$(mktemp -d /tmp/kernel_run_speed.XXXXXX)
swapfile=""
cleanup() {
  [ -n "$swapfile" ] && { swapoff "$swapfile" 2>/dev/null || true; rm -f "$swapfile"; }
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM HUP
cc -O2 -Wall -o "$tmp/floor" bench/pageout_floor.c

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

printf '%-16s %8s %8s %8s %8s %9s %10s %9s %6s %9s %6s\n' trace records pages folios calls "run s" \
  "records/s" "floor s" ratio "calls s" ratio
for t in "${traces[@]}"; do
  : >"$tmp/run.txt"
  for _ in $(seq "$runs"); do
    "$swaplab" kernel run "$t" --device "$device" --json --progress never >"$tmp/r.json"
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); k=j.get("kernel", j)
print(k["records_seconds"], k["records"], k["pages_swapped"], k["pageout_calls"], k["folios"])' "$tmp/r.json" >>"$tmp/run.txt"
  done
  run_s=$(cut -d' ' -f1 "$tmp/run.txt" | median)
  records=$(head -1 "$tmp/run.txt" | cut -d' ' -f2)
  pages=$(head -1 "$tmp/run.txt" | cut -d' ' -f3)
  calls=$(head -1 "$tmp/run.txt" | cut -d' ' -f4)
  folios=$(head -1 "$tmp/run.txt" | cut -d' ' -f5)
  folios=$(( folios > pages ? pages : (folios < 1 ? 1 : folios) ))
  calls=$(( calls > folios ? folios : (calls < 1 ? 1 : calls) ))
  # The floor's area: the trace's first swapon size (pages=), at least the
  # pages swapped, in a swap file made with dd as the run's is.
  area=$(awk '$1 == "swapon" { for (i = 2; i <= NF; i++) if ($i ~ /^pages=/) { sub("pages=", "", $i); print $i; exit } }' "$t")
  area=$(( ${area:-0} > pages + 1 ? ${area:-0} : pages + 1 ))
  swapfile=/var/tmp/kernel_run_speed.$$.swap
  dd if=/dev/zero of="$swapfile" bs=4096 count=$((area + 1)) status=none
  chmod 600 "$swapfile"
  mkswap "$swapfile" >/dev/null
  swapon -p 32767 "$swapfile"
  : >"$tmp/floor.txt"
  : >"$tmp/calls.txt"
  for _ in $(seq "$runs"); do
    "$tmp/floor" "$pages" | awk '{print $2 + $4, $6}' >>"$tmp/floor.txt"
    "$tmp/floor" "$pages" "$folios" "$calls" | awk '{print $2 + $4, $6}' >>"$tmp/calls.txt"
  done
  swapoff "$swapfile"
  rm -f "$swapfile"
  swapfile=""
  floor_s=$(cut -d' ' -f1 "$tmp/floor.txt" | median)
  calls_s=$(cut -d' ' -f1 "$tmp/calls.txt" | median)
  printf '%-16s %8s %8s %8s %8s %9.3f %10.0f %9.4f %6.1f %9.4f %6.1f\n' "$(basename "$t")" "$records" \
    "$pages" "$folios" "$calls" "$run_s" "$(echo "$records / $run_s" | bc -l)" "$floor_s" \
    "$(echo "$run_s / $floor_s" | bc -l)" "$calls_s" "$(echo "$run_s / $calls_s" | bc -l)"
done
