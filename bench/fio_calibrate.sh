#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Measures the figures the simulated device's cost model is calibrated from
# (docs/performance.md, "I/O engines and the simulated device's calibration"):
# fio, O_DIRECT, io_uring, on a regular file of this machine's disk, for
# bs 4k and 512k x iodepth 1 and 32 x write and read (sequential), plus 4k
# random read at depth 1 for the seek term. Prints one line per job with the
# median of REPS runs: MiB/s, IOPS and mean completion latency.
#
# usage: bench/fio_calibrate.sh [FILE] [REPS] [SECONDS]
#   FILE     default /var/tmp/swaplab_io/calibrate (must not be on tmpfs)
#   REPS     default 3
#   SECONDS  runtime of each job, default 8
set -euo pipefail
FILE=${1:-/var/tmp/swaplab_io/calibrate}
REPS=${2:-3}
SECS=${3:-8}
SIZE=1G
mkdir -p "$(dirname "$FILE")"
fstype=$(df --output=fstype "$(dirname "$FILE")" | tail -1)
if [ "$fstype" = tmpfs ]; then echo "refusing: $FILE is on tmpfs" >&2; exit 1; fi
command -v fio >/dev/null || { echo "fio not installed (scripts/setup installs it)" >&2; exit 1; }
command -v jq >/dev/null || { echo "jq not installed" >&2; exit 1; }

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# Lay the file out once (written blocks, like a swap file).
if [ ! -f "$FILE" ] || [ "$(stat -c %s "$FILE")" -ne $((1<<30)) ]; then
  fio --name=layout --filename="$FILE" --size=$SIZE --rw=write --bs=1M --direct=1 \
      --ioengine=io_uring --iodepth=8 >/dev/null
fi

jobs=(
  "write 4k 1" "write 4k 32" "write 512k 1" "write 512k 32"
  "read 4k 1" "read 4k 32" "read 512k 1" "read 512k 32"
  "randread 4k 1"
)
printf '%-9s %-5s %-3s %10s %10s %12s\n' rw bs qd MiB/s IOPS lat_us
for job in "${jobs[@]}"; do
  read -r rw bs qd <<<"$job"
  key=read; [ "$rw" = write ] && key=write
  bws=(); iops=(); lats=()
  for ((r = 0; r < REPS; r++)); do
    out=$(fio --name=cal --filename="$FILE" --size=$SIZE --rw="$rw" --bs="$bs" --iodepth="$qd" \
              --direct=1 --ioengine=io_uring --runtime="$SECS" --time_based --ramp_time=1 \
              --output-format=json)
    bws+=("$(jq ".jobs[0].$key.bw_bytes / 1048576" <<<"$out")")
    iops+=("$(jq ".jobs[0].$key.iops" <<<"$out")")
    lats+=("$(jq ".jobs[0].$key.clat_ns.mean / 1000" <<<"$out")")
  done
  printf '%-9s %-5s %-3s %10.1f %10.0f %12.1f\n' "$rw" "$bs" "$qd" \
    "$(printf '%s\n' "${bws[@]}" | median)" "$(printf '%s\n' "${iops[@]}" | median)" \
    "$(printf '%s\n' "${lats[@]}" | median)"
done
