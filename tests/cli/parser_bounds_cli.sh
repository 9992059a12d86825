#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bad input from the command line: traces and scenario files that
# once gave a whole 10 MB token back in the message, a line read whole, a
# swap area cut to 2^32 pages without a word, a key given twice accepted —
# each refused with exit 2 and a short message naming FILE:LINE or the JSON
# path, in 256 MiB of address space and 5 s (tests/cli/lib.sh), the input
# file unchanged. (The parsers' unit tests: TraceFormat.*, Scenario.* in
# tests/workload/.)
# usage: parser_bounds_cli.sh SWAPLAB
set -uo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
# fail, sha, limited, run CODE PATTERN CMD... (256 MiB, 5 s, exit code,
# message), bound_summary
source "$(dirname "$0")/lib.sh"

# refused FILE CODE PATTERN CMD...: run, a message under 1 KiB without a raw
# ESC, FILE unchanged
refused() {
  local file="$1" want="$2" pat="$3"; shift 3
  local sum; sum="$(sha "$file")"
  run "$want" "$pat" "$@"
  [ "$(wc -c <"$W/err")" -lt 1024 ] || fail "$*: a message of $(wc -c <"$W/err") bytes"
  if grep -q $'\e' "$W/err"; then fail "$*: a raw ESC reached stderr"; fi
  [ "$(sha "$file")" = "$sum" ] || fail "$* changed $file"
}

big="$(head -c 10000000 /dev/zero | tr '\0' x)"   # 10 MB

# ---- traces (swaplab replay) -------------------------------------------------
T="$W/t.trace"
printf 'swaplab-trace 1\nswapon dev=0 pages=%s\n' "$big" >"$T"
refused "$T" 2 "t.trace:2: line longer than the limit of 65536 bytes, starting 'swapon dev=0 pages=x{45}… \(" "$S" replay "$T"
printf 'swaplab-trace 1\nswapon dev=0 pages=%s\n' "${big:0:60000}" >"$T"   # a line within the limit, a 60 KB token
refused "$T" 2 "t.trace:2: field 'pages' needs a non-negative integer, got 'x{64}… \(59936 more bytes\)'" "$S" replay "$T"
printf 'swaplab-trace 1\n\e]0;owned\a%s dev=0\n' "${big:0:5000}" >"$T"
refused "$T" 2 "t.trace:2: unknown operation '\\\\x1b\]0;owned\\\\x07x+…" "$S" replay "$T"
printf 'swaplab-trace 1\nswapon dev=0 pages=8589934592\n' >"$T"   # 2^33: was cut to 2^32 silently
refused "$T" 2 "t.trace:2: pages 8589934592 is above the limit of 2\^32 \(4294967296\) pages" "$S" replay "$T"
printf 'swaplab-trace 1\nswapon dev=0 pages=99999999999999999999\n' >"$T"
refused "$T" 2 "t.trace:2: field 'pages' '99999999999999999999' is above the limit of 2\^63-1" "$S" replay "$T"
echo "ok: traces: long line, long token, escapes, pages above 2^32 and 2^63-1 (exit 2, bounded, file unchanged)"

# ---- scenario files (swaplab run) --------------------------------------------
J="$W/s.json"
sc() {  # a minimal scenario (tests/workload/scenario_test.cc); $1: the device list
  printf '{"name": "t", "devices": %s,
 "aging": [{"generator": "holes", "region": "16M", "folio": "4K", "hole": "64K"}],
 "measured": [{"generator": "image", "size": "8M"}],
 "variants": [{"label": "base", "source": "base", "batch": "per-page"}]}\n' "$1" >"$J"
}
sc '[{"name": "d0", "size": "64M"}, {"name": "d1", "size": "64M", "size": "128M"}]'
refused "$J" 2 "s.json: \\\$\.devices\[1\]\.size: key given twice in one object" "$S" run "$J"
sc '[{"name": "d0", "size": "64M"}]'
python3 - "$J" "${big:0:100000}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["devices"][0]["\x1b[2J" + sys.argv[2]] = 1
json.dump(d, open(sys.argv[1], "w"))
PY
refused "$J" 2 "s.json: \\\$\.devices\[0\]\.\\\\x1b\[2Jx+… \(" "$S" run "$J"
python3 - "$J" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["devices"] = [{"name": "d0", "size": "64M"}]
d["measured"][0]["size"] = "17000G"  # 17000 GiB: above 2^32 pages (16 TiB)
json.dump(d, open(sys.argv[1], "w"))
PY
refused "$J" 2 "s.json: \\\$\.measured\[0\]\.size: size [0-9]+ pages is above the limit of 2\^32 pages" "$S" run "$J"
echo "ok: scenarios: a key given twice, a 100 KB key with an escape, a size above the limit (exit 2, bounded, file unchanged)"
bound_summary
echo "parser bounds CLI: all checks passed"
