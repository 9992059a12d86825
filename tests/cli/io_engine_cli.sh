#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --io auto|uring|posix|sim (area/io_engine_factory.h) on image write /
# read / inspect: every engine writes the same bytes and reports the same
# image as the default; a bad name is bad usage (exit 2, the name and the
# valid ones); without io_uring (the test seam SWAPLAB_NO_IO_URING) the
# default falls back to pread/pwrite with one notice and --io uring fails.
# usage: io_engine_cli.sh SWAPLAB
set -uo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
# fail, sha, limited, run CODE PATTERN CMD..., bound_summary
source "$(dirname "$0")/lib.sh"
A="$W/area"

# A JSON report without its measured times (seconds, rates) and without
# fixed_buffers (whether io_uring registered the write copies: only io_uring can).
untimed() {
  python3 - "$1" <<'PY'
import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items()
                if k != "fixed_buffers"  # io_uring registered buffers: the engine's own
                and not any(t in k for t in ("seconds", "mib_s", "mbps", "_ns", "per_s"))}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
print(json.dumps(strip(json.load(open(sys.argv[1]))), indent=1, sort_keys=True))
PY
}

# write_read IO...: a fresh area, an LZO image written and inspected with
# the engine options IO (none: the default); the area's bytes in
# $W/area.sha, the write and inspect JSON (untimed) in $W/write.json and
# $W/inspect.json.
write_read() {
  rm -f "$A"
  "$S" area format "$A" --size 32M --uuid 0a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d >/dev/null || fail "area format"
  "$S" image write "$A" --size 2M --compress lzo --json "$@" >"$W/w.json" 2>"$W/err" ||
    fail "image write $* exit $?: $(head -c 400 "$W/err")"
  untimed "$W/w.json" >"$W/write.json" || fail "image write $*: JSON"
  "$S" image inspect "$A" --json "$@" >"$W/i.json" 2>"$W/ierr" || fail "image inspect $* exit $?"
  untimed "$W/i.json" >"$W/inspect.json" || fail "image inspect $*: JSON"
  "$S" image read "$A" "$@" >/dev/null 2>"$W/err" || fail "image read $* exit $?: $(head -c 400 "$W/err")"
  sha "$A" >"$W/area.sha"
}

write_read
for f in area.sha write.json inspect.json; do cp "$W/$f" "$W/default.$f"; done
for io in auto posix sim uring; do
  if [ "$io" = uring ] && ! "$S" image inspect "$A" --io uring >/dev/null 2>&1; then
    echo "io_uring unavailable here: --io uring not compared"
    continue
  fi
  write_read --io "$io"
  for f in area.sha write.json inspect.json; do
    cmp -s "$W/default.$f" "$W/$f" || fail "--io $io: $f differs from the default's: $(diff "$W/default.$f" "$W/$f" | head -5)"
  done
done

# a bad name: exit 2 before the area is touched, naming it and the valid ones
sha0="$(sha "$A")"
for cmd in "image write" "image read" "image inspect"; do
  # shellcheck disable=SC2086
  run 2 "--io: I/O engine 'bogus' unknown: expected auto \| uring \| posix \| sim" "$S" $cmd "$A" --io bogus
done
run 2 "I/O engine 'bogus' unknown" "$S" run "$W/none.json" --io bogus
run 2 "I/O engine 'bogus' unknown" "$S" reproduce --io bogus
[ "$(sha "$A")" = "$sha0" ] || fail "a refused --io changed the area"

# A real-file scenario's report says which engine its I/O went through (the
# setup line "image I/O: ..."), as --io chose it, in text and JSON.
for io in posix sim; do
  case $io in
    posix) want="posix, (O_DIRECT|buffered) \\(seconds measured, wall\\)" ;;
    sim) want="the simulated device's time over posix, (O_DIRECT|buffered) \\(seconds modelled\\)" ;;
  esac
  "$S" reproduce rfc-shuffled-real --scale 0.25 --io $io >"$W/io.txt" 2>"$W/err" || fail "reproduce --io $io: $(head -c 400 "$W/err")"
  grep -Eq "^  - image I/O: $want$" "$W/io.txt" || fail "reproduce --io $io: no setup line /$want/: $(grep -m3 'I/O' "$W/io.txt")"
done
"$S" reproduce rfc-shuffled-real --scale 0.25 --io posix --json >"$W/io.json" 2>"$W/err" || fail "reproduce --json: $(head -c 400 "$W/err")"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["scenarios"][0]; assert s["image_io"].startswith("posix, "), s.get("image_io")' "$W/io.json" ||
  fail "reproduce --json: image_io is not posix's"
"$S" run "$(dirname "$0")/../../scenarios/rfc-shuffled.json" --scale 0.05 >"$W/io.txt" 2>"$W/err" || fail "run rfc-shuffled.json: $(head -c 400 "$W/err")"
! grep -q "image I/O" "$W/io.txt" || fail "a simulated device's report names an I/O engine"

# without io_uring: the default falls back with one notice, --io uring fails
export SWAPLAB_NO_IO_URING=1
write_read
grep -q "swaplab: io_uring unavailable (io_uring disabled by SWAPLAB_NO_IO_URING); using pread/pwrite (--io posix)" "$W/err" ||
  fail "no fallback notice: $(head -c 400 "$W/err")"
"$S" reproduce rfc-shuffled-real --scale 0.25 >"$W/io.txt" 2>"$W/err" || fail "reproduce without io_uring: $(head -c 400 "$W/err")"
grep -Eq "^  - image I/O: posix, (O_DIRECT|buffered) \(seconds measured, wall\)$" "$W/io.txt" || fail "the fallback's report does not name posix: $(grep -m3 'I/O' "$W/io.txt")"
[ "$(grep -c io_uring "$W/err")" = 1 ] || fail "the notice is not one line: $(head -c 400 "$W/err")"
for f in area.sha write.json inspect.json; do
  cmp -s "$W/default.$f" "$W/$f" || fail "fallback: $f differs from the default's"
done
run 2 "io_uring disabled by SWAPLAB_NO_IO_URING" "$S" image inspect "$A" --io uring
run 0 "" "$S" image inspect "$A" --io posix
[ ! -s "$W/err" ] || fail "--io posix gave a notice: $(head -c 400 "$W/err")"
unset SWAPLAB_NO_IO_URING

bound_summary
echo "io_engine_cli: ok"
