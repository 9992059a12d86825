#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# vm test: real hibernation images from Linux 6.12 in a qemu guest, read by
# swaplab.
#
#   real_images.sh SWAPLAB AGENT
#
# For each case MODE:MAKER (MODE lzo | lz4 | nocompress; MAKER mkswap |
# swaplab = `swaplab area format`): make a 256 MiB swap disk, boot the guest
# in hibernate mode (the agent mlocks PAGES pattern pages of a per-run random
# seed and hibernates), check the console's image line and the swsusp header,
# run swaplab's reader on the disk (inspect --json, read --json --dump; the
# pattern pages must all be in the dumped stream; a copy with one byte flipped
# in a compressed unit must be refused), check the disk is unchanged, then
# boot again in resume mode: the kernel must resume the same image with every
# pattern page intact.
#
# Exit 0 passed, 1 failed, 77 skipped (the reason printed: no qemu, no guest
# kernel).
# Environment: SWAPLAB_VM_CASES (default all six cases), SWAPLAB_VM_PAGES
# (2048), SWAPLAB_VM_SEED (random), SWAPLAB_VM_KEEP=DIR (copy each disk as the
# kernel wrote it + its console logs + its pattern there),
# SWAPLAB_VM_REUSE=DIR (a case whose disk an earlier run kept in DIR is not
# booted again: only swaplab's reader checks run on a copy of it; the
# sanitizer build's stage reads the release stage's disks this way);
# vm_lib.sh's.
set -uo pipefail
. "$(dirname "$0")/vm_lib.sh"

