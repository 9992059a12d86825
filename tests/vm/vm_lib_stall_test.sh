#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# vm_lib.sh's boot watchdog without a guest: a stand-in for qemu (written
# here) prints a console like a guest's. Checks that a boot stopped by the
# guest's hung-task report, a silent console or a kernel panic or oops
# before init is made again once from the
# disk as it was before the boot, that a second stall fails, and that a
# boot that powers off is not retried.
set -uo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
here="$(cd "$(dirname "$0")" && pwd)"

# The stand-in: finds -serial file:LOG, -pidfile and the drive's file; writes
# its pid; behaves as $W/script says for the boot numbered by a counter:
# "hang" (hung-task line, then sleeps), "silent" (sleeps), "ok" (powers
# off), "panic" (6.12's early oops and panic before init, exits), "oops"
# (6.1's oops line before init, sleeps), "lateoops" (an oops after init,
# powers off), and appends "boot N: disk byte X" (the disk's first byte) to a
# record, then writes a byte into the disk so a restored disk is visible.
cat >"$W/fake-qemu" <<'QEMU'
#!/usr/bin/env bash
log="" pidf="" disk=""
while [ $# -gt 0 ]; do
  case "$1" in
    -serial) log="${2#file:}"; shift ;;
    -pidfile) pidf="$2"; shift ;;
    -drive) disk="$(echo "$2" | sed 's/^file=\([^,]*\),.*/\1/')"; shift ;;
  esac
  shift
done
dir="$(dirname "$0")"
echo $$ >"$pidf"
n=$(($(cat "$dir/count" 2>/dev/null || echo 0) + 1))
echo "$n" >"$dir/count"
what="$(sed -n "${n}p" "$dir/script")"
echo "boot $n: disk byte $(head -c1 "$disk")" >>"$dir/record"
printf 'X' | dd of="$disk" conv=notrunc status=none
echo "[    0.000000] Linux version 6.12.57+deb13-amd64" >"$log"
case "$what" in
  panic) printf '%s\n' "[    1.700000] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI" \
    "[    1.800000] Kernel panic - not syncing: Attempted to kill the idle task!" >>"$log"; exit 0 ;;
  oops) echo "[    1.700000] int3: 0000 [#1] PREEMPT SMP NOPTI" >>"$log"; sleep 600 ;;
esac
echo "[    1.000000] swaplab-init: start at uptime 1.00 s" >>"$log"
case "$what" in
  lateoops) echo "[    3.000000] Oops: 0000 [#1] PREEMPT SMP NOPTI" >>"$log"
    echo "[    4.000000] reboot: Power down" >>"$log"; exit 0 ;;
  hang) echo "[   23.000000] INFO: task kworker/u2:1:42 blocked for more than 20 seconds." >>"$log"; sleep 600 ;;
  silent) sleep 600 ;;
  ok) echo "[    2.000000] reboot: Power down" >>"$log"; exit 0 ;;
esac
QEMU
chmod +x "$W/fake-qemu"

export SWAPLAB_VM_QEMU="$W/fake-qemu" SWAPLAB_VM_STALL=2 SWAPLAB_VM_TIMEOUT=30
# shellcheck source=vm_lib.sh
source "$here/vm_lib.sh"
VM_WORK="$W/vm"
mkdir -p "$VM_WORK"
: >"$VM_WORK/initramfs.cpio"
VM_KERNEL=/dev/null VM_ACCEL=tcg

# boot SCRIPT...: one vm_boot in a subshell (vm_fail exits) with the boots
# behaving as SCRIPT; prints the record; returns vm_boot's status.
boot() {
  rm -f "$W/count" "$W/record"
  printf '%s\n' "$@" >"$W/script"
  printf 'A' >"$W/disk.img"
  (vm_boot one "$W/disk.img" hibernate >"$W/out" 2>&1; echo "$? retries $VM_RETRIES" >>"$W/out")
}

boot hang ok
grep -q "^0 retries 1$" "$W/out" || fail "a hung boot then a good one: $(cat "$W/out")"
grep -q "hung-task detector reported: INFO: task kworker/u2:1:42 blocked for more than 20 seconds" "$W/out" ||
  fail "the hang is not named: $(cat "$W/out")"
[ "$(cat "$W/record")" = "$(printf 'boot 1: disk byte A\nboot 2: disk byte A')" ] ||
  fail "the second boot did not get the disk as it was: $(cat "$W/record")"

boot silent ok
grep -q "^0 retries 1$" "$W/out" || fail "a silent boot then a good one: $(cat "$W/out")"
grep -q "no console output for 2 s" "$W/out" || fail "the silence is not named: $(cat "$W/out")"

boot hang silent
grep -q "^1 retries 1$" "$W/out" || fail "two stalls must fail: $(cat "$W/out")"
[ "$(wc -l <"$W/record")" -eq 2 ] || fail "more than one retry: $(cat "$W/record")"

boot ok hang
grep -q "^0 retries 0$" "$W/out" || fail "a good boot was retried: $(cat "$W/out")"
[ "$(wc -l <"$W/record")" -eq 1 ] || fail "a good boot booted twice: $(cat "$W/record")"
[ "$(head -c1 "$W/disk.img")" = X ] || fail "a good boot's disk was restored"
[ ! -e "$VM_WORK/one.before-boot" ] || fail "the copy of the disk was left behind"
boot panic ok
grep -q "^0 retries 1$" "$W/out" || fail "a panic before init then a good boot: $(cat "$W/out")"
grep -q "failed before init: Oops: int3: 0000 \[#1\]" "$W/out" || fail "the panic is not named: $(cat "$W/out")"
[ "$(cat "$W/record")" = "$(printf 'boot 1: disk byte A\nboot 2: disk byte A')" ] ||
  fail "the boot after a panic did not get the disk as it was: $(cat "$W/record")"

VM_STALL=20  # the oops, not the silence after it, stops these boots
boot oops oops
VM_STALL=2
grep -q "^1 retries 1$" "$W/out" || fail "two oopses before init must fail: $(cat "$W/out")"
grep -q "failed before init: int3: 0000 \[#1\]" "$W/out" || fail "the oops is not named: $(cat "$W/out")"

boot lateoops hang
grep -q "^0 retries 0$" "$W/out" || fail "an oops after init was retried: $(cat "$W/out")"
echo "vm_lib stall watchdog: 7 cases ok"
