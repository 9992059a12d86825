#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A sweep directory owned (issue 31): --out into a directory of someone
# else's files is refused and nothing in it replaced; a second sweep on a
# locked directory is refused; a result deleted or truncated after its
# point finished is run again on resume (the joblog said done); another
# job's joblog does not make the sweep run nothing; merge refuses a
# directory without the marker, and says so when a sweep holds the lock. Skips (77) without GNU parallel.
# Usage: sweep_owner.sh SWAPLAB SOURCE_DIR
set -uo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
if ! parallel --version 2>/dev/null | grep -q "GNU parallel"; then
  echo "SKIP: GNU parallel is not installed (Debian package parallel; scripts/setup)"
  exit 77
fi
cat >"$W/spec.json" <<JSON
{"name": "owner", "base": "$2/tests/sweep/data/holes.json", "scale": 0.05,
 "axes": [{"name": "seed", "seed": true, "values": [1, 2, 3]}]}
JSON
sed 's/"owner"/"other"/; s/\[1, 2, 3\]/[4, 5, 6]/' "$W/spec.json" >"$W/other.json"
ndone() { ls "$1/points" 2>/dev/null | grep -c '^[0-9a-f]\{16\}\.json$'; }

# A user's directory: refused, exit 2, nothing replaced or added.
U=$W/user
mkdir "$U" && echo "my jobs" >"$U/jobs.txt" && echo "my table" >"$U/merged.csv"
rc=0
"$S" sweep "$W/spec.json" --out "$U" 2>"$W/err" || rc=$?
[ "$rc" = 2 ] && grep -q "not a sweep directory" "$W/err" || fail "user dir: exit $rc: $(cat "$W/err")"
[ "$(cat "$U/jobs.txt")" = "my jobs" ] && [ "$(ls -A "$U" | wc -l)" = 2 ] || fail "user dir changed: $(ls -A "$U")"
# merge on it: refused, merged.csv kept.
cp "$W/spec.json" "$U/sweep.json"
rc=0
"$S" sweep merge "$U" >/dev/null 2>"$W/err" || rc=$?
[ "$rc" = 2 ] && [ "$(cat "$U/merged.csv")" = "my table" ] || fail "merge in a user dir: exit $rc"

# A whole sweep, then its marker locked by another holder: refused.
D=$W/run
"$S" sweep "$W/spec.json" --out "$D" -j 2 2>"$W/err" || fail "sweep: $(cat "$W/err")"
[ -f "$D/.swaplab-sweep" ] && [ "$(ndone "$D")" = 3 ] || fail "sweep: no marker or points"
flock "$D/.swaplab-sweep" sleep 3 &
holder=$!
sleep 0.5
rc=0
"$S" sweep "$W/spec.json" --out "$D" 2>"$W/err" || rc=$?
# merge while it runs: the points done so far, and a note that one runs
rm "$D/points/$(head -1 "$D/jobs.txt").json"
"$S" sweep merge "$D" >/dev/null 2>"$W/merr" || fail "merge while locked: $(cat "$W/merr")"
grep -q "a sweep is running" "$W/merr" || fail "merge while locked said no sweep runs: $(cat "$W/merr")"
wait $holder
[ "$rc" = 1 ] && grep -q "another sweep is running" "$W/err" || fail "locked: exit $rc: $(cat "$W/err")"

# A result deleted, another truncated, after the joblog recorded them: run again.
ids=($(cat "$D/jobs.txt"))
ino=$(ls -i "$D/points/${ids[2]}.json" | cut -d' ' -f1)
rm -f "$D/points/${ids[0]}.json"  # (already gone since the merge above)
head -c 30 "$D/points/${ids[1]}.json" >"$W/t" && cat "$W/t" >"$D/points/${ids[1]}.json"
"$S" sweep "$W/spec.json" --out "$D" -j 2 2>"$W/err" || fail "resume: $(cat "$W/err")"
grep -q "joblog.stale" "$W/err" || fail "resume did not say why it ran again: $(cat "$W/err")"
[ "$(ndone "$D")" = 3 ] || fail "resume: $(ndone "$D") points"
"$S" sweep merge "$D" --csv >"$W/m.csv" 2>"$W/err" || fail "merge after resume: $(cat "$W/err")"
[ "$(wc -l <"$W/m.csv")" = 4 ] || fail "merge after resume: $(cat "$W/m.csv")"
[ "$(ls -i "$D/points/${ids[2]}.json" | cut -d' ' -f1)" = "$ino" ] || fail "a complete result was run again"
# A resume with nothing to do keeps the joblog.
rm -f "$D/joblog.stale"
"$S" sweep "$W/spec.json" --out "$D" 2>"$W/err" || fail "resume done: $(cat "$W/err")"
[ ! -e "$D/joblog.stale" ] || fail "a good joblog was retired"

# Another job's joblog in a fresh sweep's directory: every point still runs.
O=$W/other
"$S" sweep "$W/other.json" --out "$O" --prepare 2>/dev/null || fail "prepare other"
cp "$D/joblog" "$O/joblog"
"$S" sweep "$W/other.json" --out "$O" -j 2 2>"$W/err" || fail "foreign joblog: $(cat "$W/err")"
[ "$(ndone "$O")" = 3 ] || fail "foreign joblog: $(ndone "$O") points ran"
echo "PASS: sweep directories owned, locked and resumed from their files"
