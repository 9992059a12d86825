// SPDX-License-Identifier: MIT
// SwapSystem construction, names, and the read-only views (§7).
#include "swaplab/alloc/swap_system.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "alloc/system_state.h"

namespace swaplab {

const char* ErrnoName(int code) {
  if (code == 0) return "OK";
  const char* name = strerrorname_np(-code);  // glibc ≥ 2.32: "EINTR", ...
  return name != nullptr ? name : "E?";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(ErrnoName(code_)) + ": " + message();
}

namespace alloc {

std::string_view Name(SlotKind k) {
  switch (k) {
    case SlotKind::kEmpty:
      return "empty";
    case SlotKind::kCached:
      return "cached";
    case SlotKind::kShadow:
      return "shadow";
    case SlotKind::kBad:
      return "bad";
    case SlotKind::kHib:
      return "hib";
  }
  return "?";
}
std::string_view Name(ClusterFlag f) {
  switch (f) {
    case ClusterFlag::kNone:
      return "none";
    case ClusterFlag::kFree:
      return "free";
    case ClusterFlag::kNonfull:
      return "nonfull";
    case ClusterFlag::kFrag:
      return "frag";
    case ClusterFlag::kFull:
      return "full";
    case ClusterFlag::kDiscard:
      return "discard";
  }
  return "?";
}
std::string_view Name(ListId l) {
  switch (l) {
    case ListId::kFree:
      return "free";
    case ListId::kNonfull:
      return "nonfull";
    case ListId::kFrag:
      return "frag";
    case ListId::kFull:
      return "full";
    case ListId::kDiscard:
      return "discard";
  }
  return "?";
}
std::string_view Name(DiscardMode m) {
  switch (m) {
    case DiscardMode::kNone:
      return "none";
    case DiscardMode::kOnce:
      return "once";
    case DiscardMode::kPages:
      return "pages";
    case DiscardMode::kBoth:
      return "both";
  }
  return "?";
}

SwapSystem::State::State(SystemOptions o)
    : opts(std::move(o)),
      policy(opts.policy),
      cluster_shift(opts.cluster_shift),
      cluster_size(1u << opts.cluster_shift),
      pmd_order(opts.cluster_shift),
      count_max(opts.policy.count_max),
      cpus(std::make_unique<PerCpu[]>(static_cast<size_t>(opts.nr_cpus))) {
  for (int t = 0; t < kMaxSwapfiles; ++t) {
    records[t] = std::make_unique<SwapDevice>();
    records[t]->type = t;
  }
}

void SwapSystem::State::RecordViolation(std::string what) {
  std::lock_guard g(violation_mutex);
  if (violation.empty()) violation = std::move(what);
}

Status SwapSystem::ValidateOptions(const SystemOptions& o) {
  if (o.cluster_shift < 1 || o.cluster_shift > kMaxClusterShift)
    return Status(-EINVAL, "cluster_shift " + std::to_string(o.cluster_shift) + " is outside 1.." +
                               std::to_string(kMaxClusterShift));
  if (o.nr_cpus < 1 || o.nr_cpus > 1024)
    return Status(-EINVAL, "nr_cpus " + std::to_string(o.nr_cpus) + " is outside 1..1024");
  return o.policy.Validate();
}

SwapSystem::SwapSystem(SystemOptions options) {
  if (Status st = ValidateOptions(options); !st.ok()) {
    std::fprintf(stderr, "swaplab: invalid SwapSystem options: %s\n", st.ToString().c_str());
    std::abort();
  }
  s_ = std::make_unique<State>(std::move(options));
}

SwapSystem::~SwapSystem() = default;

const SystemOptions& SwapSystem::options() const { return s_->opts; }
const Policy& SwapSystem::policy() const { return s_->policy; }
uint32_t SwapSystem::cluster_size() const { return s_->cluster_size; }

namespace {

void AddCounter(uint64_t& out, const std::atomic<uint64_t>& in) {
  out += in.load(std::memory_order_relaxed);
}
template <size_t N>
void AddCounter(std::array<uint64_t, N>& out, const std::array<std::atomic<uint64_t>, N>& in) {
  for (size_t i = 0; i < N; ++i) AddCounter(out[i], in[i]);
}

}  // namespace

// Each row of SWAPLAB_COUNTERS: the system's atomic, or the sum over CPUs.
SwapCounters SwapSystem::counters() const {
  const State& s = *s_;
  SwapCounters c;
#define SWAPLAB_COUNTER_SUM_SYS(n) AddCounter(c.n, s.n);
#define SWAPLAB_COUNTER_SUM_CPU(n) \
  for (int cpu = 0; cpu < s.opts.nr_cpus; ++cpu) AddCounter(c.n, s.cpus[cpu].stats.n);
#define SWAPLAB_COUNTER_SUM(n, shape, home, kind, summary, doc) SWAPLAB_COUNTER_SUM_##home(n)
  SWAPLAB_COUNTERS(SWAPLAB_COUNTER_SUM)
#undef SWAPLAB_COUNTER_SUM
#undef SWAPLAB_COUNTER_SUM_CPU
#undef SWAPLAB_COUNTER_SUM_SYS
  return c;
}

int64_t SwapSystem::nr_swap_pages() const { return s_->NrSwapPages(); }
int64_t SwapSystem::total_swap_pages() const { return s_->total_swap_pages.load(); }
bool SwapSystem::vm_swap_full() const { return s_->VmSwapFull(); }

std::vector<int> SwapSystem::active_devices() const {
  std::lock_guard g(s_->swap_lock);
  return s_->active;
}

std::vector<int> SwapSystem::avail_devices() const {
  SpinGuard g(s_->avail_lock);
  return s_->avail;
}

namespace {

Status NoDevice(int type) {
  return Status(-EINVAL, "no swap device of type " + std::to_string(type));
}

}  // namespace

Status SwapSystem::SetScanBase(int type, int cpu, uint64_t offset) {
  State& s = *s_;
  std::lock_guard g(s.swap_lock);
  SwapDevice* d = s.Dev(type);
  if (d == nullptr || !d->used) return NoDevice(type);
  if (!s.UsesSsdMapScan(*d))
    return Status(-EINVAL, "scan base: device " + std::to_string(type) + " has none (" +
                               (d->ssd ? "policy " + s.policy.name + " has ssd_swap_map_scan off"
                                       : std::string("not an SSD")) +
                               ")");
  if (cpu < 0 || cpu >= s.opts.nr_cpus)
    return Status(-EINVAL, "scan base: cpu " + std::to_string(cpu) + " is not in [0, " +
                               std::to_string(s.opts.nr_cpus) + ")");
  if (offset == 0 || offset >= d->max)
    return Status(-EINVAL, "scan base: offset " + std::to_string(offset) + " is outside device " +
                               std::to_string(type) + " (1.." + std::to_string(d->max - 1) + ")");
  SpinGuard cg(d->global_cluster_lock);
  d->ssd_cpu[static_cast<size_t>(cpu)].scan_base = offset;
  return Status::Ok();
}

uint64_t SwapSystem::ScanBase(int type, int cpu) const {
  State& s = *s_;
  std::lock_guard g(s.swap_lock);
  SwapDevice* d = s.Dev(type);
  if (d == nullptr || !d->used || !s.UsesSsdMapScan(*d) || cpu < 0 || cpu >= s.opts.nr_cpus)
    return 0;
  SpinGuard cg(d->global_cluster_lock);
  return d->ssd_cpu[static_cast<size_t>(cpu)].scan_base;
}

Result<DeviceInfo> SwapSystem::Device(int type) const {
  State& s = *s_;
  std::lock_guard g(s.swap_lock);
  SwapDevice* d = s.Dev(type);
  if (d == nullptr || !d->used) return NoDevice(type);
  DeviceInfo i;
  i.type = type;
  i.name = d->name;
  i.max = d->max;
  i.pages = d->pages;
  i.inuse = d->inuse_pages();
  i.prio = d->prio;
  i.ssd = d->ssd;
  i.blkdev = d->blkdev;
  i.writeok = d->writeok.load();
  i.on_avail_list = !(d->inuse.load() & kOffListBit);
  i.page_discard = d->page_discard;
  i.area_discard = d->area_discard;
  i.hibernation_pinned = d->hibernation_pinned;
  i.nr_clusters = d->nr_clusters;
  SpinGuard lg(d->lock);
  i.free_clusters = d->free_list().len;
  i.full_clusters = d->full_list().len;
  i.discard_clusters = d->discard_list().len;
  for (int k = 0; k < kMaxOrders; ++k) {
    i.nonfull_clusters += d->nonfull(k).len;
    i.frag_clusters += d->frag(k).len;
  }
  i.isolated_clusters = d->nr_clusters - i.free_clusters - i.full_clusters - i.discard_clusters -
                        i.nonfull_clusters - i.frag_clusters;
  return i;
}

Result<ClusterInfo> SwapSystem::Cluster(int type, uint64_t index) const {
  State& s = *s_;
  std::lock_guard g(s.swap_lock);
  SwapDevice* d = s.Dev(type);
  if (d == nullptr || !d->used) return NoDevice(type);
  if (index >= d->nr_clusters)
    return Status(-EINVAL, "device " + std::to_string(type) + " has no cluster " +
                               std::to_string(index) + " (it has " +
                               std::to_string(d->nr_clusters) + ")");
  SwapCluster& c = d->clusters[index];
  SpinGuard cg(c.lock);
  return ClusterInfo{c.flag, c.order, c.count, c.table != nullptr, c.extend != nullptr};
}

Result<std::vector<uint64_t>> SwapSystem::List(int type, ListId list, int order) const {
  State& s = *s_;
  std::lock_guard g(s.swap_lock);
  SwapDevice* d = s.Dev(type);
  if (d == nullptr || !d->used) return NoDevice(type);
  if (order < 0 || order > s.pmd_order)
    return Status(-EINVAL, "order " + std::to_string(order) + " is outside 0.." +
                               std::to_string(s.pmd_order));
  SpinGuard lg(d->lock);
  const ClusterList* l = &s.ListDeviceLocked(*d, list, order);
  std::vector<uint64_t> out;
  for (uint32_t i = l->head; i != kNil; i = d->clusters[i].next) out.push_back(i);
  return out;
}

Result<SlotInfo> SwapSystem::Slot(SwapEntry entry) const {
  State& s = *s_;
  std::lock_guard g(s.swap_lock);
  SwapDevice* d = s.Dev(entry.type);
  if (d == nullptr || !d->used) return NoDevice(entry.type);
  if (entry.offset >= d->nr_clusters << s.cluster_shift)
    return Status(-EINVAL, "offset " + std::to_string(entry.offset) +
                               " is past the end of device " + std::to_string(entry.type));
  SwapCluster& c = d->ClusterOf(entry.offset, s.cluster_shift);
  SpinGuard cg(c.lock);
  if (!c.table) return SlotInfo{};
  const uint32_t i = static_cast<uint32_t>(entry.offset - s.ClusterStart(*d, c));
  const uint64_t e = c.table[i];
  return SlotInfo{slot::Kind(e), s.SlotCount(c, i),
                  slot::Kind(e) == SlotKind::kCached ? slot::FolioOf(e) : nullptr};
}

PerCpuHint SwapSystem::Hint(CpuId cpu, int order) const {
  State& s = *s_;
  if (cpu < 0 || cpu >= s.opts.nr_cpus || order < 0 || order >= kMaxOrders) return {};
  PerCpu& pc = s.cpus[cpu];
  SpinGuard g(pc.lock);
  return PerCpuHint{pc.dev[order], pc.off[order]};
}

// /proc/swaps: devices with an open swap file, sizes in KiB (§7).
std::string SwapSystem::ProcSwaps() const {
  State& s = *s_;
  std::lock_guard g(s.swap_lock);
  std::ostringstream o;
  o << "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
  for (int t = 0; t < kMaxSwapfiles; ++t) {
    const SwapDevice& d = *s.records[t];
    if (!d.used) continue;
    char line[512];
    std::snprintf(line, sizeof line, "%-40s%s\t%llu\t\t%llu\t\t%d\n", d.name.c_str(),
                  d.blkdev ? "partition" : "file\t",
                  static_cast<unsigned long long>(d.pages * (kPageSize / 1024)),
                  static_cast<unsigned long long>(d.inuse_pages() * (kPageSize / 1024)), d.prio);
    o << line;
  }
  return o.str();
}

}  // namespace alloc
}  // namespace swaplab
