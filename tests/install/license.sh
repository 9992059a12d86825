#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# swaplab is MIT (LICENSE) and says so in an SPDX line near the top of every
# source file (C/C++, shell, Python, CMake, the scripts); the kernel patches
# are GPL-2.0-only like the code they change (kernel-patches/COPYING), and
# the Debian copyright file names both. The checker runs on the source tree
# and, to show it can fail, on a small tree with one file missing its line.
set -euo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
src=$1

# needs_spdx PATH: whether PATH (relative to the tree) is one of our sources.
needs_spdx() {
  case $1 in
    kernel-patches/* | kernel-config/* | fuzz/corpus/*) return 1 ;;
    *.cc | *.h | *.c | *.h.in | *.sh | *.py | *.cmake | *.cmake.in | *.pc.in | CMakeLists.txt | */CMakeLists.txt) return 0 ;;
    .ci/run | fuzz/run | scripts/*) return 0 ;;
  esac
  return 1
}

# list_files DIR: the tree's files, NUL-separated, as git tracks them when
# DIR is a work tree (build outputs and caches are not ours to check).
list_files() {
  if git -C "$1" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$1" ls-files -z
  else
    (cd "$1" && find . -path ./build -prune -o -path ./.git -prune -o -type f -printf '%P\0')
  fi
}

# check_tree DIR: prints one line per problem; fails when there is one.
check_tree() {
  local dir=$1 bad=0 n=0 f
  while IFS= read -r -d '' f; do
    needs_spdx "$f" || continue
    n=$((n + 1))
    if ! head -n 3 -- "$dir/$f" | grep -q 'SPDX-License-Identifier: MIT$'; then
      printf 'FAIL: %q: no "SPDX-License-Identifier: MIT" in its first three lines\n' "$f"
      bad=1
    fi
  done < <(list_files "$dir")
  [ "$n" -gt 0 ] || { echo "FAIL: $dir: no source files found"; bad=1; }
  grep -q '^MIT License$' "$dir/LICENSE" 2>/dev/null || { echo "FAIL: $dir/LICENSE is not the MIT license"; bad=1; }
  if [ -d "$dir/kernel-patches" ]; then
    grep -q 'GNU GENERAL PUBLIC LICENSE' "$dir/kernel-patches/COPYING" ||
      { echo "FAIL: kernel-patches/COPYING is not the GPL"; bad=1; }
    grep -q 'GPL-2.0-only' "$dir/kernel-patches/README.md" ||
      { echo "FAIL: kernel-patches/README.md does not say GPL-2.0-only"; bad=1; }
    if grep -rl 'SPDX-License-Identifier: MIT' "$dir/kernel-patches" >/dev/null; then
      echo "FAIL: a kernel patch carries the MIT line: $(grep -rl 'SPDX-License-Identifier: MIT' "$dir/kernel-patches" | head -1)"
      bad=1
    fi
  fi
  if [ -f "$dir/cmake/debian/copyright" ]; then
    for want in '^License: Expat$' '^License: GPL-2.0-only$' '^Files: kernel-patches/\*$'; do
      grep -q "$want" "$dir/cmake/debian/copyright" ||
        { echo "FAIL: cmake/debian/copyright lacks a line matching $want"; bad=1; }
    done
  fi
  [ "$bad" -eq 0 ] && echo "ok: $dir: $n source files carry the MIT SPDX line"
  return "$bad"
}

check_tree "$src"

# The checker itself: a tree with one C++ file whose SPDX line is missing
# (and one correct file) must fail, naming the file.
mkdir -p "$W/bad/src"
cp "$src/LICENSE" "$W/bad/"
printf '// SPDX-License-Identifier: MIT\nint a;\n' >"$W/bad/src/good.cc"
printf '// no license line\nint b;\n' >"$W/bad/src/bare.cc"
if check_tree "$W/bad" >"$W/bad.log"; then
  echo "FAIL: the checker passed a tree with src/bare.cc lacking its SPDX line"
  exit 1
fi
grep -q 'FAIL: src/bare.cc' "$W/bad.log" || { echo "FAIL: the checker did not name src/bare.cc:"; cat "$W/bad.log"; exit 1; }
grep -q 'good.cc' "$W/bad.log" && { echo "FAIL: the checker named the correct file"; exit 1; }
echo "ok: a file without its SPDX line is found"
