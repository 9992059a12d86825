#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/vm/image_gaps.py (vm_doctor's check of an image the kernel wrote in
# more runs than doctor predicted) on images swaplab writes: one run, no
# gap; then the last stream entry moved three blocks on (two runs, a gap
# of three blocks, one of them the old page with data); then the gap
# filled with data.
set -uo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
here="$(cd "$(dirname "$0")" && pwd)"
area="$W/area.swap"
"$S" area format "$area" --size 64M >/dev/null || fail "area format"
"$S" image write "$area" --size 12M >/dev/null || fail "image write"
first="$("$S" area inspect "$area" | sed -n 's/^swsusp.image *\([0-9]*\) .*/\1/p')"
[ -n "$first" ] || fail "no swsusp.image line in area inspect"
out="$(python3 "$here/image_gaps.py" "$area" "$first")"
[[ "$out" =~ ^image_blocks\ [0-9]+\ runs\ 1\ gap_blocks\ 0\ written\ 0$ ]] || fail "one run: $out"
# The last entry of the last map page, three blocks on; then the blocks
# of the gap written.
python3 - "$area" "$first" <<'PY' || fail "cannot move the last entry"
import sys
f = open(sys.argv[1], "r+b")
at, last = int(sys.argv[2]), None
while at:
    f.seek(at * 4096)
    p = f.read(4096)
    n = next((k for k in range(511) if int.from_bytes(p[8 * k:8 * k + 8], "little") == 0), 511)
    last = (at, n - 1, int.from_bytes(p[8 * (n - 1):8 * n], "little"))
    at = int.from_bytes(p[4088:4096], "little")
m, k, d = last
f.seek(m * 4096 + 8 * k)
f.write((d + 3).to_bytes(8, "little"))
f.seek((d + 3) * 4096)
f.write(b"moved page")
open(sys.argv[1] + ".gap", "w").write(f"{d} {d + 1} {d + 2}")
PY
out="$(python3 "$here/image_gaps.py" "$area" "$first")"
[[ "$out" =~ \ runs\ 2\ gap_blocks\ 3\ written\ 1$'\n'gaps\ [0-9]+-[0-9]+\ \(1\ with\ data\)$ ]] ||
  fail "a gap of three, one with the old page: $out"
for b in $(cat "$area.gap"); do
  printf 'swapped out' | dd of="$area" bs=4096 seek="$b" conv=notrunc status=none
done
out="$(python3 "$here/image_gaps.py" "$area" "$first")"
[[ "$out" =~ \ runs\ 2\ gap_blocks\ 3\ written\ 3$'\n' ]] || fail "the gap filled: $out"
echo "image_gaps: 3 cases ok"
