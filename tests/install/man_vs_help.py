#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""swaplab(1) and the bash completion list every subcommand and option that
--help lists, for the program and each subcommand (recursively); they and
replay's --help list every policy preset of the presets table, and only those.

usage: man_vs_help.py SWAPLAB MAN_PAGE COMPLETION_SCRIPT
"""
import re
import subprocess
import sys

swaplab, man_path, completion_path = sys.argv[1:4]


def help_of(path):
    """(options, subcommands) that `swaplab PATH --help` prints."""
    out = subprocess.run([swaplab, *path, "--help"], capture_output=True, text=True, check=True).stdout
    opts, subs, section = set(), [], None
    for line in out.splitlines():
        if re.match(r"^\S.*:$", line):
            section = line[:-1].split()[-1].lower()
            continue
        m = re.match(r"^  (\S+)", line)
        if not m:
            continue
        if section == "subcommands":
            subs.append(m.group(1))
        elif section == "options":
            # "  -h,--help   Print ...", "  --accel TEXT:{tcg,kvm,auto} --vm: tcg ...":
            # the names are the first word, comma-separated.
            opts.update(t for t in line.split()[0].split(",") if re.match(r"^--?[A-Za-z]", t))
    return opts, subs


def man_sections(text):
    """{"swaplab area format": set of option names} from the roff."""
    sections, current = {}, "swaplab"
    sections[current] = set()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r'^\.SS "(.*)"$', line)
        if m:
            current = m.group(1).replace("\\-", "-")
            sections[current] = set()
        elif line == ".TP" and i + 1 < len(lines):
            names = re.findall(r"\\fB((?:\\-)+[A-Za-z0-9\\-]+)\\fR", lines[i + 1])
            sections[current].update(n.replace("\\-", "-") for n in names)
    return sections


def completion_words(path):
    """What the completion offers after `swaplab PATH ` (empty current word)."""
    words = ["swaplab", *path, ""]
    script = (
        f"source {completion_path!r}; COMP_WORDS=({' '.join(repr(w) for w in words)}); "
        f"COMP_CWORD={len(words) - 1}; _swaplab; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    )
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
    return set(out.split())


man_text = open(man_path, encoding="utf-8").read()
man = man_sections(man_text)
failures, checked = [], 0
queue = [[]]
while queue:
    path = queue.pop(0)
    opts, subs = help_of(path)
    name = " ".join(["swaplab", *path])
    if name not in man:
        failures.append(f"{name}: no section in the man page")
        continue
    offered = completion_words(path)
    for o in sorted(opts):
        checked += 1
        if o not in man[name]:
            failures.append(f"{name}: {o} is in --help, not in the man page")
        if o not in offered:
            failures.append(f"{name}: {o} is in --help, not offered by the completion")
    for s in subs:
        checked += 1
        if " ".join([name, s]) not in man:
            failures.append(f"{name} {s}: a subcommand in --help, not in the man page")
        if s not in offered:
            failures.append(f"{name} {s}: a subcommand in --help, not offered by the completion")
        queue.append([*path, s])

# The presets table's names (`swaplab --presets-markdown`, README's table)
# and no others in every list of presets: after --policy in the completion,
# in replay's --help and in the man page. A list written by hand would miss
# a new row.
table = subprocess.run([swaplab, "--presets-markdown"], capture_output=True, text=True, check=True).stdout
presets = re.findall(r"^\| `([^`]+)` \|", table, re.M)
if len(presets) < 2 or "linux-6.18" not in presets:
    failures.append(f"--presets-markdown names {presets}: the parser no longer reads it")
for path in (["demo", "--policy"], ["replay", "--policy"]):
    offered = completion_words(path)
    if offered != set(presets):
        failures.append(f"completion after {' '.join(path)} offers {sorted(offered)}, the table {presets}")
replay_help = subprocess.run([swaplab, "replay", "--help"], capture_output=True, text=True, check=True).stdout
for where, text in (("replay --help", replay_help), ("the man page", man_text.replace("\\-", "-"))):
    m = re.search(r"policy preset: (.*)$", text, re.M)
    listed = m.group(1).split(", ") if m else []
    if listed != presets:
        failures.append(f"{where} lists presets {listed}, the table {presets}")
checked += len(presets)

for f in failures:
    print("FAIL:", f)
if checked < 20:
    print(f"FAIL: only {checked} names found in --help: the parser no longer reads it")
    sys.exit(1)
print(f"checked {checked} options, subcommands and presets against the man page and completion")
sys.exit(1 if failures else 0)
