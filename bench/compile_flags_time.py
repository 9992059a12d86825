#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Compile time of translation units under several optimisation/debug flag
# sets (docs/performance.md, "Compile flags"): each file's command from a
# build tree's compile_commands.json, without ccache, with the tree's own
# -O/-g flags replaced by each set in turn, one compile after the other.
#
# usage: bench/compile_flags_time.py TREE "FLAGS" ["FLAGS"...] -- FILE...
#   e.g. bench/compile_flags_time.py build/debug "-O1 -g" "-O1 -g1" "-Og -g1" \
#          -- tests/area/io_engine_test.cc src/alloc/swap_system.cc
import json
import re
import shlex
import subprocess
import sys
import time

if "--" not in sys.argv[2:]:
    sys.exit("usage: compile_flags_time.py TREE FLAGS... -- FILE...")
sep = sys.argv.index("--", 2)
tree, flag_sets, files = sys.argv[1], sys.argv[2:sep], sys.argv[sep + 1:]
commands = json.load(open(f"{tree}/compile_commands.json"))
opt_or_debug = re.compile(r"^-(O[0-9sgz]?|g[0-9]?|gline-tables-only)$")
for name in files:
    entry = next((e for e in commands if e["file"].endswith("/" + name)), None)
    if entry is None:
        sys.exit(f"{name}: not in {tree}/compile_commands.json")
    args = shlex.split(entry["command"])  # CMake leaves the ccache launcher out
    args = [a for a in args if not opt_or_debug.match(a)]
    args[args.index("-o") + 1] = "/dev/null"
    row = []
    for flags in flag_sets:
        t = time.monotonic()
        subprocess.run(args[:1] + flags.split() + args[1:], check=True, cwd=entry["directory"])
        row.append(f"{flags}: {time.monotonic() - t:.1f} s")
    print(name, "|", " | ".join(row), flush=True)
