#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# swaplab doctor from the command line: on this machine (whatever it can or
# cannot do, doctor must say it consistently), on a recorded tree (--root),
# bad usage, and — as root, with a swap file swapped on here — the swap
# file's resume_offset against filefrag's, and `area inspect`'s.
set -uo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
SWAPFILE=""
cleanup() { # run on exit by test_env.sh
  if [ -n "$SWAPFILE" ]; then
    swapoff "$SWAPFILE" 2>/dev/null
    rm -f "$SWAPFILE"
  fi
}
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$W/out.json"; }

# 1. This machine. The JSON's verdict and the exit status agree, and a kernel
# without "disk" in /sys/power/state is reported as unable to hibernate.
"$S" doctor --json >"$W/out.json" 2>"$W/err"; rc=$?
[ $rc -le 1 ] || fail "doctor exited $rc: $(cat "$W/err")"
worst="$(json "$W/out.json" 'd["worst"]')" || fail "doctor --json is not JSON: $(head -c 300 "$W/out.json")"
if [ "$worst" = error ]; then [ $rc -eq 1 ] || fail "worst error but exit $rc"; else [ $rc -eq 0 ] || fail "worst $worst but exit $rc"; fi
if [ -r /sys/power/state ] && ! grep -qw disk /sys/power/state; then
  json "$W/out.json" '[f["seen"] for f in d["findings"] if f["check"]=="hibernation" and f["severity"]=="error"][0]' |
    grep -q "without 'disk'" || fail "this kernel cannot hibernate ($(cat /sys/power/state)) and doctor did not say so"
  echo "doctor on this machine: cannot hibernate (/sys/power/state: $(cat /sys/power/state)), found"
fi
n_swaps="$(json "$W/out.json" 'len(d["swaps"])')"
[ "$n_swaps" -eq "$(($(wc -l </proc/swaps) - 1))" ] || fail "doctor lists $n_swaps swap areas, /proc/swaps $(($(wc -l </proc/swaps) - 1))"
"$S" doctor >"$W/out.txt" 2>&1; rc2=$?
[ $rc2 -eq $rc ] || fail "text exit $rc2, JSON exit $rc"
head -n1 "$W/out.txt" | grep -q '^swaplab doctor: ' || fail "text output: $(head -n2 "$W/out.txt")"

# 2. A recorded tree: healthy, then a wrong resume device; hostile bytes escaped.
T="$W/tree"
mkdir -p "$T/proc/sys/kernel" "$T/sys/power" "$T/sys/class/block/sda2"
echo "6.12.118+deb12-amd64" >"$T/proc/sys/kernel/osrelease"
echo "freeze mem disk" >"$T/sys/power/state"
echo "[platform] shutdown reboot suspend test_resume" >"$T/sys/power/disk"
echo 1651507200 >"$T/sys/power/image_size"
echo 8:2 >"$T/sys/power/resume"
echo 0 >"$T/sys/power/resume_offset"
echo 8:2 >"$T/sys/class/block/sda2/dev"
echo "root=/dev/sda1 resume=/dev/sda2" >"$T/proc/cmdline"
printf 'Filename\tType\tSize\tUsed\tPriority\n/dev/sda2 partition 8388604 0 -2\n' >"$T/proc/swaps"
printf 'MemTotal: 4000000 kB\nMemFree: 3000000 kB\nActive(anon): 200000 kB\n' >"$T/proc/meminfo"
"$S" doctor --root "$T" >"$W/tree.txt" 2>&1 || fail "healthy tree: exit $?: $(cat "$W/tree.txt")"
grep -q '^ok       resume: the image goes to /dev/sda2' "$W/tree.txt" || fail "healthy tree: $(cat "$W/tree.txt")"
echo 8:3 >"$T/sys/power/resume"
printf 'root=/dev/sda1 resume=\033]0;x\007/dev/sda2\n' >"$T/proc/cmdline"
"$S" doctor --root "$T" >"$W/tree.txt" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "wrong resume device: exit $rc: $(cat "$W/tree.txt")"
grep -q 'holds no active swap area' "$W/tree.txt" || fail "wrong resume device not named: $(cat "$W/tree.txt")"
if LC_ALL=C grep -q $'\033' "$W/tree.txt"; then fail "an escape from the tree reached the terminal"; fi

# 3. Bad usage: exit 2, nothing else.
"$S" doctor --image-size lots >/dev/null 2>"$W/err"; [ $? -eq 2 ] || fail "--image-size lots: not exit 2"
grep -q -- '--image-size' "$W/err" || fail "--image-size lots: $(cat "$W/err")"
"$S" doctor --root "$W/none" >/dev/null 2>"$W/err"; [ $? -eq 2 ] || fail "--root missing: not exit 2"

# 4. A swap file swapped on here (root): doctor's and area inspect's
# resume_offset against filefrag's physical block of the file's page 0.
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: part 4 needs root (swapon)"
  exit 0
fi
command -v filefrag >/dev/null || { echo "SKIP: part 4 needs filefrag (e2fsprogs)"; exit 0; }
SWAPFILE="$(mktemp /var/tmp/swaplab-doctor-XXXXXX.swap)"
dd if=/dev/zero of="$SWAPFILE" bs=1M count=64 status=none && chmod 600 "$SWAPFILE" && mkswap "$SWAPFILE" >/dev/null ||
  fail "cannot make $SWAPFILE"
if ! swapon -p 7 "$SWAPFILE" 2>"$W/err"; then
  echo "SKIP: part 4: swapon $SWAPFILE: $(cat "$W/err")"
  exit 0
