#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 31, outputs, temporary files, disk and signals: an output path that
# is the input, a swap area, a device or (without --force) an existing file
# is refused and left as it was; output directories are new, empty or ours,
# checked before the run; a link planted at a temporary area's name is not
# followed; FIFOs and /dev/zero are refused at once; `area format` refuses
# sizes over the format's limit and the free space, and leaves no file when
# interrupted (an existing file it extends goes back to its old length);
# a failed write to stdout exits 1; scenario strings are escaped;
# --scale nan is a usage error; a trace's swapon records are priced
# against the memory before the model is made.
# usage: outputs_cli.sh SWAPLAB SCENARIO_DIR TRACE_DIR
set -uo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
SCD="$2"; TRACES="$3"
# W is on disk (/var/tmp): `area format` below writes real blocks
cleanup() { [ -n "${pid:-}" ] && kill -9 "$pid" 2>/dev/null; } # run on exit by test_env.sh
source "$(dirname "$0")/lib.sh" # run, sha
ulimit -c 0                     # SIGQUIT below: no core files
T="$TRACES/frag.trace"
cp "$T" "$W/t.trace"

# -- the output is the input, an area, a device, an existing file --------
run 0 "" "$S" area format "$W/a.swp" --size 8M
before=$(sha "$W/a.swp")
run 2 "is the input" "$S" map "$W/a.swp" -o "$W/a.swp"
[ "$(sha "$W/a.swp")" = "$before" ] || fail "map a.swp -o a.swp changed the area"
run 2 "is the input" "$S" map "$W/a.swp" -o "$W/a.swp" --force
ln "$W/a.swp" "$W/hard.swp"
run 2 "is the input" "$S" map "$W/a.swp" -o "$W/hard.swp" --force
run 2 "swap area" "$S" map "$W/t.trace" -o "$W/a.swp" --force
[ "$(sha "$W/a.swp")" = "$before" ] || fail "map -o AREA --force changed the area"
tb=$(sha "$W/t.trace")
run 2 "is the input" "$S" map "$W/t.trace" -o "$W/t.trace"
[ "$(sha "$W/t.trace")" = "$tb" ] || fail "map t.trace -o t.trace changed the trace"
run 2 "character device" "$S" map "$W/t.trace" -o /dev/null
echo precious >"$W/x.svg"
run 2 "exists; use --force" "$S" map "$W/t.trace" -o "$W/x.svg"
grep -qx precious "$W/x.svg" || fail "an existing file was replaced without --force"
run 0 "" "$S" map "$W/t.trace" -o "$W/x.svg" --force
grep -q "<svg" "$W/x.svg" || fail "--force did not replace the file"
run 0 "" "$S" map "$W/t.trace" -o "$W/new.svg"
ls -A "$W" | grep -q swaplab-tmp && fail "a temporary output file was left: $(ls -A "$W")"
echo "outputs: the input, an area, a hard link to it, /dev/null and an existing file refused"

# -- output directories: new, empty or ours, checked before the run -------
SC="$SCD/rfc-holes.json"
mkdir "$W/foreign"
echo mine >"$W/foreign/index.html"
run 2 "not a swaplab output directory" "$S" run "$SC" --structural --scale 0.01 --html "$W/foreign"
[ "$RUN_MS" -lt 2000 ] || fail "--html DIR refused only after ${RUN_MS} ms (after the run?)"
refused_ms=$RUN_MS
grep -qx mine "$W/foreign/index.html" || fail "a foreign index.html was replaced"
run 2 "not a swaplab output directory" "$S" reproduce slot-cache-vs-percpu-rotation --out "$W/foreign"
mkdir "$W/empty"
run 0 "" "$S" run "$SC" --structural --scale 0.01 --html "$W/empty"
run 0 "" "$S" reproduce slot-cache-vs-percpu-rotation --out "$W/new"
[ -s "$W/empty/index.html" ] && [ -s "$W/new/report.csv" ] && [ -e "$W/new/.swaplab-output" ] ||
  fail "--html / --out wrote nothing: $(ls -A "$W/empty" "$W/new")"
run 0 "" "$S" run "$SC" --structural --scale 0.01 --html "$W/empty" # ours: again
echo "output directories: a foreign one refused in ${refused_ms} ms, ours written twice"

# -- a link planted at a temporary area's old, predictable name -----------
# The run's area goes to $W/tmp (the scenario's dir): links at
# swaplab-r<pid>-rfc-holes-real.swap for the next 400 pids, to an empty
# victim (an empty file is formatted without --force).
mkdir "$W/tmp"
sed "s|\"dir\": \"/var/tmp\"|\"dir\": \"$W/tmp\"|; s|\"repetitions\": 3|\"repetitions\": 1|" \
  "$SCD/rfc-holes-real.json" >"$W/real.json"
: >"$W/victim"
last=$(cat /proc/sys/kernel/ns_last_pid 2>/dev/null || echo $$)
for p in $(seq $((last + 1)) $((last + 400))); do
  ln -s "$W/victim" "$W/tmp/swaplab-r$p-rfc-holes-real.swap"
done
timeout 120 "$S" run "$W/real.json" --scale 0.05 >/dev/null 2>"$W/err" || fail "run with planted links: $(head -c 300 "$W/err")"
[ -s "$W/victim" ] && fail "the planted link was followed: the victim holds $(stat -c %s "$W/victim") bytes"
[ "$(find "$W/tmp" -type f | wc -l)" = 0 ] || fail "the run left $(find "$W/tmp" -type f)"
echo "temporary area: 400 planted links not followed, nothing left"

