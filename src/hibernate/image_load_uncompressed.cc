// SPDX-License-Identifier: MIT
// load_image() (spec §8): the sync_read metadata pages, then the data
// pages a window at a time into a ring of frames, checked while the next
// ones are read.
#include <sys/mman.h>

#include <algorithm>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "image_load.h"

namespace swaplab::hibernate {
namespace {

// Pages mapped for one read and unmapped after it: the frame ring. From
// the heap, each read's 16 MiB would leave a hole that later small
// allocations split, and the scenario runner never trims the heap
// (scenario_batch.cc), so the next read's ring would grow it again.
class MappedPages {
 public:
  explicit MappedPages(uint64_t n) : bytes_(n * kPageSize) {
    void* m = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    pages_ = static_cast<RawPage*>(m);
    for (uint64_t i = 0; i < n; ++i) ::new (pages_ + i) RawPage;  // trivial: no code
  }
  ~MappedPages() { munmap(pages_, bytes_); }
  MappedPages(const MappedPages&) = delete;
  MappedPages& operator=(const MappedPages&) = delete;
  RawPage* get() const { return pages_; }

 private:
  size_t bytes_;
  RawPage* pages_;
};

std::string PageWhere(const std::vector<uint64_t>& entries, uint64_t p) {
  return "stream page " + S(p) + " (dblock " + S(entries[p]) + ")";
}

// load_image()'s sync_read pages (§3.5, §8 step 2): [1, end) read one at a
// time, a drain after each, and checked.
Status ReadSyncPages(RequestBatcher& b, const std::vector<uint64_t>& entries, StreamCheck& check,
                     uint64_t end) {
  AlignedPage scratch;
  for (uint64_t p = 1; p < end; ++p) {
    b.QueueRead(entries[p], scratch.data());
    Status st = b.Wait();
    if (!st.ok()) return st;
    st = check.Page(p, scratch.data(), [&] { return PageWhere(entries, p); });
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

// A model-only read: the same reads and drains of [first, end), into one
// page, unchecked.
Status ReadModelOnly(RequestBatcher& b, const std::vector<uint64_t>& entries, uint64_t first,
                     uint64_t end, uint64_t window) {
  AlignedPage scratch;
  for (uint64_t p = first; p < end;) {
    const uint64_t n = std::min<uint64_t>(window, end - p);
    for (uint64_t i = 0; i < n; ++i) b.QueueRead(entries[p + i], scratch.data());
    if (Status st = b.Wait(); !st.ok()) return st;
    p += n;
  }
  return Status::Ok();
}

// load_image()'s data pages (§8), read a window at a time into a ring of
// frames (see LoadUncompressed), with a worker checking the pages read
// while the next ones are read.
class WindowedLoad {
 public:
  WindowedLoad(RequestBatcher& b, const std::vector<uint64_t>& entries, StreamCheck& check,
               ReaderScratch::Impl& borrowed, uint64_t first, uint64_t end, uint64_t window,
               uint64_t ring)
      : b_(b),
        entries_(entries),
        check_(check),
        first_(first),
        end_(end),
        window_(window),
        ring_(ring),
        mem_(ring),
        frames_(mem_.get()),
        registered_(b.engine(), frames_, ring),
        checker_(borrowed.Checker()),
        chunk_(std::max<uint64_t>(ring / 8, 1)),
        seq0_(b.pages_queued()) {}

  // An early return first waits for the reads in flight (they land in the
  // frames) and for the checker.
  ~WindowedLoad() {
    checker_.Wait();
    try {
      (void)b_.Wait();
    } catch (const std::bad_alloc&) {  // never out of a destructor
    }
  }
  WindowedLoad(const WindowedLoad&) = delete;
  WindowedLoad& operator=(const WindowedLoad&) = delete;

  Status Run() {
    for (uint64_t p = first_; p < end_;) {
      const uint64_t n = std::min<uint64_t>(window_, end_ - p);
      win_start_ = p;
      if (Status st = ReadWindow(p, n); !st.ok()) return st;
      p += n;
      win_start_ = p;  // this window read without error: its check errors are final
    }
    return CheckTo(end_);
  }

 private:
  std::byte* Frame(uint64_t q) const { return frames_[(q - first_) % ring_].data(); }
  // Pages [first, …) read.
  uint64_t ReadEnd() const { return first_ + (b_.pages_done() - seq0_); }

  // The window [p, p + n): each page read once its frame is free, the
  // checker fed as pages come in; then its end.
  Status ReadWindow(uint64_t p, uint64_t n) {
    for (uint64_t q = p; q < p + n; ++q) {
      if (Status st = FreeFrame(q); !st.ok()) return st;
      b_.QueueRead(entries_[q], Frame(q));
      if (handed_ && !checker_.busy()) {
        if (Status st = Collect(); !st.ok()) return st;
        Hand(ReadEnd());
      }
    }
    if (Status st = b_.Wait(); read_err_.ok()) read_err_ = st;
    return WindowEnd();
  }

  // Frame (q − first) % ring held page q − ring: wait until it is read
  // and checked (only read once checking has stopped).
  Status FreeFrame(uint64_t q) {
    while (q - first_ >= ring_) {
      const uint64_t old = q - ring_, done = ReadEnd();
      if (old < done && (!checking_ || old < checked_end_)) break;
      if (old < done) {
        Hand(done);
        if (Status st = Collect(); !st.ok()) return st;
        continue;
      }
      Hand(done);  // the checker works while the disk does
      if (Status st = b_.WaitClosed(); !st.ok()) {
        if (read_err_.ok()) read_err_ = st;
        // No progress: the window stops here (an error: read_err_ is set).
        if (ReadEnd() == done) return WindowEnd();
      }
    }
    return Status::Ok();
  }

  // Hands the checker the read pages after the last hand-off (up to `upto`).
  void Hand(uint64_t upto) {
    if (handed_ || !checking_ || upto <= handed_end_) return;
    const uint64_t from = handed_end_, to = std::min(upto, from + chunk_);
    handed_end_ = to;
    handed_ = true;
    checker_.Go([this, from, to] {
      for (uint64_t q = from; q < to; ++q) {
        Status st = check_.Page(q, Frame(q), [this, q] { return PageWhere(entries_, q); });
        if (!st.ok()) {
          checked_ = std::move(st);
          bad_ = q;
          return;
        }
      }
    });
  }

  // Waits for the hand-off; an error is returned at once if its window was
  // read without error, else held for the window's end.
  Status Collect() {
    if (!handed_) return Status::Ok();
    checker_.Wait();
    handed_ = false;
    checked_end_ = handed_end_;
    if (checked_.ok()) return Status::Ok();
    Status c = std::exchange(checked_, Status::Ok());
    if (bad_ < win_start_) return c;
    held_ = std::move(c);
    checking_ = false;  // the rest of the window is read, not checked
    return Status::Ok();
  }

  // Every page before `end` (read) checked; the first check error.
  Status CheckTo(uint64_t end) {
    while (checking_ && checked_end_ < end) {
      Hand(end);
      if (Status st = Collect(); !st.ok()) return st;
    }
    return Status::Ok();
  }

  // A window's end: its reads' error, else the earlier windows' check
  // errors, else its own pages' (a read error that stops the reads early
  // ends the window there too).
  Status WindowEnd() {
    if (Status st = CheckTo(win_start_); !st.ok()) return st;
    if (!read_err_.ok()) return read_err_;
    return held_;
  }

  RequestBatcher& b_;
  const std::vector<uint64_t>& entries_;
  StreamCheck& check_;
  const uint64_t first_, end_, window_;  // pages [first, end) in windows of `window`
  const uint64_t ring_;                  // frames
  const MappedPages mem_;
  RawPage* const frames_;
  const RegisteredBuffer registered_;
  WorkerThread& checker_;
  const uint64_t chunk_;           // pages per hand-off to the checker
  const uint64_t seq0_;            // batch queue number of stream page `first`
  uint64_t win_start_ = first_;    // the window being read; the ones before read without error
  uint64_t handed_end_ = first_;   // pages [first, handed_end) handed to the checker
  uint64_t checked_end_ = first_;  // … of which [first, checked_end) are checked
  bool handed_ = false;            // a hand-off not yet collected
  bool checking_ = true;           // off once a page of the current window failed its check
  Status checked_;                 // the worker's verdict on its hand-off, and the page
  uint64_t bad_ = 0;
  Status held_;      // that check error, until the window's reads are known good
  Status read_err_;  // the first read error of the current window
};

}  // namespace

// load_image(): metadata pages are sync_read (a drain after each), data
// pages go straight into their frames, a window at a time (a Wait at each
// window's end). The frames are a ring much smaller than a window: a frame
// is read into again once its page has been read and checked, waiting for
// closed bios only (WaitClosed, so the bios are those of the windows), and
// a worker checks the pages read while the next ones are read (the kernel
// has its frames and does no per-page work here). Pipelined: the metadata
// pages are read with the data, in the first window.
//
// Errors come as they did when each window was checked while the next was
// read: a window's read error before its pages' check errors, and a check
// error of an earlier window before a later window's read error.
Status LoadUncompressed(RequestBatcher& b, const std::vector<uint64_t>& entries, StreamCheck& check,
                        const ReaderOptions& o, ReadReport& rep, ReaderScratch::Impl& borrowed) {
  const uint64_t first = o.pipelined ? 1 : rep.M + 1;  // the first page read in windows
  if (Status st = ReadSyncPages(b, entries, check, first); !st.ok()) return st;
  const uint64_t pages = rep.T - first;
  const uint64_t window = std::min<uint64_t>(o.window_pages == 0 ? pages : o.window_pages, pages);
  if (window == 0) return Status::Ok();
  if (o.batch.model_only) return ReadModelOnly(b, entries, first, rep.T, window);
  // A simulated device's modelled time depends on when it is waited for
  // (each wait drains what is queued): it gets frames for two windows, as
  // many as before the ring, so that no wait but the windows' comes.
  const bool modelled = b.engine().modelled();
  const uint64_t ring = std::min(modelled ? 2 * window : o.frame_pages, pages);
  WindowedLoad load(b, entries, check, borrowed, first, rep.T, window, ring);
  return load.Run();
}

}  // namespace swaplab::hibernate
