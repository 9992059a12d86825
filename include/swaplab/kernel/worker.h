// SPDX-License-Identifier: MIT
// The worker process whose memory the kernel swaps: a forked child, moved
// into a memory cgroup of its own, that maps one anonymous region per trace
// folio and on command touches, pages out (MADV_PAGEOUT), frees
// (MADV_DONTNEED) or reads back pages, each time pinned to the named CPU
// first (sched_setaffinity before touching a page: a new page sits in the
// per-CPU LRU batch of the CPU that touched it, and MADV_PAGEOUT only drains
// its own CPU's batch).
#pragma once
#pragma GCC visibility push(default)

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"

namespace swaplab::kernel {

// One page as /proc/PID/pagemap shows it.
struct PageState {
  bool present = false, swapped = false;
  uint64_t pfn = 0;    // present (root)
  int swap_type = -1;  // swapped
  uint64_t swap_offset = 0;
};

// What a swap-out (Worker::SendSwapOut) saw of its pages, one entry each.
struct SwapOutPages {
  std::vector<PageState> before;  // after the fault, before MADV_PAGEOUT
  std::vector<uint64_t> flags;    // /proc/kpageflags of `before`'s PFNs (0: not present)
  std::vector<PageState> after;   // after MADV_PAGEOUT
  std::vector<uint8_t> resident;  // mincore after MADV_PAGEOUT: bit 0, in memory or swap cache
};

// The first 8 bytes of every trace page the worker writes ("swaplab!"
// little-endian); the next 8 are the page's address. A slot of a run's
// area holding other non-zero bytes was written by someone else.
inline constexpr uint64_t kTracePageMagic = 0x2162616c70617773ull;

class Worker {
 public:
  // Forks the worker; it reserves `reserve_bytes` of address space
  // (PROT_NONE) and locks the rest of its memory as it faults in
  // (mlockall(MCL_CURRENT | MCL_ONFAULT): stack, heap, buffers, a
  // sanitizer's shadow), so only the trace's folios, mapped later, can be
  // swapped out of it. Then it joins the memory cgroup `cgroup_dir` (may
  // be empty) for good: its own pages stay charged where they were faulted
  // in, so only the trace folios are charged there.
  static Result<std::unique_ptr<Worker>> Start(uint64_t reserve_bytes,
                                               const std::string& cgroup_dir);
  ~Worker();  // kills and reaps the worker
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  pid_t pid() const { return pid_; }
  // The CPU the last command that pins ran on (0 before any).
  int last_cpu() const { return last_cpu_; }
  uint64_t base() const { return base_; }  // address of the reserved region

  // A folio swapped out: maps [addr, addr+len) read-write anonymous
  // (fixed, inside the region), pins to `cpu`, writes every page
  // (kTracePageMagic and the page's address), reads the pages' PFNs and
  // kpageflags, MADV_PAGEOUT, then reads what the page-out left (pagemap
  // and mincore), all in the worker: one command. SendSwapOut only sends
  // it, so that several travel in one go (their replies come back in
  // order, ReceiveSwapOut).
  Status SendSwapOut(int cpu, uint64_t addr, uint64_t len);
  // `count` folios of `len` bytes, `stride` apart from addr, each mapped and
  // written as by SendSwapOut, then paged out by one MADV_PAGEOUT over them
  // all (their writes leave in one plug); a reply for each, in order
  // (ReceiveSwapOut). At most kMaxSwapOutPages pages in all.
  Status SendSwapOutRun(int cpu, uint64_t addr, uint64_t len, uint64_t stride, uint64_t count);
  Result<SwapOutPages> ReceiveSwapOut();
  // Most pages one SwapOut takes (a PMD-sized folio).
  static constexpr uint64_t kMaxSwapOutPages = 512;
  // A command as it goes down the pipe to the worker process.
  struct Cmd {
    int32_t op = 0, cpu = 0;
    uint64_t addr = 0, len = 0;
    uint64_t stride = 0, count = 1;  // kSwapOutRun: `count` folios of len bytes, stride apart
  };
  // munlock + MADV_DONTNEED. SendFree only sends it (several may travel in
  // one go), ReceiveFree reads the oldest reply, in order.
  Status Free(int cpu, uint64_t addr, uint64_t len);
  Status SendFree(int cpu, uint64_t addr, uint64_t len);
  Status ReceiveFree(int cpu);  // `cpu`: the free's, for the message
  // The kernel's own cost of swapping out `pages` pages, in the worker on
  // CPU 0 (bench/pageout_floor.c): a new mapping of them (no huge pages),
  // each written, one MADV_PAGEOUT; and with `folios` > 1 the same pages
  // as `folios` mappings of their own (a guard page after each), in
  // `calls` groups of consecutive ones, each group written and paged out
  // by one call. Each timed (mappings, writes, page-outs), the pages that
  // went to swap counted, the mappings removed again.
  struct FloorResult {
    double seconds = 0;  // one call
    uint64_t swapped = 0;
    uint64_t folios = 0, calls = 0;  // folios > 1: the second measurement was made
    double calls_seconds = 0;
    uint64_t calls_swapped = 0;
  };
  Result<FloorResult> Floor(uint64_t pages, uint64_t folios = 1, uint64_t calls = 1);
  static constexpr uint64_t kMaxFloorPages = uint64_t{1} << 22;  // 16 GiB
  // Reads every page (swap-in by a read fault: the folio stays in the swap
  // cache, or, bypassing it, the slots are freed). Not locked: the caller
  // locks what came in with Lock, one call per run of pages, so that a
  // large folio swapped in whole is mlocked as a folio (a lock of part of
  // it leaves it evictable, and cgroup reclaim then takes swap slots for it
  // and gives them back, moving the per-CPU cluster of its CPU).
  Status ReadIn(int cpu, uint64_t addr, uint64_t len);

