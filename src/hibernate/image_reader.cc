// SPDX-License-Identifier: MIT
// swsusp_check(), get_swap_reader(), load_image(), load_compressed_image()
// (spec §1.4, §4.8, §7.6, §8).
#include "swaplab/hibernate/image_reader.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "swaplab/hibernate/image_chain.h"

namespace swaplab::hibernate {
namespace {

std::string S(uint64_t v) { return std::to_string(v); }

// Every stream page passes through here in order, whatever path read it:
// the PFN list of the metadata pages (§3.4), the data-page count, the
// comparison with swaplab's synthetic snapshot, the kernel banner of real
// images, and the caller's own callback.
class StreamCheck {
 public:
  StreamCheck(const ReaderOptions& o, ReadReport& rep, const SyntheticSnapshot* snap)
      : o_(o), rep_(rep), snap_(snap), pfns_(rep.M, rep.N) {
    // x86-64 images name the physical address of restore_registers, in the
    // kernel's text; linux_banner lies in its read-only data a few MiB on
    // (3.3 MiB in Debian's 6.12.117). Only the data pages whose frames lie
    // within kBannerSpan of it are searched.
    if (rep.info.origin == ImageOrigin::kKernelX86_64) {
      const uint64_t pfn = rep.info.x86.jump_address_phys / kPageSize;
      pfns_.Watch(pfn > kBannerSpan ? pfn - kBannerSpan : 0, pfn + kBannerSpan);
      watch_ = true;
    }
  }

  // Stream page p (0 … T−1); where() names it, called only for a message.
  template <typename Where>
  Status Page(uint64_t p, const std::byte* page, Where where) {
    if (o_.progress && ((p + 1) % kProgressPages == 0 || p + 1 == rep_.T))
      o_.progress(p + 1, rep_.T);
    if (!o_.verify_pages) return o_.on_page ? o_.on_page(p, page) : Status::Ok();
    // swaplab's own images: the snapshot names the first page that differs.
    if (snap_ != nullptr) {
      snap_->StreamPage(p, want_.data());
      if (std::memcmp(page, want_.data(), kPageSize) != 0) {
        size_t at = 0;
        while (page[at] == want_.b[at]) ++at;
        return Status(-ENODATA, "image corrupted: " + where() +
                                    " differs from the snapshot at byte " + S(at));
      }
      ++rep_.pages_verified;
    }
    if (p >= 1 && p <= rep_.M) {
      Status st = pfns_.Page(p, page);
      if (!st.ok()) return Status(st.code(), "image corrupted: " + where() + ": " + st.message());
      if (p == rep_.M) {
        st = pfns_.Finish();
        if (!st.ok()) return Status(st.code(), "image corrupted: " + st.message());
      }
    } else if (p > rep_.M && rep_.kernel_banner.empty() && snap_ == nullptr && BannerCandidate(p)) {
      FindBanner(p, page);
    }
    if (o_.on_page) return o_.on_page(p, page);
    return Status::Ok();
  }

  Status Finish() {
    rep_.pfns = pfns_.pfns();
    rep_.zero_pages = pfns_.zero_pages();
    if (rep_.M == 0 && o_.verify_pages) return pfns_.Finish();
    return Status::Ok();
  }

 private:
  static constexpr uint64_t kBannerSpan = (64 << 20) / kPageSize;  // frames either side

  bool BannerCandidate(uint64_t p) const {
    if (!watch_) return true;
    const auto [first, end] = pfns_.watched_data();
    const uint64_t d = p - rep_.M - 1;  // data page index
    return d >= first && d < end;
  }

