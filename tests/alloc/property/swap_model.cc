// SPDX-License-Identifier: MIT
// The reference model's bookkeeping and printers (swap_model.h).
#include "alloc/property/swap_model.h"

#include <algorithm>
#include <span>
#include <sstream>

namespace swaplab::alloc::model {

uint64_t MDevice::Used() const {
  uint64_t n = 0;
  for (const MSlot& s : slots) n += s.used() ? 1 : 0;
  return n;
}

bool MDevice::page_discard() const {
  return opts.discard_supported &&
         (opts.discard == DiscardMode::kPages || opts.discard == DiscardMode::kBoth);
}

bool MDevice::area_discard() const {
  return opts.discard_supported &&
         (opts.discard == DiscardMode::kOnce || opts.discard == DiscardMode::kBoth);
}

std::string ToString(SwapEntry e) {
  return "(" + std::to_string(e.type) + "," + std::to_string(e.offset) + ")";
}

const char* KindName(MSlot::Kind k) {
  switch (k) {
    case MSlot::Kind::kFree:
      return "free";
    case MSlot::Kind::kBad:
      return "bad";
    case MSlot::Kind::kCached:
      return "cached";
    case MSlot::Kind::kShadow:
      return "shadow";
    case MSlot::Kind::kHib:
      return "hib";
  }
  return "?";
}

std::string Describe(const MSlot& s) {
  std::string r = KindName(s.kind);
  if (s.kind == MSlot::Kind::kCached) r += "(folio#" + std::to_string(s.folio) + ")";
  if (s.kind == MSlot::Kind::kCached || s.kind == MSlot::Kind::kShadow) {
    r += " count " + std::to_string(s.count);
  }
  return r;
}

std::string Describe(const SlotInfo& s) {
  std::string r(Name(s.kind));
  r += " count " + std::to_string(s.count);
  if (s.kind == SlotKind::kCached) r += s.folio ? " folio" : " slot-cache";
  return r;
}

std::string CountersToString(const SwapCounters& c) {
  std::ostringstream o;
  ForEachCounter(c, [&o](const CounterInfo& info, std::span<const uint64_t> v) {
    for (size_t i = 0; i < v.size(); ++i) {
      o << (o.tellp() > 0 ? " " : "") << info.name;
      if (info.shape != CounterShape::kScalar) o << "[" << i << "]";
      o << "=" << v[i];
    }
  });
  return o.str();
}

std::vector<uint64_t> CounterValues(const SwapCounters& c) {
  std::vector<uint64_t> out;
  ForEachCounter(c, [&out](const CounterInfo& info, std::span<const uint64_t> v) {
    if (info.kind == CounterKind::kCounter) out.insert(out.end(), v.begin(), v.end());
  });
  return out;
}

std::string DeviceToString(const DeviceInfo& d) {
  std::ostringstream o;
  o << "type=" << d.type << " name=" << d.name << " max=" << d.max << " pages=" << d.pages
    << " inuse=" << d.inuse << " prio=" << d.prio << " ssd=" << d.ssd << " blkdev=" << d.blkdev
    << " writeok=" << d.writeok << " avail=" << d.on_avail_list
    << " page_discard=" << d.page_discard << " area_discard=" << d.area_discard
    << " pinned=" << d.hibernation_pinned << " clusters=" << d.nr_clusters
    << " free=" << d.free_clusters << " nonfull=" << d.nonfull_clusters
    << " frag=" << d.frag_clusters << " full=" << d.full_clusters
    << " discard=" << d.discard_clusters << " isolated=" << d.isolated_clusters;
  return o.str();
}

std::vector<std::string> Observe(const SwapSystem& sys, const std::vector<MFolio>& folios) {
  std::vector<std::string> out;
  const int shift = sys.options().cluster_shift;
  const uint64_t C = sys.cluster_size();
  auto line = [&out](std::string s) { out.push_back(std::move(s)); };
  line("nr_swap_pages=" + std::to_string(sys.nr_swap_pages()) +
       " total=" + std::to_string(sys.total_swap_pages()) +
       " suspended=" + std::to_string(sys.storage_suspended()) +
       " deferred=" + std::to_string(sys.HasDeferredWork()));
  std::string act = "active:", av = "avail:";
  for (int t : sys.active_devices()) act += " " + std::to_string(t);
  for (int t : sys.avail_devices()) av += " " + std::to_string(t);
  line(act);
  line(av);
  line("counters: " + CountersToString(sys.counters()));
  for (int cpu = 0; cpu < sys.options().nr_cpus; ++cpu) {
    for (int k = 0; k <= shift; ++k) {
      PerCpuHint h = sys.Hint(cpu, k);
      line("hint cpu" + std::to_string(cpu) + " order" + std::to_string(k) + " = " +
           std::to_string(h.type) + ":" + std::to_string(h.offset));
    }
  }
  for (int t : sys.active_devices()) {
    auto d = sys.Device(t);
    if (!d.ok()) {
      line("device " + std::to_string(t) + " error " + d.status().ToString());
      continue;
    }
    line("device " + DeviceToString(*d));
    const uint64_t nclusters = d->nr_clusters;
    for (uint64_t i = 0; i < nclusters; ++i) {
      auto c = sys.Cluster(t, i);
      if (!c.ok()) continue;
      line("cluster " + std::to_string(t) + ":" + std::to_string(i) + " " +
           std::string(Name(c->flag)) + " order " + std::to_string(c->order) + " count " +
           std::to_string(c->count) + " table " + std::to_string(c->has_table) + " ext " +
           std::to_string(c->has_extend_table));
    }
    for (ListId l :
         {ListId::kFree, ListId::kNonfull, ListId::kFrag, ListId::kFull, ListId::kDiscard}) {
      const bool per_order = l == ListId::kNonfull || l == ListId::kFrag;
      for (int k = 0; k <= (per_order ? shift : 0); ++k) {
        auto lst = sys.List(t, l, k);
        std::string s = "list " + std::to_string(t) + " " + std::string(Name(l)) + "[" +
                        std::to_string(k) + "]:";
        if (lst.ok()) {
          for (uint64_t idx : *lst) s += " " + std::to_string(idx);
        }
        line(s);
      }
    }
    for (uint64_t off = 0; off < nclusters * C; ++off) {
      auto s = sys.Slot({t, off});
      if (!s.ok()) continue;
      std::ostringstream o;
      o << "slot " << t << ":" << off << " " << Name(s->kind) << " " << s->count << " "
        << static_cast<const void*>(s->folio);
      line(o.str());
    }
  }
  for (size_t i = 0; i < folios.size(); ++i) {
    const Folio& f = *folios[i].f;
    line("folio#" + std::to_string(i) + " swap " + ToString(f.swap()) + " order " +
         std::to_string(f.order()) + " mapped " + std::to_string(f.mapped) + " writeback " +
         std::to_string(f.writeback) + " dirty " + std::to_string(f.dirty) + " locked " +
         std::to_string(f.locked()));
  }
  return out;
}

std::string DiffObservations(const std::vector<std::string>& before,
                             const std::vector<std::string>& after) {
  const size_t n = std::min(before.size(), after.size());
  for (size_t i = 0; i < n; ++i) {
    if (before[i] != after[i]) return "before: " + before[i] + "\n  after:  " + after[i];
  }
  if (before.size() != after.size()) {
    return "observation count " + std::to_string(before.size()) + " -> " +
           std::to_string(after.size());
  }
  return "";
}

}  // namespace swaplab::alloc::model
