#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `swaplab sweep` run by GNU parallel for real: a bad JSON path exits 2 and
# writes nothing; a sweep SIGKILLed midway resumes and completes each point
# exactly once (parallel's joblog and the result files' inodes); merge
# gives a row per point; the emitted Slurm script's task i runs the point
# the local run ran as job i + 1, with the same result; the emitted job
# list runs under `parallel --sshloginfile`; without parallel the sweep
# says which package is missing.
# Usage: sweep_cli.sh SWAPLAB SOURCE_DIR
set -euo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
if ! parallel --version 2>/dev/null | grep -q "GNU parallel"; then
  echo "SKIP: GNU parallel is not installed (Debian package parallel; scripts/setup)"
  exit 77
fi

cat >"$W/spec.json" <<'JSON'
{
  "name": "cli test",
  "base": "BASE",
  "axes": [
    {"name": "hole", "path": "/aging/0/hole", "values": ["16K", "64K"]},
    {"name": "seed", "seed": true, "values": [1, 2, 3]}
  ],
  "derived": [{"name": "bios gain", "ratio": ["rfc/bios", "base/bios"]}],
  "heatmaps": [{"name": "bios", "x": "seed", "y": "hole", "value": "bios gain"}]
}
JSON
sed -i "s|BASE|$2/tests/sweep/data/holes.json|" "$W/spec.json"
N=6
# The same sweep cut to two points at a twentieth of the scale, for the
# checks that need a sweep to run but not what it computes.
python3 - "$W/spec.json" "$W/small.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["scale"] = 0.05
j["axes"][1]["values"] = [1]
open(sys.argv[2], "w").write(json.dumps(j))
PY

# --progress as on reproduce and run: always gives parallel's bar on
# stderr, never does not, anything else is refused before anything runs.
"$S" sweep "$W/small.json" --out "$W/bar" -j 2 --progress always 2>"$W/err" >/dev/null ||
  fail "--progress always: $(cat "$W/err")"
grep -q '100%' "$W/err" || fail "--progress always drew no bar: $(head -c 300 "$W/err")"
"$S" sweep "$W/small.json" --out "$W/nobar" -j 2 --progress never 2>"$W/err" >/dev/null ||
  fail "--progress never: $(cat "$W/err")"
grep -q '%' "$W/err" && fail "--progress never drew a bar"
rc=0
"$S" sweep "$W/spec.json" --out "$W/badbar" --progress sometimes 2>"$W/err" || rc=$?
[ "$rc" = 2 ] && grep -q -- '--progress' "$W/err" && [ ! -e "$W/badbar" ] ||
  fail "--progress sometimes: exit $rc: $(cat "$W/err")"

# A bad JSON path: exit 2, the path named, no directory made.
sed 's|/aging/0/hole|/aging/4/hole|' "$W/spec.json" >"$W/bad.json"
rc=0
"$S" sweep "$W/bad.json" --out "$W/bad" 2>"$W/err" || rc=$?
[ "$rc" = 2 ] || fail "bad path: exit $rc, expected 2"
grep -q "/aging/4/hole" "$W/err" || fail "bad path not named: $(cat "$W/err")"
[ ! -e "$W/bad" ] || fail "a refused spec wrote $W/bad"

# Without GNU parallel: the package named, exit 1.
rc=0
PATH=/nonexistent "$S" sweep "$W/spec.json" --out "$W/nopar" 2>"$W/err" || rc=$?
[ "$rc" = 1 ] || fail "no parallel: exit $rc, expected 1"
grep -q "Debian package \`parallel\`" "$W/err" || fail "no parallel: $(cat "$W/err")"

# SIGKILL the whole sweep (swaplab, parallel, the running point) once two
# points are done, then run it again.
D=$W/run
setsid "$S" sweep "$W/spec.json" --out "$D" -j 1 >/dev/null 2>&1 &
pid=$!
for _ in $(seq 600); do
  [ "$(ls "$D/points" 2>/dev/null | grep -c '\.json$')" -ge 2 ] && break
  sleep 0.05
