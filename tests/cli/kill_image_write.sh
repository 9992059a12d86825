#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SIGKILL `swaplab image write` at many points of a write on a real file
#: afterwards the area is either a valid swap area without an
# image, or holds a complete image that reads back with every page equal to
# the snapshot — never a half image accepted. (Every request boundary,
# including the window where the header is on disk before the last map
# page, is swept in-process by CrashSweep in tests/hibernate.)
# usage: kill_image_write.sh SWAPLAB [POINTS]
set -uo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
POINTS="${2:-24}"
A="$W/area"
dd if=/dev/zero of="$A" bs=1M count=200 status=none || fail dd
# how long one write takes here, to spread the kills over it
"$S" area format "$A" >/dev/null || fail format
t0=$(date +%s%N)
"$S" image write "$A" --size 120M --compress lzo --snapshot-memory 0 >/dev/null || fail "image write"
t1=$(date +%s%N)
span_us=$(( (t1 - t0) / 1000 ))
whole=0 none=0 torn=0
for ((k = 0; k < POINTS; k++)); do
  "$S" area format "$A" --force >/dev/null || fail format  # over the last image
  delay_us=$(( span_us * 2 * k / POINTS ))  # up to twice the write: some finish
  "$S" image write "$A" --size 120M --compress lzo --snapshot-memory 0 --seed $((k + 1)) >/dev/null 2>&1 &
  pid=$!
  sleep "$(printf '%d.%06d' $((delay_us / 1000000)) $((delay_us % 1000000)))"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  "$S" image read "$A" --json >"$W/r.json" 2>"$W/r.err"; rc=$?
  if [ $rc -eq 0 ]; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["pages_verified"] == d["snapshot_pages"] and d["crc"] == "verified" else 1)' "$W/r.json" ||
      fail "kill at ${delay_us} us: an image was accepted without every page verified"
    whole=$((whole + 1))
  elif [ $rc -eq 1 ]; then
    # no image: page 0 is a swap area swapon accepts again — or the kill
    # fell between the header and the last map page: a torn image, refused
    "$S" area inspect "$A" --json >"$W/a.json" 2>/dev/null
    if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["hibernation"] is None and d["swapon"]["accepted"] else 1)' "$W/a.json"; then
      none=$((none + 1))
    else
      grep -q "no S1SUSPEND" "$W/r.err" && fail "kill at ${delay_us} us: no image, yet the area is not a clean swap area"
      torn=$((torn + 1))
    fi
  else
    fail "kill at ${delay_us} us: image read exited $rc: $(head -c 300 "$W/r.err")"
  fi
done
echo "SIGKILL at $POINTS points over ${span_us} us: $whole complete images read back, $none clean areas without an image, $torn torn images refused"
[ $((whole + none + torn)) -eq "$POINTS" ] || fail "counts"