  // linux_banner ("Linux version <release> (<builder>) <version>\n") sits
  // in the kernel's read-only data, which every image saves. The compiler
  // gives a global char array of 32 bytes or more 32-byte alignment (x86-64
  // DATA_ALIGNMENT), and the 6.12 images of the vm label bear that out (every
  // copy at a multiple of 32), so only those offsets are compared: 128 loads
  // a page, where a byte-wise search cost more than the read itself.
  void FindBanner(uint64_t p, const std::byte* page) {
    static constexpr std::string_view kBanner = "Linux version ";
    uint64_t head;
    std::memcpy(&head, kBanner.data(), 8);
    const char* c = reinterpret_cast<const char*>(page);
    for (size_t at = 0; at + 64 <= kPageSize; at += 32) {
      if (LoadU64(page + at) != head || std::memcmp(c + at, kBanner.data(), kBanner.size()) != 0)
        continue;
      const char* b = c + at;
      const char* e = b;
      while (e < c + kPageSize && e - b < 256 && *e != '\0' && *e != '\n') ++e;
      // Only a banner with a release after it ("Linux version 6.12.…").
      if (b[kBanner.size()] < '0' || b[kBanner.size()] > '9') continue;
      rep_.kernel_banner.assign(b, e);
      rep_.banner_page = p;
      return;
    }
  }

  const ReaderOptions& o_;
  ReadReport& rep_;
  const SyntheticSnapshot* snap_;
  PfnListCheck pfns_;
  bool watch_ = false;  // the banner search is limited to the watched frames
  AlignedPage want_;
};

// Where a compressed unit sits, for error messages.
struct UnitPlace {
  uint64_t index = 0;        // unit number in the stream
  uint64_t first_entry = 0;  // its first stream page on disk
  uint64_t pages = 0;        // stream pages on disk it takes
  uint64_t first_page = 0;   // its first uncompressed stream page
};

std::string Where(const UnitPlace& u, const std::vector<uint64_t>& entries) {
  const uint64_t last = u.first_entry + (u.pages ? u.pages - 1 : 0);
  return "compressed unit " + S(u.index) + " (stream pages " + S(u.first_entry) + "-" + S(last) +
         " on disk, dblocks " + S(entries[u.first_entry]) + ".." +
         S(entries[std::min<uint64_t>(last, entries.size() - 1)]) + ")";
}

// Read buffers registered with the engine (io_uring fixed buffers: the
// pages are pinned once, not per request) for as long as it lives.
class RegisteredBuffer {
 public:
  RegisteredBuffer(area::IoEngine& e, RawPage* pages, uint64_t n)
      : e_(e), on_(e.RegisterBuffer(pages[0].data(), n * kPageSize)) {}
  ~RegisteredBuffer() {
    if (on_) e_.UnregisterBuffer();
  }
  RegisteredBuffer(const RegisteredBuffer&) = delete;
  RegisteredBuffer& operator=(const RegisteredBuffer&) = delete;

 private:
  area::IoEngine& e_;
  bool on_;
};

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

struct DecUnit {
  std::unique_ptr<RawPage[]> in{new RawPage[kCmpPages]};  // a unit that wraps around the ring
  std::unique_ptr<RawPage[]> out{new RawPage[kUncPages]};
  const std::byte* src = nullptr;  // the unit: in the ring, or gathered into `in`
  size_t in_len = 0, out_len = 0;
  Status st;
  UnitPlace place;
};

}  // namespace

// Hidden in a shared library: only the public header's API is exported.
struct __attribute__((visibility("hidden"))) ReaderScratch::Impl {
  explicit Impl(unsigned nr) : nr_threads(nr != 0 ? nr : DefaultCompressionThreads()) {}
  // Decompressors and the CRC thread.
  ImageThreads& Threads() {
    if (!threads) threads.emplace(nr_threads);
    return *threads;
  }
  // Exactly n unit buffers.
  std::vector<DecUnit>& Units(size_t n) {
    if (units.size() != n) {
      units.clear();
      units.resize(n);
    }
    return units;
  }
  // The readahead ring of exactly `pages` pages.
  RawPage* Ring(uint64_t pages) {
    if (ring_pages != pages) {
      ring.reset();
      ring.reset(new RawPage[pages]);
      ring_entry.assign(pages, 0);
      ring_pages = pages;
    }
    return ring.get();
  }
  WorkerThread& Checker() { return checker ? *checker : checker.emplace(); }