  // mlock(2): pages read back in stay out of cgroup reclaim (drop-cache).
  Status Lock(uint64_t addr, uint64_t len);
  // Empties the per-CPU folio batches of every CPU the worker may run on
  // (lru_add_drain on each: MADV_COLD of an untouched page, pinned to the
  // CPU in turn). A batch holds a reference to each folio in it: a clean
  // swap-cache folio rotated there when its write-out ended, then taken out
  // of the swap cache by a `free` (__try_to_reclaim_swap), would outlive
  // the free on the LRU, and the next reclaim (drop-cache) would give it a
  // slot of its CPU's cache (docs/fidelity.md, 6.12 in a busy guest).
  Status DrainLru();
  // mincore(2) in the worker: for a swapped-out page, whether its folio is
  // still in the swap cache (mincore_swap); 1 byte per page.
  Result<std::vector<uint8_t>> Mincore(uint64_t addr, uint64_t len);

  // Page states of [addr, addr+pages*4096) from /proc/PID/pagemap.
  Result<std::vector<PageState>> Pages(uint64_t addr, uint64_t pages) const;
  // Reads of /proc/kpageflags for many runs of PFNs (the worker's before a
  // page-out, the runner's wait for writeback): runs at most kFlagsGap
  // PFNs apart share one read of at most kFlagsWindow entries (the pages
  // between are read and not looked at).
  static constexpr uint64_t kFlagsGap = 512, kFlagsWindow = 4096;
  // The runs that share one read with run r of n runs sorted by first PFN
  // (run k: pfn(k), pages(k)): r up to the returned end, each at most
  // kFlagsGap PFNs after the one before it and all within kFlagsWindow
  // PFNs of run r's first. *hi: one past the last PFN of the read.
  template <typename Pfn, typename Pages>
  static size_t FlagsWindowEnd(size_t r, size_t n, Pfn pfn, Pages pages, uint64_t* hi) {
    const uint64_t lo = pfn(r);
    *hi = lo + pages(r);
    size_t end = r + 1;
    for (; end < n; ++end) {
      const uint64_t first = pfn(end), last = first + pages(end);
      if (first < *hi || first - *hi > kFlagsGap || last - lo > kFlagsWindow) break;
      *hi = last;
    }
    return end;
  }
  // /proc/kpageflags of a PFN, and of n PFNs from pfn.
  static Result<uint64_t> PageFlags(uint64_t pfn);
  static Result<std::vector<uint64_t>> PageFlags(uint64_t pfn, uint64_t n);

 private:
  Worker() = default;
  Status Command(int op, int cpu, uint64_t addr, uint64_t len,
                 std::vector<uint8_t>* data = nullptr);
  Status Send(int op, int cpu, uint64_t addr, uint64_t len, uint64_t stride = 0,
              uint64_t count = 1);
  Status Receive(int op, int cpu, std::vector<uint8_t>* data);
  bool ReadReply(void* p, size_t n);
  Status FlushCommands();
  static constexpr size_t kReplyReadAhead = 64 * 1024;
  // Commands not sent yet (Cmd of worker.cc; FlushCommands).
  std::vector<Cmd> out_;
  std::vector<uint8_t> in_;  // replies read ahead: [in_pos_, in_end_)
  size_t in_pos_ = 0, in_end_ = 0;
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  int pagemap_fd_ = -1;  // /proc/PID/pagemap, open for the worker's life
  uint64_t base_ = 0;
  int last_cpu_ = 0;
};

}  // namespace swaplab::kernel
#pragma GCC visibility pop
