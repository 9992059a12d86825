#!/bin/busybox sh
# SPDX-License-Identifier: MIT
# shellcheck shell=dash
# /init of the vm tests' initramfs (built by make_initramfs.sh). Reads from
# the kernel command line:
#   swaplab.mode=hibernate      swapon /dev/vda, run the agent: pattern, hibernate
#               |resume         point /sys/power/resume at /dev/vda: the kernel
#               |resume-swaplab resumes the image there, or returns ("no image")
#               |layout         swapon /dev/vda, the agent prepares
#                               swaplab.layout=fresh|shuffled|holes on it
#                               (swaplab.swap_pages=N: the area's pages),
#                               writes the trace to /dev/vdb, fills memory to
#                               about swaplab.image_pages=N pages, hibernates
#               |churn          seed 003's build in a memory cgroup (vm_churn.h):
#                               zram0 of swaplab.zram=BYTES as swap (no
#                               discard), the mTHP sizes of swaplab.mthp=KB,..
#                               "always" (the others and the top level
#                               "never"), a cgroup of memory.max
#                               swaplab.memcg=BYTES running the agent's churn
#                               with swaplab.churn=P,C,G,MIN,MAX,ZAP,SWAPPED,SEED
#                               and swaplab.mix=PAGES:WEIGHT/...
#               |doctor         `swaplab doctor` on misconfigurations made on
#                               purpose (tests/vm/vm_doctor.sh): /dev/vda is
#                               ext4, a swap file is made on it; each case's
#                               findings on the console as "swaplab-doctor
#                               CASE: ..."; then resume= and resume_offset=
#                               as doctor says, and the agent hibernates
#               |doctor-resume  resume from the swap file at
#                               swaplab.resume_offset=N of /dev/vda
#               |doctor-compressed  the swap file swapped on again, doctor
#                               run with compression on (a 1 GiB image)
#               |probe          print "swaplab-init: probe ok" and power off
#               |run            `vm run`: mount /dev/vda (ext4, the trace in
#                               in.trace) on /var/tmp, run /bin/swaplab kernel
#                               run on it (swaplab.device=D, swaplab.policy=P,
#                               swaplab.reruns=N, swaplab.annotate=1 for
#                               --annotate-inuse, swaplab.floor=1 for
#                               --floor), leave out.trace,
#                               result.json, stderr.txt and rc there
#   swaplab.pages=N swaplab.seed=S   the agent's pattern
#   swaplab.image_size=BYTES    written to /sys/power/image_size before the
#                               agent runs (hibernate mode; without it the
#                               kernel's default, 2/5 of RAM, is left alone)
# Every line it prints starts with "swaplab-init:"; it always ends by powering
# the guest off.
/bin/busybox mkdir -p /proc /sys /dev /tmp /bin /sbin
/bin/busybox mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys

say() { echo "swaplab-init: $*"; }
off() { sync; poweroff -f; sleep 10; }

read -r up _ </proc/uptime
say "start at uptime $up s, kernel $(uname -r)"

mode=hibernate pages=2048 seed=1 image_size= layout=fresh swap_pages=0 image_pages=0 rotational=
device=loop-ssd policy=linux-6.14 reruns=4 annotate= floor=
churn='' mix=1:1 zram=0 memcg=0 mthp=none resume_offset=0 dump_trace=0
for arg in $(cat /proc/cmdline); do
  case "$arg" in
    swaplab.mode=*) mode="${arg#*=}" ;;
    swaplab.pages=*) pages="${arg#*=}" ;;
    swaplab.seed=*) seed="${arg#*=}" ;;
    swaplab.image_size=*) image_size="${arg#*=}" ;;
    swaplab.layout=*) layout="${arg#*=}" ;;
    swaplab.rotational=*) rotational="${arg#*=}" ;;
    swaplab.swap_pages=*) swap_pages="${arg#*=}" ;;
    swaplab.image_pages=*) image_pages="${arg#*=}" ;;
    swaplab.device=*) device="${arg#*=}" ;;
    swaplab.policy=*) policy="${arg#*=}" ;;
    swaplab.reruns=*) reruns="${arg#*=}" ;;
    swaplab.annotate=1) annotate=--annotate-inuse ;;
    swaplab.floor=1) floor=--floor ;;
    swaplab.dump_trace=1) dump_trace=1 ;;
    swaplab.churn=*) churn="${arg#*=}" ;;
    swaplab.mix=*) mix="${arg#*=}" ;;
    swaplab.zram=*) zram="${arg#*=}" ;;
    swaplab.memcg=*) memcg="${arg#*=}" ;;
    swaplab.mthp=*) mthp="${arg#*=}" ;;
    swaplab.resume_offset=*) resume_offset="${arg#*=}" ;;
  esac
