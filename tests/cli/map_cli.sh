#!/bin/bash
# SPDX-License-Identifier: MIT
# `swaplab map`: SVG pictures of a trace's device, a scenario's device after
# aging and before / after its image write, and an area holding an image;
# each parsed as XML with one cell per cluster coloured as its list; and
# bad input refused with exit 2, naming what was wrong.
source "$(dirname "$0")/../lib/test_env.sh" "$@"
TRACES="$2"
CHECK="python3 $(dirname "$0")/check_svg.py"

T="$TRACES/frag.trace"
"$S" map "$T" -o "$W/t.svg" || fail "map of a trace"
# The model's own count of clusters per list, from `replay --json`.
"$S" replay "$T" --json >"$W/replay.json" || fail "replay"
read -r n lists < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
k = ["free", "nonfull", "frag", "full", "discard"]
print(sum(d[x + "_clusters"] for x in k), ",".join("%s=%d" % (x, d[x + "_clusters"]) for x in k))' "$W/replay.json")
$CHECK "$W/t.svg" "$n" --lists "$lists" --require full || fail "trace map"
"$S" map "$T" --at-record 3 -o "$W/t3.svg" || fail "map at record 3"
$CHECK "$W/t3.svg" "$n" || fail "trace map at record 3"
cmp -s "$W/t.svg" "$W/t3.svg" && fail "the map after 3 records equals the one at the end"

# A scenario: every variant stacked after the image write, image-owned cells.
"$S" map --scenario rfc-shuffled --scale 0.01 -o "$W/s.svg" || fail "scenario map"
$CHECK "$W/s.svg" 0 --require image || fail "scenario map"
grep -c '<text [^>]*class="caption"' "$W/s.svg" | grep -qx 3 || fail "three variants, three panels"
# The runs overlay is the writer's placement: per variant, the runs the
# legend counts are the runs the scenario reports (same scale, repetition 0).
for sc in rfc-shuffled rfc-holes; do
  "$S" map --scenario $sc --scale 0.01 -o "$W/$sc.svg" || fail "map of $sc"
  "$S" run "$(dirname "$0")/../../scenarios/$sc.json" --structural --scale 0.01 --json >"$W/$sc.json" || fail "run $sc"
  python3 - "$W/$sc.svg" "$W/$sc.json" <<'PY' || fail "$sc: runs on the map"
import json, re, sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
notes = " ".join(t.text for t in root.iter(ns + "text") if t.get("class") == "note")  # unwrapped
want = {v["label"]: int(v["metrics"]["runs"]["value"]) for v in json.load(open(sys.argv[2]))["scenarios"][0]["variants"]}
legend = {}
for label in want:
    m = re.search(re.escape(label) + r", after: image runs: stretches of consecutive dblocks .*?\((\d+) runs\)", notes)
    if m:
        legend[label] = int(m.group(1))
if legend != want:
    sys.exit(f"{sys.argv[1]}: runs in the legend {legend}, reproduce reports {want}")
labels = sum(1 for t in root.iter(ns + "text") if t.get("class") == "run")
print(f"{sys.argv[1]}: runs {legend} as reproduce reports; {labels} run labels")
if labels > sum(want.values()) or (labels == 0 and max(want.values()) <= 1000):
    sys.exit(f"{labels} run labels for {sum(want.values())} runs")
PY
done
"$S" map --scenario rfc-shuffled --scale 0.01 --variant base --at before -o "$W/b.svg" || fail "before"
$CHECK "$W/b.svg" 0 || fail "scenario map before"
grep -q 'fill="#111111"' "$W/b.svg" && fail "image cells before the image write"

# An area holding an image.
"$S" area format "$W/area" --size 64M >/dev/null || fail "area format"
"$S" image write "$W/area" --size 4M >/dev/null || fail "image write"
"$S" map "$W/area" -o "$W/a.svg" || fail "map of an area"
$CHECK "$W/a.svg" 32 --require image || fail "area map"

# An area without an image: its clusters as swapon sets them up from the
# header (64 MiB: 32 clusters; cluster 0 holds the header page, nonfull;
# the other 31 free), not "no S1SUSPEND signature".
"$S" area format "$W/empty" --size 64M >/dev/null || fail "area format (empty)"
"$S" map "$W/empty" -o "$W/e.svg" 2>"$W/err" || fail "map of an area without an image: $(cat "$W/err")"
$CHECK "$W/e.svg" 32 --lists free=31,nonfull=1 || fail "map of an area without an image"
grep -q 'no image: the area as swapon sets it up' "$W/e.svg" || fail "the caption does not say the area holds no image"
grep -q 'fill="#111111"' "$W/e.svg" && fail "image cells on an area without an image"

# Bad input: exit 2, the reason named, nothing written.
expect2() { # PATTERN CMD...
  local pat="$1"; shift
  "$@" >"$W/out" 2>"$W/err"; rc=$?
  [ $rc -eq 2 ] || fail "$* exited $rc, not 2"
  grep -Eq "$pat" "$W/err" || fail "$*: message '$(cat "$W/err")' lacks /$pat/"
  [ ! -e "$W/x.svg" ] || fail "$*: wrote the SVG"
}
expect2 'at-record 999999: .* has only' "$S" map "$T" --at-record 999999 -o "$W/x.svg"
expect2 'writes no image' "$S" map --scenario slot-cache-vs-percpu-rotation --at after -o "$W/x.svg"
expect2 'variant nope: scenario rfc-shuffled has base' "$S" map --scenario rfc-shuffled --variant nope -o "$W/x.svg"
expect2 'not both' "$S" map "$T" --scenario rfc-shuffled -o "$W/x.svg"
expect2 'No such file|cannot' "$S" map "$W/missing" -o "$W/x.svg"
echo "map cli: ok"
