#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# image_gaps.py AREA FIRST_MAP_DBLOCK: the blocks a hibernation image in
# AREA (a file whose blocks are the image's dblocks) spans but does not
# use, and how many of them hold data. The map chain (docs/formats.md: a
# map page is 511 little-endian u64 dblocks of stream pages, 0 after the
# last, then the next map page's dblock) names the image's blocks; the
# blocks between its first and last that it does not name are the gaps.
# A gap block with data was written by something else — a swap-out into
# the area — and a gap block of zeros was never written.
# Prints: "image_blocks N runs R gap_blocks G written W", then, when there
# are gaps, "gaps A-B (D with data) ..." for the first ten of them.
import sys

PAGE, ENTRIES = 4096, 511


def main():
    path, first = sys.argv[1], int(sys.argv[2])
    blocks, seen_maps = set(), set()
    with open(path, "rb") as f:
        def page(d):
            f.seek(d * PAGE)
            return f.read(PAGE)
        at = first
        while at and at not in seen_maps:
            seen_maps.add(at)
            blocks.add(at)
            p = page(at)
            if len(p) < PAGE:
                sys.exit(f"image_gaps: map page at dblock {at} is past the end of {path}")
            for k in range(ENTRIES):
                d = int.from_bytes(p[8 * k:8 * k + 8], "little")
                if d == 0:
                    break
                blocks.add(d)
            at = int.from_bytes(p[8 * ENTRIES:8 * ENTRIES + 8], "little")
        ordered = sorted(blocks)
        runs = sum(1 for i, b in enumerate(ordered) if i == 0 or ordered[i - 1] + 1 != b)
        gaps = [b for b in range(ordered[0], ordered[-1] + 1) if b not in blocks] if ordered else []
        has_data = {b for b in gaps if page(b).strip(b"\0")}
    print(f"image_blocks {len(blocks)} runs {runs} gap_blocks {len(gaps)} written {len(has_data)}")
    ranges = []
    for b in gaps:
        if ranges and ranges[-1][1] + 1 == b:
            ranges[-1][1] = b
        else:
            ranges.append([b, b])
    if ranges:
        print("gaps " + " ".join(
            f"{a}-{z} ({sum(1 for b in range(a, z + 1) if b in has_data)} with data)"
            for a, z in ranges[:10]))


main()
