#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# vm test: the reverse of real_images.sh — an image written by swaplab, given
# to Linux 6.12 to resume.
#
#   swaplab_image_resume.sh SWAPLAB AGENT
#
# For each compressor (none, lzo, lz4): `swaplab area format DISK --size 64M`,
# `swaplab image write DISK --size 8M --source base --batch per-run
# --compress C`, then a resume boot. The kernel must find the signature
# ("PM: Image signature found, resuming"), take the image's length from it
# (its "Loading ... (N pages)" line with N = swaplab's snapshot_pages - 1),
# and refuse it at the architecture check ("PM: hibernation: Image mismatch:
# architecture specific data": swaplab's snapshot is synthetic, not a kernel's
# memory), then put page 0 back to SWAPSPACE2.
# Exit 0 passed, 1 failed, 77 skipped (reason printed).
set -uo pipefail
. "$(dirname "$0")/vm_lib.sh"

[ $# -eq 2 ] || { echo "usage: $0 SWAPLAB AGENT" >&2; exit 2; }
vm_init "$1" "$2"

for comp in ${SWAPLAB_VM_COMPRESS:-none lzo lz4}; do
  name="swaplab-$comp"
  disk="$VM_WORK/$name.img"
  vm_make_disk "$disk" swaplab 64
  "$VM_SWAPLAB" image write "$disk" --size 8M --source base --batch per-run --compress "$comp" --json \
    >"$VM_WORK/$name.json" 2>"$VM_WORK/$name.err" ||
    vm_fail "$name: swaplab image write failed: $(head -c 600 "$VM_WORK/$name.err")"
  t="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["snapshot_pages"])' "$VM_WORK/$name.json")" ||
    vm_fail "$name: no snapshot_pages in swaplab image write --json"
  [ "$(vm_header "$disk" sig)" = S1SUSPEND ] || vm_fail "$name: swaplab image write left no hibernation signature"
  flags="$(vm_header "$disk" flags)"

  vm_boot "$name" "$disk" resume-swaplab || vm_fail "$name: the resume boot did not end in a power-off" "$name"
  vm_expect "$name" "PM: Image signature found, resuming"
  vm_expect "$name" "PM: hibernation: resume from hibernation"
  if [ "$comp" = none ]; then
    vm_expect "$name" "PM: Loading image data pages ($((t - 1)) pages)..."
  else
    vm_expect "$name" "for $comp decompression"
    vm_expect "$name" "PM: Loading and decompressing image data ($((t - 1)) pages)..."
  fi
  vm_expect "$name" "PM: hibernation: Image mismatch: architecture specific data"
  vm_expect "$name" "swaplab-init: no image resumed"
  sig="$(vm_header "$disk" sig)"
  [ "$sig" = SWAPSPACE2 ] || vm_fail "$name: page 0 is '$sig' after the kernel's refusal, want SWAPSPACE2" "$name"
  vm_log "$name: swaplab image (flags $flags, T=$t) found by the kernel: \"$(vm_line "$name" "PM: Loading")\", refused: \"$(vm_line "$name" "Image mismatch")\"; page 0 back to SWAPSPACE2 (boot ${VM_T_WALL} s)"
  rm -f "$disk"
done
echo "vm_swaplab_image_resume: passed"
