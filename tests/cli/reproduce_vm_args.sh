#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `reproduce NAME --vm`: which names and options a guest run takes, refused
# before anything boots (exit 2, the reason on stderr): seed 003's
# scenarios only, always with --kernel (a kernel built with
# kernel-patches/nonfull-6.12), no --csv / --html / --host-cpu; a kernel
# that is not there is named. The guest runs themselves are
# tests/vm/vm_patched.sh's `churn` step.
# usage: reproduce_vm_args.sh SWAPLAB
set -uo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
source "$(dirname "$0")/lib.sh"

run 2 "not one of seed 003's scenarios" "$S" reproduce rfc-holes --vm --kernel rfc-6.12
run 2 "not one of seed 003's scenarios" "$S" reproduce no-such-scenario --vm --kernel rfc-6.12
run 2 "nonfull-6.12 \(--kernel" "$S" reproduce nonfull-vs-free-8g --vm
run 2 "seed 001.s two layouts only" "$S" reproduce rfc-shuffled --vm
run 2 'no-such\\x1b\[2J' "$S" reproduce "$(printf 'no-such\033[2J')" --vm --kernel rfc-6.12
! grep -q "$(printf '\033')" "$W/err" || fail "an escape from the command line reached the terminal"
run 2 "no --check-data, --csv" "$S" reproduce nonfull-vs-free-8g --vm --kernel rfc-6.12 --csv
run 2 "no --check-data, --csv" "$S" reproduce nonfull-vs-free-all --vm --kernel rfc-6.12 --host-cpu none
run 2 "no --io: the guest swaps to zram" "$S" reproduce nonfull-vs-free-8g --vm --kernel rfc-6.12 --io posix
run 2 "no built kernel .no-such-kernel." "$S" reproduce nonfull-vs-free-10g --vm --kernel no-such-kernel
grep -q "no-such-kernel" "$W/err" || fail "a missing kernel is not named: $(cat "$W/err")"
run 2 'no built kernel .x\\x1b\[2J.' "$S" reproduce nonfull-vs-free-10g --vm --kernel "$(printf 'x\033[2J')"
! grep -q "$(printf '\033')" "$W/err" || fail "an escape in --kernel reached the terminal"
[ ! -s "$W/out" ] || fail "a refused run printed a table: $(head -c 300 "$W/out")"
# --vm-scale out of the guest's range: refused by the option itself.
run 2 "not in range" "$S" reproduce nonfull-vs-free-8g --vm --kernel rfc-6.12 --vm-scale 0.5
echo "PASS"
