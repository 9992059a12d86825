#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a `swaplab map` SVG: it parses as XML, has CELLS map cells (an
argument; 0: do not check the number), and every cell of a single cluster is
coloured as the legend colours the list its hover title names. Optional
--require KIND...: the legend must show those kinds. Optional --lists
free=N,full=N,...: the cells on each list, by their hover titles. Exit 1
with the reason."""
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def main():
    path, want = sys.argv[1], int(sys.argv[2])
    args = sys.argv[3:]
    lists = {}
    if "--lists" in args:
        i = args.index("--lists")
        lists = {k: int(v) for k, v in (kv.split("=") for kv in args[i + 1].split(","))}
        del args[i:i + 2]
    required = args[args.index("--require") + 1:] if "--require" in args else []
    root = ET.parse(path).getroot()  # raises on anything that is not XML
    if root.tag != NS + "svg":
        sys.exit(f"{path}: root element {root.tag}, not svg")
    legend = {}
    for g in root.iter(NS + "g"):
        if g.get("class") != "legend":
            continue
        kids = list(g)
        for i, el in enumerate(kids):
            if el.tag == NS + "rect" and el.get("class") == "key":
                legend[kids[i + 1].text] = el.get("fill")
    cells = [r for r in root.iter(NS + "rect") if r.get("class") == "c"]
    if want and len(cells) != want:
        sys.exit(f"{path}: {len(cells)} cells, expected {want}")
    counted = {}
    for r in cells:
        title = r.find(NS + "title").text
        m = re.match(r"cluster \d+: ([a-z -]+?)(,|$)", title)
        if not m:
            continue  # aggregated cells name several lists
        kind = m.group(1)
        counted[kind] = counted.get(kind, 0) + 1
        if r.get("fill") == legend.get("image"):
            continue  # image-owned: the title keeps the cluster's list
        if legend.get(kind) != r.get("fill"):
            sys.exit(f"{path}: '{title}' is {r.get('fill')}, the legend's {kind} is {legend.get(kind)}")
    for k, n in lists.items():
        if counted.get(k, 0) != n:
            sys.exit(f"{path}: {counted.get(k, 0)} cells on {k}, the model has {n}")
    for k in required:
        if k not in legend:
            sys.exit(f"{path}: no '{k}' in the legend {sorted(legend)}")
    print(f"{path}: {len(cells)} cells, legend {sorted(legend)}")


main()