# -- non-regular inputs refused at once -----------------------------------
mkfifo "$W/fifo"
run 2 "regular file" "$S" map "$W/fifo" -o "$W/f.svg"
run 2 "regular file" "$S" replay /dev/zero
run 2 "regular file" "$S" replay "$W/fifo"
run 2 "regular file" "$S" map /dev/zero -o "$W/z.svg"
run 2 "regular file" "$S" run /dev/zero
run 2 "regular file" "$S" run "$W/fifo"
echo "FIFO and /dev/zero refused (slowest case so far ${SLOWEST_MS} ms)"

# -- area format: the format's limit, the free space, signals -------------
run 2 "2\^32 pages" "$S" area format "$W/huge.swp" --size 17T
run 1 "free" "$S" area format "$W/huge.swp" --size 16T
[ -e "$W/huge.swp" ] && fail "a refused format left $W/huge.swp"
for sig in INT TERM HUP QUIT; do
  "$S" area format "$W/big.swp" --size 4G >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 200); do [ -s "$W/big.swp" ] && break; sleep 0.01; done
  [ -e "$W/big.swp" ] || fail "SIG$sig: no file appeared"
  kill -s "$sig" "$pid"
  wait "$pid" 2>/dev/null; rc=$?
  pid=""
  [ $rc -ge 128 ] || fail "SIG$sig: area format ended with $rc before the signal (too fast a disk?)"
  [ -e "$W/big.swp" ] && fail "SIG$sig left $(stat -c %s "$W/big.swp") bytes of $W/big.swp"
done
# an existing area extended: the signal takes the growth back, the area as it was
"$S" area format "$W/grow.swp" --size 8M >/dev/null || fail "area format grow.swp"
grow_sha=$(sha "$W/grow.swp")
for sig in INT TERM HUP QUIT; do
  "$S" area format "$W/grow.swp" --size 4G >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 200); do [ "$(stat -c %s "$W/grow.swp")" -gt 8388608 ] && break; sleep 0.01; done
  kill -s "$sig" "$pid"
  wait "$pid" 2>/dev/null; rc=$?
  pid=""
  [ $rc -ge 128 ] || fail "SIG$sig: area format (extending) ended with $rc before the signal"
  size=$(stat -c %s "$W/grow.swp")
  [ "$size" = 8388608 ] || fail "SIG$sig while extending left grow.swp at $size bytes, want 8388608"
  [ "$(sha "$W/grow.swp")" = "$grow_sha" ] || fail "SIG$sig while extending changed grow.swp"
done
echo "area format: 17T and 16T (over the free space) refused; INT TERM HUP QUIT leave no file, and an extended area as it was"

# -- stdout that cannot be written ---------------------------------------
if [ -w /dev/full ]; then
  "$S" replay "$T" >/dev/full 2>"$W/err"; rc=$?
  [ $rc = 1 ] || fail "replay >/dev/full exited $rc, want 1"
  "$S" run "$SC" --structural --scale 0.01 --csv >/dev/full 2>"$W/err"; rc=$?
  [ $rc = 1 ] || fail "run --csv >/dev/full exited $rc, want 1"
  echo "stdout on /dev/full: exit 1"
fi

# -- escapes, option ranges --------------------------
python3 - "$SC" "$W/esc.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["name"] = "esc\u001b]0;PWNED\u0007\u009b2J"
d["title"] = "t\u001b[2J"
d["setup"] = ["s\u001b]0;X\u0007"]
d["variants"][0]["label"] = "v\u001b[31m"
json.dump(d, open(sys.argv[2], "w"))
PY
for fmt in "" --csv; do
  run 0 "" "$S" run "$W/esc.json" --structural --scale 0.01 $fmt
  LC_ALL=C grep -qaP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$W/out" &&
    fail "run $fmt printed a raw control byte: $(LC_ALL=C grep -naP '[\x00-\x08\x0b-\x1f\x7f]' "$W/out" | head -c 200 | od -c | head -3)"
done
ln -s "$W/t.trace" "$W/$(printf 't\033]0;X\007.trace')"
run 0 "" "$S" replay "$W/$(printf 't\033]0;X\007.trace')"
LC_ALL=C grep -qaP '[\x00-\x08\x0b-\x1f\x7f]' "$W/out" && fail "replay printed the trace path raw"
for opt in "run $SC --scale nan" "run $SC --scale inf" "map $T -o $W/n.svg --scenario x --scale nan" \
  "reproduce rfc-holes --vm-scale nan" "sweep $SCD/sweeps/rfc-image-vs-free.json --prepare --out $W/sw --scale nan"; do
  run 2 "finite" "$S" $opt
done
echo "escapes: no raw control byte in run (text, CSV) or replay; nan/inf refused"

# -- trace swapon records priced against memory ---------------------------
{ echo "swaplab-trace 1"; for d in 0 1 2 3 4 5 6 7; do echo "swapon dev=$d pages=4294967296"; done; } >"$W/big.trace"
run 1 "over --memory-limit" "$S" replay "$W/big.trace" --memory-limit 256M
run 1 "over --memory-limit" "$S" map "$W/big.trace" -o "$W/big.svg" --memory-limit 256M
[ -e "$W/big.svg" ] && fail "map over --memory-limit wrote big.svg"
printf 'swaplab-trace 1\nswapon dev=0 pages=8192\n' >"$W/small.trace"
run 0 "" "$S" replay "$W/small.trace" --memory-limit 64M
echo "memory: 8 devices of 2^32 pages refused at the first over --memory-limit 256M in ${RUN_MS} ms"
bound_summary
