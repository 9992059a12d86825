#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The scripts `sweep emit` writes, RUN on hostile names (issue 31): a sweep
# directory whose path holds quotes, $(...), backquotes, ;, # and spaces;
# commands.txt run line by line by bash and by GNU parallel (when
# installed), sweep.sbatch run by bash as a plain script for each array
# index. Every point must complete and no PWNED file may appear. A newline
# in DIR and shell in a point id of sweep.json are refused (exit 2, no
# script written).
# Usage: sweep_scripts.sh SWAPLAB SOURCE_DIR
set -uo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
cat >"$W/spec.json" <<JSON
{"name": "scripts \$(touch PWNED-name)", "base": "$2/tests/sweep/data/holes.json", "scale": 0.05,
 "axes": [{"name": "seed", "seed": true, "values": [1, 2]}]}
JSON
pwned() { [ -n "$(find "$W" -name 'PWNED*' -print -quit)" ]; }
cd "$W" || exit 1

hostile="$W/d'ir \$(touch PWNED-1) \`touch PWNED-2\` ; touch PWNED-3 # \"x\" \\ end"
for engine_run in bash parallel sbatch; do
  D="$hostile-$engine_run"
  "$S" sweep "$W/spec.json" --out "$D" --prepare 2>"$W/err" || fail "prepare: $(cat "$W/err")"
  case $engine_run in
    bash)
      "$S" sweep emit --engine parallel "$D" >/dev/null || fail "emit parallel"
      while IFS= read -r line; do
        bash -c "$line" 2>"$W/err" || fail "commands.txt line failed: $line: $(cat "$W/err")"
      done <"$D/commands.txt" ;;
    parallel)
      if ! parallel --version 2>/dev/null | grep -q "GNU parallel"; then
        echo "note: GNU parallel not installed; its run skipped"
        continue
      fi
      "$S" sweep emit --engine parallel "$D" >/dev/null || fail "emit parallel"
      parallel --will-cite -j 2 -a "$D/commands.txt" 2>"$W/err" || fail "parallel: $(cat "$W/err")" ;;
    sbatch)
      "$S" sweep emit --engine slurm "$D" >/dev/null || fail "emit slurm"
      for i in 0 1; do
        SLURM_ARRAY_TASK_ID=$i bash "$D/sweep.sbatch" >/dev/null 2>"$W/err" || fail "sbatch task $i: $(cat "$W/err")"
      done
      grep -q '^#SBATCH --output="/.*/slurm/%A_%a.out"$' "$D/sweep.sbatch" ||
        fail "--output not quoted: $(grep '^#SBATCH --output' "$D/sweep.sbatch")"
      [ "$(grep -c "^#SBATCH" "$D/sweep.sbatch")" = 5 ] || fail "#SBATCH lines: $(grep '^#SBATCH' "$D/sweep.sbatch")" ;;
  esac
  pwned && fail "$engine_run: a name ran a command: $(find "$W" -name 'PWNED*')"
  [ "$(ls "$D/points" | grep -c '^[0-9a-f]\{16\}\.json$')" = 2 ] || fail "$engine_run: points not done: $(ls "$D/points")"
done

# A newline in DIR: refused, no script.
D="$W/new
line \$(touch PWNED-4)"
"$S" sweep "$W/spec.json" --out "$D" --prepare 2>/dev/null || fail "prepare with a newline"
for e in parallel slurm; do
  rc=0
  "$S" sweep emit --engine $e "$D" >/dev/null 2>"$W/err" || rc=$?
  [ "$rc" = 2 ] && grep -q "control character" "$W/err" || fail "newline in DIR, $e: exit $rc: $(cat "$W/err")"
done
[ ! -e "$D/commands.txt" ] && [ ! -e "$D/sweep.sbatch" ] || fail "a script was written for a DIR with a newline"

# Shell in a point id of sweep.json: refused, no script.
D=$W/ids
"$S" sweep "$W/spec.json" --out "$D" --prepare 2>/dev/null || fail "prepare ids"
python3 - "$D/sweep.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["points"][0]["id"] = "x; touch PWNED-5 #"
open(sys.argv[1], "w").write(json.dumps(j))
PY
for e in parallel slurm; do
  rc=0
  "$S" sweep emit --engine $e "$D" >/dev/null 2>"$W/err" || rc=$?
  [ "$rc" = 2 ] && grep -q 'points\[0\].id' "$W/err" || fail "shell id, $e: exit $rc: $(cat "$W/err")"
done
[ ! -e "$D/commands.txt" ] || fail "commands.txt written with a shell id"
pwned && fail "a name ran a command: $(find "$W" -name 'PWNED*')"
echo "PASS: generated scripts run on hostile names"
