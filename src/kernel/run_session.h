// SPDX-License-Identifier: MIT
// `kernel run`'s session (kernel_run.h): what one run creates on the
// machine and how it is set up before the first record. Private to
// src/kernel.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/alloc/types.h"
#include "swaplab/kernel/host.h"
#include "swaplab/kernel/kernel_area.h"
#include "swaplab/kernel/kernel_run.h"
#include "swaplab/kernel/worker.h"
#include "swaplab/workload/trace.h"

namespace swaplab::kernel {

inline constexpr uint64_t kRunPage = alloc::kPageSize;

// Everything one run creates, torn down in reverse order by Close (or the
// destructor): worker, areas, cgroup, settings, state file.
class Session {
 public:
  ~Session() { (void)Close(); }
  Status Close();
  // The worker's clean swap cache reclaimed (memory.force_empty on cgroup
  // v1, memory.reclaim on v2), by this thread pinned meanwhile to the CPU
  // the worker last ran on: the frees of the reclaim run there (6.12's
  // return buffers are per CPU), where the model runs a global drop too.
  Status DropCache();
  // Slots in use on this run's areas (/proc/swaps Used).
  uint64_t UsedSlots() const;
  // Set once this run has written its pid to the state file: only then is
  // the state file this run's to remove (never another run's or a crashed
  // run's).
  bool owns_state = false;
  std::vector<SavedSetting> settings;
  std::string cgroup;
  bool cgroup_v1 = true;
  std::vector<std::unique_ptr<KernelArea>> areas;
  std::unique_ptr<Worker> worker;

 private:
  bool closed_ = false;
};

// Checks the trace against this machine (operations `kernel run` supports,
// CPUs, folio sizes, the bound on the areas' size, the priority of the
// machine's own areas) and only then sets the machine up: the state file
// naming this run, the mTHP sizes the trace uses enabled and every other
// one disabled, no swap readahead, the worker's memory cgroup, the worker.
Status PrepareSession(const RunOptions& o, const std::vector<workload::TraceRecord>& recs,
                      Session* s);

}  // namespace swaplab::kernel
