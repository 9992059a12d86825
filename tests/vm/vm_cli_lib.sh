# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by the tests of swaplab's own vm commands (vm_hibernate.sh,
# vm_kill.sh, vm_reproduce.sh): skips (exit 77, with the reason) without
# qemu or a guest kernel in the cache, and makes $tmp, removed on exit.
command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: qemu-system-x86_64 not found (bash scripts/setup)"; exit 77; }
cache="${SWAPLAB_GUEST_KERNEL_CACHE:-/var/cache/swaplab/guest-kernel}"
ls "$cache"/*/.unpacked >/dev/null 2>&1 || { echo "SKIP: no guest kernel in $cache (bash scripts/guest-kernel)"; exit 77; }
# S, W (the work directory), fail; W removed on exit.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_env.sh" "$swaplab"
