# SPDX-License-Identifier: MIT
# Helpers of the install tests: a temporary directory W removed on exit and
# fail (../lib/test_env.sh), and the example consumer built out of tree with
# CMake and with pkg-config.

source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_env.sh"

# consumer_cmake SRC PREFIX_PATH BUILD: examples/ through find_package.
consumer_cmake() {
  cmake -S "$1/examples" -B "$3" -DCMAKE_PREFIX_PATH="$2" -DCMAKE_BUILD_TYPE=Release \
    >"$3.log" 2>&1 || { cat "$3.log"; fail "configuring examples/ with find_package(swaplab)"; }
  cmake --build "$3" -j2 >>"$3.log" 2>&1 || { cat "$3.log"; fail "building examples/ against the install"; }
  "$3/two_threads" || fail "the find_package consumer ran and failed"
}

# consumer_pkgconfig SRC PC_DIR OUT [--static]: the example through swaplab.pc.
consumer_pkgconfig() {
  local flags
  flags=$(PKG_CONFIG_PATH="$2" pkg-config --cflags --libs ${4:-} swaplab) || fail "pkg-config swaplab"
  echo "pkg-config ${4:-} swaplab: $flags"
  # shellcheck disable=SC2086
  g++ -std=c++20 -O1 "$1/examples/two_threads.cc" -o "$3" $flags || fail "building with pkg-config"
  "$3" || fail "the pkg-config consumer ran and failed"
}
