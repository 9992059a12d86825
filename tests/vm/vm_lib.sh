# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2034  # VM_* results are read by the tests that source this
# Sourced by the vm tests (tests/vm/*.sh): boots Debian's linux-image-6.12 in
# a qemu guest with a busybox initramfs and the swaplab guest agent, on one
# swap disk file, and reads what it printed on its serial console.
#
#   vm_init SWAPLAB AGENT   check what is needed (skip, exit 77, with the
#                           reason when something is missing), make the work
#                           dir, build the initramfs (VM_EXTRA_MODULES: more
#                           modules; VM_WITH_SWAPLAB=1: SWAPLAB in it as
#                           /bin/swaplab with its libraries), pick the
#                           accelerator
#   vm_make_disk PATH mkswap|swaplab|ext4 SIZE_MiB
#   vm_boot NAME DISK MODE [KERNEL_ARG...]
#                           boot once (a stalled boot made again once from
#                           the disk as it was); console in $VM_WORK/NAME.log;
#                           returns 0 when the guest powered itself off, 1
#                           otherwise
#   vm_expect NAME TEXT     fail (console tail printed) unless the log has TEXT
#   vm_fail MSG [NAME]      print FAIL: MSG (and NAME's console tail), exit 1
#   vm_skip MSG             print SKIP: MSG, exit 77
#
# Environment: SWAPLAB_GUEST_KERNEL_CACHE (default /var/cache/swaplab/
# guest-kernel, filled by scripts/guest-kernel), SWAPLAB_VM_ACCEL=kvm|tcg
# (default: probe), SWAPLAB_VM_MEM (MiB, default 256), SWAPLAB_VM_SMP (1),
# SWAPLAB_VM_TIMEOUT (seconds per boot, 120), SWAPLAB_VM_STALL (seconds of a
# silent console that stop a boot, 60), SWAPLAB_VM_DEBUG=1 keeps the work
# dir. Every qemu started here is killed on every exit path.

VM_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VM_WORK=""
VM_PIDS=()
VM_QEMU="${SWAPLAB_VM_QEMU:-qemu-system-x86_64}"
VM_MEM="${SWAPLAB_VM_MEM:-256}"
VM_SMP="${SWAPLAB_VM_SMP:-1}"
VM_TIMEOUT="${SWAPLAB_VM_TIMEOUT:-120}"

vm_log() { echo "vm: $*"; }
vm_skip() { echo "SKIP: $*"; exit 77; }

vm_tail() {  # NAME [LINES]
  local log="$VM_WORK/$1.log"
  echo "---- last ${2:-40} console lines of $1 ($log)"
  [ -f "$log" ] && tail -n "${2:-40}" "$log" | tr -d '\r'
  if [ -s "$VM_WORK/$1.qemu.err" ]; then
    echo "---- qemu stderr"
    tail -n 10 "$VM_WORK/$1.qemu.err"
  fi
  echo "----"
}

vm_fail() {
  echo "FAIL: $1"
  [ $# -ge 2 ] && vm_tail "$2"
  exit 1
}

vm_cleanup() {
  local p f
  for f in "$VM_WORK"/*.pid; do
    [ -f "$f" ] || continue
    p="$(cat "$f" 2>/dev/null)"
    [ -n "$p" ] && kill -KILL "$p" 2>/dev/null
  done
  for p in "${VM_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
  for p in "${VM_PIDS[@]}"; do wait "$p" 2>/dev/null; done
  VM_PIDS=()
  if [ -n "$VM_WORK" ] && [ -d "$VM_WORK" ]; then
    if [ "${SWAPLAB_VM_DEBUG:-0}" = 1 ]; then
      echo "vm: work dir kept: $VM_WORK"
    else
      rm -rf "$VM_WORK"
    fi
  fi
}

# The newest unpacked kernel of the cache: sets VM_RELEASE, VM_KERNEL, VM_MODULES.
vm_find_kernel() {
  local cache="${SWAPLAB_GUEST_KERNEL_CACHE:-/var/cache/swaplab/guest-kernel}" d rel
  rel="$(for d in "$cache"/*/.unpacked; do [ -e "$d" ] && basename "$(dirname "$d")"; done | sort -V | tail -n1)"
  if [ -z "$rel" ]; then
    if [ -s "$cache/unavailable" ]; then
      vm_skip "no guest kernel in $cache: $(cat "$cache/unavailable")"
    fi
    vm_skip "no guest kernel in $cache (run: bash scripts/guest-kernel)"
  fi
  VM_RELEASE="$rel"
  VM_KERNEL="$cache/$rel/boot/vmlinuz-$rel"
  VM_MODULES="$cache/$rel/lib/modules/$rel"
  [ -r "$VM_KERNEL" ] || vm_skip "cannot read $VM_KERNEL"
}

