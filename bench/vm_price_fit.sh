#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Measured prices of the guest kernel's hibernation I/O under qemu TCG
# ("Measured prices" in docs/results.md): Debian's Linux 6.12 writes and reads
# images of several sizes, uncompressed and LZO, on the shuffled and holes
# layouts (`swaplab vm hibernate ... --resume --json`, one boot to write,
# one to read); the kernel's own "Wrote / Read N kbytes in T seconds" lines
# are fitted by least squares against what each image holds:
#
#   write_s = w0 + w_stream · stream_pages + Σ_mode w_mode · snapshot_pages[mode]
#   read_s  = r0 + r_stream · stream_pages + Σ_mode r_mode · snapshot_pages[mode]
#
# stream_pages are the pages on disk (one bio and one allocator call each
# in 6.12, which submits a bio per page and allocates a slot per page: the
# two cannot be told apart there), snapshot_pages the uncompressed pages
# (copied, and for LZO compressed / decompressed and CRC'd: a price per
# compression mode). Uncompressed, stream = snapshot pages and only the sum
# of the two prices shows; LZO's stream / snapshot ratio changes with the
# image size (the kernel's own pages compress, the agent's pattern does
# not), which is what separates the per-stream-page price. Printed: every
# run, the coefficients in µs, the residuals, R².
#
#   bench/vm_price_fit.sh [OUTDIR]
#
# On a kernel built with kernel-patches/rfc-6.12 (KERNEL=rfc-6.12) every
# run is made in each of COLUMNS (default "base alloc bio": seed 001's
# columns, each booted with swapfile.prefer_nonfull=1 and its parameters,
# as `reproduce --vm --kernel` boots them; the model follows each with its
# slot source and, for bio, a bio per run). hibernate_bio=runs makes the
# kernel's bio count (its "Image I/O" line) independent of the page count,
# so the fit separates a price per bio from a price per page there:
#
#   write_s = w0 + w_stream · stream_pages + w_bio · write_bios + ...
#   read_s  = r0 + r_stream · stream_pages + r_bio · read_bios + ...
#
# Runs whose JSON is already in OUTDIR are kept (a grid can be extended or
# resumed); bench/vm_price_fit.py OUTDIR refits without running anything.
#
# Environment: SWAPLAB (default build/release/swaplab), SIZES (MiB asked
# for the image, default "48 96 160"), LAYOUTS ("shuffled holes"),
# COMPRESS ("none lzo"), SWAP_MIB (256), MEM_MIB (guest memory, 384; an image
# needs about as much free memory again for the snapshot copy), KERNEL (a
# built kernel's name; default Debian's cached 6.12), COLUMNS (with KERNEL:
# "base alloc bio"). Each run boots the guest twice (≈ 15-30 s under TCG);
# the default grid is 12 runs (x 3 columns with KERNEL; COMPRESS=none
# SIZES="48 96 160" there is 18).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SWAPLAB=${SWAPLAB:-$ROOT/build/release/swaplab}
SIZES=${SIZES:-48 96 160}
LAYOUTS=${LAYOUTS:-shuffled holes}
COMPRESS=${COMPRESS:-none lzo}
SWAP_MIB=${SWAP_MIB:-256}
MEM_MIB=${MEM_MIB:-384}
KERNEL=${KERNEL:-}
if [ -n "$KERNEL" ]; then COLUMNS=${COLUMNS:-base alloc bio}; else COLUMNS=debian; fi
# column_args COLUMN: sets `args` to the vm hibernate options of one of
# seed 001's columns (vm_reproduce.h RfcColumns; the model's search is
# kNonfullFirstSearchKnob, the order the kernel takes with the parameter).
column_args() {
  local knob=(--knob "search=nonfull,free,reclaim-full,frag-all,sync-discard-restart,steal-higher")
  local clusters=(--model-source free-clusters-sorted)
  case "$1" in
    debian) args=() ;;
    base) args=(--kernel "$KERNEL" --append "swapfile.prefer_nonfull=1" "${knob[@]}") ;;
    alloc) args=(--kernel "$KERNEL" --append "swapfile.prefer_nonfull=1 hibernate_alloc=clusters" "${clusters[@]}" "${knob[@]}") ;;
    bio) args=(--kernel "$KERNEL" --append "swapfile.prefer_nonfull=1 hibernate_alloc=clusters hibernate_bio=runs" "${clusters[@]}" "${knob[@]}") ;;
    *) echo "unknown column $1 (base alloc bio)" >&2; exit 2 ;;
  esac
}
OUT=${1:-$(mktemp -d /var/tmp/swaplab-vm-fit.XXXXXX)}
mkdir -p "$OUT" || exit 2
[ -x "$SWAPLAB" ] || { echo "no swaplab at $SWAPLAB" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 needed" >&2; exit 2; }

n=0
for col in $COLUMNS; do
  for layout in $LAYOUTS; do
    for c in $COMPRESS; do
      for size in $SIZES; do
        name="$layout-$c-$size"
        [ "$col" = debian ] || name="$name-$col"
        j="$OUT/$name.json"
        n=$((n + 1))
        if [ -s "$j" ]; then echo "run $n: $name kept from an earlier run"; continue; fi
        column_args "$col"
        if ! "$SWAPLAB" vm hibernate --layout "$layout" --swap "${SWAP_MIB}M" --image "${size}M" --compress "$c" \
             --mem "$MEM_MIB" --resume --json --progress never "${args[@]}" >"$j" 2>"$OUT/$name.err"; then
          echo "run $n ($name) failed: $(tail -c 300 "$OUT/$name.err")" >&2
          rm -f "$j"
          continue
        fi
        echo "run $n: $name done"
      done
    done
  done
done

python3 "$ROOT/bench/vm_price_fit.py" "$OUT"
