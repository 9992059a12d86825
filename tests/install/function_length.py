#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""No function in src/ longer than 80 lines (conventions: functions read like
the kernel's helpers, one job, a few lines). Universal Ctags (Debian's
universal-ctags, scripts/setup) gives every C and C++ function's first and
last line, member functions defined in a class included. The functions
below are known to be longer: each may not grow past its length here, and
one that shrank to 80 lines or fewer must leave the list. The checker is
also run on a small tree with one long function, to show it finds it.
Usage: function_length.py SOURCE_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

LIMIT = 80
# path -> function -> the most lines it may have. Empty: every function in
# src/ is within the limit (the last two, the guest agent's RunChurn and
# PrepareLayout, were split into named steps in December 2026).
KNOWN = {}


def functions(root):
    """(lines, path, first line, name) of every function under root/src."""
    out = subprocess.run(
        ["ctags", "--output-format=json", "--fields=+ne", "--kinds-c++=f", "--kinds-c=f",
         "-R", "-o", "-", "src"],
        cwd=root, capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        t = json.loads(line)
        if t.get("_type") == "tag" and "end" in t:
            found.append((t["end"] - t["line"] + 1, t["path"], t["line"], t["name"]))
    return found


def check(root, known):
    """The problems, one line each."""
    problems = []
    seen = set()
    for n, path, first, name in functions(root):
        ceiling = known.get(path, {}).get(name)
        if ceiling is not None:
            seen.add((path, name))
            if n > ceiling:
                problems.append(f"{path}:{first}: {name} grew to {n} lines (at most {ceiling})")
            elif n <= LIMIT:
                problems.append(f"{path}:{first}: {name} is {n} lines now: take it off the "
                                f"known list in {os.path.basename(__file__)}")
        elif n > LIMIT:
            problems.append(f"{path}:{first}: {name} is {n} lines (at most {LIMIT}): split it "
                            "into named steps")
    for path, names in known.items():
        for name in names:
            if (path, name) not in seen:
                problems.append(f"{path}: {name} is gone: take it off the known list")
    return problems


def main():
    if shutil.which("ctags") is None:
        print("SKIP: no ctags (Debian's universal-ctags; scripts/setup installs it)")
        return 77
    root = sys.argv[1]
    n = len(functions(root))
    problems = check(root, KNOWN)
    for p in problems:
        print("FAIL: " + p)
    # The checker itself: a 90-line function in a small tree is found.
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "src"))
        body = "".join(f"  x += {i};\n" for i in range(88))
        with open(os.path.join(tmp, "src", "long.cc"), "w") as f:
            f.write("int Short() { return 1; }\nint Long(int x) {\n" + body + "  return x;\n}\n")
        found = check(tmp, {})
        if len(found) != 1 or "Long is 91 lines" not in found[0]:
            print(f"FAIL: the checker did not find the 91-line function: {found}")
            return 1
    if problems:
        return 1
    known = f" but the {len(KNOWN)} known ones (none grown)" if KNOWN else ""
    print(f"ok: {n} functions in src/, none over {LIMIT} lines{known}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
