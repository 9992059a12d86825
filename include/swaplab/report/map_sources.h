// SPDX-License-Identifier: MIT
// Where cluster maps come from: a scenario's jobs (after aging, before and
// after the measured image write), a trace replayed to its end or to a
// record, and a swap area holding a hibernation image.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "swaplab/alloc/policy.h"
#include "swaplab/alloc/status.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/report/cluster_map.h"
#include "swaplab/workload/scenario_runner.h"

namespace swaplab::report {

// Captures device 0's maps of repetition 0 of every variant through
// RunOptions::observe: "aging", "before" and "after" (the image's slots and
// runs from the writer's placement, MarkImageSlots; by what the write added
// to each cluster, MarkImageByDelta, when the job gave none). Thread-safe.
class MapCapture {
 public:
  std::function<void(const workload::JobPhase&)> Observer();
  // The map of (scenario, variant, phase); null if none was captured.
  const ClusterMap* Find(const std::string& scenario, const std::string& variant,
                         const std::string& phase) const;
  // The first error met while capturing (a device that went away).
  const Status& status() const { return status_; }

 private:
  void Take(const workload::JobPhase& p);
  mutable std::mutex mu_;
  std::map<std::tuple<std::string, std::string, std::string>, ClusterMap> maps_;
  Status status_ = Status::Ok();
};

struct TraceMapOptions {
  std::string trace;
  alloc::Policy policy;
  int cpus = 4;
  int cluster_shift = alloc::kDefaultClusterShift;
  uint64_t at_record = 0;       // stop after this many records (0: the end)
  std::optional<uint64_t> dev;  // the trace's dev= (default: the first swapped on)
  uint64_t memory_limit = 0;    // bytes the model may take (0: MemAvailable; TraceRunner)
};
// The device's map after the records; -EINVAL naming the trace line or the
// option (a record number past the end, an unknown dev).
Result<ClusterMap> TraceClusterMap(const TraceMapOptions& o);

// The clusters of the image on `area` (read-only: its header and map chain,
// hibernate::InspectImage). Errors as `image inspect` has them. An area
// whose page 0 holds no S1SUSPEND signature (no image) is drawn as its
// header says (SwaponClusterMap with nothing in use).
Result<ClusterMap> AreaClusterMap(const std::string& area, uint32_t cluster_size = 512);

// An area's clusters as the model's swapon sets them up from its header
// (page 0 and the bad pages taken, allocator spec §5.1), with the slots of
// `in_use` taken (workload::OccupySlots; swaplab doctor reads them from the
// processes' page tables). -EINVAL when the header is not one swapon takes.
Result<ClusterMap> SwaponClusterMap(const area::AreaInfo& info,
                                    const std::vector<uint64_t>& in_use = {},
                                    const alloc::Policy& policy = {});

}  // namespace swaplab::report
#pragma GCC visibility pop
