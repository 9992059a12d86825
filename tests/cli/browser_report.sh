#!/bin/bash
# SPDX-License-Identifier: MIT
# The HTML report in a real browser (Debian's chromium, headless): the page
# `swaplab reproduce --html` writes for one small scenario is loaded from
# file:// with every host name unresolvable; it must render (a screenshot of
# the window's size that is not blank), its DOM must hold the numbers of
# the --json output of the same run, and nothing may be fetched from the
# network (the page has no URL; chromium's net log shows only file:).
# Skips (77) with the reason where chromium is not installed.
source "$(dirname "$0")/../lib/test_env.sh" "$@"
CHROMIUM=$(command -v chromium || command -v chromium-browser)
[ -n "$CHROMIUM" ] || { echo "SKIP: no chromium (scripts/setup installs Debian's chromium)"; exit 77; }
"$S" reproduce rfc-review-batching --scale 0.02 --json --html "$W/h" >"$W/r.json" ||
  fail "reproduce --html"
[ -s "$W/h/index.html" ] || fail "no index.html"
# One browser run per output; each with a fresh profile and no way to
# resolve a host name.
browse() { # NAME ARGS...
  local name="$1"; shift
  timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$W/prof-$name" \
    --host-resolver-rules="MAP * ~NOTFOUND" --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --disable-extensions --hide-scrollbars \
    --window-size=1200,900 "$@" "file://$W/h/index.html" 2>"$W/$name.err"
}
browse shot --screenshot="$W/shot.png" --log-net-log="$W/net.json" >/dev/null ||
  fail "chromium --screenshot: $(tail -3 "$W/shot.err")"
[ -s "$W/shot.png" ] || fail "no screenshot: $(tail -3 "$W/shot.err")"
browse dom --dump-dom >"$W/dom.html" || fail "chromium --dump-dom: $(tail -3 "$W/dom.err")"
python3 "$(dirname "$0")/check_report.py" "$W/h/index.html" "$W/dom.html" "$W/r.json" \
  "$W/shot.png" 1200 900 "$W/net.json" || exit 1
# The net-log check can fail: a page with an image from a host is caught.
mkdir -p "$W/bad" && echo '<p>x<img src="http://swaplab.invalid/a.png"></p>' >"$W/bad/index.html"
timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$W/prof-bad" \
  --host-resolver-rules="MAP * ~NOTFOUND" --dump-dom --log-net-log="$W/bad.json" \
  "file://$W/bad/index.html" >/dev/null 2>&1
python3 "$(dirname "$0")/check_report.py" --netlog-only "$W/bad.json" 2>&1 | grep -q "swaplab.invalid" ||
  fail "the net-log check missed a page fetching http://swaplab.invalid/a.png"
echo "browser report: ok"