done
kill -KILL -- -"$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
done1=$(ls "$D/points" | grep -c '\.json$' || true)
[ "$done1" -ge 2 ] && [ "$done1" -lt "$N" ] || fail "killed after $done1 of $N points"
ls -i "$D/points" | grep '\.json$' | sort >"$W/inodes1"
"$S" sweep "$W/spec.json" --out "$D" -j 1 2>"$W/err" || fail "resume: $(cat "$W/err")"
[ "$(ls "$D/points" | grep -c '\.json$')" = "$N" ] || fail "resume left points undone"
ls "$D/points" | grep -v '\.json$' && fail "temporary files left in points/"
# The points done before the kill were not run again: same files.
ls -i "$D/points" | grep '\.json$' | sort | grep -Fxf "$W/inodes1" | cmp - "$W/inodes1" ||
  fail "a point done before the kill was rewritten"
# Each point completed exactly once in parallel's joblog (killed jobs are
# not logged; a job parallel ran again would be logged twice).
tail -n +2 "$D/joblog" | awk -F'\t' '$7 == 0 { n = split($9, w, " "); print w[n] }' | sort | uniq -c >"$W/once"
[ "$(wc -l <"$W/once")" = "$N" ] || fail "joblog has $(wc -l <"$W/once") points, expected $N"
awk '$1 != 1 { exit 1 }' "$W/once" || fail "a point ran twice: $(cat "$W/once")"
sort "$D/jobs.txt" | diff - <(awk '{ print $2 }' "$W/once") || fail "joblog ids differ from jobs.txt"
"$S" sweep point "$D" "$(head -1 "$D/jobs.txt")" 2>"$W/err" && grep -q "already done" "$W/err" ||
  fail "a done point is not skipped"

# merge: one row per point in jobs.txt order, the derived column, the map.
"$S" sweep merge "$D" --csv >"$W/merged.csv"
[ "$(wc -l <"$W/merged.csv")" = $((N + 1)) ] || fail "merge: $(wc -l <"$W/merged.csv") lines"
head -1 "$W/merged.csv" | grep -q '^id,hole,seed,bios gain,base/allocator calls,' || fail "merge header: $(head -1 "$W/merged.csv")"
cut -d, -f1 "$W/merged.csv" | tail -n +2 | diff - "$D/jobs.txt" || fail "merge order"
python3 - "$W/merged.csv" "$D/heatmap-bios.svg" <<'PY' || fail "merge: the table or the map"
import csv, re, sys, xml.etree.ElementTree as ET
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    g = float(r["rfc/bios"]) / float(r["base/bios"])
    assert abs(float(r["bios gain"]) - g) < 1e-9 * g, r
    assert 0 < g < 0.2, r  # per-run bios: far fewer
cells = [e for e in ET.parse(sys.argv[2]).iter("{http://www.w3.org/2000/svg}rect") if e.get("class") == "c"]
assert len(cells) == 6, len(cells)
# The map says its points, CPU-hours and the command that made it.
text = " ".join(t.text or "" for t in ET.parse(sys.argv[2]).iter("{http://www.w3.org/2000/svg}text"))
assert "6 of 6 points" in text and "CPU-hours" in text, text
assert re.search(r"made by: \S*swaplab sweep \S*spec.json --out \S+ && swaplab sweep merge DIR", text), text
PY

