#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the seed corpora of fuzz/corpus/<target>/ with swaplab's own
# writers (the `swaplab` binary: $SWAPLAB, else build/release/swaplab),
# the shipped traces and scenarios, and, when /work/vm-images/*.img exist
# (real Linux 6.12 images on 256 MiB sparse swap disks), a compact cut of
# each: page 0, one map page holding the first 40 stream pages, those
# pages renumbered to dblocks 2.. (the chain then ends early: the reader
# refuses it, after the header, swsusp_info and the first units).
# Usage: bash fuzz/make_corpus.sh   (rewrites fuzz/corpus/)
set -euo pipefail
cd "$(dirname "$0")/.."
SWAPLAB=${SWAPLAB:-build/release/swaplab}
VM_IMAGES=${VM_IMAGES:-/work/vm-images}
[ -x "$SWAPLAB" ] || { echo "make_corpus: no swaplab at $SWAPLAB (build the release preset or set SWAPLAB)" >&2; exit 2; }
C=fuzz/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$C"
mkdir -p $C/fuzz_swap_header $C/fuzz_image_reader $C/fuzz_trace $C/fuzz_scenario $C/fuzz_alloc_ops \
  $C/fuzz_sweep_spec $C/fuzz_sweep_json $C/fuzz_point_input $C/fuzz_point_result

