// SPDX-License-Identifier: MIT
// Where cluster maps come from (map_sources.h).
#include "swaplab/report/map_sources.h"

#include <fmt/core.h>

#include <memory>
#include <tuple>

#include "swaplab/area/swap_area.h"
#include "swaplab/workload/generators.h"
#include "swaplab/workload/image_read.h"
#include "swaplab/workload/replay.h"

namespace swaplab::report {

std::function<void(const workload::JobPhase&)> MapCapture::Observer() {
  return [this](const workload::JobPhase& p) { Take(p); };
}

void MapCapture::Take(const workload::JobPhase& p) {
  if (p.rep != 0) return;
  auto m = SnapshotClusters(*p.sys, p.type0);
  std::lock_guard<std::mutex> g(mu_);
  if (!m.ok()) {
    if (status_.ok()) status_ = m.status();
    return;
  }
  ClusterMap map = std::move(m).value();
  if (std::string(p.phase) == "after") {
    if (p.image_stream != nullptr && !p.image_stream->empty()) {
      // The writer's placement: the image's own slots and runs.
      MarkImageSlots(map, *p.image_stream, *p.image_map, false);
      map.notes.push_back(fmt::format("{} stream pages and {} map pages of the image",
                                      p.image_stream->size(), p.image_map->size()));
    } else {
      auto before = maps_.find({p.scenario->name, p.variant->label, "before"});
      if (before != maps_.end()) MarkImageByDelta(map, before->second);
    }
  }
  maps_[{p.scenario->name, p.variant->label, p.phase}] = std::move(map);
}

const ClusterMap* MapCapture::Find(const std::string& scenario, const std::string& variant,
                                   const std::string& phase) const {
  std::lock_guard<std::mutex> g(mu_);
  auto it = maps_.find({scenario, variant, phase});
  return it == maps_.end() ? nullptr : &it->second;
}

namespace {

// --at-record: stops the replay after that many records.
class StopAfterRecord final : public workload::ReplayObserver {
 public:
  explicit StopAfterRecord(uint64_t at) : at_(at) {}
  bool AfterRecord(const workload::TraceRecord&, const workload::ReplayState& state) override {
    return state.records < at_;
  }

 private:
  uint64_t at_;
};

}  // namespace

Result<ClusterMap> TraceClusterMap(const TraceMapOptions& o) {
  const workload::ReplayOptions ro{.trace = o.trace,
                                   .policy = o.policy,
                                   .cpus = o.cpus,
                                   .cluster_shift = o.cluster_shift,
                                   .memory_limit = o.memory_limit};
  workload::ReplayState replay;
  StopAfterRecord stop(o.at_record);
  if (Status st = workload::ReplayTrace(ro, &replay, o.at_record != 0 ? &stop : nullptr); !st.ok())
    return st;
  if (o.at_record != 0 && replay.records < o.at_record)
    return Status(-EINVAL, "--at-record " + std::to_string(o.at_record) + ": " + o.trace +
                               " has only " + std::to_string(replay.records) + " records");
  const auto& devs = replay.runner->devices();
  if (devs.empty()) return Status(-EINVAL, o.trace + ": no device swapped on by then");
  int type = devs.begin()->second;
  if (o.dev) {
    auto it = devs.find(*o.dev);
    if (it == devs.end())
      return Status(-EINVAL, "--dev " + std::to_string(*o.dev) + ": " + o.trace +
                                 " has no such device by then");
    type = it->second;
  }
  return SnapshotClusters(*replay.sys, type);
}

Result<ClusterMap> AreaClusterMap(const std::string& area, uint32_t cluster_size) {
  auto info = area::InspectArea(area);
  if (!info.ok()) return info.status();
  if (!info->header.hibernation) return SwaponClusterMap(*info);
  workload::ImageReadOptions ro;
  ro.area = area;
  ro.inspect = true;
  auto r = workload::ReadImageOnArea(ro);
  if (!r.ok()) return r.status();
  return ImageAreaMap(r->inspection->chain, info->size_bytes / area::kPageSize, cluster_size);
}

Result<ClusterMap> SwaponClusterMap(const area::AreaInfo& info, const std::vector<uint64_t>& in_use,
                                    const alloc::Policy& policy) {
  auto model = workload::RebuildArea(info, in_use, policy);
  if (!model.ok()) return model.status();
  auto snapshot = SnapshotClusters(*model->sys, model->type);
  if (!snapshot.ok()) return snapshot.status();
  ClusterMap m = std::move(snapshot).value();
  m.notes.push_back(fmt::format(
      "no hibernation image: the clusters as swapon sets them up from the header ({} pages, {} "
      "bad)",
      model->pages, info.header.v1.bad_pages.size()));
  if (!in_use.empty()) m.notes.push_back(fmt::format("{} slots in use", model->taken));
  return m;
}

}  // namespace swaplab::report
