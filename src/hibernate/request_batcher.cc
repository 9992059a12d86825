// SPDX-License-Identifier: MIT
// hib_bio_batch model (spec §6.1, §6.2, §6.4) and the §10.5 formulas.
#include "swaplab/hibernate/request_batcher.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

namespace swaplab::hibernate {
namespace {
uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
}  // namespace

Result<BatchMode> ParseBatchMode(std::string_view s) {
  if (s == "per-page") return BatchMode::kPerPage;
  if (s == "per-run") return BatchMode::kPerRun;
  return Status(-EINVAL, "batch mode '" + std::string(s) + "': expected per-page or per-run");
}
Result<CapacityMode> ParseCapacityMode(std::string_view s) {
  if (s == "exact") return CapacityMode::kExact;
  if (s == "slab") return CapacityMode::kSlab;
  return Status(-EINVAL, "bio capacity '" + std::string(s) + "': expected exact or slab");
}
const char* Name(BatchMode m) { return m == BatchMode::kPerPage ? "per-page" : "per-run"; }
const char* Name(CapacityMode m) { return m == CapacityMode::kExact ? "exact" : "slab"; }

uint32_t HibBioMaxPages(const area::DeviceLimits& l) {
  const uint32_t by_bytes = l.max_sectors_kb / 4;
  return std::min<uint32_t>(256, std::max<uint32_t>(1, std::min(by_bytes, l.max_segments)));
}

uint32_t BioCapacity(uint32_t n, CapacityMode mode) {
  if (mode == CapacityMode::kExact || n <= 4) return n;  // inline vecs: exactly n
  for (uint32_t slab : {16u, 64u, 128u})
    if (n <= slab) return slab;
  return 256;
}

uint64_t BiosPerPageFormula(uint64_t T) { return T == 0 ? 0 : (T - 1) + FullMapPages(T); }

uint64_t BiosPerRunFormula(uint64_t T, uint64_t C) {
  const uint64_t Q = FullMapPages(T), r = T - kMapEntries * Q;
  if (Q == 0) return T < 2 ? 0 : 1 + CeilDiv(T - 2, C);
  return (2 + CeilDiv(509, C)) + (Q - 1) * (2 + CeilDiv(510, C)) +
         (r > 0 ? 1 + CeilDiv(r - 1, C) : 0);
}

uint64_t BiosSimpleFormula(uint64_t T, uint64_t C) {
  const uint64_t Q = FullMapPages(T), r = T - kMapEntries * Q;
  if (Q == 0) return T < 2 ? 0 : CeilDiv(T - 1, C);
  return CeilDiv(510, C) + 1 + (Q - 1) * (CeilDiv(511, C) + 1) + (r > 0 ? CeilDiv(r, C) : 0);
}

RequestBatcher::RequestBatcher(area::IoEngine& engine, BatchOptions o) : engine_(engine), o_(o) {
  max_pages_ =
      o.max_pages != 0 ? std::min<uint32_t>(o.max_pages, 256) : HibBioMaxPages(engine.limits());
  flush_pages_ = o.plug_flush_pages != 0 ? o.plug_flush_pages : max_pages_;
}

RequestBatcher::~RequestBatcher() {
  // Bios still queued or in flight use the caller's pages: complete them.
  // Out of memory here (while unwinding from an earlier bad_alloc) must not
  // escape a destructor, which would abort the program.
  if (cur_ || !closed_.empty() || in_flight_) {
    try {
      (void)Wait();
    } catch (const std::bad_alloc&) {
    }
  }
}

Result<std::unique_ptr<CopyArena>> CopyArena::Make(uint64_t pages) {
  if (pages == 0) return Status(-EINVAL, "copy arena: 0 pages");
  void* m = std::aligned_alloc(kPageSize, pages * kPageSize);
  if (m == nullptr)
    return Status(-ENOMEM, "copy arena: cannot allocate " + std::to_string(pages) + " pages");
  std::memset(m, 0, pages * kPageSize);  // touched now, not inside the write
  return std::unique_ptr<CopyArena>(new CopyArena(static_cast<std::byte*>(m), pages));
}

CopyArena::~CopyArena() { std::free(base_); }

// Copy pages come from the arena in order, then from the heap: a page
// whose bio has completed first, else a new one. Arena pages are free
// again only after a Wait, as every page is when Wait has completed every
// queued bio.
std::byte* RequestBatcher::TakeCopyPage() {
  if (o_.arena != nullptr && arena_used_ < o_.arena->pages()) return o_.arena->page(arena_used_++);
  if (heap_free_.empty() && in_flight_) PollCompletions();
  while (heap_free_.empty() && o_.max_heap_copies != 0 && heap_pages_ >= o_.max_heap_copies) {
    Status st = WaitClosed();  // frees the copies of the bios it completes
    if (!st.ok()) {
      if (st.code() != -EAGAIN && deferred_.ok()) deferred_ = st;  // for the next Wait
      break;
    }
  }
  if (heap_free_.empty()) {
    if (heap_pages_ == heap_.size() * kHeapChunk)
      heap_.push_back(std::make_unique<AlignedPage[]>(kHeapChunk));
    heap_free_.push_back(heap_[heap_pages_ / kHeapChunk][heap_pages_ % kHeapChunk].data());
    ++heap_pages_;
  }
  std::byte* p = heap_free_.back();
  heap_free_.pop_back();
  return p;
}

void RequestBatcher::PollCompletions() {
  polled_.clear();
  Status st = engine_.Poll(&polled_);
  if (st.ok()) st = CheckCompletions(polled_);
  if (!st.ok() && deferred_.ok()) deferred_ = st;
  MarkDone(polled_);
}

std::byte* RequestBatcher::CopyBuffer() {
  if (next_ == nullptr) next_ = TakeCopyPage();
  return next_;
}

void RequestBatcher::QueueWrite(uint64_t dblock, const std::byte* page) {
  if (o_.model_only) {
    if (!scratch_) scratch_ = std::make_unique<AlignedPage>();
    ++copies_;
    Queue(true, dblock, scratch_->data());
    return;
  }
  std::byte* copy = next_;
  if (copy != nullptr && page == copy) {
    next_ = nullptr;  // filled in place
  } else {
    if (copy == nullptr)
      copy = TakeCopyPage();
    else
      next_ = nullptr;                   // CopyBuffer's page was not used: take it as the copy
    std::memcpy(copy, page, kPageSize);  // write_page's copy (§4.3)
  }
  ++copies_;
  if (!InArena(copy)) heap_queued_.push_back(copy);
  Queue(true, dblock, copy);
}

void RequestBatcher::QueueRead(uint64_t dblock, std::byte* dest) { Queue(false, dblock, dest); }

void RequestBatcher::Close() {
  const uint32_t n = static_cast<uint32_t>(cur_->pages.size());
  ++stats_.bios;
  stats_.pages += n;
  ++stats_.bio_sizes[n];
  area::IoRequest rq;
  rq.write = cur_->write;
  rq.page = cur_->start;
  rq.bufs = std::move(cur_->pages);
  rq.tag = next_tag_++;
  if (in_flight_pages_.empty()) first_tag_ = rq.tag;
  in_flight_pages_.push_back({rq.page, n, cur_->seq, rq.write});
  closed_.push_back(std::move(rq));
  cur_.reset();
  closed_pages_ += n;
  if (closed_pages_ >= flush_pages_) {
    Status st = SubmitClosed();
    if (!st.ok() && deferred_.ok()) deferred_ = st;
  }
}

Status RequestBatcher::SubmitClosed() {
  closed_pages_ = 0;
  if (closed_.empty()) return Status::Ok();
  Status st = engine_.Submit(closed_);
  closed_.clear();
  in_flight_ = true;
  return st;
}

// Mirrors the RFC's hib_submit_io_async() (patch 7, §6.2); per-page mode is
// the pre-RFC one bio per page.
void RequestBatcher::Queue(bool write, uint64_t dblock, std::byte* buf) {
  const uint64_t seq = queued_seq_++;
  if (o_.mode == BatchMode::kPerPage) {
    cur_ = Bio{write, dblock, 1, {buf}, seq};
    Close();
    return;
  }
  if (cur_) {
    const bool contiguous = cur_->write == write && cur_->start + cur_->pages.size() == dblock;
    if (contiguous && cur_->pages.size() < cur_->max_vecs) {
      cur_->pages.push_back(buf);
      return;
    }
    nr_pages_ = (contiguous || cur_->pages.size() > 1) ? max_pages_ : 1;  // adaptive rule
    Close();
  }
  cur_ = Bio{write, dblock, BioCapacity(nr_pages_, o_.capacity), {buf}, seq};
}

// submit_bio() of every closed bio, and of the current one (patch 7).
Status RequestBatcher::Flush() {
  if (cur_) Close();
  return SubmitClosed();
}

// Mirrors hib_wait_io() (+ patch 7: submit the current bio first).
// What Wait and WaitSome do first: the error a queueing submit deferred,
// else Flush's.
Status RequestBatcher::FlushForWait() {
  Status st = deferred_;
  deferred_ = Status::Ok();
  if (Status fl = Flush(); st.ok()) st = fl;
  return st;
}

Status RequestBatcher::Wait() {
  Status st = FlushForWait();
  if (in_flight_) {
    ++stats_.drains;
    std::vector<area::IoCompletion> done;
    Status w = engine_.Wait(&done);
    if (st.ok()) st = w;
    if (st.ok()) st = CheckCompletions(done);
  }
  Settled();
  return st;
}

void RequestBatcher::Settled() {
  in_flight_pages_.clear();
  done_bios_ = 0;
  done_seq_ = queued_seq_;
  in_flight_ = false;
  copies_ = 0;  // the copy pages are free again
  heap_free_.insert(heap_free_.end(), heap_queued_.begin(), heap_queued_.end());
  heap_queued_.clear();
  if (next_ != nullptr && !InArena(next_)) heap_free_.push_back(next_);
  arena_used_ = 0;
  next_ = nullptr;
}

void RequestBatcher::MarkDone(const std::vector<area::IoCompletion>& done) {
  for (const auto& c : done)
    if (c.tag >= first_tag_ && c.tag - first_tag_ < in_flight_pages_.size())
      in_flight_pages_[c.tag - first_tag_].done = true;
  for (; done_bios_ < in_flight_pages_.size() && in_flight_pages_[done_bios_].done; ++done_bios_) {
    const InFlight& f = in_flight_pages_[done_bios_];
    done_seq_ = f.seq + f.pages;
    // Its copies are the oldest queued ones (bios close in queue order);
    // with an arena, some are arena pages, so all wait for the next Wait.
    if (!f.write || o_.model_only || o_.arena != nullptr) continue;
    for (uint32_t k = 0; k < f.pages && !heap_queued_.empty(); ++k) {
      heap_free_.push_back(heap_queued_.front());
      heap_queued_.pop_front();
    }
  }
}

Status RequestBatcher::WaitSome() {
  Status st = FlushForWait();
  if (!in_flight_) return st;
  ++stats_.partial_waits;
  std::vector<area::IoCompletion> done;
  Status w = engine_.WaitAny(&done);
  if (st.ok()) st = w;
  if (done.empty()) {
    // Nothing was in flight (a sync I/O's Wait took the completions). An
    // engine error with nothing reported leaves the bios in flight for the
    // Wait that follows, which must still drain them.
    if (w.ok()) Settled();
    return st;
  }
  if (st.ok()) st = CheckCompletions(done);
  MarkDone(done);
  if (done_bios_ == in_flight_pages_.size()) Settled();
  return st;
}

Status RequestBatcher::WaitClosed() {
  Status st = deferred_;
  deferred_ = Status::Ok();
  // Closed bios not yet submitted are the last ones of in_flight_pages_.
  const auto submitted = in_flight_pages_.end() - static_cast<ptrdiff_t>(closed_.size());
  const bool pending = std::any_of(in_flight_pages_.begin() + static_cast<ptrdiff_t>(done_bios_),
                                   submitted, [](const InFlight& f) { return !f.done; });
  if (!pending)
    return st.ok() ? Status(-EAGAIN, "WaitClosed: no submitted bio in flight (" +
                                         std::to_string(queued_seq_ - done_seq_) +
                                         " pages not done, none handed to the engine)")
                   : st;
  std::vector<area::IoCompletion> done;
  Status w = engine_.WaitAny(&done);
  if (st.ok()) st = w;
  if (done.empty()) {
    // As in WaitSome: a sync I/O's Wait took the completions, so every bio
    // handed over has completed.
    if (w.ok())
      for (auto f = in_flight_pages_.begin(); f != submitted; ++f) f->done = true;
  } else if (st.ok()) {
    st = CheckCompletions(done);
  }
  MarkDone(done);
  return st;
}

// A request that completed fewer pages than it carried, without an error
// code, is an I/O error too: its pages were not transferred.
Status RequestBatcher::CheckCompletions(const std::vector<area::IoCompletion>& done) const {
  for (const auto& c : done) {
    if (c.tag < first_tag_ || c.tag - first_tag_ >= in_flight_pages_.size()) continue;
    const InFlight& f = in_flight_pages_[c.tag - first_tag_];
    if (c.error != 0)
      return Status(c.error, "I/O error at dblock " + std::to_string(c.failed_page));
    if (c.pages_done < f.pages)
      return Status(-EIO, "short completion: the request at dblock " + std::to_string(f.dblock) +
                              " did " + std::to_string(c.pages_done) + " of " +
                              std::to_string(f.pages) + " pages");
  }
  return Status::Ok();
}

static Status SyncDone(const std::vector<area::IoCompletion>& done, uint64_t dblock) {
  for (const auto& c : done) {
    if (c.error != 0) return Status(c.error, "I/O error at dblock " + std::to_string(dblock));
    if (c.pages_done < 1)
      return Status(-EIO, "short completion: the sync request at dblock " + std::to_string(dblock) +
                              " did 0 of 1 pages");
  }
  return Status::Ok();
}

Status RequestBatcher::SyncWrite(uint64_t dblock, const std::byte* page) {
  AlignedPage copy;
  std::memcpy(copy.data(), page, kPageSize);
  area::IoRequest rq{true, dblock, {copy.data()}, 0};
  ++stats_.sync_ios;
  Status st = engine_.Submit(std::span<area::IoRequest>(&rq, 1));
  if (!st.ok()) return st;
  std::vector<area::IoCompletion> done;
  st = engine_.Wait(&done);
  return st.ok() ? SyncDone(done, dblock) : st;
}

Status RequestBatcher::SyncRead(uint64_t dblock, std::byte* dest) {
  AlignedPage tmp;
  area::IoRequest rq{false, dblock, {tmp.data()}, 0};
  ++stats_.sync_ios;
  Status st = engine_.Submit(std::span<area::IoRequest>(&rq, 1));
  if (!st.ok()) return st;
  std::vector<area::IoCompletion> done;
  st = engine_.Wait(&done);
  if (st.ok()) st = SyncDone(done, dblock);
  if (st.ok()) std::memcpy(dest, tmp.data(), kPageSize);
  return st;
}

}  // namespace swaplab::hibernate
