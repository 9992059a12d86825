# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# The preamble of the shell tests, sourced first with the test's arguments:
#   source "$(dirname "$0")/../lib/test_env.sh" "$@"
# S is the first argument (the swaplab binary, in most tests) and W a fresh
# work directory under /var/tmp named after the script. On exit, however
# the script ends (a failure, set -e, a signal's exit), the script's own
# `cleanup` function runs when it defines one (swapoff, umount, losetup -d,
# killing a child: whatever it set up, in its order), then W is removed;
# the script's exit status is kept. `fail MESSAGE` prints "FAIL: MESSAGE"
# and exits 1. The error mode (set -e or not) stays the caller's.
S="${1:-}"
W="$(mktemp -d "/var/tmp/swaplab-$(basename "$0" .sh).XXXXXX")" || {
  echo "FAIL: cannot make a work directory under /var/tmp"
  exit 1
}

test_env_exit() {
  local rc=$?
  if declare -F cleanup >/dev/null; then cleanup || true; fi
  rm -rf "$W"
  return "$rc"
}
trap test_env_exit EXIT

fail() {
  echo "FAIL: $*"
  exit 1
}
