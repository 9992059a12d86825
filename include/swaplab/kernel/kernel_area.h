// SPDX-License-Identifier: MIT
// A private swap area on the running kernel: a swap file on ext4 under
// /var/tmp, a loop device over such a file (rotational or marked
// non-rotational), or a zram device. Created, formatted with a
// "swaplab-" label, swapped on with an explicit priority, and always swapped
// off and removed again. Every object is recorded in the state file
// (host.h) before it exists, so `swaplab kernel cleanup` can remove the
// leftovers of a crashed run — and only those.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"

namespace swaplab::kernel {

enum class DeviceKind { kFile, kLoop, kLoopSsd, kZram };
const char* Name(DeviceKind k);
Result<DeviceKind> ParseDeviceKind(const std::string& s);

struct AreaSpec {
  DeviceKind kind = DeviceKind::kLoopSsd;
  uint64_t pages = 0;  // whole area, header page included
  int prio = 10000;    // explicit swapon priority (SWAP_FLAG_PREFER)
  int index = 0;       // distinguishes the areas of one run
};

class KernelArea {
 public:
  // Creates, formats and swaps on. On error nothing is left behind.
  static Result<std::unique_ptr<KernelArea>> Create(const AreaSpec& spec);
  ~KernelArea();
  KernelArea(const KernelArea&) = delete;
  KernelArea& operator=(const KernelArea&) = delete;

  // swapoff (if on), detach / reset the device, remove the file.
  Status Remove();
  // swapoff only (the trace's `swapoff`); Remove still cleans up.
  Status Swapoff();

  // The name /proc/swaps shows for it.
  const std::string& swap_path() const { return swap_path_; }
  const AreaSpec& spec() const { return spec_; }
  bool blkdev() const { return spec_.kind != DeviceKind::kFile; }
  bool ssd() const { return ssd_; }  // what the kernel sees (queue/rotational)
  bool on() const { return on_; }
  // The sysfs inflight file of the device the swap I/O goes to.
  const std::string& inflight() const { return inflight_; }
  // "dio on" for loop devices (sysfs loop/dio), empty otherwise.
  const std::string& note() const { return note_; }
  // The bytes of slot `offset` as they are on the device (O_DIRECT: not a
  // page cache's copy), read-only, while the area is on: what the kernel
  // last wrote there.
  Result<std::vector<uint8_t>> ReadSlot(uint64_t offset) const;

 private:
  explicit KernelArea(const AreaSpec& s) : spec_(s) {}
  Status Build();
  AreaSpec spec_;
  std::string file_, swap_path_, note_, inflight_;
  int loop_fd_ = -1;
  int zram_id_ = -1;
  bool ssd_ = false, on_ = false;
};

// Refuses (with the reason) while a swaplab run is active or a crashed run
// left areas, settings or the state file behind.
Status CheckNoLeftovers();
// Removes what earlier swaplab runs left behind: swaps off only areas that
// are ours (in the state file, or a /var/tmp/swaplab-* file / a loop over
// one, each with a "swaplab-" label), detaches those loops, removes the
// files, restores the saved settings, removes the cgroups, then the work
// directories of dead `vm` runs (workload::RemoveDeadWorkDirs). `log` gets
// one line per action.
Status Cleanup(std::vector<std::string>* log);

}  // namespace swaplab::kernel
#pragma GCC visibility pop
