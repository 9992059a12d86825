#!/bin/bash
# SPDX-License-Identifier: MIT
# Agreement of the model with a guest kernel, for every calibration trace
# on every device kind, through `swaplab vm run` (qemu; the guest kernel's
# own preset unless POLICY is given). Prints a markdown table
# (docs/fidelity.md, "Kernel versions verified").
#   tests/vm/agreement_vm.sh [BUILD_DIR] [KERNEL] [TRACES] [POLICY]
#   KERNEL: a series of the cache (6.12, 6.1); TRACES: names under tests/kernel/traces
set -euo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
BUILD=${1:-build/release}
KERNEL=${2:-6.12}
TRACES=${3:-"seq holes shuffled mthp64 twodev frag full mixed full0 mixed0 latecpu"}
POLICY=${4:-}
DIR=$(cd "$(dirname "$0")/../kernel" && pwd)
echo "| trace | device | placements agreeing | fallback kernel / model | kept in memory kernel / model | kernel on its own | guest s |"
echo "|---|---|---|---|---|---|---|"
for t in $TRACES; do
  # 6.1 makes no folio between one page and a PMD (no mTHP): such traces are
  # refused there; full0 and mixed0 are their order-0 counterparts.
  if [ "$KERNEL" = 6.1 ] && grep -Eq '^alloc .*order=([1-8])( |$)' "$DIR/traces/$t.trace"; then
    echo "| $t | every kind | n/a: 6.1 has no mTHP swap-out (see full0, mixed0) | | | | |"
    continue
  fi
  for d in file loop loop-ssd zram; do
    if ! "$BUILD/swaplab" vm run "$DIR/traces/$t.trace" --kernel "$KERNEL" --device "$d" \
        ${POLICY:+--policy "$POLICY"} --timeout 900 --json >"$W/r.json" 2>"$W/err"; then
      echo "| $t | $d | failed: $(tr '\n|' '  ' <"$W/err" | cut -c1-200) | | | | |"
      continue
    fi
    python3 - "$W/r.json" "$t" "$d" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); j = d["kernel_run"]
fb = ", ".join(f"{k}: {100*v['kernel_rate']:.1f}% / {100*v['model_rate']:.1f}%" for k, v in j["fallback"].items()) or "—"
pct = 100.0 * j["agree"] / j["expected"] if j["expected"] else 100.0
print(f"| {sys.argv[2]} | {sys.argv[3]} | {j['agree']}/{j['expected']} ({pct:.2f}%, {d['policy']}) | {fb} | "
      f"{j['pages_not_swapped']} / {j['model_pages_unplaced']} | {j['kernel_on_its_own_total']} | {d['vm']['guest_run_seconds']:.0f} |")
PY
  done
done
