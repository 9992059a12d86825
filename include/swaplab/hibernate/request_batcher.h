// SPDX-License-Identifier: MIT
// hib_bio_batch: how image pages become bios (spec §6). Two modes:
//   per-page — one bio per page (before the RFC, §6.1); the engine's plug
//              merges them into device requests;
//   per-run  — RFC patch 7/8: a bio grows along a contiguous run up to its
//              capacity; the adaptive rule sizes the next bio (§6.2).
// Plus the closed-form bio counts of §10.5, for tests and reports.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/hibernate/image_format.h"

namespace swaplab::hibernate {

enum class BatchMode { kPerPage, kPerRun };
// exact: a bio sized n holds n pages; slab: bio_alloc rounds n > 4 up to
// 16 / 64 / 128 / 256 vecs and the RFC fills to max_vecs (§6.2, §10.5).
enum class CapacityMode { kExact, kSlab };
Result<BatchMode> ParseBatchMode(std::string_view s);        // "per-page" | "per-run"
Result<CapacityMode> ParseCapacityMode(std::string_view s);  // "exact" | "slab"
const char* Name(BatchMode m);
const char* Name(CapacityMode m);

// Memory for write copies made before the write (the kernel's free pages
// exist before swsusp_write; ours would otherwise be faulted in during it):
// pages touched once, handed out in order so consecutive copies are
// contiguous, and registrable with the engine as one buffer.
class CopyArena {
 public:
  // -EINVAL for 0 pages, -ENOMEM if the memory cannot be had.
  static Result<std::unique_ptr<CopyArena>> Make(uint64_t pages);
  ~CopyArena();
  CopyArena(const CopyArena&) = delete;
  CopyArena& operator=(const CopyArena&) = delete;
  uint64_t pages() const { return pages_; }
  std::byte* base() const { return base_; }
  std::byte* page(uint64_t i) const { return base_ + i * kPageSize; }

 private:
  CopyArena(std::byte* base, uint64_t pages) : base_(base), pages_(pages) {}
  std::byte* base_;
  uint64_t pages_;
};

struct BatchOptions {
  BatchMode mode = BatchMode::kPerRun;
  CapacityMode capacity = CapacityMode::kExact;
  uint32_t max_pages = 0;  // P; 0: from the engine's limits (HibBioMaxPages)
  // Model only: writes keep no private copy; every write bio carries one
  // shared scratch page. For counting runs and bios at scale on an engine
  // that ignores the data (the simulated device without checksums).
  // The reader's data pages, likewise, all land in one scratch page
  // (uncompressed images; nothing verified).
  bool model_only = false;
  // The plug's flush (§6.1, §12 U7: blk_add_rq_to_plug dispatches the
  // plugged requests when a new request is added behind one of at least
  // BLK_PLUG_FLUSH_SIZE = 128 KiB, or at 32 requests): closed bios go to
  // the engine once they hold this many pages, so I/O overlaps with the
  // caller's work. 0: P (one full request). Bio counts do not depend on it.
  uint32_t plug_flush_pages = 0;
  // Write copies come from here first (in order, so a bio's pages are
  // contiguous in the registered buffer; all free again after each Wait),
  // then from the heap. Not owned; must outlive the batcher. Without an
  // arena, a heap copy is used again once its bio has completed (the
  // engine's Poll), as hib_end_io() frees the kernel's copy page.
  CopyArena* arena = nullptr;
  // Without an arena: heap copy pages beyond this many (0: no bound) are
  // not made while a submitted write bio is in flight; the copy waits for
  // one to complete instead (WaitClosed: nothing closed or submitted, so
  // bios and the engine's Submit batches are unchanged). For engines whose
  // requests complete on their own: a simulated device's modelled time
  // depends on when it is waited for.
  uint64_t max_heap_copies = 0;
};

// Mirrors the RFC's hib_bio_max_pages(): min(256, max(1, min(max_sectors_kb/4, max_segments))).
uint32_t HibBioMaxPages(const area::DeviceLimits& l);
// Vecs a bio asked for n pages really holds.
uint32_t BioCapacity(uint32_t n, CapacityMode mode);

// Bio counts of §10.5 for an uncompressed write of T stream pages on a
// contiguous run (async bios only; the four sync I/Os are not counted).
uint64_t BiosPerPageFormula(uint64_t T);             // B_base = T − 1 + Q
uint64_t BiosPerRunFormula(uint64_t T, uint64_t C);  // B_rfc(C)
uint64_t BiosSimpleFormula(uint64_t T, uint64_t C);  // B_simple(C)

struct BatchStats {
  uint64_t bios = 0;                       // async bios (kernel bio_alloc calls of the batch)
  uint64_t sync_ios = 0;                   // hib_submit_io_sync calls (on-stack bios)
  uint64_t pages = 0;                      // pages through async bios
  uint64_t drains = 0;                     // Wait calls that had bios to complete
  uint64_t partial_waits = 0;              // WaitSome calls that had bios to complete
  std::map<uint32_t, uint64_t> bio_sizes;  // pages per async bio -> count
};

class RequestBatcher {
 public:
  // Starts a batch (hib_init_batch): nr_pages = 1.
  RequestBatcher(area::IoEngine& engine, BatchOptions o);
  ~RequestBatcher();
  RequestBatcher(const RequestBatcher&) = delete;
  RequestBatcher& operator=(const RequestBatcher&) = delete;