  const unsigned nr_threads;
  std::optional<ImageThreads> threads;
  std::vector<DecUnit> units;
  std::unique_ptr<RawPage[]> ring;
  std::vector<uint64_t> ring_entry;
  uint64_t ring_pages = 0;
  std::optional<WorkerThread> checker;  // the uncompressed path's
  // The noise table of the last snapshot rebuilt from a swaplab tag: the
  // next one of the same seed takes it instead of making its own.
  std::shared_ptr<SyntheticSnapshot::Noise> noise;
};

ReaderScratch::ReaderScratch(unsigned threads) : impl_(std::make_unique<Impl>(threads)) {}
ReaderScratch::~ReaderScratch() = default;

namespace {

// Compressed units a worker takes per round when pipelined (the kernel's
// rounds, and so its readahead bios, have one).
constexpr unsigned kUnitsPerWorker = 32;

// load_compressed_image() (§7.6, with RFC patch 8's submit of the current
// bio after each readahead pass).
Status LoadCompressed(RequestBatcher& b, const std::vector<uint64_t>& entries, StreamCheck& check,
                      const ReaderOptions& o, ReadReport& rep, ReaderScratch::Impl& scratch) {
  if (o.read_ring_pages != 0 &&
      (o.read_ring_pages < kCmpPages || o.read_ring_pages > kCmpMaxRdPages))
    return Status(-EINVAL, "read ring of " + S(o.read_ring_pages) + " pages: expected " +
                               S(kCmpPages) + "-" + S(kCmpMaxRdPages));
  const uint64_t ring_size = o.read_ring_pages != 0 ? o.read_ring_pages : kCmpMaxRdPages;
  rep.ring_pages = ring_size;
  RawPage* const ring = scratch.Ring(ring_size);
  std::vector<uint64_t>& ring_entry = scratch.ring_entry;
  const RegisteredBuffer registered(b.engine(), ring, ring_size);
  ImageThreads& th = scratch.Threads();
  const unsigned nr = th.nr();
  const unsigned K = o.pipelined ? kUnitsPerWorker : 1;
  std::vector<DecUnit>& units = scratch.Units(size_t{nr} * K);
  std::vector<DecUnit*> round;           // this round's units, in stream order
  std::vector<unsigned> per_worker(nr);  // worker t has units[t·K, t·K + per_worker[t])
  uint32_t crc = 0;
  // Declared after everything the reads and the jobs write into: an early
  // return first waits for the reads in flight (they land in the ring) and
  // for the workers (still decompressing, or folding the CRC).
  struct IdleOnExit {
    RequestBatcher& b;
    ImageThreads& th;
    ~IdleOnExit() {
      try {
        (void)b.Wait();
      } catch (const std::bad_alloc&) {  // never out of a destructor
      }
      for (auto& w : th.workers) w->Wait();
      th.crc.Wait();
    }
  } idle_on_exit{b, th};
  const Compressor c = rep.compress;
  uint64_t want = ring_size, have = 0, asked = 0, issue = 0, consume = 0, next_entry = 1, page = 1;
  int eof = 0;
  // Reads done join `have`: the kernel's way, all at once (hib_wait_io);
  // pipelined, in queue order as they complete, waiting only until `need`
  // pages are in, so that the disk always has the rest of the ring to read.
  auto drain = [&]() -> Status {
    Status st = b.Wait();
    have += asked;
    asked = 0;
    if (eof) eof = 2;
    return st;
  };
  const uint64_t base = b.pages_queued();
  uint64_t counted = 0;  // pages of the ring read so far, in order (pipelined)
  auto refill = [&](uint64_t need) -> Status {
    for (;;) {
      const uint64_t in = b.pages_done() - base - counted;
      have += in;
      asked -= in;
      counted += in;
      if (eof && asked == 0) eof = 2;
      if (have >= need || asked == 0) return Status::Ok();
      if (Status st = b.WaitSome(); !st.ok()) return st;
    }
  };
  for (;;) {
    uint64_t issued = 0;  // 1. readahead
    for (; eof == 0 && issued < want; ++issued) {
      if (next_entry >= entries.size()) {  // the map has no more entries
        eof = 1;
        break;
      }
      b.QueueRead(entries[next_entry], ring[issue].data());
      ring_entry[issue] = next_entry++;
      issue = (issue + 1) % ring_size;
    }
    asked += issued;
    want -= issued;
    if (eof == 1 && asked == 0) eof = 2;  // every read issued has completed
    Status st = b.Flush();                // 2. patch 8
    if (!st.ok()) return st;
    if (have == 0) {  // 3.
      if (asked == 0) break;
      st = o.pipelined ? refill(1) : drain();
      if (!st.ok()) return st;
    }
    th.crc.Wait();  // 4.
    // 5. dispatch, in stream order: up to K units to each worker (the
    // kernel hands one unit to each thread a round; more units a hand-off
    // keep the threads from waking each other every 128 KiB).
    round.clear();
    std::fill(per_worker.begin(), per_worker.end(), 0u);
    bool short_of_pages = false;
    for (unsigned t = 0; t < nr && !short_of_pages && have > 0; ++t) {
      for (unsigned k = 0; k < K && have > 0; ++k) {
        DecUnit& u = units[t * K + k];
        u.place = UnitPlace{rep.units + round.size(), ring_entry[consume], 1, 0};
        const uint64_t L = LoadU64(ring[consume].data());
        if (L == 0 || L > WorstCompress(kUncSize))
          return Status(-EINVAL, "image corrupted: " + Where(u.place, entries) +
                                     ": length header " + S(L) + " outside (0, " +
                                     S(WorstCompress(kUncSize)) + "]");
        const uint64_t need = (L + kCmpHeader + kPageSize - 1) / kPageSize;
        u.place.pages = need;
        if (need > have && o.pipelined) {
          st = refill(need);
          if (!st.ok()) return st;
        }
        if (need > have) {
          if (eof == 2)
            return Status(-ENODATA, "image truncated: " + Where(u.place, entries) + " needs " +
                                        S(need) + " pages, the stream has " + S(have) + " left");
          short_of_pages = true;
          break;
        }
        // Decompressed where it lies in the ring unless it wraps around the
        // end: its slots are read into again only after step 7.
        if (consume + need <= ring_size) {
          u.src = ring[consume].data();
          consume = (consume + need) % ring_size;
        } else {
          for (uint64_t i = 0; i < need; ++i) {
            std::memcpy(u.in[i].data(), ring[consume].data(), kPageSize);
            consume = (consume + 1) % ring_size;
          }
          u.src = u.in[0].data();
        }
        have -= need;
        want += need;
        u.in_len = L;
        round.push_back(&u);
        ++per_worker[t];
      }
      if (per_worker[t] == 0) break;
      th.workers[t]->Go([first = &units[t * K], n = per_worker[t], c] {
        for (DecUnit* u = first; u != first + n; ++u) {
          auto r =
              DecompressBlock(c, {u->src + kCmpHeader, u->in_len}, {u->out[0].data(), kUncSize});
          u->st = r.status();
          u->out_len = r.ok() ? *r : 0;
        }
      });
    }
    if (!o.pipelined && have < kCmpPages && asked > 0) {  // 6. overlap the drain with decompression
      st = drain();
      if (!st.ok()) return st;
    }
    bool done = false;  // 7. collect, in stream order
    size_t folded = round.size();
    for (size_t i = 0, t = 0, left = 0; i < round.size() && st.ok(); ++i, --left) {
      if (left == 0) {  // worker t's units come next (workers 0, 1, … have units, in order)
        th.workers[t]->Wait();
        left = per_worker[t++];
      }
      DecUnit& u = *round[i];
      u.place.first_page = page;
      if (!u.st.ok()) {
        st = Status(-EINVAL, "image corrupted: " + Where(u.place, entries) + ": " + u.st.message());
        break;
      }
      if (u.out_len == 0 || u.out_len > kUncSize || u.out_len % kPageSize != 0) {
        st = Status(-EINVAL, "image corrupted: " + Where(u.place, entries) + " decompresses to " +
                                 S(u.out_len) + " bytes, not 1-32 whole pages");
        break;
      }
      ++rep.units;
      for (uint64_t k = 0; k < u.out_len / kPageSize; ++k, ++page) {
        if (page >= rep.T) {
          st = Status(-EINVAL, "image corrupted: " + Where(u.place, entries) +
                                   " holds more pages than the image's " + S(rep.T));
          break;
        }
        st = check.Page(page, u.out[k].data(), [&] {
          return Where(u.place, entries) + ", stream page " + S(page) + " (page " + S(k) +
                 " of the unit)";
        });
        if (!st.ok()) break;
      }
      if (st.ok() && page == rep.T) {  // snapshot complete: fold units 0 … i
        folded = i + 1;
        done = true;
        break;
      }
    }
    for (unsigned t = 0; t < nr; ++t) th.workers[t]->Wait();
    if (!st.ok()) return st;
    th.crc.Go([&round, &crc, folded] {  // 8. (or 7.4 at the end)
      for (size_t i = 0; i < folded; ++i)
        crc = Crc32Le(crc, round[i]->out[0].data(), round[i]->out_len);
    });
    if (done) break;
  }
  th.crc.Wait();
  rep.crc32 = crc;
  if (page != rep.T)
    return Status(-ENODATA, "image truncated: the compressed stream gave " + S(page) + " of " +
                                S(rep.T) + " stream pages");
  if ((rep.flags & kSfCrc32Mode) && crc != rep.header_crc32)
    return Status(-ENODATA, "image corrupted: CRC32 of the decompressed stream is " + S(crc) +
                                ", the header says " + S(rep.header_crc32) + " (" + S(rep.units) +
                                " units, stream pages 1-" + S(rep.T - 1) + ")");
  rep.crc_checked = (rep.flags & kSfCrc32Mode) != 0;
  return Status::Ok();
}

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
  auto where = [&](uint64_t p) {
    return "stream page " + S(p) + " (dblock " + S(entries[p]) + ")";
  };
  const uint64_t first = o.pipelined ? 1 : rep.M + 1;  // the first page read in windows
  AlignedPage scratch;
  for (uint64_t p = 1; p < first; ++p) {
    b.QueueRead(entries[p], scratch.data());
    Status st = b.Wait();
    if (!st.ok()) return st;
    st = check.Page(p, scratch.data(), [&] { return where(p); });
    if (!st.ok()) return st;
  }
  const uint64_t pages = rep.T - first;
  const uint64_t window = std::min<uint64_t>(o.window_pages == 0 ? pages : o.window_pages, pages);
  if (window == 0) return Status::Ok();
  if (o.batch.model_only) {  // the same reads and drains, into one page, unchecked
    for (uint64_t p = first; p < rep.T;) {
      const uint64_t n = std::min<uint64_t>(window, rep.T - p);
      for (uint64_t i = 0; i < n; ++i) b.QueueRead(entries[p + i], scratch.data());
      if (Status st = b.Wait(); !st.ok()) return st;
      p += n;
    }
    return Status::Ok();
  }
  // A simulated device's modelled time depends on when it is waited for
  // (each wait drains what is queued): it gets frames for two windows, as
  // many as before the ring, so that no wait but the windows' comes.
  const bool modelled = b.engine().modelled();
  const uint64_t ring = std::min(modelled ? 2 * window : o.frame_pages, pages);
  const MappedPages mem(ring);
  RawPage* const frames = mem.get();
  const RegisteredBuffer registered(b.engine(), frames, ring);
  WorkerThread& checker = borrowed.Checker();
  const uint64_t chunk = std::max<uint64_t>(ring / 8, 1);  // pages per hand-off to the checker
  const uint64_t seq0 = b.pages_queued();  // batch queue number of stream page `first`
  auto read_end = [&] { return first + (b.pages_done() - seq0); };  // pages [first, …) read
  uint64_t win_start = first;    // the window being read; the ones before read without error
  uint64_t handed_end = first;   // pages [first, handed_end) handed to the checker
  uint64_t checked_end = first;  // … of which [first, checked_end) are checked
  bool handed = false;           // a hand-off not yet collected
  bool checking = true;          // off once a page of the current window failed its check
  Status checked;                // the worker's verdict on its hand-off, and the page
  uint64_t bad = 0;
  Status held;      // that check error, until the window's reads are known good
  Status read_err;  // the first read error of the current window
  // Declared after everything the reads and the checker write into: an
  // early return first waits for the reads in flight (they land in the
  // frames) and for the checker.
  struct IdleOnExit {
    RequestBatcher& b;
    WorkerThread& checker;
    ~IdleOnExit() {
      checker.Wait();
      try {
        (void)b.Wait();
      } catch (const std::bad_alloc&) {  // never out of a destructor
      }
    }
  } idle_on_exit{b, checker};
  // Hands the checker the read pages after the last hand-off (up to `upto`).
  auto hand = [&](uint64_t upto) {
    if (handed || !checking || upto <= handed_end) return;
    const uint64_t from = handed_end, to = std::min(upto, from + chunk);
    handed_end = to;
    handed = true;
    checker.Go([&check, &checked, &bad, &where, frames, ring, first, from, to] {
      for (uint64_t q = from; q < to; ++q) {
        Status st =
            check.Page(q, frames[(q - first) % ring].data(), [&where, q] { return where(q); });
        if (!st.ok()) {
          checked = std::move(st);
          bad = q;
          return;
        }
      }
    });
  };
  // Waits for the hand-off; an error is returned at once if its window was
  // read without error, else held for the window's end.
  auto collect = [&]() -> Status {
    if (!handed) return Status::Ok();
    checker.Wait();
    handed = false;
    checked_end = handed_end;
    if (checked.ok()) return Status::Ok();
    Status c = std::exchange(checked, Status::Ok());
    if (bad < win_start) return c;
    held = std::move(c);
    checking = false;  // the rest of the window is read, not checked
    return Status::Ok();
  };
  // Every page before `end` (read) checked; the first check error.
  auto check_to = [&](uint64_t end) -> Status {
    while (checking && checked_end < end) {
      hand(end);
      if (Status st = collect(); !st.ok()) return st;
    }
    return Status::Ok();
  };
  // A window's end: its reads' error, else the earlier windows' check
  // errors, else its own pages' (a read error that stops the reads early
  // ends the window there too).
  auto window_end = [&]() -> Status {
    if (Status st = check_to(win_start); !st.ok()) return st;
    if (!read_err.ok()) return read_err;
    return held;
  };
  for (uint64_t p = first; p < rep.T;) {
    const uint64_t n = std::min<uint64_t>(window, rep.T - p);
    win_start = p;
    for (uint64_t q = p; q < p + n; ++q) {
      // Frame (q − first) % ring held page q − ring: wait until it is read
      // and checked (only read once checking has stopped).
      while (q - first >= ring) {
        const uint64_t old = q - ring, done = read_end();
        if (old < done && (!checking || old < checked_end)) break;
        if (old < done) {
          hand(done);
          if (Status st = collect(); !st.ok()) return st;
          continue;
        }
        hand(done);  // the checker works while the disk does
        if (Status st = b.WaitClosed(); !st.ok()) {
          if (read_err.ok()) read_err = st;
          if (read_end() == done) return window_end();  // no progress: the window stops here
        }
      }
      b.QueueRead(entries[q], frames[(q - first) % ring].data());
      if (handed && !checker.busy()) {
        if (Status st = collect(); !st.ok()) return st;
        hand(read_end());
      }
    }
    if (Status st = b.Wait(); read_err.ok()) read_err = st;
    if (Status st = window_end(); !st.ok()) return st;
    p += n;
    win_start = p;  // this window read without error: its check errors are final
  }
  return check_to(rep.T);
}

// swsusp_check() step 3: orig_sig back over S1SUSPEND, written at once.
Status RestoreSignature(RequestBatcher& b, uint64_t resume_block, AlignedPage& hdr) {
  std::memcpy(hdr.data() + kHdrSig, hdr.data() + kHdrOrigSig, 10);
  return b.SyncWrite(resume_block, hdr.data());
}

}  // namespace