fi
want="$(filefrag -v -b4096 "$SWAPFILE" | awk '$1 == "0:" { sub(/\.\..*/, "", $4); print $4; exit }')"
[ -n "$want" ] || fail "filefrag gave no extent for logical block 0: $(filefrag -v -b4096 "$SWAPFILE")"
"$S" doctor --json >"$W/out.json" 2>"$W/err"
got="$(SW="$SWAPFILE" python3 -c 'import json,os,sys; d=json.load(open(sys.argv[1])); print([s for s in d["swaps"] if s["path"]==os.environ["SW"]][0].get("resume_offset"))' "$W/out.json")" ||
  fail "doctor does not list $SWAPFILE: $(head -c 600 "$W/out.json")"
[ "$got" = "$want" ] || fail "doctor: resume_offset $got, filefrag: $want"
"$S" area inspect "$SWAPFILE" --json >"$W/inspect.json" 2>"$W/err" || true
got2="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["resume_offset"])' "$W/inspect.json")" ||
  fail "area inspect --json: $(cat "$W/err")"
[ "$got2" = "$want" ] || fail "area inspect: resume_offset $got2, filefrag: $want"
"$S" doctor >"$W/out.txt" 2>&1
grep -qF "swap $SWAPFILE: file on ext4" "$W/out.txt" || [ "$(stat -f -c %T "$SWAPFILE")" != ext2/ext3 ] ||
  fail "the text does not describe $SWAPFILE: $(grep -F "$SWAPFILE" "$W/out.txt")"
echo "doctor: $SWAPFILE resume_offset $got = filefrag's $want = area inspect's"

# 5. The layout (root, the 64 MiB swap file above at priority 7): a process swaps
# out 8 MiB of private memory onto it (MADV_PAGEOUT), then frees every other
# 64 KiB, so the slots in use are scattered over the area's first half.
# doctor must see at least the process's slots in the page tables, at most
# what /proc/swaps counts, and predict more runs for the kernel's placement
# (nonfull clusters first) than for the RFC's (whole free clusters); --map
# draws it.
target="$(json "$W/out.json" 'd["target"]')"
if [ "$target" != "$SWAPFILE" ]; then
  echo "SKIP: part 5: the image would go to $target, not $SWAPFILE (another swap area is active)"
  exit 0
fi
python3 - "$W/pid" <<'PY' &
import mmap, os, sys, time
MADV_PAGEOUT = 21
m = mmap.mmap(-1, 8 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for i in range(0, 8 << 20, 4096):
    m[i:i + 1] = b"x"
m.madvise(MADV_PAGEOUT)
for i in range(0, 8 << 20, 128 << 10):
    m.madvise(mmap.MADV_DONTNEED, i, 64 << 10)
open(sys.argv[1] + ".tmp", "w").write(str(os.getpid()))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(60)
PY
child=$!
cleanup_child() { kill "$child" 2>/dev/null; wait "$child" 2>/dev/null; }
cleanup() { # the child first: its slots keep the swap file busy
  cleanup_child
  if [ -n "$SWAPFILE" ]; then
    swapoff "$SWAPFILE" 2>/dev/null
    rm -f "$SWAPFILE"
  fi
}
for _ in $(seq 100); do [ -e "$W/pid" ] && break; sleep 0.1; done
[ -e "$W/pid" ] || fail "the swapping process did not start"
swapped_kib="$(awk '/^VmSwap:/ { print $2 }' "/proc/$(cat "$W/pid")/status")"
[ "${swapped_kib:-0}" -gt 0 ] || { echo "SKIP: part 5: MADV_PAGEOUT swapped nothing out here"; exit 0; }
"$S" doctor --json --image-size 4M --map "$W/doctor.svg" >"$W/out.json" 2>"$W/err"
[ -s "$W/doctor.svg" ] || fail "doctor --map wrote nothing: $(cat "$W/err")"
python3 - "$W/out.json" "$SWAPFILE" "$swapped_kib" <<'PY' || fail "layout: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["layout"])' "$W/out.json")"
import json, sys
d = json.load(open(sys.argv[1]))
l = d["layout"]
swapped = int(sys.argv[3]) // 4
assert l["in_use_seen"] >= swapped, f"{l['in_use_seen']} slots seen, the process alone holds {swapped}"
assert l["in_use_seen"] <= l["in_use_listed"] + 64, f"{l['in_use_seen']} seen, /proc/swaps {l['in_use_listed']}"
kernel, rfc = l["predictions"]
assert not kernel["error"] and not rfc["error"], (kernel["error"], rfc["error"])
assert kernel["slots"] == rfc["slots"] > 1024, (kernel["slots"], rfc["slots"])
assert kernel["runs"] > rfc["runs"] >= 1, f"runs: kernel {kernel['runs']}, RFC {rfc['runs']}"
assert kernel["write_bios"] > rfc["write_bios"], (kernel["write_bios"], rfc["write_bios"])
print(f"doctor layout: {l['in_use_seen']} slots in use seen ({swapped} of the test's process), "
      f"kernel {kernel['runs']} runs / {kernel['write_bios']} bios, RFC {rfc['runs']} runs / {rfc['write_bios']} bios")
PY
python3 "$(dirname "$0")/check_svg.py" "$W/doctor.svg" 0 --require image || fail "doctor --map: not a cluster map with the image"
"$S" doctor --map "$W/doctor.svg" >/dev/null 2>"$W/err"; rc=$?
[ $rc -eq 2 ] || fail "--map over an existing file without --force: exit $rc"
"$S" doctor --map "$SWAPFILE" --force >/dev/null 2>"$W/err"; rc=$?
[ $rc -eq 2 ] || fail "--map onto the swap file itself: exit $rc"
cmp -s <(head -c 4096 "$SWAPFILE" | tail -c 10) <(printf 'SWAPSPACE2') || fail "--map onto the swap file changed its header"
