#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The merge of N point files (docs/sweeps.md, "Speed"): a sweep of N seeds of
# tests/sweep/data/holes.json prepared, one point run for real, its result
# copied to every other point (ids and axes fixed), then
# `swaplab sweep merge DIR` timed 5 times (median printed).
# Usage: merge_bench.sh SWAPLAB SOURCE_DIR [N=10000]
set -euo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
SRC=$2 N=${3:-10000}
cat >"$W/spec.json" <<JSON
{"name": "merge bench", "base": "$SRC/tests/sweep/data/holes.json",
 "axes": [{"name": "hole", "path": "/aging/0/hole", "values": ["16K", "64K"]},
          {"name": "seed", "seed": true, "range": {"from": 1, "to": $((N / 2)), "step": 1}}],
 "derived": [{"name": "bios gain", "ratio": ["rfc/bios", "base/bios"]}],
 "heatmaps": [{"name": "bios", "x": "hole", "y": "hole", "value": "bios gain"}]}
JSON
"$S" sweep "$W/spec.json" --out "$W/d" --prepare 2>/dev/null
first=$(head -1 "$W/d/jobs.txt")
"$S" sweep point "$W/d" "$first"
python3 - "$W/d" "$first" <<'PY'
import json, os, sys
d, first = sys.argv[1:]
r = json.load(open(f"{d}/points/{first}.json"))
for p in json.load(open(f"{d}/sweep.json"))["points"]:
    r["id"], r["axes"] = p["id"], p["axes"]
    with open(f"{d}/points/{p['id']}.json", "w") as f:
        json.dump(r, f, indent=1)
PY
ts=()
for _ in 1 2 3 4 5; do
  t0=$(date +%s.%N)
  "$S" sweep merge "$W/d" >/dev/null
  ts+=("$(echo "$(date +%s.%N) - $t0" | bc)")
done
echo "merge of $N point files: median $(printf '%s\n' "${ts[@]}" | sort -n | sed -n 3p) s (runs: ${ts[*]}); $(wc -l <"$W/d/merged.csv") table lines"
