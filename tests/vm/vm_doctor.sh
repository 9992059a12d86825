#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# vm test: `swaplab doctor` in Debian's 6.12 under qemu, on misconfigurations
# made on purpose, then a hibernation and resume with the offset doctor gave.
#
#   vm_doctor.sh SWAPLAB AGENT
#
# The guest (src/vm/guest/init.sh, mode doctor; booted with
# hibernate=nocompress, so that the image the kernel writes is the one
# doctor models) makes a 128 MiB swap file on an ext4 disk, and runs doctor
# with: resume_offset wrong (12345), resume naming a device that holds no
# swap (zram0 before its swapon), no resume device with zram swapped on
# first, zram at a higher priority than the file resume names, a 1 GiB
# image for the 128 MiB file, a swap file with a hole in /etc/fstab, and
# the right set-up (with the image's layout as the 6.12 preset places it);
# a third boot, with compression, the 1 GiB image again. Each must be found
# with the right message. Then the
# agent hibernates into the swap file: the host checks that the kernel's
# S1SUSPEND header is at the block doctor printed and that debugfs's block
# map of the file agrees, and a second boot resumes the image with only
# resume_offset= and resume= as doctor said.
#
# Exit 0 passed, 1 failed, 77 skipped (the reason printed).
set -uo pipefail
. "$(dirname "$0")/vm_lib.sh"

