#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# swaplab image read / inspect from the command line: read-only by default,
# --consume as resume, exit codes,
# a count field that would size a 16 GiB allocation refused within 256 MiB
# of address space, strings from input escaped.
# usage: image_read_cli.sh SWAPLAB
set -uo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
# fail, sha, limited, run CODE PATTERN CMD... (256 MiB, 5 s, exit code,
# message), bound_summary
source "$(dirname "$0")/lib.sh"
A="$W/area"

"$S" area format "$A" --size 64M >/dev/null || fail "area format"
"$S" image write "$A" --size 4M --compress lzo --json >/dev/null || fail "image write"
sha0="$(sha256sum <"$A")"

# read-only by default: inspect and read change nothing, twice over
"$S" image inspect "$A" --json >"$W/inspect.json" || fail "inspect exit $?"
"$S" image read "$A" --json --dump "$W/stream" >"$W/read.json" || fail "read exit $?"
"$S" image read "$A" >/dev/null || fail "second read exit $?"
"$S" image read "$A" --kernel-io --json >"$W/kread.json" || fail "read --kernel-io exit $?"
[ "$(sha256sum <"$A")" = "$sha0" ] || fail "the area changed under a read without --consume"
python3 - "$W" <<'PY' || fail "JSON"
import json, os, sys
w = sys.argv[1]
i = json.load(open(w + "/inspect.json")); r = json.load(open(w + "/read.json"))
k = json.load(open(w + "/kread.json"))
assert i["origin"] == r["origin"] == "swaplab", (i["origin"], r["origin"])
assert r["crc"] == "verified" and r["consumed"] is False, r
assert r["pages_verified"] == r["snapshot_pages"] == i["snapshot_pages"]
assert os.path.getsize(w + "/stream") == 4096 * r["snapshot_pages"]
# the kernel's order reads the same image: one sync read per map page
assert r["io"] == "pipelined" and k["io"] == "kernel", (r["io"], k["io"])
for f in ("crc32", "units", "snapshot_pages", "map_pages", "pages_verified"):
    assert r[f] == k[f], (f, r[f], k[f])
assert k["sync_ios"] >= k["map_pages"] + 2 > r["sync_ios"], (k["sync_ios"], k["map_pages"], r["sync_ios"])
PY

# --dump never overwrites (exit 2, the file untouched)
echo keep >"$W/exists"
run 2 "exists" "$S" image read "$A" --dump "$W/exists"
[ "$(cat "$W/exists")" = keep ] || fail "--dump overwrote an existing file"
[ "$(sha256sum <"$A")" = "$sha0" ] || fail "the area changed under a refused --dump"

# a path that does not exist is bad usage
run 2 "nope: No such file" "$S" image read "$W/nope"
[ ! -e "$W/nope" ] || fail "image read created the missing path"

# swaplab's tag claiming 2^28 .. 2^64-1 saveable pages (2^31: a 16 GiB PFN
# list; 2^28 took 3.9 GB and 15 s, 2^31 and 2^32 aborted with bad_alloc
# before the fix): refused with the field named, before any allocation, in
# 256 MiB of address space, the file unchanged; inspect (which builds no
# snapshot) still reports the image
info="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["info_dblock"])' "$W/inspect.json")"
for count in 268435456 2147483648 4294967296 18446744073709551615; do
  cp "$A" "$W/huge"
  python3 - "$W/huge" "$info" "$count" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2]) * 4096 + 72)   # the tag's saveable count
    f.write(struct.pack("<Q", int(sys.argv[3])))
PY
  sum="$(sha "$W/huge")"
  run 1 "saveable page count $count does not fit" "$S" image read "$W/huge"
  run 1 "saveable page count $count" "$S" image read "$W/huge" --json
  run 0 "" "$S" image inspect "$W/huge"
  [ "$(sha "$W/huge")" = "$sum" ] || fail "reading an image with a $count page count changed it"
done
# a corrupt image is 1 whichever check finds it (it was 1 or 2): the
# header's image pointer, a map entry, swsusp_info's page count — each
# named, the file unchanged
corrupt() {  # WHAT PATTERN PYTHON-ON-f...: a copy of the image, patched by the python lines (f open r+b)
  local what="$1" pat="$2"; shift 2
  cp "$A" "$W/bad"
  python3 -c "import struct, sys
f = open(sys.argv[1], 'r+b')
f.seek(4064); image = struct.unpack('<Q', f.read(8))[0]
$*" "$W/bad" "$info"
  local sum; sum="$(sha "$W/bad")"
  run 1 "$pat" "$S" image read "$W/bad"
  run 1 "$pat" "$S" image inspect "$W/bad"
  [ "$(sha "$W/bad")" = "$sum" ] || fail "reading an image with $what changed it"
}
corrupt "an image pointer past the end" "swsusp_header: image \(byte 4064\) is dblock 1000000, past the device end" \
  "f.seek(4064); f.write(struct.pack('<Q', 1000000))"
corrupt "a map entry past the end" "swap map: entry 3 of map page 0 \(dblock [0-9]+\) is dblock 1000000, past the device end" \
  "f.seek(image * 4096 + 3 * 8); f.write(struct.pack('<Q', 1000000))"
corrupt "a wrong page count" "swap map: [0-9]+ entries for an image of|swsusp_info" \
  "f.seek(int(sys.argv[2]) * 4096 + 424); f.write(struct.pack('<Q', 7))"

# --consume: the signature goes back at once, the image cannot be read again
"$S" image read "$A" --consume --json >"$W/c.json" || fail "read --consume exit $?"
grep -q '"consumed": true' "$W/c.json" || fail "consumed not reported"
"$S" image read "$A" >/dev/null 2>"$W/err"; rc=$?
[ $rc -eq 1 ] || fail "read after --consume exited $rc, want 1"
grep -q "no S1SUSPEND" "$W/err" || fail "after --consume: $(cat "$W/err")"

# a label holding terminal escapes is printed escaped, in text and CSV
"$S" area format "$W/lab" --size 1M --label $'\e]0;pwn\a\e[2J' >/dev/null || fail "format with label"
sum="$(sha "$W/lab")"
run 0 "" "$S" area inspect "$W/lab"
if grep -q $'\e' "$W/out"; then fail "area inspect printed a raw ESC from the label"; fi
grep -q 'label *\\x1b\]0;pwn\\x07\\x1b\[2J' "$W/out" || fail "label not shown escaped: $(grep label "$W/out")"
run 0 "" "$S" area inspect "$W/lab" --csv
if grep -q $'\e' "$W/out"; then fail "area inspect --csv printed a raw ESC from the label"; fi
grep -q '\\x1b\]0;pwn\\x07\\x1b\[2J' "$W/out" || fail "CSV label not escaped: $(grep label "$W/out")"
[ "$(sha "$W/lab")" = "$sum" ] || fail "area inspect changed the area"
bound_summary
echo "image read / inspect CLI: all checks passed"
