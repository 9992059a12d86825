#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A sweep directory as untrusted input (issue 31): each file of a prepared
# sweep corrupted or crafted in turn (sweep.json, in/ID.json, points/ID.json:
# syntax, wrong types, missing keys, out-of-range numbers, ids and heatmap
# names that are paths or shell, FIFOs, directories, oversized files), then
# every command run on it (merge --html, emit parallel, emit slurm, point).
# Each must exit 0, 1 or 2 (never a signal: an abort is 134), a command that
# reads the bad file must exit 1 or 2 naming it, nothing may be written
# outside DIR, and no command may run (no PWNED file). A command that does
# not read the file (point never opens sweep.json, merge and emit never
# open in/ID.json, emit and point never open another point's result) runs
# on the file's first corruption only: it never sees the bytes, so running
# it on every case would repeat that run (and `point` simulates a whole
# point each time).
# Usage: sweep_hostile.sh SWAPLAB SOURCE_DIR
set -uo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
L=$(mktemp -d /var/tmp/swaplab-sweep_hostile_log.XXXXXX)
cleanup() { rm -rf "$L"; } # run on exit by test_env.sh

cat >"$L/spec.json" <<JSON
{
  "name": "hostile", "title": "a sweep to corrupt", "base": "$2/tests/sweep/data/holes.json",
  "scale": 0.05,
  "axes": [
    {"name": "hole", "path": "/aging/0/hole", "values": ["16K", "64K"]},
    {"name": "seed", "seed": true, "values": [1, 2]}
  ],
  "derived": [{"name": "gain", "ratio": ["rfc/bios", "base/bios"]}],
  "heatmaps": [{"name": "bios", "x": "seed", "y": "hole", "value": "gain"}]
}
JSON
mkdir -p "$W/a/b"
B=$W/a/b/base
"$S" sweep "$L/spec.json" --out "$B" --prepare 2>"$L/err" || fail "prepare: $(cat "$L/err")"
ID0=$(sed -n 1p "$B/jobs.txt")   # has a result: points/ID0.json
ID1=$(sed -n 2p "$B/jobs.txt")   # has none: `point` reads in/ID1.json
"$S" sweep point "$B" "$ID0" 2>"$L/err" || fail "point: $(cat "$L/err")"
"$S" sweep merge "$B" --html "$B/page.html" >/dev/null 2>"$L/err" || fail "merge: $(cat "$L/err")"

# edit FILE PYTHON: j is the file's JSON, changed in place and written back.
edit() {
  python3 - "$1" "$2" <<'PY'
import json, sys
p, code = sys.argv[1], sys.argv[2]
j = json.load(open(p))
exec(code)
open(p, "w").write(json.dumps(j))
PY
}