# merge --html: one self-contained page (no URL, script or reference to
# anything), the map inline, every number of the table equal to merged.json.
"$S" sweep merge "$D" --html "$W/sweep.html" >/dev/null || fail "merge --html"
python3 - "$W/sweep.html" "$D/merged.json" <<'PY' || fail "merge --html: the page"
import json, re, sys
from html.parser import HTMLParser
page, merged = open(sys.argv[1], encoding="utf-8").read(), json.load(open(sys.argv[2]))
assert not re.search(r"https?:", page, re.I), "an http(s) URL"
assert not re.search(r"<script|<link|@import|url\(", page, re.I), "a script or resource"
class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs, self.svgs, self.rows, self.row, self.text = [], 0, [], None, ""
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.refs += [(tag, k) for k in ("src", "href", "xlink:href", "action", "data") if k in a]
        self.refs += [(tag, "")] if tag in ("script", "link", "iframe", "object", "embed", "img") else []
        self.svgs += tag == "svg"
        if tag == "tr":
            self.row = []
        elif tag == "td" and self.row is not None:
            self.row.append((a.get("class"), a.get("data-v")))
    def handle_endtag(self, tag):
        if tag == "tr" and self.row:
            self.rows.append(self.row)
    def handle_data(self, data):
        self.text += data
p = Page()
p.feed(page)
assert not p.refs, p.refs
assert p.svgs == 1, f"{p.svgs} inline SVG, expected the one heatmap"
assert "swaplab sweep merge DIR --html" in p.text and "CPU-hours" in p.text, "header"
assert len(p.rows) == len(merged["rows"]) == 6, len(p.rows)
n = 0
for row, want in zip(p.rows, merged["rows"]):
    got = [v for c, v in row if c == "v"]
    assert len(got) == len(merged["columns"]), (len(got), len(merged["columns"]))
    for col, v in zip(merged["columns"], got):
        w = want["values"][col]
        assert (v == "" and w is None) or float(v) == w, (want["id"], col, v, w)
        n += 1
print(f"sweep html: {n} numbers equal to merged.json")
PY

# Slurm: the array script's task i runs jobs.txt line i + 1, which is the
# point the local run's parallel ran as job i + 1; its result equals it.
D2=$W/slurm
"$S" sweep "$W/spec.json" --out "$D2" --prepare 2>/dev/null
cmp "$D/jobs.txt" "$D2/jobs.txt" || fail "a second prepare lists other ids"
"$S" sweep emit --engine slurm "$D2" >/dev/null
bash -n "$D2/sweep.sbatch" || fail "sweep.sbatch: syntax"
grep -q "^#SBATCH --array=0-$((N - 1))$" "$D2/sweep.sbatch" || fail "array range"
for i in 0 $((N - 1)); do
  SLURM_ARRAY_TASK_ID=$i bash "$D2/sweep.sbatch" 2>/dev/null || fail "task $i failed"
  id=$(awk -F'\t' -v s=$((i + 1)) '$1 == s && $7 == 0 { n = split($9, w, " "); print w[n] }' "$D/joblog")
  [ -n "$id" ] || fail "no local job $((i + 1))"
  [ -f "$D2/points/$id.json" ] || fail "task $i did not run point $id (local job $((i + 1)))"
  python3 -c 'import json,sys; a,b=(json.load(open(p))["metrics"] for p in sys.argv[1:]); assert a == b' \
    "$D/points/$id.json" "$D2/points/$id.json" || fail "task $i: other metrics than the local run"
done
[ "$(ls "$D2/points" | wc -l)" = 2 ] || fail "the tasks ran other points"
rc=0
SLURM_ARRAY_TASK_ID=$N bash "$D2/sweep.sbatch" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "task $N (out of range): exit $rc"

# parallel --sshloginfile over the emitted job list (":" is this machine).
"$S" sweep emit --engine parallel "$D2" >/dev/null
[ "$(wc -l <"$D2/commands.txt")" = "$N" ] || fail "commands.txt"
echo ":" >"$W/nodes"
parallel --will-cite --sshloginfile "$W/nodes" --joblog "$D2/joblog" -a "$D2/commands.txt" 2>/dev/null
[ "$(ls "$D2/points" | grep -c '\.json$')" = "$N" ] || fail "sshlogin run left points undone"
"$S" sweep merge "$D2" --csv | cut -d, -f1-20 | diff - <(cut -d, -f1-20 "$W/merged.csv") ||
  fail "the sshlogin run's table differs from the local run's"
echo "sweep cli: ok"
