# SPDX-License-Identifier: MIT
# Helpers of the command-line tests (sourced; bash). The caller sources
# ../lib/test_env.sh first (S the swaplab binary, W its work directory,
# fail).
#
# The bound: every bad input is refused cleanly within 256 MiB of
# address space and about a second. `run` checks each case in a child with
# RLIMIT_AS at 256 MiB (`ulimit -v 262144`: an allocation sized from a bad
# field fails there instead of taking gigabytes, and must not abort), kills
# it after 5 s (generous: the cases take well under a second in the release
# build, more under ASan on a loaded 2-core machine) and records the wall
# time. Under ASan, whose shadow memory alone needs more than 256 MiB of
# address space, the commands run without the limit; the exit code, the
# message and the time are still checked.

sha() { sha256sum <"$1"; }

CASE_SECONDS=5     # the kill
CASE_AS_KIB=262144 # RLIMIT_AS
if grep -qa __asan_init "$S"; then CASE_LIMITED=0; else CASE_LIMITED=1; fi

# limited CMD...: CMD with the address-space limit (none under ASan).
limited() {
  if [ "$CASE_LIMITED" = 1 ]; then (ulimit -v "$CASE_AS_KIB"; exec "$@"); else "$@"; fi
}

# run CODE PATTERN CMD...: CMD, limited, exits CODE within CASE_SECONDS (not
# by a signal: an abort under the limit is a failure) and its stderr
# matches the extended regex PATTERN (empty: anything). Stdout in $W/out,
# stderr in $W/err, the wall time in RUN_MS; the slowest case so far in
# SLOWEST_MS / SLOWEST.
SLOWEST_MS=0 SLOWEST=""
run() {
  local want="$1" pat="$2"; shift 2
  local t0 rc cmd="$*"
  cmd="${cmd:0:160}"
  t0=$(date +%s%N)
  limited timeout "$CASE_SECONDS" "$@" >"$W/out" 2>"$W/err"; rc=$?
  RUN_MS=$(( ($(date +%s%N) - t0) / 1000000 ))
  [ $rc -ne 124 ] || fail "$cmd blocked or ran past ${CASE_SECONDS} s (killed)"
  [ $rc -lt 128 ] || fail "$cmd died of signal $((rc - 128)) (an abort under the ${CASE_AS_KIB} KiB limit?): $(head -c 400 "$W/err")"
  [ $rc -eq "$want" ] || fail "$cmd exited $rc, want $want: $(head -c 400 "$W/err")"
  [ -z "$pat" ] || grep -Eq -- "$pat" "$W/err" || fail "$cmd: message lacks /$pat/: $(head -c 400 "$W/err")"
  if [ "$RUN_MS" -gt "$SLOWEST_MS" ]; then SLOWEST_MS=$RUN_MS SLOWEST="$cmd"; fi
}

# The line each script ends with: the bound and the slowest case.
bound_summary() {
  local lim="RLIMIT_AS $((CASE_AS_KIB / 1024)) MiB"
  [ "$CASE_LIMITED" = 1 ] || lim="no RLIMIT_AS (ASan build)"
  echo "bound: every case under $lim, each < ${CASE_SECONDS} s; slowest ${SLOWEST_MS} ms: $SLOWEST"
}