done
say "mode $mode pages $pages seed $seed"
# kernel-patches/nonfull-6.12's switch, when the kernel has it (a dotted
# parameter the kernel does not know is ignored without a word).
[ -r /sys/module/swapfile/parameters/prefer_nonfull ] &&
  say "swapfile.prefer_nonfull $(cat /sys/module/swapfile/parameters/prefer_nonfull)"

if [ "$mode" = probe ]; then
  say "probe ok"
  off
fi

# Modules in dependency order (virtio_blk, the LZ4 compressor), decompressed.
for m in $(cat /modules.list); do
  insmod "/lib/modules/$m.ko" || say "insmod $m failed"
done

if [ "$mode" = churn ]; then
  thp=/sys/kernel/mm/transparent_hugepage
  echo never >$thp/enabled
  # Faults of the enabled sizes compact memory for their folio as a build
  # machine with memory to spare would have it (the default, madvise, gives
  # up at once in a small guest: anon_fault_fallback).
  echo always >$thp/defrag
  for d in "$thp"/hugepages-*kB; do echo never >"$d/enabled"; done
  for kb in $(echo "$mthp" | tr , ' '); do
    [ "$kb" = none ] && continue
    echo always >"$thp/hugepages-${kb}kB/enabled" || say "no mTHP size ${kb}kB"
  done
  for d in "$thp"/hugepages-*kB; do
    grep -q '\[always\]' "$d/enabled" && say "mTHP ${d##*/} always"
  done
  [ -e /sys/block/zram0 ] || { say "no zram0 (zram not in the kernel?)"; off; }
  echo "$zram" >/sys/block/zram0/disksize || { say "cannot size zram0 to $zram"; off; }
  mkswap /dev/zram0 >/dev/null && swapon /dev/zram0 || { say "swapon /dev/zram0 failed"; off; }
  say "swap on zram0 of $zram bytes ($(cat /sys/block/zram0/comp_algorithm | tr -d '\n'))"
  mkdir -p /sys/fs/cgroup
  mount -t cgroup2 cgroup2 /sys/fs/cgroup && echo +memory >/sys/fs/cgroup/cgroup.subtree_control &&
    mkdir /sys/fs/cgroup/build && echo "$memcg" >/sys/fs/cgroup/build/memory.max ||
    { say "cannot make the memory cgroup"; off; }
  say "memcg memory.max $(cat /sys/fs/cgroup/build/memory.max)"
  read -r up _ </proc/uptime
  say "churn at uptime $up s"
  # shellcheck disable=SC2046  # the churn's numbers, one word each
  sh -c 'echo $$ >/sys/fs/cgroup/build/cgroup.procs && exec "$@"' churn \
    /bin/swaplab_guest_agent churn $(echo "$churn" | tr , ' ') "$mix"
  say "churn exited with $?"
  off
fi

