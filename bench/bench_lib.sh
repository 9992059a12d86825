# SPDX-License-Identifier: MIT
# Helpers for the bench scripts (source it): refuse tmpfs, check tools,
# build a release target, medians.

# bench_real_disk FILE: exits 2 if FILE's directory is on tmpfs.
bench_real_disk() {
  mkdir -p "$(dirname "$1")"
  BENCH_FSTYPE=$(df --output=fstype "$(dirname "$1")" | tail -1)
  BENCH_SOURCE=$(df --output=source "$(dirname "$1")" | tail -1)
  if [ "$BENCH_FSTYPE" = tmpfs ]; then echo "refusing: $1 is on tmpfs" >&2; exit 2; fi
}

# bench_tools TOOL...: exits 1 naming the first one missing.
bench_tools() {
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null || { echo "$t not installed (scripts/setup installs the bench tools)" >&2; exit 1; }
  done
}

# bench_build TARGET: prints the path of the release build of TARGET.
bench_build() {
  cmake --preset release >/dev/null
  cmake --build --preset release -j2 --target "$1" >/dev/null
  echo "./build/release/$1"
}

# Median of the numbers on stdin (one per line).
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