n=0
declare -A ran_once  # "FILE CMD" of a command that does not read FILE, once run
# one NAME FILE MUST_FAIL SETUP: a fresh copy of the sweep, SETUP run in it
# (with $F the file's path), then every command; MUST_FAIL lists the
# commands that read FILE and so must refuse it (exit 1 or 2, FILE named).
one() {
  local name=$1 file=$2 must=$3 setup=$4
  local D=$W/a/b/case
  rm -rf "$D"
  cp -a "$B" "$D"
  rm -f "$D/page.html"
  F=$D/$file
  eval "$setup" || fail "$name: setup failed"
  touch "$L/stamp"
  sleep 0.01
  local cmd rc
  for cmd in merge emit-parallel emit-slurm point; do
    if [[ " $must " != *" $cmd "* ]]; then
      [ -z "${ran_once["$file $cmd"]:-}" ] || continue
      ran_once["$file $cmd"]=1
    fi
    rc=0
    case $cmd in
      merge) (cd "$W/a/b" && timeout 20 "$S" sweep merge "$D" --html "$D/page.html") >/dev/null 2>"$L/err" || rc=$? ;;
      emit-parallel) (cd "$W/a/b" && timeout 20 "$S" sweep emit --engine parallel "$D") >/dev/null 2>"$L/err" || rc=$? ;;
      emit-slurm) (cd "$W/a/b" && timeout 20 "$S" sweep emit --engine slurm "$D") >/dev/null 2>"$L/err" || rc=$? ;;
      point) (cd "$W/a/b" && timeout 20 "$S" sweep point "$D" "$ID1") >/dev/null 2>"$L/err" || rc=$? ;;
    esac
    n=$((n + 1))
    [ "$rc" -lt 128 ] && [ "$rc" -ne 124 ] || fail "$name: $cmd crashed or hung (exit $rc): $(head -c 400 "$L/err")"
    if [[ " $must " == *" $cmd "* ]]; then
      [ "$rc" = 1 ] || [ "$rc" = 2 ] || fail "$name: $cmd exit $rc, expected 1 or 2"
      grep -qF "$(basename "$file")" "$L/err" || fail "$name: $cmd did not name $file: $(head -c 400 "$L/err")"
    fi
    [ -z "$(find "$W" -newer "$L/stamp" ! -path "$D" ! -path "$D/*" ! -path "$W/a/b" -print -quit)" ] ||
      fail "$name: $cmd wrote outside DIR: $(find "$W" -newer "$L/stamp" ! -path "$D" ! -path "$D/*")"
    [ -z "$(find "$W" -name 'PWNED*' -print -quit)" ] || fail "$name: $cmd ran a command"
  done
}

SWEEP_READERS="merge emit-parallel emit-slurm"  # point reads in/ID.json only
SJ=sweep.json
IN=in/$ID1.json
PT=points/$ID0.json
# sweep.json: every command reads it.
one "sweep.json not JSON" $SJ "$SWEEP_READERS" 'printf "{\"points\": [" >"$F"'
one "sweep.json empty" $SJ "$SWEEP_READERS" ': >"$F"'
one "sweep.json a list" $SJ "$SWEEP_READERS" 'echo "[]" >"$F"'
one "sweep.json a FIFO" $SJ "$SWEEP_READERS" 'rm "$F" && mkfifo "$F"'
one "sweep.json a directory" $SJ "$SWEEP_READERS" 'rm "$F" && mkdir "$F"'
one "sweep.json -> /dev/zero" $SJ "$SWEEP_READERS" 'rm "$F" && ln -s /dev/zero "$F"'
one "sweep.json 65 MiB" $SJ "$SWEEP_READERS" 'truncate -s 65M "$F"'
one "points missing" $SJ "$SWEEP_READERS" 'edit "$F" "del j[\"points\"]"'
one "points a string" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"points\"] = \"x\""'
one "point not an object" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"points\"][1] = 5"'
one "point id a number" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"points\"][0][\"id\"] = 5"'
one "point id shell" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"points\"][0][\"id\"] = \"x; touch PWNED #\""'
one "point id a path" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"points\"][0][\"id\"] = \"../../../PWNED00\""'
one "point id twice" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"points\"][1][\"id\"] = j[\"points\"][0][\"id\"]"'
one "point axes missing" $SJ "$SWEEP_READERS" 'edit "$F" "del j[\"points\"][2][\"axes\"]"'
one "point axis missing" $SJ "$SWEEP_READERS" 'edit "$F" "del j[\"points\"][2][\"axes\"][\"seed\"]"'
one "axes missing" $SJ "$SWEEP_READERS" 'edit "$F" "del j[\"axes\"]"'
one "axes a number" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"axes\"] = 3"'
one "axis name a number" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"axes\"][0] = 3"'
one "scale a string" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"scale\"] = \"1\""'
one "scale -1" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"scale\"] = -1"'
one "structural a string" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"structural\"] = \"yes\""'
one "name a number" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"name\"] = 5"'
one "command a list" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"command\"] = [1]"'
one "spec missing" $SJ "$SWEEP_READERS" 'edit "$F" "del j[\"spec\"]"'
one "spec title a number" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"spec\"][\"title\"] = 5"'
one "spec axes missing" $SJ "$SWEEP_READERS" 'edit "$F" "del j[\"spec\"][\"axes\"]"'
one "spec axis name a list" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"spec\"][\"axes\"][1][\"name\"] = []"'
one "heatmap name a path" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"spec\"][\"heatmaps\"][0][\"name\"] = \"x/../../../ESCAPED\""'
one "heatmap name too long" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"spec\"][\"heatmaps\"][0][\"name\"] = \"a\" * 65"'
one "heatmap x not an axis" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"spec\"][\"heatmaps\"][0][\"x\"] = \"nope\""'
one "heatmaps an object" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"spec\"][\"heatmaps\"] = {}"'
one "derived ratio of numbers" $SJ "$SWEEP_READERS" 'edit "$F" "j[\"spec\"][\"derived\"][0][\"ratio\"] = [1, 2]"'
# in/ID.json: what `point` runs.
one "input not JSON" "$IN" "point" 'printf "{\"scale\": " >"$F"'
one "input a FIFO" "$IN" "point" 'rm "$F" && mkfifo "$F"'
one "input scale a string" "$IN" "point" 'edit "$F" "j[\"scale\"] = \"2\""'
one "input scale 0" "$IN" "point" 'edit "$F" "j[\"scale\"] = 0"'
one "input scale -1" "$IN" "point" 'edit "$F" "j[\"scale\"] = -1"'
one "input scale 1e300" "$IN" "point" 'edit "$F" "j[\"scale\"] = 1e300"'
one "input structural a number" "$IN" "point" 'edit "$F" "j[\"structural\"] = 1"'
one "input id another" "$IN" "point" 'edit "$F" "j[\"id\"] = \"0123456789abcdef\""'
one "input knobs a string" "$IN" "point" 'edit "$F" "j[\"knobs\"] = \"x\""'
one "input knob a number" "$IN" "point" 'edit "$F" "j[\"knobs\"] = [{\"knob\": 5, \"variant\": \"\", \"value\": \"1\"}]"'
one "input scenario missing" "$IN" "point" 'edit "$F" "del j[\"scenario\"]"'
one "input axes missing" "$IN" "point" 'edit "$F" "del j[\"axes\"]"'
one "input 17 MiB" "$IN" "point" 'truncate -s 17M "$F"'
# points/ID.json: what merge reads.
one "result not JSON" "$PT" "merge" 'head -c 20 "$F" >"$F.x" && mv "$F.x" "$F"'
one "result a FIFO" "$PT" "merge" 'rm "$F" && mkfifo "$F"'
one "result cpu_seconds a string" "$PT" "merge" 'edit "$F" "j[\"cpu_seconds\"] = \"1\""'
one "result wall_seconds -1" "$PT" "merge" 'edit "$F" "j[\"wall_seconds\"] = -1"'
one "result metrics a list" "$PT" "merge" 'edit "$F" "j[\"metrics\"] = []"'
one "result metric a string" "$PT" "merge" 'edit "$F" "j[\"metrics\"][\"base/bios\"] = \"many\""'
one "result id another" "$PT" "merge" 'edit "$F" "j[\"id\"] = \"0123456789abcdef\""'
one "result id missing" "$PT" "merge" 'edit "$F" "del j[\"id\"]"'
echo "PASS: $n commands on hostile sweep directories"
