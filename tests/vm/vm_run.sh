#!/usr/bin/env bash
# `swaplab vm run`: kernel run inside the guest. A small trace (two CPUs,
# 64 KiB mTHP folios) on a non-rotational and a rotational loop device of
# the guest: the guest kernel's placements come back as expect lines, the
# guest's swaplab compared them with the preset of its kernel's version, the
# host's replay of the written trace agrees with the guest's count, and with
# the exact preset of the guest's kernel the agreement is at least 99 %.
#   vm_run.sh SWAPLAB TRACES_DIR
set -uo pipefail
swaplab="$1"
traces="$2"
# shellcheck source=tests/vm/vm_cli_lib.sh
source "$(dirname "$0")/vm_cli_lib.sh"
for tool in ldd strip mkfs.ext4 debugfs; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not found (bash scripts/setup)"; exit 77; }
done
# Usage errors come before any boot.
"$swaplab" vm run "$traces/mthp64.trace" --device floppy >/dev/null 2>"$tmp/bad.err"
[ $? -eq 2 ] || { echo "FAIL: --device floppy not refused with exit 2"; cat "$tmp/bad.err"; exit 1; }
"$swaplab" vm run "$traces/mthp64.trace" --policy linux-0.1 >/dev/null 2>"$tmp/bad.err"
[ $? -eq 2 ] || { echo "FAIL: --policy linux-0.1 not refused with exit 2"; cat "$tmp/bad.err"; exit 1; }
grep -q "linux-0.1" "$tmp/bad.err" || { echo "FAIL: the message does not name the preset"; exit 1; }

for dev in loop-ssd loop; do
  t0=$(date +%s.%N)
  if ! "$swaplab" vm run "$traces/mthp64.trace" --device "$dev" --out "$tmp/$dev.trace" --json \
      >"$tmp/$dev.json" 2>"$tmp/$dev.err"; then
    if grep -q "no static busybox" "$tmp/$dev.err"; then echo "SKIP: $(cat "$tmp/$dev.err")"; exit 77; fi
    echo "FAIL: $dev: swaplab vm run failed"; cat "$tmp/$dev.err"; exit 1
  fi
  python3 - "$tmp/$dev.json" "$tmp/$dev.trace" "$dev" "$t0" "$traces/mthp64.trace" <<'PY' || exit 1
import json, sys, time
d = json.load(open(sys.argv[1])); out = open(sys.argv[2]).read(); dev = sys.argv[3]
k, v, h = d["kernel_run"], d["vm"], d["host_replay"]
def check(ok, what):
    if not ok:
        print(f"FAIL: {dev}: {what}\n" + json.dumps(d, indent=1)[:3000]); sys.exit(1)
check(v["release"].startswith("6.12"), f"release {v['release']}")
lines = [l.split("#")[0].strip() for l in open(sys.argv[5])][1:]
records = sum(1 for l in lines if l)
check(k["records"] == records, f"{k['records']} records applied, the trace has {records}")
check(k["expected"] > 0 and out.count("\nexpect ") == k["expected"], "expect lines")
check(h["agree"] == k["agree"] and h["expected"] == k["expected"], "host and guest replays differ")
check(k["areas"][0]["ssd"] == (dev == "loop-ssd"), f"area ssd={k['areas'][0]['ssd']}")
check(k["unexplained_slots"] == 0 and k["worker_pages_swapped"] == 0, "slots nobody holds")
exact = d["policy"] == "linux-" + ".".join(v["release"].split(".")[:2])
if exact:
    check(k["agreement"] >= 0.99, f"{k['agree']}/{k['expected']} with {d['policy']}")
print(f"vm run: {dev}: Linux {v['release']} ({v['accel']}), {k['agree']}/{k['expected']} placements agree "
      f"with {d['policy']}{'' if exact else ' (no exact preset: agreement not asserted)'}; "
      f"{v['guest_run_seconds']:.1f} s in the guest, {time.time() - float(sys.argv[4]):.1f} s in all")
PY
done
echo "vm run: ok"