# An image made compact (the fuzzer takes at most 512 pages): page 0, the
# map pages at dblocks 1.., then the first KEEP stream pages in chain order,
# the entries rewritten to their new dblocks and last_page to the new size.
# An image of at most KEEP pages stays whole and valid; a longer one is cut
# (its chain ends early).
compact() {
  python3 - "$1" "$2" "$3" <<'PY'
import struct, sys
src, dst, keep = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(src, 'rb') as f:
    def page(n):
        f.seek(n * 4096)
        return f.read(4096)
    p0 = bytearray(page(0))
    nxt, entries = struct.unpack_from('<Q', p0, 4064)[0], []
    while nxt and len(entries) < keep:
        m = page(nxt)
        entries += [e for e in struct.unpack_from('<511Q', m, 0) if e]
        nxt = struct.unpack_from('<Q', m, 511 * 8)[0]
    entries = entries[:keep]
    data = [page(e) for e in entries]
nmap = max(1, (len(entries) + 510) // 511)
first = 1 + nmap
struct.pack_into('<I', p0, 1028, first + len(entries) - 1)  # last_page
struct.pack_into('<Q', p0, 4064, 1)                         # map page 0 at dblock 1
maps = []
for i in range(nmap):
    chunk = list(range(first + 511 * i, first + min(len(entries), 511 * (i + 1))))
    mp = bytearray(4096)
    struct.pack_into('<%dQ' % len(chunk), mp, 0, *chunk)
    struct.pack_into('<Q', mp, 511 * 8, 2 + i if i + 1 < nmap else 0)
    maps.append(bytes(mp))
with open(dst, 'wb') as o:
    o.write(bytes(p0) + b''.join(maps) + b''.join(data))
PY
}

# Swap areas: page 0 as mkswap writes it, and images of 256 KiB written on
# an 8 MiB area (swaplab image write needs the free slots), made compact.
"$SWAPLAB" area format "$tmp/plain.swap" --size 2M -L fuzz -U 0123abcd-0000-4000-8000-00000000cafe >/dev/null
head -c 4096 "$tmp/plain.swap" >$C/fuzz_swap_header/v1
"$SWAPLAB" area format "$tmp/bad.swap" --size 64K >/dev/null
head -c 4096 "$tmp/bad.swap" >$C/fuzz_swap_header/v1-small
cp $C/fuzz_swap_header/v1 $C/fuzz_image_reader/no-image
for comp in none lzo lz4; do
  for src in base free-clusters-sorted; do
    f="$tmp/img-$comp-$src.swap"
    "$SWAPLAB" area format "$f" --size 8M >/dev/null
    "$SWAPLAB" image write "$f" --size 256K --compress "$comp" --source "$src" --threads 1 >/dev/null
    compact "$f" "$C/fuzz_image_reader/swaplab-$comp-$src" 400
  done
  head -c 4096 "$C/fuzz_image_reader/swaplab-$comp-base" >"$C/fuzz_swap_header/s1suspend-$comp"
done

# Real images (Linux 6.12, x86-64 record in swsusp_info): a compact cut.
for img in "$VM_IMAGES"/*.img; do
  [ -f "$img" ] || continue
  name=kernel-$(basename "$img" .img)
  compact "$img" "$C/fuzz_image_reader/$name" 40
  head -c 4096 "$C/fuzz_image_reader/$name" >"$C/fuzz_swap_header/$name"
done

# Traces and scenarios as shipped.
for t in tests/kernel/traces/*.trace; do
  # the calibration traces are long: their first 200 lines
  head -n 200 "$t" >"$C/fuzz_trace/$(basename "$t" .trace)"
done
printf 'swaplab-trace 1\nswapon dev=0 pages=2048 ssd=1 blkdev=1\nalloc folio=1 order=4 cpu=0\nfree folio=1 page=3 n=2\ncache folio=1 page=3 n=1\ndup folio=1\ndrop-cache folio=1\nsuspend-storage\ndrop-cache\nresume-storage\nexpect folio=1 page=1 dev=0 offset=2\nswapoff dev=0\n' >$C/fuzz_trace/every-op
for s in scenarios/*.json tests/workload/data/*.json; do
  cp "$s" "$C/fuzz_scenario/$(basename "$(dirname "$s")")-$(basename "$s" .json)"
done

# Allocator operations: a few byte strings that swap a device on and churn.
python3 - $C/fuzz_alloc_ops <<'PY'
import random, sys
d = sys.argv[1]
for seed in range(8):
    r = random.Random(seed)
    b = bytes([seed % 3, seed & 1]) + bytes([0, r.randrange(6), 0x03, 200, 1])  # swapon dev, 456 pages, ssd blkdev
    for _ in range(150):
        b += bytes([r.choice([2, 3, 2, 3, 4, 5, 7, 8, 8, 9, 10, 11, 12, 14, 15, 1, 0]), r.randrange(256), r.randrange(256), r.randrange(256), r.randrange(256), r.randrange(256)])
    open('%s/churn-%d' % (d, seed), 'wb').write(b)
PY
# Sweeps: the shipped specs and the test's small one (its base inline, so
# the target reads no file), and the files of a sweep directory made from
# it: sweep.json, one point's input and its result (one point run).
for s in scenarios/sweeps/*.json; do cp "$s" "$C/fuzz_sweep_spec/shipped-$(basename "$s" .json)"; done
python3 - tests/sweep/data/holes.json >"$C/fuzz_sweep_spec/small-inline" <<'PY'
import json, sys
print(json.dumps({"name": "s", "title": "t", "base": json.load(open(sys.argv[1])), "scale": 0.05,
  "axes": [{"name": "hole", "path": "/aging/0/hole", "values": ["16K", "64K"]},
           {"name": "seed", "seed": True, "values": [1, 2]}],
  "derived": [{"name": "gain", "ratio": ["rfc/bios", "base/bios"]}],
  "heatmaps": [{"name": "g", "x": "seed", "y": "hole", "value": "gain"}]}, indent=1))
PY
"$SWAPLAB" sweep "$C/fuzz_sweep_spec/small-inline" --out "$tmp/sweep" --prepare 2>/dev/null
id=$(head -1 "$tmp/sweep/jobs.txt")
"$SWAPLAB" sweep point "$tmp/sweep" "$id" 2>/dev/null
cp "$tmp/sweep/sweep.json" "$C/fuzz_sweep_json/small"
cp "$tmp/sweep/in/$id.json" "$C/fuzz_point_input/small"
cp "$tmp/sweep/points/$id.json" "$C/fuzz_point_result/small"
echo "corpus: $(find $C -type f | wc -l) files, $(du -sh $C | cut -f1)"
