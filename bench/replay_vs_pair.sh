#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `swaplab replay`'s cost per record against the allocator's own order-0
# allocate + free pair, measured in one run of bench/alloc_bench:
# BM_ReplayPerRecord on the benchmark's generated trace and on each
# tests/kernel/traces/*.trace, and BM_Order0PairHeld, repetitions randomly
# interleaved. Prints, per trace, the median ns per record, the median ns
# per pair and their ratio (the issue's goal: at most 2), and the replay's
# two halves in the same run: the trace reader alone (BM_ReplayReader) and
# the runner with the allocator on records already in memory
# (BM_ReplayRunner), each per record and as a multiple of the pair; then
# the same trace in the binary encoding (`trace convert`, docs/formats.md
# §5.1): the whole replay and its reader; and the replay's floor, the
# allocator calls alone (BM_ReplayCalls: the calls the runner made,
# recorded on a call tape and made again on a fresh system, no reader, no
# runner), with the whole replay of each encoding as a multiple of it
# (÷floor: text, bin÷floor: binary; issue 32's goals: ≤ 2 and ≤ 1.5).
#
# usage: bench/replay_vs_pair.sh [REPETITIONS (default 5)] [OUT.json]
# The machine is shared: run it while no build or other benchmark runs.
set -euo pipefail
reps=${1:-5}
out=$(realpath -m "${2:-/tmp/replay_vs_pair.json}")
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release -j2 --target alloc_bench >/dev/null
traces=$(ls "$PWD"/tests/kernel/traces/*.trace | tr '\n' ':')
SWAPLAB_REPLAY_TRACES=$traces ./build/release/alloc_bench \
  --benchmark_filter='BM_Order0PairHeld|BM_Replay(PerRecord|Reader|Runner|Calls)/' \
  --benchmark_repetitions="$reps" \
  --benchmark_report_aggregates_only=true \
  --benchmark_enable_random_interleaving=true \
  --benchmark_out="$out" --benchmark_out_format=json >/dev/null
python3 - "$out" <<'EOF'
import json, sys
rep = json.load(open(sys.argv[1]))
scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
med = {}
for b in rep["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    ns = b["cpu_time"] * scale[b["time_unit"]]
    med[b["run_name"]] = (ns, b.get("records"))
pair = [v[0] for k, v in med.items() if k.startswith("BM_Order0PairHeld")][0]
print(f"BM_Order0PairHeld (median CPU time): {pair:.1f} ns per pair")
print(f"{'trace':<20} {'records':>8} {'ns/record':>10} {'ratio':>6} "
      f"{'reader ns':>10} {'ratio':>6} {'runner ns':>10} {'ratio':>6} "
      f"{'binary ns':>10} {'ratio':>6} {'bin reader':>10} {'floor ns':>9} {'÷floor':>7} {'bin÷floor':>9}")
def per(name):
    v = med.get(name)
    return v[0] / v[1] if v and v[1] else None
for k, (ns, records) in sorted(med.items()):
    if not k.startswith("BM_ReplayPerRecord/") or k.endswith(".bin"):
        continue
    name = k.split('/', 1)[1]
    whole = ns / records
    row = f"{name:<20} {int(records):>8} {whole:>10.1f} {whole / pair:>6.2f}"
    for half in ("BM_ReplayReader/" + name, "BM_ReplayRunner/" + name,
                 "BM_ReplayPerRecord/" + name + ".bin"):
        h = per(half)
        row += f" {h:>10.1f} {h / pair:>6.2f}" if h else f" {'-':>10} {'-':>6}"
    bin_reader, floor, binary = (per("BM_ReplayReader/" + name + ".bin"),
                                 per("BM_ReplayCalls/" + name),
                                 per("BM_ReplayPerRecord/" + name + ".bin"))
    row += f" {bin_reader:>10.1f}" if bin_reader else f" {'-':>10}"
    row += f" {floor:>9.1f} {whole / floor:>7.2f}" if floor else f" {'-':>9} {'-':>7}"
    row += f" {binary / floor:>9.2f}" if floor and binary else f" {'-':>9}"
    print(row)
print(f"(JSON report: {sys.argv[1]})")
EOF
