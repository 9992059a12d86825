#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `swaplab run` with a real-file device: its temporary
# area is named and labelled swaplab-r<pid>, removed on SIGINT and SIGTERM
# (the run gone within 15 s of the signal: it takes well under a second
# alone, and one run on this 2-core machine with a guest alongside (load 5-6) took
# more than 5 s), removed too when the run fails
# for want of memory (60 MiB of address space; the run needs 64-80 MiB:
# thread stacks, libraries, the reader's 16 MiB frame ring and up to 16 MiB
# of write copies, and has made its area by then; below about 60 MiB a
# thread cannot start and the run aborts instead),
# left by SIGKILL but then removed by `swaplab kernel cleanup` — which never
# removes the area of a run still alive.
# usage: run_temp_area.sh SWAPLAB SCENARIO_DIR
set -uo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
SC="$2/rfc-holes-real.json"
cleanup() { [ -n "${pid:-}" ] && kill -9 "$pid" 2>/dev/null; } # run on exit by test_env.sh
source "$(dirname "$0")/lib.sh"   # limited, run

# the run's area lives in $W (the scenario's dir), so nothing else is touched
sed "s|\"dir\": \"/var/tmp\"|\"dir\": \"$W\"|" "$SC" >"$W/sc.json"

start_run() {
  "$S" run "$W/sc.json" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    f="$(ls "$W"/swaplab-r"$pid"-*.swap 2>/dev/null | head -n1)"
    # formatted (the header written) and in use by the run
    if [ -n "$f" ]; then
      label="$("$S" area inspect "$f" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["label"])' 2>/dev/null)"
      [ -n "$label" ] && return 0
    fi
    sleep 0.05
  done
  fail "no temporary area swaplab-r$pid-*.swap appeared in $W"
}

for sig in INT TERM; do
  start_run
  [ "$label" = "swaplab-r$pid" ] || fail "label is '$label', want swaplab-r$pid"
  t0=$(date +%s%N)
  kill -s "$sig" "$pid"
  for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  kill -0 "$pid" 2>/dev/null && fail "SIG$sig: the run still runs after 15 s"
  wait "$pid" 2>/dev/null
  pid=""
  echo "SIG$sig: the run ended $(( ($(date +%s%N) - t0) / 1000000 )) ms after the signal"
  [ -e "$f" ] && fail "SIG$sig left $f behind"
done

# out of memory: the run fails cleanly (exit 1 and a message naming the
# limit: no abort, even where the allocation fails inside a destructor while
# unwinding), removes its area, never hangs
if [ "$CASE_LIMITED" = 1 ]; then
  # 64 MiB was inside the run's need: two CIs of 7 December saw runs fit.
  CASE_AS_KIB=61440 limited timeout 60 "$S" run "$W/sc.json" >/dev/null 2>"$W/err"; rc=$?
  [ $rc -eq 1 ] || fail "a run in 60 MiB exited $rc, want 1: $(head -c 300 "$W/err")"
  grep -q "out of memory" "$W/err" || fail "no out-of-memory message: $(head -c 300 "$W/err")"
  ls "$W"/swaplab-r*.swap >/dev/null 2>&1 && fail "a run out of memory left $(ls "$W"/swaplab-r*.swap)"
  echo "out of memory (RLIMIT_AS 60 MiB): exit $rc, $(head -c 120 "$W/err" | tr '\n' ' '), no area left"
  # Tighter limits: a thread that cannot start (std::system_error, EAGAIN)
  # is out of memory too, not an abort.
  for kib in 40960 45056 49152 53248 57344; do
    CASE_AS_KIB=$kib limited timeout 60 "$S" run "$W/sc.json" >/dev/null 2>"$W/err"; rc=$?
    [ $rc -eq 1 ] || fail "a run in $kib KiB exited $rc, want 1: $(head -c 300 "$W/err")"
    grep -q "out of memory" "$W/err" || fail "no out-of-memory message in $kib KiB: $(head -c 300 "$W/err")"
    ls "$W"/swaplab-r*.swap >/dev/null 2>&1 && fail "a run in $kib KiB left $(ls "$W"/swaplab-r*.swap)"
  done
  echo "out of memory at 40-56 MiB: exit 1 with the message each time"
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "SIGINT and SIGTERM passed; SIGKILL + kernel cleanup skipped: not root"
  exit 0
fi
start_run
# a live run's area is not removed by cleanup
"$S" kernel cleanup >/dev/null 2>&1
[ -e "$f" ] || fail "kernel cleanup removed the area of a run still alive"
kill -9 "$pid"
wait "$pid" 2>/dev/null
pid=""
[ -e "$f" ] || fail "SIGKILL: the area is not there (cannot check cleanup)"
echo "the file left by SIGKILL: $f"
# cleanup looks in /var/tmp: move it there under its own name to be found
g="/var/tmp/$(basename "$f")"
mv "$f" "$g"
"$S" kernel cleanup >"$W/cl.out" 2>&1 || fail "kernel cleanup: $(cat "$W/cl.out")"
[ -e "$g" ] && { rm -f "$g"; fail "kernel cleanup left $g"; }
grep -q "remove $g" "$W/cl.out" || fail "kernel cleanup did not report the removal: $(cat "$W/cl.out")"
echo "run temporary area: SIGINT and SIGTERM remove it, SIGKILL leaves it, kernel cleanup removes it"