# Starts qemu in the background on DISK (may be empty) with the kernel args;
# console to $VM_WORK/NAME.log. Sets VM_QEMU_PID (the timeout(1) around it).
vm_start() {  # NAME ACCEL DISK ARGS...
  local name="$1" accel="$2" disk="$3"
  shift 3
  local drive=()
  [ -n "$disk" ] && drive=(-drive "file=$disk,format=raw,if=virtio,cache=writeback")
  rm -f "$VM_WORK/$name.log" "$VM_WORK/$name.pid"
  timeout -k 5 "$VM_TIMEOUT" "$VM_QEMU" -accel "$accel" -m "$VM_MEM" -smp "$VM_SMP" \
    -nodefaults -no-reboot -display none -monitor none \
    -serial "file:$VM_WORK/$name.log" -pidfile "$VM_WORK/$name.pid" \
    -kernel "$VM_KERNEL" -initrd "$VM_WORK/initramfs.cpio" \
    -append "console=ttyS0 panic=-1 no_console_suspend pm_debug_messages loglevel=8 sysctl.kernel.hung_task_timeout_secs=20 $*" \
    "${drive[@]}" </dev/null >"$VM_WORK/$name.qemu.out" 2>"$VM_WORK/$name.qemu.err" &
  VM_QEMU_PID=$!
  VM_PIDS+=("$VM_QEMU_PID")
}

vm_now() { date +%s.%N; }
vm_secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# Try KVM when /dev/kvm is there (a probe boot that must reach init within
# 20 s without a KVM error), else TCG. Sets VM_ACCEL, prints which and why.
vm_probe_accel() {
  if [ -n "${SWAPLAB_VM_ACCEL:-}" ]; then
    VM_ACCEL="$SWAPLAB_VM_ACCEL"
    vm_log "accelerator $VM_ACCEL (SWAPLAB_VM_ACCEL)"
    return
  fi
  VM_ACCEL=tcg
  if [ ! -e /dev/kvm ]; then
    vm_log "accelerator tcg (no /dev/kvm)"
    return
  fi
  if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
    vm_log "accelerator tcg (/dev/kvm not accessible)"
    return
  fi
  local t0 why="" saved="$VM_TIMEOUT"
  VM_TIMEOUT=25
  t0="$(vm_now)"
  vm_start kvm-probe kvm "" swaplab.mode=probe
  VM_TIMEOUT="$saved"
  local pid="$VM_QEMU_PID" n=0
  while [ $n -lt 200 ]; do  # 20 s
    if grep -q "swaplab-init: probe ok" "$VM_WORK/kvm-probe.log" 2>/dev/null; then
      why=ok
      break
    fi
    if grep -qiE "KVM internal error|emulation failure|failed to initialize|Could not access KVM" \
         "$VM_WORK/kvm-probe.qemu.err" 2>/dev/null; then
      why="$(grep -iE "KVM internal error|emulation failure|failed to initialize|Could not access KVM" \
               "$VM_WORK/kvm-probe.qemu.err" | head -n1)"
      break
    fi
    kill -0 "$pid" 2>/dev/null || { why="qemu exited before init"; break; }
    sleep 0.1
    n=$((n + 1))
  done
  [ -z "$why" ] && why="no init within 20 s"
  [ -f "$VM_WORK/kvm-probe.pid" ] && kill -KILL "$(cat "$VM_WORK/kvm-probe.pid")" 2>/dev/null
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  if [ "$why" = ok ]; then
    VM_ACCEL=kvm
    vm_log "accelerator kvm (probe reached init in $(vm_secs "$t0" "$(vm_now)") s)"
  else
    vm_log "accelerator tcg (kvm probe failed: $why)"
  fi
}

