#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Wall time of `swaplab run` against device size: the rfc-shuffled layout
# (90% of the device swapped out in 2M folios, freed in random order) and
# a 1G image written and read back by base / allocator / allocator + bio,
# on a simulated device of 6, 12, 48 and 192 GiB, structural (no page
# data, as reproduce's default). Prints "GiB seconds".
# Usage: bench/reproduce_scaling.sh [SWAPLAB] [SIZES...]
set -euo pipefail
bin=${1:-./build/release/swaplab}
shift || true
sizes=${*:-6 12 48 192}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for g in $sizes; do
  region=$(( g * 1024 * 9 / 10 / 2 * 2 ))
  cat > "$dir/s$g.json" <<JSON
{"name": "scale-$g", "seed": 1, "devices": [{"name": "vda", "size": "${g}G"}],
 "aging": [{"generator": "fill-free", "region": "${region}M", "folio": "2M", "shuffled": true}],
 "measured": [{"generator": "image", "size": "1G", "max_pages": 254}],
 "variants": [{"label": "base", "source": "base", "batch": "per-page"},
              {"label": "allocator", "source": "free-clusters-sorted", "batch": "per-page"},
              {"label": "allocator + bio", "source": "free-clusters-sorted", "batch": "per-run"}]}
JSON
  start=$(date +%s.%N)
  "$bin" run "$dir/s$g.json" --structural --json > "$dir/out$g.json"
  end=$(date +%s.%N)
  echo "$g $(echo "$end - $start" | bc)"
done
