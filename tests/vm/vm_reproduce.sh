#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `swaplab reproduce --vm` end to end at a small scale: both of seed 001's
# layouts hibernated and resumed by the guest kernel, the model beside each,
# the host CPU profile's seconds added, the wall times and their ratio; the
# text table names the kernel, the accelerator and the scale; bad usage
# exits 2 before any guest boots.
#   vm_reproduce.sh SWAPLAB
set -uo pipefail
swaplab="$1"
# shellcheck source=tests/vm/vm_cli_lib.sh
source "$(dirname "$0")/vm_cli_lib.sh"

# Usage errors: exit 2, nothing booted.
"$swaplab" reproduce --vm rfc-shuffled >/dev/null 2>"$W/e1"; rc=$?
[ $rc -eq 2 ] && grep -q "seed 001's two layouts only" "$W/e1" || fail "reproduce --vm NAME: exit $rc: $(cat "$W/e1")"
"$swaplab" reproduce --vm --vm-scale 0.5 >/dev/null 2>"$W/e2"; rc=$?
[ $rc -eq 2 ] || fail "--vm-scale 0.5: exit $rc"
"$swaplab" reproduce --vm --host-cpu tcg-0 >/dev/null 2>"$W/e3"; rc=$?
[ $rc -eq 2 ] && grep -q "tcg-6.12" "$W/e3" || fail "--host-cpu tcg-0: exit $rc: $(cat "$W/e3")"

# 1/128 of the seed: a 40 MiB image asked (about 57 MiB with the guest's
# own pages), 88 MiB (shuffled: 40 + 48) and 96 MiB (holes) of swap.
if ! "$swaplab" reproduce --vm --vm-scale 0.0078125 --json >"$W/r.json" 2>"$W/r.err"; then
  grep -q "no static busybox\|no guest agent" "$W/r.err" && { echo "SKIP: $(cat "$W/r.err")"; exit 77; }
  fail "reproduce --vm: $(cat "$W/r.err")"
fi
python3 - "$W/r.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
def check(ok, what):
    if not ok:
        print("FAIL: " + what + "\n" + json.dumps(d, indent=1)[:3000]); sys.exit(1)
check(d["scale"] == 0.0078125 and d["compress"] == "none", "scale or compression")
check(d["host_cpu"]["label"].startswith("Debian 6.12"), "default host CPU profile is not tcg-6.12")
check(sorted(d["layouts"]) == ["holes", "shuffled"], f"layouts {list(d['layouts'])}")
for name, l in d["layouts"].items():
    k, m = l["kernel"], l["model"]
    check(k["release"].startswith("6.12") and k["origin"] == "kernel-x86_64", f"{name}: kernel image")
    check(k["resumed_intact"] and k["write_s"] is not None and k["read_s"] is not None, f"{name}: no write/read line")
    check(k["alloc_calls"] == k["slots"] and k["bios_per_page"] >= k["stream_pages"], f"{name}: 6.12 counts")
    check(m["stream_pages"] == k["stream_pages"], f"{name}: the model wrote another size")
    check(m["bios_per_run"] <= m["bios_per_page"] and m["alloc_calls"] > 0, f"{name}: model counts")
    # + host CPU = modelled seconds + the profile's prices on the model's counts.
    h = d["host_cpu"]
    want = m["write_s"] + 1e-6 * (h["write_bio_us"] * m["bios_per_page"] + h["alloc_call_us"] * m["alloc_calls"])
    check(abs(m["write_host_cpu_s"] - want) < 1e-9, f"{name}: write + host CPU {m['write_host_cpu_s']} != {want}")
    check(l["vm_wall_s"] > 0 and m["model_wall_s"] > 0, f"{name}: wall times")
    check(abs(l["vm_over_model_wall"] - l["vm_wall_s"] / m["model_wall_s"]) < 1e-6, f"{name}: ratio")
    print(f"vm: {name}: kernel runs {k['runs_disk_order']} write {k['write_s']} s | model runs "
          f"{m['runs_disk_order']} write {m['write_s']:.3f} s (+cpu {m['write_host_cpu_s']:.3f}) | "
          f"VM {l['vm_wall_s']:.1f} s / model {m['model_wall_s']:.2f} s")
PY
# The text table's header says which kernel, accelerator and scale.
if ! "$swaplab" reproduce --vm --vm-scale 0.0078125 --host-cpu none >"$W/r.txt" 2>"$W/r2.err"; then
  fail "reproduce --vm (text): $(cat "$W/r2.err")"
fi
grep -q "^seed 001 on a real kernel: Linux 6.12" "$W/r.txt" || fail "no kernel line: $(head -3 "$W/r.txt")"
grep -q "accel " "$W/r.txt" && grep -q "^scale 0.0078125 of the seed" "$W/r.txt" || fail "no accel / scale: $(head -3 "$W/r.txt")"
grep -q "host CPU" "$W/r.txt" && fail "--host-cpu none still printed host CPU rows"
grep -q "the model answered" "$W/r.txt" || fail "no wall-time ratio"
echo "PASS"
