#!/bin/bash
# SPDX-License-Identifier: MIT
# Agreement of the model (linux-6.18) with the running kernel, for every
# calibration trace on every device kind (root). Each trace runs RUNS times;
# the table shows the first run and whether the kernel's placements were
# byte-identical across runs.
#   tests/kernel/agreement.sh [BUILD_DIR] [RUNS] [TRACES]   (docs/fidelity.md)
set -euo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
BUILD=${1:-build/release}
RUNS=${2:-3}
TRACES=${3:-"seq holes shuffled mthp64 twodev frag full mixed full0 mixed0 latecpu"}
DIR=$(dirname "$0")
echo "| trace | device | placements agreeing | fallback kernel / model | kept in memory kernel / model | kernel on its own | interference: points / foreign slots / runs | identical over $RUNS runs |"
echo "|---|---|---|---|---|---|---|---|"
for t in $TRACES; do
  for d in file loop loop-ssd zram; do
    i=1
    while [ "$i" -le "$RUNS" ]; do
      "$BUILD/swaplab" kernel run "$DIR/traces/$t.trace" --device "$d" --out "$W/$t-$d-$i.trace" --json > "$W/$t-$d-$i.json"
      i=$((i + 1))
    done
    same=yes
    i=2
    # The kernel's placements of the trace's own pages: comments and the
    # `foreign` records of other processes' slots left out.
    own() { grep -v -e '^#' -e '^foreign' "$1"; }
    while [ "$i" -le "$RUNS" ]; do
      if ! diff -q <(own "$W/$t-$d-1.trace") <(own "$W/$t-$d-$i.trace") > /dev/null 2>&1; then same=no; fi
      i=$((i + 1))
    done
    python3 - "$W/$t-$d-1.json" "$t" "$d" "$same" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
fb = ", ".join(f"{k}: {100*v['kernel_rate']:.1f}% / {100*v['model_rate']:.1f}%" for k, v in j["fallback"].items()) or "—"
pct = 100.0 * j["agree"] / j["expected"] if j["expected"] else 100.0
print(f"| {sys.argv[2]} | {sys.argv[3]} | {j['agree']}/{j['expected']} ({pct:.2f}%) | {fb} | "
      f"{j['pages_not_swapped']} / {j['model_pages_unplaced']} | {j['kernel_on_its_own_total']} | "
      f"{j['interference_total']} / {j['foreign_slots']} / {j['runs']} | {sys.argv[4]} |")
PY
  done
done
