#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Prints a `swaplab reproduce --json` (or `run --json`) document without
# the parts that vary from run to run: every wall_seconds, and the values of
# metrics of kind "measured". Two runs' outputs compare equal exactly when
# their counts and modelled figures are the same:
#   python3 bench/norm_reproduce.py before.json > a; python3 bench/norm_reproduce.py after.json > b; cmp a b
import json
import sys


def clean(x):
    if isinstance(x, dict):
        if x.get("kind") == "measured":
            return {"kind": "measured"}
        return {k: clean(v) for k, v in x.items() if k != "wall_seconds"}
    if isinstance(x, list):
        return [clean(v) for v in x]
    return x


if len(sys.argv) != 2:
    sys.exit("usage: norm_reproduce.py FILE.json")
with open(sys.argv[1]) as f:
    print(json.dumps(clean(json.load(f)), indent=1, sort_keys=True))
