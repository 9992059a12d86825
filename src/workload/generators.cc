// SPDX-License-Identifier: MIT
// The aging generators (generators.h). Each one is a sequence of trace
// operations applied through TraceRunner, so swap-out, zap and writeback
// behave exactly as in a replayed trace (design.md semantics, allocator
// spec §2.10 and §3).
#include "swaplab/workload/generators.h"

#include <algorithm>
#include <deque>
#include <unordered_map>

namespace swaplab::workload {

uint64_t Rng::Next() { return alloc::SplitMix64Next(&s_); }

uint64_t Rng::Below(uint64_t n) {
  // Lemire's multiply-shift; the tiny bias is irrelevant for workloads.
  return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
}

double Rng::Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

std::vector<uint32_t> ShuffledOrder(uint64_t n, Rng& rng) {
  std::vector<uint32_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = static_cast<uint32_t>(i);
  for (uint64_t i = n; i > 1; --i) std::swap(v[i - 1], v[rng.Below(i)]);
  return v;
}

int OrderOfPages(uint64_t pages) {
  if (pages == 0 || (pages & (pages - 1)) != 0) return -1;
  int o = 0;
  while ((uint64_t{1} << o) < pages) ++o;
  return o;
}

Workload::Workload(alloc::SwapSystem& sys, uint64_t seed)
    : sys_(sys), runner_(sys, 0), rng_(seed), seed_(seed) {}

Status Workload::Apply(TraceRecord& r) {
  r.line = ++line_;
  return runner_.Apply(r, "generator");
}

namespace {
TraceRecord Record(TraceOp op, uint64_t folio) {
  TraceRecord r;
  r.op = op;
  r.folio = folio;
  return r;
}
}  // namespace

Status Workload::Alloc(uint64_t folio, int order, int cpu) {
  TraceRecord r = Record(TraceOp::kAlloc, folio);
  r.order = order;
  r.cpu = cpu;
  return Apply(r);
}

Status Workload::Free(uint64_t folio, uint64_t page, uint64_t n) {
  TraceRecord r = Record(TraceOp::kFree, folio);
  r.page = page;
  r.n = n;
  return Apply(r);
}

Status Workload::FreeAll(uint64_t folio) {
  TraceRecord r = Record(TraceOp::kFree, folio);
  return Apply(r);
}

Status Workload::DropCache(uint64_t folio) {
  TraceRecord r = Record(TraceOp::kDropCache, folio);
  return Apply(r);
}

alloc::SwapEntry Workload::SlotOf(uint64_t folio, uint64_t page) const {
  return runner_.SlotOf(folio, page);
}

namespace {

Status Bad(const std::string& gen, const std::string& what) {
  return Status(-EINVAL, gen + ": " + what);
}

// Swaps out one folio and completes its writeback (it leaves the swap
// cache, as reclaim does after the write).
Status SwapOut(Workload& w, uint64_t folio, int order, int cpu) {
  if (Status st = w.Alloc(folio, order, cpu); !st.ok()) return st;
  return w.DropCache(folio);
}

// Fills `pages` in folios of 2^order, CPU i % cpus for folio i.
Result<FolioIds> Fill(Workload& w, uint64_t pages, int order, int cpus) {
  FolioIds folios;
  for (uint64_t i = 0; i < (pages >> order); ++i) {
    const uint64_t f = w.NewFolio();
    if (i == 0) folios.first = f;
    if (f != folios.first + i) return Bad("fill", "folio ids are not consecutive");
    if (Status st = SwapOut(w, f, order, static_cast<int>(i % cpus)); !st.ok()) return st;
    ++folios.count;
  }
  return folios;
}

Status CheckCommon(const std::string& gen, uint64_t pages, int order, int cpus,
                   const alloc::SwapSystem& sys) {
  if (order < 0 || order > alloc::kMaxFolioOrder)
    return Bad(gen, "folio order " + std::to_string(order) + " is outside 0.." +
                        std::to_string(alloc::kMaxFolioOrder));
  if (pages > kMaxTracePages)  // folio indices fit 32 bits (ShuffledOrder)
    return Bad(gen, "region of " + std::to_string(pages) + " pages is larger than " +
                        std::to_string(kMaxTracePages) + " (16 TiB)");
  if (pages == 0 || pages % (uint64_t{1} << order) != 0)
    return Bad(gen, "region of " + std::to_string(pages) +
                        " pages is not a positive multiple of the folio (" +
                        std::to_string(uint64_t{1} << order) + " pages)");
  if (cpus < 1 || cpus > sys.options().nr_cpus)
    return Bad(gen, "cpus " + std::to_string(cpus) + " is outside 1.." +
                        std::to_string(sys.options().nr_cpus));
  return Status::Ok();
}

Status CheckMix(const std::string& gen, const std::vector<SizeWeight>& mix) {
  if (mix.empty()) return Bad(gen, "the size mix is empty");
  double total = 0;
  for (const auto& s : mix) {
    const int o = OrderOfPages(s.pages);
    if (o < 0 || o > alloc::kMaxFolioOrder)
      return Bad(
          gen, "size of " + std::to_string(s.pages) + " pages is not 4 KiB..2 MiB, a power of two");
    if (!(s.weight >= 0)) return Bad(gen, "a weight is negative");
    total += s.weight;
  }
  if (!(total > 0)) return Bad(gen, "the weights sum to 0");
  return Status::Ok();
}

}  // namespace

uint64_t PickSize(const std::vector<SizeWeight>& mix, Rng& rng) {
  double total = 0;
  for (const auto& s : mix) total += s.weight;
  double x = rng.Unit() * total;
  for (const auto& s : mix) {
    if (x < s.weight) return s.pages;
    x -= s.weight;
  }
  return mix.back().pages;
}

Result<FillFreeResult> FillFree(Workload& w, const FillFreeSpec& s) {
  if (Status st = CheckCommon("fill-free", s.region_pages, s.order, s.cpus, w.sys()); !st.ok())
    return st;
  if (!(s.free_share >= 0 && s.free_share <= 1)) return Bad("fill-free", "free share outside 0..1");
  auto folios = Fill(w, s.region_pages, s.order, s.cpus);
  if (!folios.ok()) return folios.status();
  FillFreeResult res;
  res.folios = *folios;
  const uint64_t n = res.folios.size();
  std::vector<uint32_t> order;
  if (s.shuffled) {
    order = ShuffledOrder(n, w.rng());
  } else {
    order.resize(n);
    for (uint64_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  }
  order.resize(static_cast<uint64_t>(static_cast<double>(n) * s.free_share + 0.5));
  for (uint64_t i : order) {
    if (Status st = w.FreeAll(res.folios[i]); !st.ok()) return st;
  }
  res.freed = std::move(order);
  return res;
}

Result<HolesResult> Holes(Workload& w, const HolesSpec& s) {
  if (Status st = CheckCommon("holes", s.region_pages, s.order, s.cpus, w.sys()); !st.ok())
    return st;
  const uint64_t fp = uint64_t{1} << s.order;
  if (s.hole_pages == 0 || s.hole_pages % fp != 0)
    return Bad("holes", "hole of " + std::to_string(s.hole_pages) +
                            " pages is not a multiple of the folio (" + std::to_string(fp) +
                            " pages)");
  auto folios = Fill(w, s.region_pages, s.order, s.cpus);
  if (!folios.ok()) return folios.status();
  HolesResult res;
  res.folios = *folios;
  for (uint64_t start = s.hole_pages; start < s.region_pages; start += 2 * s.hole_pages) {
    const uint64_t end = std::min(s.region_pages, start + s.hole_pages);
    for (uint64_t p = start; p < end; p += fp) {
      if (Status st = w.FreeAll(res.folios[p >> s.order]); !st.ok()) return st;
    }
    res.freed_pages += end - start;
  }
  return res;
}

Result<MthpResult> MthpMix(Workload& w, const MthpSpec& s) {
  if (Status st = CheckMix("mthp-mix", s.mix); !st.ok()) return st;
  if (Status st = CheckCommon("mthp-mix", 1, 0, s.cpus, w.sys()); !st.ok()) return st;
  MthpResult res;
  uint64_t done = 0;
  for (uint64_t i = 0; done < s.total_pages; ++i) {
    const uint64_t pages = PickSize(s.mix, w.rng());
    const uint64_t f = w.NewFolio();
    if (Status st = SwapOut(w, f, OrderOfPages(pages), static_cast<int>(i % s.cpus)); !st.ok())
      return st;
    res.folios.push_back(f);
    done += pages;
  }
  return res;
}

namespace {

Status CheckChurn(Workload& w, const ChurnSpec& s) {
  if (Status st = CheckMix("build-churn", s.mix); !st.ok()) return st;
  if (Status st = CheckCommon("build-churn", 1, 0, s.cpus, w.sys()); !st.ok()) return st;
  if (s.concurrent == 0 || s.min_pages == 0 || s.max_pages < s.min_pages)
    return Bad("build-churn", "needs concurrent ≥ 1 and 1 ≤ min_pages ≤ max_pages");
  if (!(s.partial_free_share >= 0 && s.partial_free_share <= 1))
    return Bad("build-churn", "partial free share outside 0..1");
  if (s.growing == 0 || s.batch_pages == 0)
    return Bad("build-churn", "needs growing ≥ 1 and batch ≥ 1 page");
  return Status::Ok();
}

// One build-churn run: the processes alive, those still swapping out, and
// the result so far. Run() takes turns of reclaim until every process has
// swapped out.
class Churn {
 public:
  Churn(Workload& w, const ChurnSpec& s) : w_(w), s_(s) {}
  Result<ChurnResult> Run();

 private:
  struct Proc {
    std::vector<std::pair<uint64_t, uint64_t>> folios;  // (id, pages)
    int cpu = 0;
    uint64_t serial = 0, target = 0, pages = 0;
  };
  Status StartProcesses();
  Status Turn(Proc& g);
  Status ExitOne(bool random);
  Status Finish(size_t i);

  Workload& w_;
  const ChurnSpec& s_;
  std::deque<Proc> live_;      // done swapping out, alive until they exit
  std::vector<Proc> growing_;  // still swapping out (ChurnSpec::growing)
  uint64_t started_ = 0;
  uint64_t last_ = UINT64_MAX;  // the process of the previous turn
  ChurnResult res_;
};

Result<ChurnResult> Churn::Run() {
  while (started_ < s_.processes || !growing_.empty()) {
    if (Status st = StartProcesses(); !st.ok()) return st;
    const size_t i = growing_.size() == 1 ? 0 : w_.rng().Below(growing_.size());
    Proc& g = growing_[i];
    if (last_ != UINT64_MAX && last_ != g.serial) ++res_.switches;
    last_ = g.serial;
    if (Status st = Turn(g); !st.ok()) return st;
    if (g.pages >= g.target) {
      if (Status st = Finish(i); !st.ok()) return st;
    }
  }
  while (s_.exit_at_end && !live_.empty()) {
    if (Status st = ExitOne(false); !st.ok()) return st;
  }
  return res_;
}

// At most `concurrent` processes are alive, so at most that many grow.
Status Churn::StartProcesses() {
  while (growing_.size() < std::min(s_.growing, s_.concurrent) && started_ < s_.processes) {
    if (live_.size() + growing_.size() >= s_.concurrent && !live_.empty()) {
      if (Status st = ExitOne(s_.random_exit); !st.ok()) return st;
    }
    Proc proc;
    proc.serial = started_;
    proc.cpu = static_cast<int>(started_ % static_cast<uint64_t>(s_.cpus));
    proc.target = s_.min_pages + w_.rng().Below(s_.max_pages - s_.min_pages + 1);
    growing_.push_back(std::move(proc));
    ++started_;
  }
  return Status::Ok();
}

// One turn of reclaim: batch_pages of process g swapped out.
Status Churn::Turn(Proc& g) {
  // With growing == 1 and the whole process in one turn, the random draws
  // are those of the one-process-at-a-time churn (same results per seed).
  const uint64_t turn_pages = s_.growing == 1 ? UINT64_MAX : s_.batch_pages;
  for (uint64_t turn = 0; g.pages < g.target && turn < turn_pages;) {
    // The memcg limit (ChurnSpec::swapped_pages): other jobs finish
    // (exit) while more than the build's share is swapped out.
    while (s_.swapped_pages > 0 && !live_.empty() &&
           static_cast<uint64_t>(w_.sys().total_swap_pages() - w_.sys().nr_swap_pages()) >
               s_.swapped_pages) {
      if (Status st = ExitOne(s_.random_exit); !st.ok()) return st;
    }
    const uint64_t n = PickSize(s_.mix, w_.rng());
    const uint64_t f = w_.NewFolio();
    if (Status st = SwapOut(w_, f, OrderOfPages(n), g.cpu); !st.ok()) return st;
    g.folios.emplace_back(f, n);
    g.pages += n;
    turn += n;
  }
  return Status::Ok();
}

// A process exits: the oldest, or a random one; its folios are freed.
Status Churn::ExitOne(bool random) {
  const size_t k = random ? w_.rng().Below(live_.size()) : 0;
  for (auto [f, n] : live_[k].folios) {
    (void)n;
    if (!w_.runner().Live(f)) continue;  // every page was zapped already
    if (Status st = w_.FreeAll(f); !st.ok()) return st;
  }
  live_.erase(live_.begin() + static_cast<std::ptrdiff_t>(k));
  return Status::Ok();
}

// A process done swapping out: zap single 4 KiB pages (MADV_DONTNEED,
// exit of a child sharing nothing), the holes that fragment clusters
// (seed 003); then it lives on until it exits.
Status Churn::Finish(size_t i) {
  Proc proc = std::move(growing_[i]);
  growing_.erase(growing_.begin() + static_cast<std::ptrdiff_t>(i));
  res_.pages_swapped += proc.pages;
  const uint64_t zaps =
      static_cast<uint64_t>(static_cast<double>(proc.pages) * s_.partial_free_share);
  for (uint64_t z = 0; z < zaps; ++z) {
    const auto& [f, n] = proc.folios[w_.rng().Below(proc.folios.size())];
    const uint64_t page = w_.rng().Below(n);
    if (!w_.SlotOf(f, page).valid()) continue;  // already zapped or in memory
    if (Status st = w_.Free(f, page, 1); !st.ok()) return st;
    ++res_.pages_zapped;
  }
  live_.push_back(std::move(proc));
  ++res_.processes;
  return Status::Ok();
}

}  // namespace

Result<ChurnResult> BuildChurn(Workload& w, const ChurnSpec& s) {
  if (Status st = CheckChurn(w, s); !st.ok()) return st;
  return Churn(w, s).Run();
}

Result<UsememResult> Usemem(Workload& w, const UsememSpec& s) {
  if (Status st = CheckCommon("usemem", s.pages_per_process, s.order, 1, w.sys()); !st.ok())
    return st;
  if (s.cpu < 0 || s.cpu >= w.sys().options().nr_cpus) return Bad("usemem", "cpu out of range");
  const uint64_t fp = uint64_t{1} << s.order;
  const uint64_t units = s.processes * (s.pages_per_process / fp);
  const uint64_t limit = s.limit_pages / fp;
  if (s.processes == 0 || limit == 0)
    return Bad("usemem", "needs ≥ 1 process and a limit of ≥ 1 folio");
  // Per unit (folio-sized piece of a process): its current folio id while
  // swapped out (0: resident or never touched).
  std::vector<uint64_t> swapped(units, 0);
  std::vector<uint8_t> resident(units, 0);
  std::deque<uint64_t> lru;  // resident units, oldest first
  UsememResult res;
  auto touch = [&](uint64_t u) -> Status {
    ++res.touches;
    if (resident[u]) return Status::Ok();
    if (swapped[u] != 0) {  // swap-in: the exclusive page's slots are freed
      if (Status st = w.FreeAll(swapped[u]); !st.ok()) return st;
      swapped[u] = 0;
      ++res.swapins;
    }
    resident[u] = 1;
    lru.push_back(u);
    while (lru.size() > limit) {
      const uint64_t v = lru.front();
      lru.pop_front();
      const uint64_t f = w.NewFolio();
      if (Status st = SwapOut(w, f, s.order, s.cpu); !st.ok()) return st;
      resident[v] = 0;
      // A folio that found no slot stays in memory (counted, then dropped).
      if (w.SlotOf(f, 0).valid()) {
        swapped[v] = f;
      } else {
        if (Status st = w.FreeAll(f); !st.ok()) return st;
      }
      ++res.swapouts;
    }
    return Status::Ok();
  };
  for (uint64_t pass = 0; pass < s.passes; ++pass) {
    for (uint64_t i = 0; i < units; ++i) {
      if (Status st = touch(s.random ? w.rng().Below(units) : i); !st.ok()) return st;
    }
  }
  return res;
}

Result<RotationResult> Rotation(Workload& w, uint64_t allocations, int cpus) {
  if (Status st = CheckCommon("rotation", 1, 0, cpus, w.sys()); !st.ok()) return st;
  RotationResult res;
  std::vector<int> last(cpus, -1);
  std::vector<uint64_t> stretches(cpus, 0);
  for (uint64_t i = 0; i < allocations; ++i) {
    const int cpu = static_cast<int>(i % cpus);
    const uint64_t f = w.NewFolio();
    if (Status st = w.Alloc(f, 0, cpu); !st.ok()) return st;
    const alloc::SwapEntry e = w.SlotOf(f, 0);
    if (!e.valid()) continue;
    if (res.per_device.size() <= static_cast<size_t>(e.type)) res.per_device.resize(e.type + 1, 0);
    ++res.per_device[e.type];
    if (last[cpu] != e.type) {
      if (last[cpu] != -1) ++res.switches;
      ++stretches[cpu];
      last[cpu] = e.type;
    }
  }
  uint64_t n = 0;
  for (uint64_t s : stretches) n += s;
  uint64_t placed = 0;
  for (uint64_t d : res.per_device) placed += d;
  res.mean_stretch = n ? static_cast<double>(placed) / static_cast<double>(n) : 0;
  return res;
}

namespace {

// One order-0 folio swapped out on CPU 0 and dropped from the swap cache
// with its mapping's reference kept; the invalid entry when the device is full.
alloc::SwapEntry TakeOneSlot(alloc::SwapSystem& sys) {
  alloc::Folio f(0);
  alloc::FolioLockGuard g(f);
  auto out = sys.SwapOutFolio(0, f);
  if (!out.ok() || !f.in_swap_cache()) return {};
  const alloc::SwapEntry got = f.swap();
  (void)sys.FolioDupSwap(f);
  f.mapped = false;
  (void)sys.SwapCacheDelFolio(f);
  return got;
}

}  // namespace

Result<uint64_t> OccupySlots(alloc::SwapSystem& sys, int type,
                             const std::vector<uint64_t>& in_use) {
  auto dev = sys.Device(type);
  if (!dev.ok()) return dev.status();
  std::vector<bool> taken(dev->max, false), wanted_slot(dev->max, false);
  uint64_t wanted = 0;  // slots of in_use on the device not taken yet
  for (uint64_t s : in_use) {
    if (s == 0 || s >= wanted_slot.size() || wanted_slot[s]) continue;
    wanted_slot[s] = true;
    ++wanted;
  }
  while (wanted > 0) {
    const alloc::SwapEntry e = TakeOneSlot(sys);
    if (!e.valid()) break;
    if (e.type != type || e.offset >= taken.size())
      return Status(-EINVAL, "occupy: a slot outside device " + std::to_string(type));
    taken[e.offset] = true;
    if (wanted_slot[e.offset]) --wanted;
  }
  uint64_t left = 0;
  for (uint64_t off = 1; off < taken.size(); ++off) {
    if (!taken[off]) continue;
    if (wanted_slot[off]) {
      ++left;
      continue;
    }
    if (Status st = sys.SwapPutEntriesDirect(alloc::SwapEntry{type, off}); !st.ok()) return st;
  }
  return left;
}

Result<ModelArea> RebuildArea(const area::AreaInfo& info, const std::vector<uint64_t>& in_use,
                              const alloc::Policy& policy) {
  auto model = area::ModelSwaponOptions(info);
  if (!model.ok()) return model.status();
  alloc::SwaponOptions so = std::move(model).value();
  so.extents.clear();  // slots are dblocks here: the simulated device's pages
  so.first_block = 0;
  so.bdev = 0;
  alloc::SystemOptions sys_options;
  sys_options.policy = policy;
  sys_options.nr_cpus = 1;
  ModelArea a;
  a.sys = std::make_unique<alloc::SwapSystem>(sys_options);
  a.pages = so.pages;
  auto type = a.sys->Swapon(so);
  if (!type.ok()) return Status(type.status().code(), info.path + ": " + type.status().message());
  a.type = *type;
  auto taken = OccupySlots(*a.sys, a.type, in_use);
  if (!taken.ok()) return taken.status();
  a.taken = *taken;
  return a;
}

}  // namespace swaplab::workload
