#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host-side checks of the vm tests, on disk files made by a real kernel.

  vm_check.py page SEED INDEX            one pattern page to stdout (tests the generator)
  vm_check.py count FILE SEED PAGES      how many of the agent's pattern pages FILE
                                         holds exactly, at 4 KiB-aligned offsets
  vm_check.py header DISK                the swsusp header of page 0, one field a line
  vm_check.py check-read JSON MODE T     checks `swaplab image read --json` of a kernel's
                                         image (MODE lzo|lz4|nocompress, T snapshot pages)
  vm_check.py check-inspect JSON T       checks `swaplab image inspect --json`
  vm_check.py summary-read JSON          one line of the read JSON's main keys
  vm_check.py corrupt DISK OUT           copies DISK to OUT with one byte flipped in
                                         the middle of a compressed unit halfway
                                         through the image (read from the swap map
                                         chain); prints where

The pattern must stay the agent's (src/vm/guest/guest_agent.c, MakePage).
The swsusp header and swap map layout are those of docs/formats.md.
"""
import shutil
import struct
import sys

PAGE = 4096
TAG = b"SWAPLAB-PATTERN\0"
M64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15

# u32 flags of the swsusp header (kernel/power/power.h names).
FLAG_NAMES = [(1, "PLATFORM_MODE"), (2, "NOCOMPRESS_MODE"), (4, "CRC32_MODE"),
              (8, "HW_SIG"), (16, "COMPRESSION_ALG_LZ4")]


def pattern_page(seed, index):
    """Page `index` of the agent's pattern for `seed` (4096 bytes)."""
    state = (seed ^ index) & M64
    words = []
    for _ in range((PAGE - 32) // 8):
        state = (state + GAMMA) & M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        words.append(z ^ (z >> 31))
    return TAG + struct.pack("<QQ", seed, index) + struct.pack("<508Q", *words)


def count_pattern_pages(path, seed, pages):
    """Distinct pattern pages 0..pages-1 of `seed` found intact in `path`."""
    found = set()
    with open(path, "rb") as f:
        while True:
            page = f.read(PAGE)
            if len(page) < PAGE:
                break
            if not page.startswith(TAG):
                continue
            s, i = struct.unpack_from("<QQ", page, 16)
            if s == seed and i < pages and i not in found and page == pattern_page(seed, i):
                found.add(i)
    return len(found)


def read_header(f):
    f.seek(0)
    p0 = f.read(PAGE)
    if len(p0) < PAGE:
        raise SystemExit("vm_check: shorter than one page")
    hw_sig, crc, image, flags = struct.unpack_from("<IIQI", p0, 4056)
    return {"sig": p0[4086:4096], "orig_sig": p0[4076:4086], "hw_sig": hw_sig,
            "crc32": crc, "image": image, "flags": flags}


def flag_names(flags):
    names = [n for bit, n in FLAG_NAMES if flags & bit]
    rest = flags & ~sum(bit for bit, _ in FLAG_NAMES)
    if rest:
        names.append("0x%x" % rest)
    return "|".join(names) if names else "none"


def stream_dblocks(f, first_map):
    """The image's stream pages in order, as disk blocks, from the map chain."""
    out, seen, blk = [], set(), first_map
    while blk:
        if blk in seen:
            raise SystemExit("vm_check: swap map chain loops at block %d" % blk)
        seen.add(blk)
        f.seek(blk * PAGE)
        entries = struct.unpack("<512Q", f.read(PAGE))
        out.extend(e for e in entries[:511] if e)
        blk = entries[511]
    return out


def corrupt(disk, out):
    with open(disk, "rb") as f:
        h = read_header(f)
        if h["flags"] & 2:
            raise SystemExit("vm_check: uncompressed image: no compressed unit to corrupt")
        blocks = stream_dblocks(f, h["image"])
        # Stream page 0 is the swsusp_info page; units follow, each an 8-byte
        # length L then L bytes, over ceil((8 + L) / 4096) stream pages.
        units, page = [], 1
        while page < len(blocks):
            f.seek(blocks[page] * PAGE)
            (length,) = struct.unpack("<Q", f.read(8))
            span = (8 + length + PAGE - 1) // PAGE
            if length == 0 or page + span > len(blocks):
                break
            units.append((page, length))
            page += span
    if not units:
        raise SystemExit("vm_check: no compressed unit found")
    first, length = units[len(units) // 2]
    offset_in_unit = 8 + length // 2
    stream_page = first + offset_in_unit // PAGE
    byte = blocks[stream_page] * PAGE + offset_in_unit % PAGE
    shutil.copyfile(disk, out)
    with open(out, "r+b") as g:
        g.seek(byte)
        b = g.read(1)
        g.seek(byte)
        g.write(bytes([b[0] ^ 0xFF]))
    print("flipped byte %d (disk block %d, stream page %d) in unit %d of %d "
          "(stream pages %d.., %d compressed bytes)" %
          (byte, blocks[stream_page], stream_page, len(units) // 2, len(units), first, length))


def corrupt_field(disk, out, what):
    """One flipped byte in the map chain (entry 5 of map page 0 gets a high
    byte: a dblock past the device end) or in swsusp_info (the pages count)."""
    with open(disk, "rb") as f:
        h = read_header(f)
        blocks = stream_dblocks(f, h["image"])
    if what == "map":
        byte, where = h["image"] * PAGE + 5 * 8 + 6, "entry 5 of map page 0 (dblock %d)" % h["image"]
    else:
        byte, where = blocks[0] * PAGE + 424, "swsusp_info.pages (dblock %d)" % blocks[0]
    shutil.copyfile(disk, out)
    with open(out, "r+b") as g:
        g.seek(byte)
        b = g.read(1)
        g.seek(byte)
        g.write(bytes([b[0] ^ 0x40]))
    print("flipped byte %d: %s" % (byte, where))


def load_json(path):
    import json
    with open(path) as f:
        return json.load(f)


def report(problems, what):
    for p in problems:
        print("%s: %s" % (what, p))
    return 1 if problems else 0


def check_read(path, mode, t):
    """`swaplab image read --json` of the kernel's image in MODE, T pages."""
    d = load_json(path)
    want = {"origin": "kernel-x86_64", "compress": "none" if mode == "nocompress" else mode,
            "crc": "none" if mode == "nocompress" else "verified", "snapshot_pages": t}
    problems = ["%s is %r, want %r" % (k, d.get(k), v) for k, v in want.items() if d.get(k) != v]
    data, meta = d.get("data_pages"), d.get("meta_pages")
    if not isinstance(data, int) or not isinstance(meta, int):
        problems.append("data_pages / meta_pages missing (%r / %r)" % (data, meta))
    elif data + meta + 1 != t:
        # The kernel's snapshot_get_image_size(): copied pages + meta pages + the info page.
        problems.append("data_pages %d + meta_pages %d + 1 != snapshot_pages %d" % (data, meta, t))
    # The PFN list: every saved page listed once, the zero ones flagged.
    if d.get("pfns", 0) - d.get("zero_pages", 0) != data:
        problems.append("pfns %r - zero_pages %r != data_pages %r" % (d.get("pfns"), d.get("zero_pages"), data))
    # linux_banner of the kernel that wrote it, found in its data pages.
    if not str(d.get("kernel_banner", "")).startswith("Linux version 6.12."):
        problems.append("kernel_banner is %r, want 'Linux version 6.12.…'" % (d.get("kernel_banner"),))
    if d.get("consumed") is not False:
        problems.append("consumed is %r, want false (read-only by default)" % (d.get("consumed"),))
    return report(problems, "image read --json")


def check_inspect(path, t):
    d = load_json(path)
    problems = []
    if d.get("snapshot_pages") != t:
        problems.append("snapshot_pages is %r, want %d" % (d.get("snapshot_pages"), t))
    maps = d.get("map_pages")
    if not isinstance(maps, int) or maps < 1:
        problems.append("map_pages is %r, want >= 1" % (maps,))
    for k in ("runs_disk_order", "runs_write_order"):
        if k not in d:
            problems.append("no %s" % k)
    return report(problems, "image inspect --json")


def summary_read(path):
    d = load_json(path)
    return ", ".join("%s %s" % (k, d.get(k)) for k in
                     ("origin", "compress", "crc", "snapshot_pages", "data_pages", "meta_pages"))


def main(argv):
    if len(argv) >= 2 and argv[1] == "page" and len(argv) == 4:
        sys.stdout.buffer.write(pattern_page(int(argv[2], 0), int(argv[3], 0)))
    elif len(argv) == 5 and argv[1] == "corrupt-field" and argv[2] in ("map", "info"):
        corrupt_field(argv[3], argv[4], argv[2])
    elif len(argv) >= 2 and argv[1] == "count" and len(argv) == 5:
        print(count_pattern_pages(argv[2], int(argv[3], 0), int(argv[4], 0)))
    elif len(argv) >= 2 and argv[1] == "header" and len(argv) == 3:
        with open(argv[2], "rb") as f:
            h = read_header(f)
        print("sig %s" % h["sig"].decode("latin-1").rstrip("\0"))
        print("orig_sig %s" % h["orig_sig"].decode("latin-1").rstrip("\0"))
        print("flags 0x%x %s" % (h["flags"], flag_names(h["flags"])))
        print("hw_sig 0x%08x" % h["hw_sig"])
        print("crc32 0x%08x" % h["crc32"])
        print("image %d" % h["image"])
    elif len(argv) >= 2 and argv[1] == "check-read" and len(argv) == 5:
        return check_read(argv[2], argv[3], int(argv[4]))
    elif len(argv) >= 2 and argv[1] == "check-inspect" and len(argv) == 4:
        return check_inspect(argv[2], int(argv[3]))
    elif len(argv) >= 2 and argv[1] == "summary-read" and len(argv) == 3:
        print(summary_read(argv[2]))
    elif len(argv) >= 2 and argv[1] == "corrupt" and len(argv) == 4:
        corrupt(argv[2], argv[3])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
