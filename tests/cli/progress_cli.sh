#!/bin/bash
# --progress: always draws the bar on stderr (percentage, jobs, rate) even
# when stderr is not a terminal, never and auto (stderr a file here) draw
# nothing; stdout is the same in every case.
S="$1"
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
R=(reproduce rfc-review-batching --scale 0.02 --json)
"$S" "${R[@]}" --progress=always >"$W/a.json" 2>"$W/a.err" || fail "--progress=always"
"$S" "${R[@]}" --progress=never >"$W/n.json" 2>"$W/n.err" || fail "--progress=never"
"$S" "${R[@]}" >"$W/d.json" 2>"$W/d.err" || fail "--progress default"
norm() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.pop("wall_seconds")
for s in d["scenarios"]: s.pop("wall_seconds")
print(json.dumps(d))' "$1"; }
[ "$(norm "$W/a.json")" = "$(norm "$W/n.json")" ] || fail "stdout differs with --progress=always"
[ ! -s "$W/n.err" ] || fail "--progress=never wrote to stderr: $(cat "$W/n.err")"
[ ! -s "$W/d.err" ] || fail "--progress=auto wrote to a stderr that is no terminal"
# Four jobs (variants): the bar reaches 4/4 and 100%, with a rate.
grep -q $'\r' "$W/a.err" || fail "no carriage return in the bar"
grep -aq '\[####################\] 100% 4/4 jobs, [0-9.]* jobs/s' "$W/a.err" ||
  fail "no full bar: $(tr '\r' '\n' <"$W/a.err" | tail -3)"
grep -aq ' 25% 1/4 jobs' "$W/a.err" || fail "no bar at the first job"
"$S" "${R[@]}" --progress=sometimes >/dev/null 2>"$W/x.err" && fail "--progress=sometimes accepted"
grep -q "progress" "$W/x.err" || fail "the message does not name --progress"
echo "progress cli: ok"
