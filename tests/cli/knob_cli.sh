#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --knob NAME=VALUE: any knob of the policy table from the
# command line of replay, kernel run, image write, run and demo; the
# effective policy in every header (Describe) and every knob by name in
# every --json; a knob that changes behaviour changes the result; an
# unknown knob or a value out of range is exit 2 naming it, escaped.
# usage: knob_cli.sh SWAPLAB
set -uo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
source "$(dirname "$0")/lib.sh"
json() { python3 -c "import json,sys; d=json.load(open('$W/out')); print($1)"; }

# replay: the knob in the JSON and in the text header.
printf 'swaplab-trace 1\nswapon dev=0 pages=4096 ssd=1\nalloc folio=1 order=0 cpu=0\nalloc folio=2 order=4 cpu=1\n' >"$W/t.trace"
run 0 "" "$S" replay "$W/t.trace" --knob count_max=63 --knob split_tails_last_first=false --json
[ "$(json 'd["knobs"]["count_max"], d["knobs"]["split_tails_last_first"], d["policy"]')" = "63 False linux-6.18" ] ||
  fail "replay --json knobs: $(json 'd["knobs"]')"
[ "$(json 'd["knobs"]["search"][0]')" = "free-if-discard" ] || fail "replay --json search: $(json 'd["knobs"]["search"]')"
run 0 "" "$S" replay "$W/t.trace" --knob search=free,nonfull,steal-higher
grep -q "^policy linux-6.18: search=free,nonfull,steal-higher .*count_max=63" "$W/out" ||
  fail "replay header: $(head -3 "$W/out")"

# Refusals: exit 2, the knob named, nothing raw from the input echoed.
run 2 "unknown knob 'count_maxx' \(knobs: search, " "$S" replay "$W/t.trace" --knob count_maxx=3
run 2 "knob count_max=300: expected an integer in 2..255" "$S" replay "$W/t.trace" --knob count_max=300
run 2 "knob slot_cache=yes: expected true or false" "$S" replay "$W/t.trace" --knob slot_cache=yes
run 2 "expected NAME=VALUE" "$S" replay "$W/t.trace" --knob count_max
run 2 "the slot cache needs per-device per-CPU hints" "$S" replay "$W/t.trace" --knob slot_cache=true
run 2 "unknown knob '\\\\x1b\[31m" "$S" replay "$W/t.trace" --knob $'\e[31m=1'
if grep -q $'\e' "$W/err"; then fail "a raw ESC reached stderr"; fi
run 2 "unknown knob 'nope'" "$S" kernel run "$W/t.trace" --knob nope=1
run 2 "unknown knob 'nope'" "$S" demo --ops 100 --knob nope=1

# demo: a knob that changes the allocator changes the counters.
run 0 "" "$S" demo --policy linux-6.18 --ops 20000 --json
base="$(json 'd["demo"]["runs"][0]["fast_path_hits"], d["demo"]["runs"][0]["swpout_fallback_64kB"]')"
[ "$(json 'len(d["demo"]["runs"])')" = 1 ] || fail "demo --policy ran $(json 'len(d["demo"]["runs"])') presets"
run 0 "" "$S" demo --policy linux-6.18 --ops 20000 --json --knob percpu_hint_per_device=true --knob slot_cache=true
[ "$(json 'd["demo"]["runs"][0]["knobs"]["slot_cache"]')" = True ] || fail "demo --json knobs"
other="$(json 'd["demo"]["runs"][0]["fast_path_hits"], d["demo"]["runs"][0]["swpout_fallback_64kB"]')"
[ "$base" != "$other" ] || fail "demo: slot_cache + per-device hints changed nothing ($base)"
run 0 "" "$S" demo --ops 2000 --knob count_max=63
[ "$(grep -c '^policy .*count_max=63' "$W/out")" -ge 4 ] || fail "demo: not every preset's header shows the knob"

# run: every variant gets the knob; the header and the JSON show it.
cat >"$W/s.json" <<'JSON'
{"name": "knob-test", "devices": [{"name": "d", "size": "64M"}],
 "aging": [{"generator": "fill-free", "region": "16M", "free_share": 0.5}],
 "measured": [{"generator": "fill-free", "region": "8M"}],
 "variants": [{"label": "a", "policy": {"preset": "linux-6.18"}}, {"label": "b", "policy": {"preset": "mm-new"}}]}
JSON
run 0 "" "$S" run "$W/s.json" --knob count_max=99 --json
[ "$(json '[v["knobs"]["count_max"] for v in d["scenarios"][0]["variants"]]')" = "[99, 99]" ] ||
  fail "run --json: $(head -c 600 "$W/out")"
run 0 "" "$S" run "$W/s.json" --knob count_max=99
[ "$(grep -c 'policy .*count_max=99' "$W/out")" = 2 ] || fail "run header: $(head -12 "$W/out")"
run 2 "variant a: --knob: knob count_max=1: expected an integer in 2..255" "$S" run "$W/s.json" --knob count_max=1

# image write: the knob reaches the image's allocator and its JSON.
truncate -s 0 "$W/area"
dd if=/dev/zero of="$W/area" bs=1M count=64 status=none
run 0 "" "$S" area format "$W/area"
run 0 "" "$S" image write "$W/area" --size 1M --knob count_max=31 --json
[ "$(json 'd["knobs"]["count_max"], d["policy"]')" = "31 mm-new" ] || fail "image write --json: $(head -c 400 "$W/out")"
run 2 "unknown knob 'nope'" "$S" image write "$W/area" --size 1M --knob nope=1
echo "PASS"