[ $# -eq 2 ] || { echo "usage: $0 SWAPLAB AGENT" >&2; exit 2; }
command -v mkfs.ext4 >/dev/null || vm_skip "no mkfs.ext4 (e2fsprogs)"
command -v debugfs >/dev/null || vm_skip "no debugfs (e2fsprogs)"
VM_WITH_SWAPLAB=1 VM_EXTRA_MODULES="crc32c_generic ext4 zram" vm_init "$1" "$2"

PAGES=2048
SEED="$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')"
disk="$VM_WORK/doctor.img"
vm_make_disk "$disk" ext4 256
vm_boot doctor "$disk" doctor "swaplab.pages=$PAGES" "swaplab.seed=$SEED" hibernate=nocompress ||
  vm_fail "the doctor boot did not end in a power-off" doctor
log="$VM_WORK/doctor.log"
tr -d '\r' <"$log" >"$log.txt"

# expect CASE SEVERITY TEXT: doctor's output for CASE has a SEVERITY line with
# TEXT ("->": the line of what to do).
expect() {
  grep -F "swaplab-doctor $1: " "$log.txt" | grep -F " $2 " | grep -qF -- "$3" ||
    vm_fail "doctor $1: no $2 finding with '$3'; it said:
$(grep -F "swaplab-doctor $1: " "$log.txt")"
  vm_log "doctor $1: $2 $3"
}

at="$(sed -n 's/.*swaplab-init: doctor offset \([0-9]*\).*/\1/p' "$log.txt" | head -n1)"
[ -n "$at" ] || vm_fail "doctor printed no offset for the swap file" doctor
# The block of the file's page 0 by ext4's own map (debugfs reads the
# filesystem; the guest never unmounted it, which bmap does not mind).
bmap="$(debugfs -R "bmap /swapfile 0" "$disk" 2>/dev/null | tail -n1 | tr -d '[:space:]')"
[ "$bmap" = "$at" ] || vm_fail "doctor's offset $at, debugfs's bmap of /swapfile block 0: $bmap"
vm_log "doctor's resume_offset $at = debugfs bmap /swapfile 0"

expect wrong-offset error "/sys/power/resume_offset is 12345, but /var/tmp/swapfile starts at dblock $at"
expect wrong-offset "->" "set resume_offset=$at"
expect no-area error "holds no active swap area"
grep -q "swaplab-init: resume 0:0" "$log.txt" || vm_fail "the guest kernel did not take 0:0 for /sys/power/resume"
expect zram-first error "the first swap area, /dev/zram0, which is zram"
expect zram-higher info "above the image's area /var/tmp/swapfile"
expect too-small error "Not enough free swap"
expect hole warning "/etc/fstab lists this swap file, but it is not swapped on"
expect hole error "the file has holes"
expect ok ok "the image goes to /var/tmp/swapfile (/sys/power/resume"
expect ok ok "fits 32767 free slots of /var/tmp/swapfile even uncompressed"
expect ok info "layout: /var/tmp/swapfile: 32768 slots"
expect ok info "layout: linux-6.12 (the running kernel's preset"
grep -F "swaplab-doctor ok: " "$log.txt" | grep -q ' error ' &&
  vm_fail "doctor found an error in the right set-up: $(grep -F "swaplab-doctor ok: " "$log.txt")"
grep -q "swaplab-doctor ok: ok       hibernation: Linux 6" "$log.txt" ||
  vm_fail "doctor did not say the guest kernel can hibernate: $(grep -F "swaplab-doctor ok: " "$log.txt" | head -n3)"
vm_expect doctor "PM: Image saving done"

# The kernel wrote its header where doctor said: the last 10 bytes of the
# page at block $at are S1SUSPEND.
sig="$(dd if="$disk" bs=4096 skip="$at" count=1 status=none | tail -c 10 | tr -d '\0')"
[ "$sig" = S1SUSPEND ] || vm_fail "block $at of the disk ends in '$sig', not S1SUSPEND"
vm_log "the kernel's S1SUSPEND header is at block $at"

# The kernel's image against doctor's prediction of its layout (the 6.12
# preset's placement of the image's first pages on the fresh file): the
# file as the kernel left it, read back by swaplab.
# The image's dblocks are the disk's blocks: the disk, copied, with the swap
# file's page 0 as its page 0 and last_page (bytes 1028-1031) widened to
# the disk, is an area whose dblocks are the kernel's.
view="$VM_WORK/view.img"
cp --sparse=always "$disk" "$view" &&
  dd if="$disk" of="$view" bs=4096 skip="$at" count=1 conv=notrunc status=none &&
  python3 -c 'import os,struct,sys; f=open(sys.argv[1],"r+b"); f.seek(1028); f.write(struct.pack("<I", os.path.getsize(sys.argv[1])//4096-1))' "$view" ||
  vm_fail "cannot make the view of the disk"
"$1" area inspect "$view" >"$VM_WORK/inspect.txt" 2>&1
kruns="$(sed -n 's/^image.stream_pages .* map pages, \([0-9]*\) runs on disk.*/\1/p' "$VM_WORK/inspect.txt")"
pruns="$(grep -F "swaplab-doctor ok: " "$log.txt" | sed -n 's/.*layout: linux-6.12 .* in \([0-9]*\) runs\{0,1\},.*/\1/p')"
kpages="$(sed -n 's/^swsusp_info.pages *\([0-9]*\) .*/\1/p' "$VM_WORK/inspect.txt")"
ppages="$(grep -F "swaplab-doctor ok: " "$log.txt" | sed -n 's/.*an image of about \([0-9]*\) pages.*/\1/p' | head -n1)"
vm_log "the kernel wrote ${kpages:-?} stream pages in ${kruns:-?} runs; doctor estimated ${ppages:-?} data pages and predicted ${pruns:-?} runs (6.12 preset)"
[ -n "$kruns" ] && [ -n "$pruns" ] && [ -n "$kpages" ] && [ -n "$ppages" ] ||
  vm_fail "no run or page count: kernel '${kruns}' '${kpages}', doctor '${pruns}' '${ppages}'"
# doctor predicts runs of slots; the kernel's runs are on the disk. A run
# of slots that crosses a break between two extents of the swap file is
# two runs on the disk (one CI run: the kernel wrote 2 disk runs where
# doctor predicted 1 run of slots), so a single predicted run is held
# against the file's extents under the image's slots 1..N.
nslots="$(sed -n 's/^image.stream_pages *\([0-9]*\) in \([0-9]*\) map pages.*/\1 \2/p' "$VM_WORK/inspect.txt" |
  awk '{print $1 + $2 + 1}')"
debugfs -R "ex /swapfile" "$disk" >"$VM_WORK/extents.txt" 2>/dev/null
# Disk runs of the file's blocks 1..nslots: leaf extents (logical a - b,
# physical c - d), merged where one ends on the disk where the next begins.
xruns="$(python3 - "$VM_WORK/extents.txt" "${nslots:-0}" <<'PY'
import re, sys
ext = []
for l in open(sys.argv[1]):
    m = re.search(r"(\d+)\s*-\s*(\d+)\s+(\d+)\s*-\s*(\d+)\s+\d+", l)
    if m:
        ext.append(tuple(int(x) for x in m.groups()))
