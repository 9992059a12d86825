// SPDX-License-Identifier: MIT
// Per-CPU state (allocator spec §2.2, §10.1) and the storage of the
// counter table (SWAPLAB_COUNTERS). Part of a SwapSystem's internal state
// (system_state.h).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "alloc/spin_lock.h"
#include "swaplab/alloc/swap_system.h"

namespace swaplab::alloc {

// Storage of one row of SWAPLAB_COUNTERS: an atomic per value.
template <CounterShape S>
using AtomicCounterField = std::conditional_t<S == CounterShape::kScalar, std::atomic<uint64_t>,
                                              std::array<std::atomic<uint64_t>, CounterSize(S)>>;
// The rows of one home (CPU or SYS) as fields, the others left out.
#define SWAPLAB_COUNTER_STORE_CPU_CPU(n, shape) AtomicCounterField<CounterShape::shape> n{};
#define SWAPLAB_COUNTER_STORE_CPU_SYS(n, shape)
#define SWAPLAB_COUNTER_STORE_SYS_CPU(n, shape)
#define SWAPLAB_COUNTER_STORE_SYS_SYS(n, shape) AtomicCounterField<CounterShape::shape> n{};
#define SWAPLAB_COUNTER_STORE_CPU(n, shape, home, kind, summary, doc) \
  SWAPLAB_COUNTER_STORE_CPU_##home(n, shape)
#define SWAPLAB_COUNTER_STORE_SYS(n, shape, home, kind, summary, doc) \
  SWAPLAB_COUNTER_STORE_SYS_##home(n, shape)

// Counters one CPU updates under its local lock (single writer): the CPU
// rows of SWAPLAB_COUNTERS.
struct CpuCounters {
  SWAPLAB_COUNTERS(SWAPLAB_COUNTER_STORE_CPU)
};
inline void Bump(std::atomic<uint64_t>& c, uint64_t n = 1) {
  c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

// Per-CPU state (kernel: percpu_swap_cluster and, for §10.1, swap_slots_cache).
struct alignas(64) PerCpu {
  SpinLock lock;                      // the CPU-local lock
  std::array<int, kMaxOrders> dev{};  // -1: none
  std::array<uint64_t, kMaxOrders> off{};
  std::vector<SwapEntry> slot_cache;  // §10.1, entries [cur, size)
  size_t slot_cache_cur = 0;
  // 6.12's return buffer (slots_ret; policy slot_cache_return): cache-held
  // slots waiting to be freed in one batch, in the order they came.
  std::vector<SwapEntry> slot_ret;
  CpuCounters stats;
  PerCpu() { dev.fill(-1); }
};

}  // namespace swaplab::alloc
