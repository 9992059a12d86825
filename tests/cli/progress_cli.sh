#!/bin/bash
# SPDX-License-Identifier: MIT
# --progress on every command that has a bar (reproduce, image write, image
# read): always draws it on stderr (percentage, counts, rate) even when
# stderr is not a terminal, and it ends at 100 %; never and auto (stderr a
# file here) draw nothing; stdout is the same in every case (measured
# seconds aside).
source "$(dirname "$0")/../lib/test_env.sh" "$@"
# JSON without what is measured (seconds, CPU seconds) or depends on when
# completions arrive (the reader's partial waits), and temporary paths
# (named by process id), and for kernel run what the rest of the machine did
# (interference: other processes' pages in the run's area, system-wide
# vmstat deltas): equal across runs.
norm() { python3 -c 'import json,sys
MACHINE = ("interference", "interference_total", "interference_unaccounted", "foreign_slots",
           "model_foreign_agree", "warnings", "runs", "rerun_reasons", "kernel_pswpout",
           "model_pswpout", "kernel_pgdeactivate")
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if "seconds" not in k and k not in ("partial_waits", "path") + MACHINE}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
print(json.dumps(strip(json.load(open(sys.argv[1]))), sort_keys=True))' "$1"; }
# NAME BAR-REGEX CMD...: the command with --progress always, never and the
# default (auto); PREP (a function, optional) runs before each.
check() {
  local name="$1" bar="$2"; shift 2
  for mode in always never auto; do
    ${PREP:-true}
    if [ $mode = auto ]; then
      "$@" >"$W/$name.$mode.out" 2>"$W/$name.$mode.err" || fail "$name (default --progress)"
    else
      "$@" --progress=$mode >"$W/$name.$mode.out" 2>"$W/$name.$mode.err" || fail "$name --progress=$mode"
    fi
  done
  [ "$(norm "$W/$name.always.out")" = "$(norm "$W/$name.never.out")" ] ||
    fail "$name: stdout differs with --progress=always: $(diff <(norm "$W/$name.always.out" | python3 -m json.tool) <(norm "$W/$name.never.out" | python3 -m json.tool) | head -20)"
  [ "$(norm "$W/$name.auto.out")" = "$(norm "$W/$name.never.out")" ] || fail "$name: stdout differs by default"
  [ ! -s "$W/$name.never.err" ] || fail "$name: --progress=never wrote to stderr: $(cat "$W/$name.never.err")"
  [ ! -s "$W/$name.auto.err" ] || fail "$name: --progress=auto wrote to a stderr that is no terminal"
  grep -q $'\r' "$W/$name.always.err" || fail "$name: no carriage return in the bar"
  # The last state drawn is the full bar, then the line is cleared.
  last=$(tr '\r' '\n' <"$W/$name.always.err" | grep -a '%' | tail -1)
  echo "$last" | grep -aEq "^.\[K\[#{20}\] 100% $bar" || fail "$name: the last bar is not full: '$last'"
  echo "$name: $last" | tr -d '\033'
}

# progress_cli.sh SWAPLAB kernel TRACES: `kernel run` only (root, real swap;
# label kernel).
if [ "${2:-}" = kernel ]; then
  [ "$(id -u)" -eq 0 ] || { echo "SKIP: kernel run needs root"; exit 77; }
  check kernel-run '([0-9]+)/\1 records, [0-9.]+ records/s, [0-9.]+ s  kernel run' \
    "$S" kernel run "$3/frag.trace" --device file --json
  echo "progress cli (kernel run): ok"
  exit 0
fi

R=(reproduce rfc-review-batching --scale 0.02 --json)
check reproduce '4/4 jobs, [0-9.]+ jobs/s, [0-9.]+ s  ' "$S" "${R[@]}"
"$S" "${R[@]}" --progress=sometimes >/dev/null 2>"$W/x.err" && fail "--progress=sometimes accepted"
grep -q "progress" "$W/x.err" || fail "the message does not name --progress"

# image write: a fresh area each time (an area holding an image takes no other).
fresh_area() { rm -f "$W/area"; "$S" area format "$W/area" --size 64M >/dev/null || fail "area format"; }
PREP=fresh_area check write '([0-9.]+)/\1 MB, [0-9.]+ MB/s, [0-9.]+ s  image write' \
  "$S" image write "$W/area" --size 24M --snapshot-memory 0 --json
PREP= check read '([0-9.]+)/\1 MB, [0-9.]+ MB/s, [0-9.]+ s  image read' "$S" image read "$W/area" --json
# Compressed: the writer's and reader's other loops (units of 32 pages).
PREP=fresh_area check write-lz4 '([0-9.]+)/\1 MB, [0-9.]+ MB/s, [0-9.]+ s  image write' \
  "$S" image write "$W/area" --size 24M --compress lz4 --json
PREP= check read-lz4 '([0-9.]+)/\1 MB, [0-9.]+ MB/s, [0-9.]+ s  image read' "$S" image read "$W/area" --json
echo "progress cli: ok"