n, runs, end = int(sys.argv[2]), 0, None
for a, b, c, d in sorted(ext):
    if b < 1 or a > n:
        continue
    lo, hi = max(a, 1), min(b, n)
    start = c + (lo - a)
    if end is None or start != end + 1:
        runs += 1
    end = c + (hi - a)
print(runs)
PY
)"
vm_log "the swap file's blocks 1-${nslots:-?} lie in ${xruns:-?} runs on the disk ($(grep -cE '[0-9]+ *- *[0-9]+ +[0-9]+ *- *[0-9]+' "$VM_WORK/extents.txt") extents in all)"
# doctor predicts the image on a fresh, idle area. Pages swapped out into
# the file while the kernel made its image (reclaim of the preallocation,
# or during the write: one CI run of 7 December 2026 wrote 2 runs over a
# file of 1 disk run) take slots the prediction gives the image; the gaps
# the image spans hold their data (tests/vm/image_gaps.py), where a gap
# the kernel's allocator left for no such reason is zeros.
if [ "$kruns" != "$pruns" ]; then
  if [ "$pruns" = 1 ] && [ -n "$xruns" ] && [ "$kruns" = "$xruns" ]; then
    vm_log "doctor's 1 run of slots is $xruns runs on the disk: the file's extents break under it"
  else
    first_map="$(sed -n 's/^swsusp.image *\([0-9]*\) .*/\1/p' "$VM_WORK/inspect.txt")"
    gaps="$(python3 "$(dirname "$0")/image_gaps.py" "$view" "${first_map:-0}" 2>&1)"
    vm_log "the image's blocks: $gaps"
    read -r _ _ _ _ _ ngap _ nwritten <<<"$gaps"
    [ -n "${ngap:-}" ] && [ "$ngap" -gt 0 ] 2>/dev/null && [ "$nwritten" = "$ngap" ] ||
      vm_fail "the kernel wrote its image in $kruns runs on the disk, doctor predicted $pruns run(s) of slots (the file's blocks 1-${nslots:-?}: ${xruns:-?} runs on the disk; $gaps)" doctor
    vm_log "the kernel's $kruns runs against doctor's $pruns: every one of the $ngap blocks between the runs holds data, swapped out into the file while the image was made (doctor predicts an idle area)"
  fi
fi
# The estimate is an upper bound: the kernel shrinks memory toward
# image_size and often below it; allow 5 % for what changed in between.
[ "$kpages" -gt 0 ] && [ $((kpages * 100)) -le $((ppages * 105)) ] ||
  vm_fail "doctor estimated $ppages pages, the kernel wrote $kpages"

vm_boot doctor-resume "$disk" doctor-resume "swaplab.resume_offset=$at" ||
  vm_fail "the resume boot did not end in a power-off" doctor-resume
vm_expect doctor-resume "PM: Image signature found, resuming"
vm_expect doctor-resume "swaplab-agent: resumed, $PAGES pattern pages intact"
vm_log "resumed from /var/tmp/swapfile at resume_offset=$at, $PAGES pattern pages intact"

# With compression (a boot without hibernate=nocompress), an image too
# large for the area is a warning with the ratio it needs, not an error.
vm_boot doctor-compressed "$disk" doctor-compressed "swaplab.resume_offset=$at" ||
  vm_fail "the compressed-doctor boot did not end in a power-off" doctor-compressed
tr -d '\r' <"$VM_WORK/doctor-compressed.log" >>"$log.txt"
expect too-small-compressed warning "fits the 32767 free slots of /var/tmp/swapfile only if it compresses at least"
grep -F "swaplab-doctor too-small-compressed: " "$log.txt" | grep -q ' error ' &&
  vm_fail "doctor gave an error for a compressed image: $(grep -F "swaplab-doctor too-small-compressed: " "$log.txt")"
echo "vm doctor: every case found; hibernated and resumed at doctor's offset (retries: $VM_RETRIES)"