[ $# -eq 2 ] || { echo "usage: $0 SWAPLAB AGENT" >&2; exit 2; }
vm_init "$1" "$2"

CASES="${SWAPLAB_VM_CASES:-lzo:mkswap lz4:mkswap nocompress:mkswap lzo:swaplab lz4:swaplab nocompress:swaplab}"
PAGES="${SWAPLAB_VM_PAGES:-2048}"
SEED="${SWAPLAB_VM_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
KEEP="${SWAPLAB_VM_KEEP:-}"
REUSE="${SWAPLAB_VM_REUSE:-}"
CHECK="$VM_DIR/vm_check.py"
vm_log "pattern $PAGES pages seed $SEED; cases: $CASES"
if [ -n "$KEEP" ]; then
  mkdir -p "$KEEP" || vm_fail "cannot create SWAPLAB_VM_KEEP=$KEEP"
  echo "$(date -u +%F) kernel $VM_RELEASE accel $VM_ACCEL mem ${VM_MEM}M: pattern pages=$PAGES seed=$SEED" >>"$KEEP/README"
fi

# The reader interface this test is written against: a swaplab without it fails.
"$VM_SWAPLAB" image read --help 2>&1 | grep -q -- "--dump" || vm_fail "swaplab image read has no --dump"
"$VM_SWAPLAB" image inspect --help 2>&1 | grep -q -- "--json" || vm_fail "swaplab image inspect has no --json"
vm_log "reader: swaplab image inspect --json / read --json --dump"

SUMMARY=()

# Runs swaplab's reader on DISK; fails the test on any mismatch.
reader_checks() {  # NAME DISK MODE T
  local name="$1" disk="$2" mode="$3" t="$4" out="$VM_WORK/$1" rc n
  "$VM_SWAPLAB" image inspect "$disk" --json >"$out.inspect.json" 2>"$out.inspect.err"
  rc=$?
  [ $rc -eq 0 ] || vm_fail "$name: swaplab image inspect exited $rc: $(head -c 600 "$out.inspect.err")"
  python3 "$CHECK" check-inspect "$out.inspect.json" "$t" || vm_fail "$name: swaplab image inspect --json: see above"
  # The kernel's image as a cluster map: one cell per 512-slot cluster of
  # the 256 MiB disk, image cells, and the stream and map pages inspect found.
  "$VM_SWAPLAB" map "$disk" -o "$out.map.svg" 2>"$out.map.err" ||
    vm_fail "$name: swaplab map of the kernel's image failed: $(head -c 600 "$out.map.err")"
  local svg
  svg="$(python3 "$VM_DIR/../cli/check_svg.py" "$out.map.svg" 128 --require image)" ||
    vm_fail "$name: the map of the kernel's image: $svg"
  n="$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print("%d stream pages and %d map pages on the area" % (d["stream_pages"], d["map_pages"]))' "$out.inspect.json")"
  grep -q "$n" "$out.map.svg" || vm_fail "$name: the map does not say '$n'"
  vm_log "$name: map: ${svg##*/}; $n"
  "$VM_SWAPLAB" image read "$disk" --json --dump "$out.stream" --progress always >"$out.read.json" 2>"$out.read.err"
  rc=$?
  [ $rc -eq 0 ] || vm_fail "$name: swaplab image read exited $rc on the kernel's image: $(head -c 600 "$out.read.err")"
  tr '\r' '\n' <"$out.read.err" | grep -aEq '\[#{20}\] 100% ([0-9.]+)/\1 MB, .*image read' ||
    vm_fail "$name: image read --progress always drew no full bar: $(tr '\r' '\n' <"$out.read.err" | tail -2)"
  python3 "$CHECK" check-read "$out.read.json" "$mode" "$t" || vm_fail "$name: swaplab image read --json: see above"
  [ "$(stat -c %s "$out.stream")" -eq $((t * 4096)) ] ||
    vm_fail "$name: --dump wrote $(stat -c %s "$out.stream") bytes, want T=$t pages = $((t * 4096))"
  n="$(python3 "$CHECK" count "$out.stream" "$SEED" "$PAGES")"
  [ "$n" -eq "$PAGES" ] || vm_fail "$name: the dumped stream holds $n of the $PAGES pattern pages"
  vm_log "$name: reader: exit 0, $(python3 "$CHECK" summary-read "$out.read.json"), $n/$PAGES pattern pages in the dump"
  rm -f "$out.stream"
  if [ "$mode" != nocompress ]; then
    python3 "$CHECK" corrupt "$disk" "$out.bad.img" >"$out.corrupt" || vm_fail "$name: cannot make the corrupt copy"
    "$VM_SWAPLAB" image read "$out.bad.img" --json >"$out.bad.json" 2>"$out.bad.err"
    rc=$?
    [ $rc -eq 1 ] || vm_fail "$name: swaplab image read exited $rc on a copy with one flipped byte ($(cat "$out.corrupt")), want 1"
    grep -Eq "compressed unit [0-9]+ \(stream pages|CRC32 of the decompressed stream" "$out.bad.err" ||
      vm_fail "$name: the flipped unit byte is not named: $(head -c 400 "$out.bad.err")"
    vm_log "$name: reader: exit 1 on the copy with $(cat "$out.corrupt"): $(head -c 200 "$out.bad.err")"
    rm -f "$out.bad.img"
  fi
  # a flipped byte in the map chain and in swsusp_info: named, exit 1
  local field want
  for field in map info; do
    python3 "$CHECK" corrupt-field "$field" "$disk" "$out.bad.img" >"$out.corrupt" || vm_fail "$name: cannot corrupt $field"
    "$VM_SWAPLAB" image read "$out.bad.img" >/dev/null 2>"$out.bad.err"
    rc=$?
    [ $rc -eq 1 ] || vm_fail "$name: swaplab image read exited $rc with $(cat "$out.corrupt"), want 1"
    if [ "$field" = map ]; then want="entry 5 of map page 0 .* past the device end"; else want="swsusp_info|entries for an image of"; fi
    grep -Eq "$want" "$out.bad.err" || vm_fail "$name: $(cat "$out.corrupt") not named: $(head -c 400 "$out.bad.err")"
    vm_log "$name: reader: exit 1 on the copy with $(cat "$out.corrupt"): $(head -c 200 "$out.bad.err")"
    rm -f "$out.bad.img"
  done
}

# The kernel's image-saving line for MODE in console log LOG ("... (N
# pages)..."), empty when there is none.
saving_line() {  # MODE LOG
  if [ "$1" = nocompress ]; then
    grep -oE 'PM: Saving image data pages \([0-9]+ pages\)\.\.\.' "$2" | head -n1
  else
    grep -oE 'PM: Compressing and saving image data \([0-9]+ pages\)\.\.\.' "$2" | head -n1
  fi
}

# A case kept by an earlier run (SWAPLAB_VM_REUSE): the reader's checks on a
# copy of its disk, with that run's pattern; 1 when there is nothing to reuse.
reuse_case() {  # MODE MAKER
  local mode="$1" name="$1-$2" disk="$VM_WORK/$1-$2.img" kept="$REUSE/$1-$2" line n t
  [ -n "$REUSE" ] && [ -f "$kept.img" ] && [ -f "$kept.log" ] && [ -f "$kept.pattern" ] || return 1
  local SEED PAGES
  read -r PAGES SEED <"$kept.pattern"
  [[ "$PAGES" =~ ^[0-9]+$ && "$SEED" =~ ^[0-9]+$ ]] || vm_fail "$kept.pattern: not 'PAGES SEED'"
  line="$(saving_line "$mode" "$kept.log")"
  [ -n "$line" ] || vm_fail "$kept.log: no image-saving line for $mode"
  n="$(echo "$line" | sed 's/.*(\([0-9]*\) pages).*/\1/')"
  t=$((n + 1))
  cp --sparse=always "$kept.img" "$disk" || vm_fail "cannot copy $kept.img"
  vm_log "$name: reusing the disk the kernel wrote in an earlier run ($kept.img, pattern $PAGES pages seed $SEED)"
  reader_checks "$name" "$disk" "$mode" "$t"
  SUMMARY+=("$(printf '%-20s %7s %-38s' "$name" "$n" "(reused: reader checks only)")")
  rm -f "$disk"
}

run_case() {  # MODE MAKER
  local mode="$1" maker="$2" name="$1-$2" disk="$VM_WORK/$1-$2.img" args=() line n t flags hw
  local sha0 sha1 t_init t_hib t_wall k_write t_res
  reuse_case "$mode" "$maker" && return 0
  case "$mode" in
    lzo) ;;
    lz4) args=(hibernate.compressor=lz4) ;;
    nocompress) args=(hibernate=nocompress) ;;
    *) vm_fail "unknown mode $mode" ;;
  esac
  vm_make_disk "$disk" "$maker" 256
  vm_boot "$name" "$disk" hibernate "swaplab.pages=$PAGES" "swaplab.seed=$SEED" "${args[@]}" ||
    vm_fail "$name: the hibernate boot did not end in a power-off" "$name"
  t_init="$VM_T_INIT" t_hib="$VM_T_HIB" t_wall="$VM_T_WALL"
  vm_expect "$name" "swaplab-agent: pattern $PAGES pages seed $SEED"
  [ "$mode" = nocompress ] || vm_expect "$name" "for $mode compression"
  line="$(saving_line "$mode" "$VM_WORK/$name.log")"
  [ -n "$line" ] || vm_fail "$name: no image-saving line on the console" "$name"
  vm_expect "$name" "PM: Image saving done"
  n="$(echo "$line" | sed 's/.*(\([0-9]*\) pages).*/\1/')"
  t=$((n + 1))
  k_write="$(sed -n 's/.*PM: hibernation: Wrote [0-9]* kbytes in \([0-9.]*\) seconds.*/\1/p' "$VM_WORK/$name.log" | head -n1)"

  [ "$(vm_header "$disk" sig)" = S1SUSPEND ] || vm_fail "$name: page 0 has no hibernation signature after the guest's power-off" "$name"
  flags="$(vm_header "$disk" flags)"
  hw="$(vm_header "$disk" hw_sig)"
  case "$mode:$flags" in
    lzo:*NOCOMPRESS* | lzo:*LZ4* | lz4:*NOCOMPRESS* | nocompress:*CRC32* | nocompress:*LZ4*)
      vm_fail "$name: swsusp flags $flags do not match $mode" ;;
    lzo:*CRC32_MODE* | lz4:*CRC32_MODE*COMPRESSION_ALG_LZ4* | nocompress:*NOCOMPRESS_MODE*) ;;
    *) vm_fail "$name: swsusp flags $flags do not match $mode" ;;
  esac
  if [ "$mode" = nocompress ]; then
    # Uncompressed pages lie on the disk as they were in memory.
    local raw
    raw="$(python3 "$CHECK" count "$disk" "$SEED" "$PAGES")"
    [ "$raw" -eq "$PAGES" ] || vm_fail "$name: the disk holds $raw of the $PAGES pattern pages (uncompressed image)"
  fi
  vm_log "$name: kernel: \"$line\", flags $flags, hw_sig $hw; init at ${t_init} s, hibernate ${t_hib} s (kernel's write ${k_write} s), boot ${t_wall} s"

  sha0="$(sha256sum <"$disk" | cut -d' ' -f1)"
  if [ -n "$KEEP" ]; then
    # The pattern is written last: a disk kept without it is never reused.
    rm -f "$KEEP/$name.pattern"
    cp --sparse=always "$disk" "$KEEP/$name.img" && cp "$VM_WORK/$name.log" "$KEEP/$name.log" &&
      echo "$PAGES $SEED" >"$KEEP/$name.pattern" || vm_fail "cannot copy $name to $KEEP"
  fi
  reader_checks "$name" "$disk" "$mode" "$t"
  sha1="$(sha256sum <"$disk" | cut -d' ' -f1)"
  [ "$sha0" = "$sha1" ] || vm_fail "$name: the disk changed while swaplab read it (sha256 $sha0 -> $sha1)"

  # Control: the kernel resumes the image swaplab just read.
  vm_boot "$name-resume" "$disk" resume || vm_fail "$name: the resume boot did not end in a power-off" "$name-resume"
  [ -n "$KEEP" ] && cp "$VM_WORK/$name-resume.log" "$KEEP/$name-resume.log"
  vm_expect "$name-resume" "PM: Image signature found, resuming"
  vm_expect "$name-resume" "swaplab-agent: resumed, $PAGES pattern pages intact"
  [ "$(vm_header "$disk" sig)" = SWAPSPACE2 ] || vm_fail "$name: page 0 is not SWAPSPACE2 after the resume"
  t_res="$(sed -n 's/.*PM: hibernation: Read [0-9]* kbytes in \([0-9.]*\) seconds.*/\1/p' "$VM_WORK/$name-resume.log" | head -n1)"
  vm_log "$name: resumed by the kernel, $PAGES pattern pages intact (kernel's read ${t_res} s, boot ${VM_T_WALL} s)"
  SUMMARY+=("$(printf '%-20s %7s %-38s %-10s %6s %6s %6s %6s' "$name" "$n" "$flags" "$hw" "$t_init" "$t_hib" "$k_write" "$t_res")")
  rm -f "$disk"
}

start="$(vm_now)"
for c in $CASES; do
  run_case "${c%%:*}" "${c#*:}"
done

echo
printf '%-20s %7s %-38s %-10s %6s %6s %6s %6s\n' case N "swsusp flags" hw_sig init_s hib_s write_s read_s
printf '%s\n' "${SUMMARY[@]}"
echo "(N: the kernel's 'saving image data (N pages)' = snapshot pages - 1; init_s: guest uptime at /init;"
echo " hib_s: host seconds from the agent's write of 'disk' to power-off; write_s / read_s: the kernel's own figures)"
vm_log "accelerator $VM_ACCEL, kernel $VM_RELEASE, ${VM_MEM} MiB, $(vm_secs "$start" "$(vm_now)") s for $(echo $CASES | wc -w) cases"

echo "vm_real_images: passed"