vm_init() {  # SWAPLAB AGENT
  VM_SWAPLAB="$1"
  VM_AGENT="$2"
  command -v "$VM_QEMU" >/dev/null || vm_skip "$VM_QEMU not found (install qemu-system-x86: bash scripts/setup)"
  local tool
  for tool in cpio python3 mkswap timeout sha256sum xz; do
    command -v "$tool" >/dev/null || vm_skip "$tool not found (bash scripts/setup)"
  done
  [ -x "$VM_SWAPLAB" ] || vm_skip "no swaplab binary at $VM_SWAPLAB"
  [ -x "$VM_AGENT" ] || vm_skip "no guest agent at $VM_AGENT (needs a static libc)"
  vm_find_kernel
  VM_WORK="$(mktemp -d "${TMPDIR:-/var/tmp}/swaplab-vm.XXXXXX")"
  trap vm_cleanup EXIT
  trap 'echo "vm: interrupted"; exit 130' INT TERM
  local out
  # shellcheck disable=SC2086  # VM_EXTRA_MODULES: module names, one word each
  if ! out="$(SWAPLAB_INITRAMFS_SWAPLAB="${VM_WITH_SWAPLAB:+$VM_SWAPLAB}" \
    bash "$VM_DIR/make_initramfs.sh" "$VM_WORK/initramfs.cpio" "$VM_AGENT" "$VM_MODULES" virtio_blk lz4 ${VM_EXTRA_MODULES:-} 2>&1)"; then
    case "$out" in
      *"no static busybox"*) vm_skip "$out" ;;
      *) vm_fail "initramfs: $out" ;;
    esac
  fi
  vm_log "kernel $VM_RELEASE ($VM_KERNEL)"
  vm_log "$out"
  vm_probe_accel
}

vm_make_disk() {  # PATH mkswap|swaplab|ext4 SIZE_MiB
  local disk="$1" maker="$2" mib="$3"
  rm -f "$disk"
  case "$maker" in
    mkswap)
      truncate -s "${mib}M" "$disk" && chmod 0600 "$disk" && mkswap "$disk" >/dev/null 2>&1 ||
        vm_fail "mkswap $disk failed"
      ;;
    swaplab)
      "$VM_SWAPLAB" area format "$disk" --size "${mib}M" >/dev/null || vm_fail "swaplab area format $disk failed"
      ;;
    ext4)  # 4 KiB blocks: a swap file's pages then start on blocks
      mkfs.ext4 -q -F -b 4096 -L swaplab-vm "$disk" "${mib}M" >/dev/null 2>&1 || vm_fail "mkfs.ext4 $disk failed"
      ;;
    *) vm_fail "unknown area maker $maker" ;;
  esac
}

# What the guest's hung-task detector prints (kernel/hung_task.c); every
# boot sets its timeout to 20 s (vm_start), as `swaplab vm hibernate` does
# (src/vm/vm_hibernate.cc): under TCG a guest's block I/O has been seen to
# stop completing, once in many boots (CI, 3 Dec 2026: the kernel's own
# image write stuck at 70 % until the time limit).
VM_HANG_LINE="blocked for more than"

# vm_failed_before_init LOG: prints the first line of a kernel panic or
# oops (die()'s "...: 0000 [#1] ...") that came before the guest's init
# line, nothing otherwise (swaplab's KernelFailedBeforeInit, qemu.h).
vm_failed_before_init() {
  sed '/swaplab-init: start at uptime/,$d' "$1" 2>/dev/null |
    grep -m1 -E 'Kernel panic - not syncing|: [0-9a-fA-F]{4} \[#[0-9]+\]' | tr -d '\r' |
    sed 's/^\[ *[0-9.]*\] //'
}
# Seconds without a console byte after which a boot counts as stalled.
VM_STALL="${SWAPLAB_VM_STALL:-60}"
# Boots stopped on a hang or stall and made again, over the whole test.
VM_RETRIES=0

