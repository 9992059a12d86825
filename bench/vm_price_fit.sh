#!/usr/bin/env bash
# Measured prices of the guest kernel's hibernation I/O under qemu TCG
# (issue 12, "Measured prices"): Debian's Linux 6.12 writes and reads
# images of several sizes, uncompressed and LZO, on the shuffled and holes
# layouts (`swaplab vm hibernate ... --resume --json`, one boot to write,
# one to read); the kernel's own "Wrote / Read N kbytes in T seconds" lines
# are fitted by least squares against what each image holds:
#
#   write_s = w0 + w_bio · stream_pages + w_page · snapshot_pages
#   read_s  = r0 + r_bio · stream_pages + r_page · snapshot_pages
#
# stream_pages are the pages on disk (one bio and one allocator call each
# in 6.12, which submits a bio per page and allocates a slot per page: the
# two cannot be told apart there), snapshot_pages the uncompressed pages
# (copied, and for LZO compressed / decompressed and CRC'd). Printed: every
# run, the coefficients in µs, the residuals, R².
#
#   bench/vm_price_fit.sh [OUTDIR]
#
# Environment: SWAPLAB (default build/release/swaplab), SIZES (MiB asked
# for the image, default "48 96 160"), LAYOUTS ("shuffled holes"),
# COMPRESS ("none lzo"), SWAP_MIB (256). Each run boots the guest twice
# (≈ 15-30 s under TCG); the default grid is 12 runs.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SWAPLAB=${SWAPLAB:-$ROOT/build/release/swaplab}
SIZES=${SIZES:-48 96 160}
LAYOUTS=${LAYOUTS:-shuffled holes}
COMPRESS=${COMPRESS:-none lzo}
SWAP_MIB=${SWAP_MIB:-256}
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
      if ! "$SWAPLAB" vm hibernate --layout "$layout" --swap "${SWAP_MIB}M" --image "${size}M" --compress "$c" \
           --resume --json >"$j" 2>"$OUT/$layout-$c-$size.err"; then
        echo "run $n ($layout $c ${size}M) failed: $(tail -c 300 "$OUT/$layout-$c-$size.err")" >&2
        rm -f "$j"
        continue
      fi
      echo "run $n: $layout $c ${size}M done"
    done
  done
done

python3 - "$OUT" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
rows = []
for f in sorted(glob.glob(os.path.join(out, "*.json"))):
    k = json.load(open(f))["kernel"]
    if k.get("write_s") is None or k.get("read_s") is None:
        print(f"{os.path.basename(f)}: no write or read line, left out")
        continue
    rows.append((os.path.basename(f)[:-5], k["stream_pages"], k["snapshot_pages"], k["write_s"], k["read_s"],
                 k.get("runs_disk_order"), k["release"], k["accel"]))
if len(rows) < 4:
    sys.exit(f"only {len(rows)} usable runs: at least 4 are needed for 3 coefficients")

def lstsq(xs, ys):  # normal equations for y = b0 + b1 x1 + b2 x2
    n = len(xs[0]) + 1
    A = [[0.0] * n for _ in range(n)]
    v = [0.0] * n
    for x, y in zip(xs, ys):
        r = [1.0] + list(x)
        for i in range(n):
            v[i] += r[i] * y
            for j in range(n):
                A[i][j] += r[i] * r[j]
    for i in range(n):  # Gauss-Jordan with partial pivoting
        p = max(range(i, n), key=lambda r: abs(A[r][i]))
        A[i], A[p], v[i], v[p] = A[p], A[i], v[p], v[i]
        if abs(A[i][i]) < 1e-12:
            sys.exit("the runs do not tell the coefficients apart (singular system): vary sizes and compression")
        for r in range(n):
            if r != i:
                f = A[r][i] / A[i][i]
                A[r] = [a - f * b for a, b in zip(A[r], A[i])]
                v[r] -= f * v[i]
    return [v[i] / A[i][i] for i in range(n)]

xs = [(r[1], r[2]) for r in rows]
print(f"kernel {rows[0][6]} ({rows[0][7]}); {len(rows)} runs; seconds are the guest kernel's own lines")
print(f"{'run':<22} {'stream':>8} {'snapshot':>9} {'runs':>5} {'write_s':>8} {'fit':>7} {'resid':>7} {'read_s':>7} {'fit':>7} {'resid':>7}")
fits = {}
for name, col in (("write", 3), ("read", 4)):
    ys = [r[col] for r in rows]
    b = lstsq(xs, ys)
    pred = [b[0] + b[1] * x[0] + b[2] * x[1] for x in xs]
    mean = sum(ys) / len(ys)
    ss_res = sum((y - p) ** 2 for y, p in zip(ys, pred))
    ss_tot = sum((y - mean) ** 2 for y in ys) or 1e-12
    fits[name] = (b, pred, 1 - ss_res / ss_tot)
for i, r in enumerate(rows):
    wp, rp = fits["write"][1][i], fits["read"][1][i]
    print(f"{r[0]:<22} {r[1]:>8} {r[2]:>9} {str(r[5]):>5} {r[3]:>8.2f} {wp:>7.2f} {r[3]-wp:>+7.2f} {r[4]:>7.2f} {rp:>7.2f} {r[4]-rp:>+7.2f}")
for name in ("write", "read"):
    b, _, r2 = fits[name]
    print(f"{name}: {b[0]:.3f} s + {b[1]*1e6:.2f} us per stream page (bio + slot) + {b[2]*1e6:.2f} us per snapshot page; R^2 {r2:.4f}")
json.dump({"runs": [dict(zip(("run", "stream_pages", "snapshot_pages", "write_s", "read_s", "runs_disk_order", "release", "accel"), r)) for r in rows],
           "write": {"s": fits["write"][0][0], "us_per_stream_page": fits["write"][0][1] * 1e6, "us_per_snapshot_page": fits["write"][0][2] * 1e6, "r2": fits["write"][2]},
           "read": {"s": fits["read"][0][0], "us_per_stream_page": fits["read"][0][1] * 1e6, "us_per_snapshot_page": fits["read"][0][2] * 1e6, "r2": fits["read"][2]}},
          open(os.path.join(out, "fit.json"), "w"), indent=2)
print(f"fit and runs: {out}/fit.json")
PY