n=0
while [ ! -e /sys/block/vda/dev ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
if [ ! -e /sys/block/vda/dev ]; then
  say "no /dev/vda (virtio_blk not loaded?)"
  off
fi
dev="$(cat /sys/block/vda/dev)"
say "swap disk /dev/vda is $dev"

if [ "$mode" = run ]; then
  mkdir -p /var/tmp /run /sys/fs/cgroup
  mount -t ext4 /dev/vda /var/tmp || { say "cannot mount /dev/vda on /var/tmp"; off; }
  mount -t tmpfs tmpfs /run
  # kernel run's memory cgroup (cgroup v2, the memory controller for children).
  mount -t cgroup2 cgroup2 /sys/fs/cgroup && echo +memory >/sys/fs/cgroup/cgroup.subtree_control
  read -r up _ </proc/uptime
  say "kernel run $device $policy at uptime $up s"
  if [ "$dump_trace" = 1 ]; then
    mkdir -p /sys/kernel/tracing && mount -t tracefs tracefs /sys/kernel/tracing
    echo 65536 >/sys/kernel/tracing/buffer_size_kb
  fi
  /bin/swaplab kernel run /var/tmp/in.trace --device "$device" --policy "$policy" \
    --reruns "$reruns" $annotate $floor --out /var/tmp/out.trace --progress never --json \
    >/var/tmp/result.json 2>/var/tmp/stderr.txt
  echo $? >/var/tmp/rc
  read -r up _ </proc/uptime
  say "kernel run exited with $(cat /var/tmp/rc) at uptime $up s"
  head -c 2000 /var/tmp/stderr.txt
  if [ "$dump_trace" = 1 ]; then
    say "ftrace begin"
    head -n 4 /sys/kernel/tracing/trace
    awk '/^ *=>|<stack trace>/ { b = b "\n" $0; next }
      { if (b != "") { if (b !~ /do_madvise/) { for (k = n - 20; k < n; k++) if (k >= 0) print "prev " r[k % 20]; print b } else { r[n % 20] = b0; n++ } } b = $0; b0 = $0 }' /sys/kernel/tracing/trace
    say "ftrace end"
  fi
  sync
  umount /var/tmp
  off
fi

if [ "$mode" = doctor ]; then
  mkdir -p /var/tmp
  mount -t ext4 /dev/vda /var/tmp || { say "cannot mount /dev/vda on /var/tmp"; off; }
  f=/var/tmp/swapfile
  { dd if=/dev/zero of=$f bs=1M count=128 2>/dev/null && chmod 600 $f && mkswap $f >/dev/null &&
    swapon $f; } || { say "cannot make and swap on $f"; off; }
  # doc CASE [ARG...]: doctor's findings, each line prefixed with the case.
  doc() {
    c="$1"
    shift
    /bin/swaplab doctor "$@" >/tmp/doctor.txt 2>&1
    say "doctor $c exit $?"
    sed "s/^/swaplab-doctor $c: /" /tmp/doctor.txt
  }
  # The offset doctor computes; the host checks it against debugfs's bmap.
  at="$(/bin/swaplab doctor | sed -n 's|.*swap /var/tmp/swapfile: file on .* page 0 at dblock \([0-9]*\).*|\1|p')"
  say "doctor offset ${at:-none}"
  echo 12345 >/sys/power/resume_offset && echo "$dev" >/sys/power/resume
  doc wrong-offset
  [ -e /sys/block/zram0 ] && echo 64M >/sys/block/zram0/disksize || say "no zram0"
  zdev="$(cat /sys/block/zram0/dev)"
  echo 0 >/sys/power/resume_offset && echo "$zdev" >/sys/power/resume
  doc no-area
  swapoff $f && mkswap /dev/zram0 >/dev/null && swapon /dev/zram0 && swapon $f ||
    say "cannot swap on zram0 before $f"
  echo 0:0 >/sys/power/resume || say "cannot write 0:0 to /sys/power/resume"
  say "resume $(cat /sys/power/resume)"
  doc zram-first
  # The same areas (zram swapped on first: the higher default priority),
  # resume now naming the file.
  echo "${at:-0}" >/sys/power/resume_offset && echo "$dev" >/sys/power/resume
  doc zram-higher
  swapoff /dev/zram0
  doc too-small --image-size 1G
  # A swap file in /etc/fstab that swapon would refuse at boot: page 0 is
  # mkswap's header, pages 1..4094 a hole.
  h=/var/tmp/holes
  { dd if=/dev/zero of=$h bs=4096 count=1 seek=4095 2>/dev/null && chmod 600 $h &&
    mkswap $h >/dev/null && mkdir -p /etc && echo "$h none swap sw 0 0" >/etc/fstab; } ||
    say "cannot make $h"
  doc hole
  rm -f /etc/fstab $h
  doc ok
  sync
  SWAPLAB_AGENT_POWEROFF=1 /bin/swaplab_guest_agent hibernate "$pages" "$seed"
  say "agent exited with $?"
  off
fi
if [ "$mode" = doctor-compressed ]; then
  # After doctor-resume: the swap file again (the kernel put SWAPSPACE2
  # back when it found the image), doctor with compression on.
  mkdir -p /var/tmp
  mount -t ext4 /dev/vda /var/tmp || { say "cannot mount /dev/vda on /var/tmp"; off; }
  f=/var/tmp/swapfile
  swapon $f || { mkswap $f >/dev/null && swapon $f; } || { say "cannot swap on $f"; off; }
  echo "$resume_offset" >/sys/power/resume_offset && echo "$dev" >/sys/power/resume
  /bin/swaplab doctor --image-size 1G >/tmp/doctor.txt 2>&1
  say "doctor too-small-compressed exit $?"
  sed "s/^/swaplab-doctor too-small-compressed: /" /tmp/doctor.txt
  swapoff $f
  umount /var/tmp
  off
fi
if [ "$mode" = doctor-resume ]; then
  echo "$resume_offset" >/sys/power/resume_offset
  say "resume_offset $(cat /sys/power/resume_offset)"
  echo "$dev" >/sys/power/resume
  say "no image resumed"
  off
fi

# Writing the device to /sys/power/resume makes the kernel look for an image
# there and restore it; it only returns when there is none (or it is refused).
echo "$dev" >/sys/power/resume
say "no image resumed"

case "$mode" in
  hibernate)
    swapon /dev/vda || { say "swapon /dev/vda failed"; off; }
    read -r up _ </proc/uptime
    say "swapon done at uptime $up s"
    if [ -n "$image_size" ]; then
      echo "$image_size" >/sys/power/image_size || say "cannot write $image_size to /sys/power/image_size"
      say "image_size $(cat /sys/power/image_size)"
    fi
    SWAPLAB_AGENT_POWEROFF=1 /bin/swaplab_guest_agent hibernate "$pages" "$seed"
    say "agent exited with $?"
    ;;
  layout)
    [ -n "$rotational" ] && echo "$rotational" >/sys/block/vda/queue/rotational
    say "vda rotational $(cat /sys/block/vda/queue/rotational)"
    # Writeback throttling off on the swap disk while the layout is made:
    # under TCG the layout's MADV_PAGEOUT once waited in wbt_wait() for good
    # (a 128 MiB LZO run of bench/vm_price_fit.sh, hung-task report on the
    # console). The agent puts the kernel's value back before hibernating.
    wbt=
    if [ -w /sys/block/vda/queue/wbt_lat_usec ]; then
      wbt="$(cat /sys/block/vda/queue/wbt_lat_usec)"
      echo 0 >/sys/block/vda/queue/wbt_lat_usec
    fi
    swapon /dev/vda || { say "swapon /dev/vda failed"; off; }
    read -r up _ </proc/uptime
    say "swapon done at uptime $up s"
    SWAPLAB_AGENT_POWEROFF=1 SWAPLAB_WBT_LAT_USEC="$wbt" /bin/swaplab_guest_agent layout "$layout" "$swap_pages" "$image_pages" "$seed" /dev/vdb
    say "agent exited with $?"
    ;;
  resume|resume-swaplab) ;;
  *) say "unknown mode $mode" ;;
esac
off
