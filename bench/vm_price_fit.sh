#!/usr/bin/env bash
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
# Runs whose JSON is already in OUTDIR are kept (a grid can be extended or
# resumed); bench/vm_price_fit.py OUTDIR refits without running anything.
#
# Environment: SWAPLAB (default build/release/swaplab), SIZES (MiB asked
# for the image, default "48 96 160"), LAYOUTS ("shuffled holes"),
# COMPRESS ("none lzo"), SWAP_MIB (256), MEM_MIB (guest memory, 384; an image
# needs about as much free memory again for the snapshot copy). Each run boots the guest twice
# (≈ 15-30 s under TCG); the default grid is 12 runs.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SWAPLAB=${SWAPLAB:-$ROOT/build/release/swaplab}
SIZES=${SIZES:-48 96 160}
LAYOUTS=${LAYOUTS:-shuffled holes}
COMPRESS=${COMPRESS:-none lzo}
SWAP_MIB=${SWAP_MIB:-256}
MEM_MIB=${MEM_MIB:-384}
OUT=${1:-$(mktemp -d /var/tmp/swaplab-vm-fit.XXXXXX)}
mkdir -p "$OUT" || exit 2
[ -x "$SWAPLAB" ] || { echo "no swaplab at $SWAPLAB" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 needed" >&2; exit 2; }

n=0
for layout in $LAYOUTS; do
  for c in $COMPRESS; do
    for size in $SIZES; do
      j="$OUT/$layout-$c-$size.json"
      n=$((n + 1))
      if [ -s "$j" ]; then echo "run $n: $layout $c ${size}M kept from an earlier run"; continue; fi
      if ! "$SWAPLAB" vm hibernate --layout "$layout" --swap "${SWAP_MIB}M" --image "${size}M" --compress "$c" \
           --mem "$MEM_MIB" --resume --json >"$j" 2>"$OUT/$layout-$c-$size.err"; then
        echo "run $n ($layout $c ${size}M) failed: $(tail -c 300 "$OUT/$layout-$c-$size.err")" >&2
        rm -f "$j"
        continue
      fi
      echo "run $n: $layout $c ${size}M done"
    done
  done
done

python3 "$ROOT/bench/vm_price_fit.py" "$OUT"
