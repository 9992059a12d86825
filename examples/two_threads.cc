// SPDX-License-Identifier: MIT
// The allocator as a library (docs/library.md): swapon a simulated device,
// allocate folios of orders 0, 2 and 4 from two threads, free them, read
// the counters.
#include <swaplab/alloc/swap_system.h>

#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

using namespace swaplab::alloc;

int main() {
  SystemOptions opts;
  opts.nr_cpus = 2;
  SwapSystem sys(opts);
  SwaponOptions dev;  // a simulated SSD of 256 MiB
  dev.name = "sim0";
  dev.pages = 64 * 1024;
  if (auto type = sys.Swapon(dev); !type.ok()) {
    std::fprintf(stderr, "swapon: %s\n", type.status().ToString().c_str());
    return 1;
  }
  bool failed[2] = {false, false};
  auto worker = [&](CpuId cpu) {  // one thread per CpuId
    std::vector<std::unique_ptr<Folio>> folios;
    for (int i = 0; i < 3000; ++i) {
      auto& f = folios.emplace_back(std::make_unique<Folio>(2 * (i % 3)));
      FolioLockGuard lock(*f);
      if (swaplab::Status st = sys.FolioAllocSwap(cpu, *f); !st.ok()) {
        std::fprintf(stderr, "cpu %d: %s\n", cpu, st.ToString().c_str());
        failed[cpu] = true;
        return;
      }
    }
    for (auto& f : folios) {  // reclaim: out of the swap cache, slots freed
      FolioLockGuard lock(*f);
      // The other thread's allocations may have reclaimed it already: a
      // cached folio whose slots have no references is what the full-cluster
      // reclaim frees once the device is half full (swap_reclaim_full_clusters).
      if (f->in_swap_cache() && !sys.SwapCacheDelFolio(*f).ok()) failed[cpu] = true;
    }
  };
  std::thread a(worker, 0), b(worker, 1);
  a.join();
  b.join();
  const SwapCounters c = sys.counters();
  std::printf("fast path hits %llu, free %lld of %lld pages, invariants %s\n",
              static_cast<unsigned long long>(c.fast_path_hits),
              static_cast<long long>(sys.nr_swap_pages()),
              static_cast<long long>(sys.total_swap_pages()),
              sys.CheckInvariants().ToString().c_str());
  const bool all_free = sys.nr_swap_pages() == sys.total_swap_pages();
  return failed[0] || failed[1] || !all_free || !sys.CheckInvariants().ok();
}
