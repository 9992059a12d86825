#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `swaplab trace convert` (docs/formats.md §5.1): every calibration trace
# to binary and back; replay and map read the binary one to the same
# output, byte for byte; the text written back is the trace's records as
# FormatRecord writes them (what a text-to-text convert gives); the output
# is checked as every output is (not the input, not an existing file
# without --force); a corrupted binary trace is refused naming the record
# and its byte offset, within the bound of lib.sh.
# usage: trace_convert_cli.sh SWAPLAB TRACE_DIR
set -uo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
TRACES="$2"
source "$(dirname "$0")/lib.sh" # run, sha

n=0
for t in "$TRACES"/*.trace; do
  b=$(basename "$t" .trace)
  run 0 "" "$S" trace convert "$t" -o "$W/$b.bin"
  grep -q "(binary; the input was text)" "$W/out" || fail "$b: convert said $(cat "$W/out")"
  [ "$(head -c 8 "$W/$b.bin" | od -An -tx1 | tr -d ' \n')" = 89535754520d0a1a ] ||
    fail "$b.bin does not start with the binary magic"
  [ "$(stat -c %s "$W/$b.bin")" -lt "$(stat -c %s "$t")" ] || fail "$b.bin is not smaller than the text"
  run 0 "" "$S" trace convert "$W/$b.bin" -o "$W/$b.txt"
  run 0 "" "$S" trace convert "$t" -o "$W/$b.norm" --to text
  cmp -s "$W/$b.txt" "$W/$b.norm" || fail "$b: binary back to text differs from the text's records"
  "$S" replay "$t" --json >"$W/r.text" 2>&1 || fail "$b: replay of the text failed"
  "$S" replay "$W/$b.bin" --json >"$W/r.bin" 2>&1 || fail "$b: replay of the binary failed: $(head -c 300 "$W/r.bin")"
  # the reports name their trace; the rest is the same byte for byte
  sed "s#$W/$b.bin#TRACE#" "$W/r.bin" >"$W/r.bin.n"
  sed "s#$t#TRACE#" "$W/r.text" >"$W/r.text.n"
  cmp -s "$W/r.text.n" "$W/r.bin.n" || fail "$b: replay --json differs between text and binary"
  n=$((n + 1))
done
[ "$n" -ge 8 ] || fail "only $n calibration traces in $TRACES"
"$S" map "$TRACES/frag.trace" -o "$W/t.svg" >/dev/null 2>&1 || fail "map of the text trace"
"$S" map "$W/frag.bin" -o "$W/b.svg" >/dev/null 2>&1 || fail "map of the binary trace"
cmp -s <(sed "s#$TRACES/frag.trace#T#g" "$W/t.svg") <(sed "s#$W/frag.bin#T#g" "$W/b.svg") ||
  fail "map draws the binary trace differently"
echo "convert: $n calibration traces to binary and back; replay --json and map identical"

# outputs: never the input, an existing file only with --force
run 2 "is the input" "$S" trace convert "$W/frag.bin" -o "$W/frag.bin" --force
run 2 "exists; use --force" "$S" trace convert "$TRACES/frag.trace" -o "$W/frag.bin"
before=$(sha "$W/frag.bin")
run 0 "" "$S" trace convert "$TRACES/frag.trace" -o "$W/frag.bin" --force
[ "$(sha "$W/frag.bin")" = "$before" ] || fail "convert is not deterministic"
ls -a "$W" | grep -q swaplab-tmp && fail "a temporary was left in $W"

# corrupted binary traces: the record and the byte, exit 2, nothing written
cp "$W/frag.bin" "$W/bad.bin"
printf '\x0e' | dd of="$W/bad.bin" bs=1 seek=9 conv=notrunc status=none
run 2 "bad.bin:2 \(byte 9\): unknown operation byte 0x0e" "$S" replay "$W/bad.bin"
run 2 "bad.bin:2 \(byte 9\)" "$S" trace convert "$W/bad.bin" -o "$W/never.txt"
[ -e "$W/never.txt" ] && fail "a refused convert wrote its output"
head -c 100 "$W/frag.bin" >"$W/cut.bin"
run 2 "ends inside the record" "$S" replay "$W/cut.bin"
printf '\x89SWTR\r\n\x1a\x02' >"$W/v2.bin"
run 2 "unsupported binary trace version 2" "$S" replay "$W/v2.bin"
run 2 "a regular file" "$S" trace convert /dev/zero -o "$W/z.bin"
echo "refused: the input as output, an existing file, a bad op byte, a cut record, version 2, /dev/zero"
bound_summary
