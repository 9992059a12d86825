#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Killing `swaplab vm hibernate` mid-way leaves nothing behind: SIGINT to
# swaplab while the guest runs, SIGKILL of its qemu, and SIGKILL of swaplab
# itself. Afterwards no qemu it started is alive, its work dir is gone (after
# a SIGKILL of swaplab: once `swaplab kernel cleanup` ran, which finds it by
# its dead pid), and no loop device was added.
#   vm_kill.sh SWAPLAB
set -uo pipefail
swaplab="$1"
# shellcheck source=tests/vm/vm_cli_lib.sh
source "$(dirname "$0")/vm_cli_lib.sh"
loops_before="$(losetup -a 2>/dev/null | sort)"

# Waits (up to 60 s) for a qemu child of PID; prints its pid.
qemu_of() {
  local n=0 q
  while [ $n -lt 600 ]; do
    q="$(pgrep -P "$1" -f qemu-system 2>/dev/null | head -n1)"
    [ -n "$q" ] && { echo "$q"; return 0; }
    kill -0 "$1" 2>/dev/null || return 1
    sleep 0.1; n=$((n + 1))
  done
  return 1
}

for how in sigint kill-qemu kill-swaplab; do
  work="$W/$how"
  mkdir -p "$work"
  TMPDIR="$work" "$swaplab" vm hibernate --layout shuffled --swap 96M --image 64M --accel tcg \
    >"$W/$how.out" 2>"$W/$how.err" &
  pid=$!
  q="$(qemu_of "$pid")" || { echo "FAIL: $how: no qemu started"; cat "$W/$how.err"; exit 1; }
  sleep 3  # mid-way: the guest is booting or preparing the layout
  case "$how" in
    sigint) kill -INT "$pid" ;;
    kill-qemu) kill -KILL "$q" ;;
    kill-swaplab) kill -KILL "$pid" ;;
  esac
  wait "$pid"
  rc=$?
  [ "$rc" -ne 0 ] || { echo "FAIL: $how: swaplab exited 0"; exit 1; }
  # qemu dies with swaplab however swaplab dies (PR_SET_PDEATHSIG): allow it a moment
  for _ in $(seq 50); do kill -0 "$q" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$q" 2>/dev/null; then echo "FAIL: $how: qemu $q still alive"; kill -KILL "$q"; exit 1; fi
  if [ "$how" = kill-swaplab ]; then
    # SIGKILL leaves the work dir; `kernel cleanup` finds it by its dead pid
    ls -d "$work"/swaplab-vm-"$pid".* >/dev/null 2>&1 || { echo "FAIL: $how: no work dir named for pid $pid in $work: $(ls -A "$work")"; exit 1; }
    TMPDIR="$work" "$swaplab" kernel cleanup >"$W/cleanup.out" 2>&1 || { echo "FAIL: kernel cleanup: $(cat "$W/cleanup.out")"; exit 1; }
    grep -q "remove $work/swaplab-vm-$pid" "$W/cleanup.out" || { echo "FAIL: kernel cleanup did not report the work dir: $(cat "$W/cleanup.out")"; exit 1; }
  fi
  left="$(ls -A "$work")"
  [ -z "$left" ] || { echo "FAIL: $how: left in TMPDIR: $left"; exit 1; }
  [ "$(losetup -a 2>/dev/null | sort)" = "$loops_before" ] || { echo "FAIL: $how: loop devices changed"; exit 1; }
  echo "vm: $how: swaplab exited $rc ($(head -c 200 "$W/$how.err" | tr '\n' ' ')), qemu gone, no temp dir, no loop device"
done
echo "PASS"