Result<ReadReport> ReadImage(area::IoEngine& engine, uint64_t resume_block,
                             const ReaderOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  if (o.batch.model_only && (o.verify_pages || o.on_page))
    return Status(-EINVAL, "image read: a model-only read keeps no page to verify or hand on");
  RequestBatcher b(engine, o.batch);
  if (o.frame_pages <= b.max_unsubmitted())
    return Status(-EINVAL, "image read: a frame ring of " + S(o.frame_pages) +
                               " pages: needs more than " + S(b.max_unsubmitted()) +
                               " (the largest bio and the plug's flush)");
  ReadReport rep;
  AlignedPage hdr;
  Status st = b.SyncRead(resume_block, hdr.data());
  if (!st.ok()) return st;
  auto h = CheckSignature(hdr.b);
  if (!h.ok()) return h.status();
  if (o.consume) {
    st = RestoreSignature(b, resume_block, hdr);
    if (!st.ok()) return st;
    rep.consumed = true;
  }
  if (o.hw_sig && (h->flags & kSfHwSig) && h->hw_sig != *o.hw_sig)
    return Status(-EINVAL, "swsusp_check: hardware signature " + S(h->hw_sig) + " differs from " +
                               S(*o.hw_sig));
  st = CheckHeaderFields(*h, resume_block, o.device_pages);
  if (!st.ok()) return st;
  rep.flags = h->flags;
  rep.hw_sig = h->hw_sig;
  rep.header_crc32 = h->crc32;
  rep.compress = CompressorFromFlags(h->flags);
  auto chain = WalkMapChain(b, *h, resume_block, o.device_pages, o.pipelined ? kChainLookahead : 0,
                            o.expect != nullptr ? o.expect->image_pages() : 0);
  if (!chain.ok()) return chain.status();
  const std::vector<uint64_t>& entries = chain->entries;
  rep.map_pages = chain->map_dblocks.size();
  rep.stream_pages = entries.size();
  rep.Q = FullMapPages(rep.stream_pages);

  // swsusp_info, sync: its counts bound everything after it.
  AlignedPage info;
  st = b.SyncRead(entries[0], info.data());
  if (!st.ok()) return st;
  rep.info = DecodeSwsuspInfo(info.data());
  rep.T = rep.info.pages;
  rep.N = rep.info.image_pages;
  rep.M = rep.info.meta_pages();
  st = CheckInfoAgainstChain(rep.info, rep.compress, entries.size());
  if (!st.ok()) return st;
  std::optional<SyntheticSnapshot> own;
  const SyntheticSnapshot* snap = o.expect;  // the caller knows the image is its own
  if (snap != nullptr || rep.info.origin == ImageOrigin::kSwaplab) {
    if (snap == nullptr) {
      const uint64_t bound =
          (o.device_pages != 0 ? o.device_pages : kUncPages * entries.size()) * kPageSize;
      auto s = SyntheticSnapshot::FromInfoPage(info.data(), bound);
      if (!s.ok()) return s.status();
      own.emplace(std::move(s).value());
      if (o.scratch != nullptr) {
        own->ShareNoise(o.scratch->impl().noise);
        o.scratch->impl().noise = own->noise();
      }
      snap = &*own;
    }
    if (snap->image_pages() != rep.T || snap->nr_copy_pages() != rep.N)
      return Status(-ENODATA, "swsusp_info: counts do not match the snapshot");
  }
  rep.chain_seconds = since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  StreamCheck check(o, rep, snap);
  st = check.Page(0, info.data(),
                  [&] { return "stream page 0 (swsusp_info, dblock " + S(entries[0]) + ")"; });
  if (!st.ok()) return st;
  std::optional<ReaderScratch> own_scratch;
  ReaderScratch& scratch = o.scratch != nullptr ? *o.scratch : own_scratch.emplace(o.threads);
  st = rep.compress != Compressor::kNone
           ? LoadCompressed(b, entries, check, o, rep, scratch.impl())
           : LoadUncompressed(b, entries, check, o, rep, scratch.impl());
  if (!st.ok()) return st;
  st = check.Finish();
  if (!st.ok()) return st;
  rep.stream_seconds = since(t1);
  rep.batch = b.stats();
  return rep;
}

Status UnmarkImage(area::IoEngine& engine, uint64_t resume_block) {
  RequestBatcher b(engine, {});
  AlignedPage hdr;
  Status st = b.SyncRead(resume_block, hdr.data());
  if (!st.ok()) return st;
  if (!HasSignature(hdr.b, kSuspendSig))
    return Status(-ENODEV, "swsusp_unmark: page 0 has no S1SUSPEND signature");
  std::memcpy(hdr.data() + kHdrSig, hdr.data() + kHdrOrigSig, 10);
  return b.SyncWrite(resume_block, hdr.data());
}

}  // namespace swaplab::hibernate