# One boot, polling the console. Sets VM_T_HIB and VM_BOOT_RC (qemu's exit
# status, or "stalled: WHY" when the boot was stopped on a guest hang or a
# console silent for VM_STALL s).
vm_boot_once() {  # NAME DISK MODE [KERNEL_ARG...]
  local name="$1" disk="$2" mode="$3"
  shift 3
  local log="$VM_WORK/$name.log" pid size last_size=-1 last_change why="" failed="" failed_at=0
  VM_T_HIB=""
  vm_start "$name" "$VM_ACCEL" "$disk" "swaplab.mode=$mode" "$@"
  pid="$VM_QEMU_PID"
  last_change="$(date +%s)"
  while kill -0 "$pid" 2>/dev/null; do
    if [ -z "$VM_T_HIB" ] && grep -q "swaplab-agent: hibernating" "$log" 2>/dev/null; then
      VM_T_HIB="$(vm_now)"
    fi
    # A kernel that failed before init gets 2 s to print the rest (or to
    # exit itself: panic=-1, -no-reboot).
    if [ -z "$failed" ]; then
      failed="$(vm_failed_before_init "$log")"
      [ -n "$failed" ] && failed_at="$(date +%s)"
    elif [ $(($(date +%s) - failed_at)) -ge 2 ]; then
      why="the guest kernel failed before init: $failed"
    fi
    if [ -n "$why" ]; then
      :
    elif grep -qF "$VM_HANG_LINE" "$log" 2>/dev/null; then
      why="the guest's hung-task detector reported: $(grep -F "$VM_HANG_LINE" "$log" | head -n1 | tr -d '\r' | sed 's/^\[ *[0-9.]*\] //')"
    else
      size="$(stat -c %s "$log" 2>/dev/null || echo 0)"
      if [ "$size" != "$last_size" ]; then
        last_size="$size"
        last_change="$(date +%s)"
      elif [ $(($(date +%s) - last_change)) -ge "$VM_STALL" ]; then
        why="no console output for ${VM_STALL} s"
      fi
    fi
    if [ -n "$why" ]; then
      [ -f "$VM_WORK/$name.pid" ] && kill -KILL "$(cat "$VM_WORK/$name.pid")" 2>/dev/null
      kill -KILL "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      VM_BOOT_RC="stalled: $why"
      return
    fi
    sleep 0.1
  done
  wait "$pid"
  VM_BOOT_RC=$?
  if [ "$VM_BOOT_RC" -eq 124 ] || [ "$VM_BOOT_RC" -eq 137 ]; then
    VM_BOOT_RC="stalled: no power-off within ${VM_TIMEOUT} s (qemu killed)"
  elif failed="$(vm_failed_before_init "$log")" && [ -n "$failed" ]; then
    VM_BOOT_RC="stalled: the guest kernel failed before init: $failed"
  fi
}

# Boots once, polling the console to time it. Sets VM_T_INIT (guest uptime at
# init, s), VM_T_HIB (host seconds from the agent's hibernate write to qemu's
# exit), VM_T_WALL (host seconds for the whole boot, the last one). A boot that stalls (a
# hung-task report, a silent console, the time limit, a kernel panic or oops
# before init) is made again once from the disk as it was before it; the
# second stall fails.
vm_boot() {  # NAME DISK MODE [KERNEL_ARG...]
  local name="$1" disk="$2" mode="$3"
  local t0 t_end log="$VM_WORK/$name.log" saved="$VM_WORK/$name.before-boot" attempt t_hib
  if [ -n "$disk" ]; then
    cp --sparse=always "$disk" "$saved" || vm_fail "$name: cannot keep a copy of $disk before the boot"
  fi
  for attempt in 1 2; do
    t0="$(vm_now)"
    vm_boot_once "$@"
    case "$VM_BOOT_RC" in
      stalled:*) ;;
      *) break ;;
    esac
    echo "vm: $name: boot $attempt ${VM_BOOT_RC} (qemu killed)"
    if [ "$attempt" -eq 1 ]; then
      VM_RETRIES=$((VM_RETRIES + 1))
      cp "$log" "$VM_WORK/$name.stalled.log" 2>/dev/null
      [ -n "$disk" ] && { cp --sparse=always "$saved" "$disk" || vm_fail "$name: cannot restore $disk"; }
      echo "vm: $name: made again from the disk as it was before the boot (a guest stall is not a swaplab result)"
    fi
  done
  rm -f "$saved"
  t_end="$(vm_now)"
  t_hib="$VM_T_HIB"
  VM_T_WALL="$(vm_secs "$t0" "$t_end")"
  VM_T_HIB=""
  [ -n "$t_hib" ] && VM_T_HIB="$(vm_secs "$t_hib" "$t_end")"
  VM_T_INIT="$(sed -n 's/.*swaplab-init: start at uptime \([0-9.]*\) s.*/\1/p' "$log" | head -n1)"
  case "$VM_BOOT_RC" in
    stalled:*) return 1 ;;
  esac
  if ! grep -q "reboot: Power down" "$log"; then
    echo "vm: $name: qemu exited ($VM_BOOT_RC) without the guest powering off"
    return 1
  fi
  return 0
}

vm_expect() {  # NAME TEXT
  grep -qF -- "$2" "$VM_WORK/$1.log" || vm_fail "$1: console has no '$2'" "$1"
}

# The first console line (without the timestamp) that has TEXT.
vm_line() {  # NAME TEXT
  grep -F -- "$2" "$VM_WORK/$1.log" | head -n1 | tr -d '\r' | sed 's/^\[ *[0-9.]*\] //'
}

# Field of the swsusp header of DISK's page 0 (sig, orig_sig, flags, hw_sig, ...).
vm_header() {  # DISK FIELD
  python3 "$VM_DIR/vm_check.py" header "$1" | sed -n "s/^$2 //p"
}