  uint32_t max_pages() const { return max_pages_; }  // P
  area::IoEngine& engine() const { return engine_; }
  bool model_only() const { return o_.model_only; }
  // Queues a write of a private copy of `page` (the caller may reuse it).
  // A page from CopyBuffer() is adopted as the copy instead (no memcpy).
  void QueueWrite(uint64_t dblock, const std::byte* page);
  // A page the caller may fill and then pass to QueueWrite, which then
  // takes it as the write copy (the kernel's copy page, filled in place).
  // Valid until the next QueueWrite or Wait.
  std::byte* CopyBuffer();
  // Queues a read into `dest` (4096-aligned, valid until Wait returns).
  void QueueRead(uint64_t dblock, std::byte* dest);
  // hib_wait_io: submits the current bio, hands every queued bio to the
  // engine at once (the plug), waits; returns the first error.
  Status Wait();
  // Reads only: submits as Flush does, then waits until at least one bio
  // in flight has completed (the engine's WaitAny); errors as Wait, for
  // the bios that completed. What is done so far is pages_done().
  Status WaitSome();
  // Waits until at least one bio already handed to the engine has
  // completed, advancing pages_done(), and hands nothing over: the
  // current bio stays open and closed bios wait for the plug's flush, so
  // the engine gets the same Submit batches (and the plug the same merges)
  // as without the call. Errors as WaitSome. Counted in neither drains nor
  // partial_waits. With no submitted bio in flight it waits for nothing
  // and returns -EAGAIN (only Flush, WaitSome or Wait make progress then).
  // Page k is in a submitted bio once more than max_unsubmitted() pages
  // were queued after it.
  Status WaitClosed();
  // Pages the last queued ones may hold back from the engine: the current
  // bio and the closed bios short of the plug's flush.
  uint64_t max_unsubmitted() const {
    return uint64_t{BioCapacity(max_pages_, o_.capacity)} + flush_pages_ - 1;
  }
  // Pages queued so far (QueueRead / QueueWrite), and how many of them, in
  // queue order, have completed: every one after Wait, a prefix after
  // WaitSome (a bio completing ahead of an older one counts once the older
  // one has). A caller that queued page k (0-based) may use it once
  // pages_done() > k.
  uint64_t pages_queued() const { return queued_seq_; }
  uint64_t pages_done() const { return done_seq_; }
  // Submits the current bio and hands every closed bio to the engine
  // without waiting (the RFC's submit at a round end, §6.3, §6.4).
  Status Flush();
  Status SyncWrite(uint64_t dblock, const std::byte* page);
  Status SyncRead(uint64_t dblock, std::byte* dest);
  const BatchStats& stats() const { return stats_; }
  // Private write copies not yet completed (the kernel's copy pages).
  // Counted in model_only mode too (no page is kept), so the writer's
  // low-memory drains fall where they do with data.
  uint64_t queued_copies() const { return copies_; }

 private:
  struct Bio {
    bool write = false;
    uint64_t start = 0;
    uint32_t max_vecs = 0;
    std::vector<std::byte*> pages;
    uint64_t seq = 0;  // queue number of its first page
  };
  void Queue(bool write, uint64_t dblock, std::byte* buf);
  void Close();
  area::IoEngine& engine_;
  BatchOptions o_;
  uint32_t max_pages_ = 1;
  uint32_t nr_pages_ = 1;
  std::optional<Bio> cur_;
  std::vector<area::IoRequest> closed_;
  Status SubmitClosed();
  Status FlushForWait();
  Status CheckCompletions(const std::vector<area::IoCompletion>& done) const;
  // Every bio handed to the engine since the last Wait, by tag − first_tag_.
  struct InFlight {
    uint64_t dblock;
    uint32_t pages;
    uint64_t seq;  // queue number of its first page
    bool write = false;
    bool done = false;  // completed (WaitSome, Poll)
  };
  // Marks the bios of `done` completed and advances pages_done() over the
  // completed prefix, whose heap copies become free again.
  void MarkDone(const std::vector<area::IoCompletion>& done);
  // The engine's completions so far, without waiting (TakeCopyPage).
  void PollCompletions();
  std::vector<InFlight> in_flight_pages_;
  size_t done_bios_ = 0;  // in_flight_pages_[0, done_bios_) completed
  uint64_t queued_seq_ = 0, done_seq_ = 0;
  void Settled();  // everything in flight has completed
  uint64_t first_tag_ = 0;
  bool in_flight_ = false;  // bios handed to the engine since the last Wait
  uint64_t closed_pages_ = 0, flush_pages_ = 0;
  Status deferred_;  // a submit error met while queueing, returned by Wait
  uint64_t next_tag_ = 0;
  std::unique_ptr<AlignedPage> scratch_;  // model_only
  uint64_t copies_ = 0;                   // write copies until the Wait after them
  // Heap copy pages, allocated kHeapChunk at a time; every one is either
  // free, queued (a copy of a write not yet known complete, in queue
  // order) or next_.
  static constexpr size_t kHeapChunk = 64;
  std::vector<std::unique_ptr<AlignedPage[]>> heap_;
  size_t heap_pages_ = 0;                   // pages of heap_ handed out so far
  std::vector<std::byte*> heap_free_;       // completed copies, ready again
  std::deque<std::byte*> heap_queued_;      // heap copies of queued writes
  uint64_t arena_used_ = 0;                 // arena pages in use
  std::byte* next_ = nullptr;               // handed out by CopyBuffer
  std::vector<area::IoCompletion> polled_;  // PollCompletions' scratch
  std::byte* TakeCopyPage();
  bool InArena(const std::byte* p) const {
    return o_.arena != nullptr && p >= o_.arena->base() &&
           p < o_.arena->base() + o_.arena->pages() * kPageSize;
  }
  BatchStats stats_;
};

}  // namespace swaplab::hibernate
#pragma GCC visibility pop
