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

// The readahead ring of load_compressed_image() (§7.6, setup and steps 1,
// 3, 5 and 6): stream pages read ahead into the ring and consumed in stream
// order, a unit at a time. The counters are the kernel's:
//   want + asked + have == size (free slots, reads in flight, pages read
//   and not yet consumed); eof: 0, then 1 once the map has no more entries,
//   then 2 once every read issued has completed.
class ReadaheadRing {
 public:
  ReadaheadRing(RequestBatcher& b, const std::vector<uint64_t>& entries,
                ReaderScratch::Impl& scratch, uint64_t size)
      : b_(b),
        entries_(entries),
        size_(size),
        ring_(scratch.Ring(size)),
        ring_entry_(scratch.ring_entry),
        registered_(b.engine(), ring_, size),
        want_(size),
        base_(b.pages_queued()) {}

  uint64_t have() const { return have_; }
  uint64_t asked() const { return asked_; }
  bool all_read() const { return eof_ == 2; }
  // The unit at the consume index: its first stream page and its length header.
  uint64_t consume_entry() const { return ring_entry_[consume_]; }
  uint64_t length_header() const { return LoadU64(ring_[consume_].data()); }

  // 1. Issue readahead: up to `want` reads into the ring, stopping at the
  // map's end.
  void Readahead() {
    uint64_t issued = 0;
    for (; eof_ == 0 && issued < want_; ++issued) {
      if (next_entry_ >= entries_.size()) {  // the map has no more entries
        eof_ = 1;
        break;
      }
      b_.QueueRead(entries_[next_entry_], ring_[issue_].data());
      ring_entry_[issue_] = next_entry_++;
      issue_ = (issue_ + 1) % size_;
    }
    asked_ += issued;
    want_ -= issued;
    if (eof_ == 1 && asked_ == 0) eof_ = 2;  // every read issued has completed
  }

  // Reads done join `have`, the kernel's way (3. and 6.): all at once
  // (hib_wait_io).
  Status Drain() {
    Status st = b_.Wait();
    have_ += asked_;
    asked_ = 0;
    if (eof_) eof_ = 2;
    return st;
  }

  // Pipelined: in queue order as they complete, waiting only until `need`
  // pages are in, so that the disk always has the rest of the ring to read.
  Status Refill(uint64_t need) {
    for (;;) {
      const uint64_t in = b_.pages_done() - base_ - counted_;
      have_ += in;
      asked_ -= in;
      counted_ += in;
      if (eof_ && asked_ == 0) eof_ = 2;
      if (have_ >= need || asked_ == 0) return Status::Ok();
      if (Status st = b_.WaitSome(); !st.ok()) return st;
    }
  }

  // 5.5: the unit's `need` pages taken from the ring. Decompressed where it
  // lies in the ring unless it wraps around the end: its slots are read
  // into again only after step 7.
  void Take(DecUnit& u, uint64_t need) {
    if (consume_ + need <= size_) {
      u.src = ring_[consume_].data();
      consume_ = (consume_ + need) % size_;
    } else {
      for (uint64_t i = 0; i < need; ++i) {
        std::memcpy(u.in[i].data(), ring_[consume_].data(), kPageSize);
        consume_ = (consume_ + 1) % size_;
      }
      u.src = u.in[0].data();
    }
    have_ -= need;
    want_ += need;
  }

 private:
  RequestBatcher& b_;
  const std::vector<uint64_t>& entries_;
  const uint64_t size_;
  RawPage* const ring_;
  std::vector<uint64_t>& ring_entry_;  // the stream page each ring slot holds
  const RegisteredBuffer registered_;
  uint64_t want_, have_ = 0, asked_ = 0, issue_ = 0, consume_ = 0, next_entry_ = 1;
  int eof_ = 0;
  const uint64_t base_;   // batch queue number of stream page 1
  uint64_t counted_ = 0;  // pages of the ring read so far, in order (pipelined)
};

// load_compressed_image() (§7.6, with RFC patch 8's submit of the current
// bio after each readahead pass): rounds of readahead, dispatch to the
// decompressors, collection in stream order and the CRC.
class CompressedLoad {
 public:
  CompressedLoad(RequestBatcher& b, const std::vector<uint64_t>& entries, StreamCheck& check,
                 const ReaderOptions& o, ReadReport& rep, ReaderScratch::Impl& scratch,
                 uint64_t ring_size)
      : b_(b),
        entries_(entries),
        check_(check),
        o_(o),
        rep_(rep),
        ring_(b, entries, scratch, ring_size),
        th_(scratch.Threads()),
        nr_(th_.nr()),
        K_(o.pipelined ? kUnitsPerWorker : 1),
        units_(scratch.Units(size_t{nr_} * K_)),
        per_worker_(nr_) {}

  // An early return first waits for the reads in flight (they land in the
  // ring) and for the workers (still decompressing, or folding the CRC).
  ~CompressedLoad() {
    try {
      (void)b_.Wait();
    } catch (const std::bad_alloc&) {  // never out of a destructor
    }
    for (auto& w : th_.workers) w->Wait();
    th_.crc.Wait();
  }
  CompressedLoad(const CompressedLoad&) = delete;
  CompressedLoad& operator=(const CompressedLoad&) = delete;

  Status Run() {
    for (;;) {
      ring_.Readahead();                                // 1.
      if (Status st = b_.Flush(); !st.ok()) return st;  // 2. patch 8
      if (ring_.have() == 0) {                          // 3.
        if (ring_.asked() == 0) break;
        if (Status st = o_.pipelined ? ring_.Refill(1) : ring_.Drain(); !st.ok()) return st;
      }
      th_.crc.Wait();  // 4.
      if (Status st = Dispatch(); !st.ok()) return st;
      // 6. overlap the drain with decompression
      if (!o_.pipelined && ring_.have() < kCmpPages && ring_.asked() > 0)
        if (Status st = ring_.Drain(); !st.ok()) return st;
      size_t folded = round_.size();
      bool done = false;
      Status st = Collect(&folded, &done);
      for (unsigned t = 0; t < nr_; ++t) th_.workers[t]->Wait();
      if (!st.ok()) return st;
      FoldCrc(folded);
      if (done) break;
    }
    return Finish();
  }

 private:
  // 5. dispatch, in stream order: up to K units to each worker (the kernel
  // hands one unit to each thread a round; more units a hand-off keep the
  // threads from waking each other every 128 KiB).
  Status Dispatch() {
    round_.clear();
    std::fill(per_worker_.begin(), per_worker_.end(), 0u);
    bool short_of_pages = false;
    for (unsigned t = 0; t < nr_ && !short_of_pages && ring_.have() > 0; ++t) {
      for (unsigned k = 0; k < K_ && ring_.have() > 0; ++k) {
        DecUnit& u = units_[t * K_ + k];
        if (Status st = TakeUnit(u, &short_of_pages); !st.ok()) return st;
        if (short_of_pages) break;
        round_.push_back(&u);
        ++per_worker_[t];
      }
      if (per_worker_[t] == 0) break;
      StartWorker(t);
    }
    return Status::Ok();
  }

  // 5.1–5.5: the unit at the consume index, its length header checked and
  // its pages taken from the ring; *short_of_pages when they are not all in.
  Status TakeUnit(DecUnit& u, bool* short_of_pages) {
    u.place = UnitPlace{rep_.units + round_.size(), ring_.consume_entry(), 1, 0};
    const uint64_t L = ring_.length_header();
    if (L == 0 || L > WorstCompress(kUncSize))
      return Status(-EINVAL, "image corrupted: " + Where(u.place, entries_) + ": length header " +
                                 S(L) + " outside (0, " + S(WorstCompress(kUncSize)) + "]");
    const uint64_t need = (L + kCmpHeader + kPageSize - 1) / kPageSize;
    u.place.pages = need;
    if (need > ring_.have() && o_.pipelined)
      if (Status st = ring_.Refill(need); !st.ok()) return st;
    if (need > ring_.have()) {
      if (ring_.all_read())
        return Status(-ENODATA, "image truncated: " + Where(u.place, entries_) + " needs " +
                                    S(need) + " pages, the stream has " + S(ring_.have()) +
                                    " left");
      *short_of_pages = true;
      return Status::Ok();
    }
    ring_.Take(u, need);
    u.in_len = L;
    return Status::Ok();
  }

  // 5.6: worker t decompresses its units of the round.
  void StartWorker(unsigned t) {
    th_.workers[t]->Go([first = &units_[t * K_], n = per_worker_[t], c = rep_.compress] {
      for (DecUnit* u = first; u != first + n; ++u) {
        auto r = DecompressBlock(c, {u->src + kCmpHeader, u->in_len}, {u->out[0].data(), kUncSize});
        u->st = r.status();
        u->out_len = r.ok() ? *r : 0;
      }
    });
  }

  // 7. collect, in stream order; *done once the snapshot is complete, with
  // only units 0 … *folded − 1 to fold (7.4).
  Status Collect(size_t* folded, bool* done) {
    for (size_t i = 0, t = 0, left = 0; i < round_.size(); ++i, --left) {
      if (left == 0) {  // worker t's units come next (workers 0, 1, … have units, in order)
        th_.workers[t]->Wait();
        left = per_worker_[t++];
      }
      DecUnit& u = *round_[i];
      u.place.first_page = page_;
      if (Status st = CheckUnit(u); !st.ok()) return st;
      if (page_ == rep_.T) {  // snapshot complete: fold units 0 … i
        *folded = i + 1;
        *done = true;
        break;
      }
    }
    return Status::Ok();
  }

  // 7.1–7.3: the decompressor's verdict, the output length, and each page
  // of the output through the stream check.
  Status CheckUnit(const DecUnit& u) {
    if (!u.st.ok())
      return Status(-EINVAL,
                    "image corrupted: " + Where(u.place, entries_) + ": " + u.st.message());
    if (u.out_len == 0 || u.out_len > kUncSize || u.out_len % kPageSize != 0)
      return Status(-EINVAL, "image corrupted: " + Where(u.place, entries_) + " decompresses to " +
                                 S(u.out_len) + " bytes, not 1-32 whole pages");
    ++rep_.units;
    for (uint64_t k = 0; k < u.out_len / kPageSize; ++k, ++page_) {
      if (page_ >= rep_.T)
        return Status(-EINVAL, "image corrupted: " + Where(u.place, entries_) +
                                   " holds more pages than the image's " + S(rep_.T));
      Status st = check_.Page(page_, u.out[k].data(), [&] {
        return Where(u.place, entries_) + ", stream page " + S(page_) + " (page " + S(k) +
               " of the unit)";
      });
      if (!st.ok()) return st;
    }
    return Status::Ok();
  }

  // 8. (or 7.4 at the end): the CRC thread folds the round's first units.
  void FoldCrc(size_t folded) {
    th_.crc.Go([&round = round_, &crc = crc_, folded] {
      for (size_t i = 0; i < folded; ++i)
        crc = Crc32Le(crc, round[i]->out[0].data(), round[i]->out_len);
    });
  }

  // After the loop: every page arrived, and the CRC matches the header's
  // (§7.5).
  Status Finish() {
    th_.crc.Wait();
    rep_.crc32 = crc_;
    if (page_ != rep_.T)
      return Status(-ENODATA, "image truncated: the compressed stream gave " + S(page_) + " of " +
                                  S(rep_.T) + " stream pages");
    if ((rep_.flags & kSfCrc32Mode) && crc_ != rep_.header_crc32)
      return Status(-ENODATA, "image corrupted: CRC32 of the decompressed stream is " + S(crc_) +
                                  ", the header says " + S(rep_.header_crc32) + " (" +
                                  S(rep_.units) + " units, stream pages 1-" + S(rep_.T - 1) + ")");
    rep_.crc_checked = (rep_.flags & kSfCrc32Mode) != 0;
    return Status::Ok();
  }

  RequestBatcher& b_;
  const std::vector<uint64_t>& entries_;
  StreamCheck& check_;
  const ReaderOptions& o_;
  ReadReport& rep_;
  ReadaheadRing ring_;
  ImageThreads& th_;
  const unsigned nr_;
  const unsigned K_;
  std::vector<DecUnit>& units_;
  std::vector<DecUnit*> round_;       // this round's units, in stream order
  std::vector<unsigned> per_worker_;  // worker t has units[t·K, t·K + per_worker_[t])
  uint32_t crc_ = 0;
  uint64_t page_ = 1;  // the next uncompressed stream page
};

// load_compressed_image() with a ring of o.read_ring_pages (kCmpPages …
// kCmpMaxRdPages; 0: the largest, §7.6 setup).
Status LoadCompressed(RequestBatcher& b, const std::vector<uint64_t>& entries, StreamCheck& check,
                      const ReaderOptions& o, ReadReport& rep, ReaderScratch::Impl& scratch) {
  if (o.read_ring_pages != 0 &&
      (o.read_ring_pages < kCmpPages || o.read_ring_pages > kCmpMaxRdPages))
    return Status(-EINVAL, "read ring of " + S(o.read_ring_pages) + " pages: expected " +
                               S(kCmpPages) + "-" + S(kCmpMaxRdPages));
  const uint64_t ring_size = o.read_ring_pages != 0 ? o.read_ring_pages : kCmpMaxRdPages;
  rep.ring_pages = ring_size;
  CompressedLoad load(b, entries, check, o, rep, scratch, ring_size);
  return load.Run();
}

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

// swsusp_check() step 3: orig_sig back over S1SUSPEND, written at once.
Status RestoreSignature(RequestBatcher& b, uint64_t resume_block, AlignedPage& hdr) {
  std::memcpy(hdr.data() + kHdrSig, hdr.data() + kHdrOrigSig, 10);
  return b.SyncWrite(resume_block, hdr.data());
}

// swsusp_check() (§1.4): the header page read and its signature checked,
// restored at once when consuming, then the hardware signature and the
// header's fields; the report takes its flags, signature, CRC and
// compressor.
Result<area::SwsuspHeader> CheckHeader(RequestBatcher& b, uint64_t resume_block,
                                       const ReaderOptions& o, ReadReport& rep) {
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
  return h;
}

// swsusp_info (§3.3), sync: its counts bound everything after it.
Status ReadInfo(RequestBatcher& b, const std::vector<uint64_t>& entries, AlignedPage& info,
                ReadReport& rep) {
  Status st = b.SyncRead(entries[0], info.data());
  if (!st.ok()) return st;
  rep.info = DecodeSwsuspInfo(info.data());
  rep.T = rep.info.pages;
  rep.N = rep.info.image_pages;
  rep.M = rep.info.meta_pages();
  return CheckInfoAgainstChain(rep.info, rep.compress, entries.size());
}

// The synthetic snapshot the stream is compared with: the caller's (it
// knows the image is its own), or one rebuilt into `own` from a swaplab
// tag in swsusp_info; null for other images. Its counts must be the info
// page's.
Status PickSnapshot(const ReaderOptions& o, const ReadReport& rep, const AlignedPage& info,
                    uint64_t stream_pages, std::optional<SyntheticSnapshot>& own,
                    const SyntheticSnapshot** snap) {
  *snap = o.expect;
  if (*snap == nullptr && rep.info.origin != ImageOrigin::kSwaplab) return Status::Ok();
  if (*snap == nullptr) {
    const uint64_t bound =
        (o.device_pages != 0 ? o.device_pages : kUncPages * stream_pages) * kPageSize;
    auto s = SyntheticSnapshot::FromInfoPage(info.data(), bound);
    if (!s.ok()) return s.status();
    own.emplace(std::move(s).value());
    if (o.scratch != nullptr) {
      own->ShareNoise(o.scratch->impl().noise);
      o.scratch->impl().noise = own->noise();
    }
    *snap = &*own;
  }
  if ((*snap)->image_pages() != rep.T || (*snap)->nr_copy_pages() != rep.N)
    return Status(-ENODATA, "swsusp_info: counts do not match the snapshot");
  return Status::Ok();
}

// The stream from swsusp_info on (§4.8 step 3): load_image() or
// load_compressed_image() after stream page 0, every page through the
// stream check, then its end.
Status LoadStream(RequestBatcher& b, const std::vector<uint64_t>& entries, const AlignedPage& info,
                  const ReaderOptions& o, ReadReport& rep, const SyntheticSnapshot* snap,
                  std::optional<ReaderScratch>& own_scratch) {
  StreamCheck check(o, rep, snap);
  Status st = check.Page(
      0, info.data(), [&] { return "stream page 0 (swsusp_info, dblock " + S(entries[0]) + ")"; });
  if (!st.ok()) return st;
  ReaderScratch& scratch = o.scratch != nullptr ? *o.scratch : own_scratch.emplace(o.threads);
  st = rep.compress != Compressor::kNone
           ? LoadCompressed(b, entries, check, o, rep, scratch.impl())
           : LoadUncompressed(b, entries, check, o, rep, scratch.impl());
  if (!st.ok()) return st;
  return check.Finish();
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
  auto h = CheckHeader(b, resume_block, o, rep);
  if (!h.ok()) return h.status();
  auto chain = WalkMapChain(b, *h, resume_block, o.device_pages, o.pipelined ? kChainLookahead : 0,
                            o.expect != nullptr ? o.expect->image_pages() : 0);
  if (!chain.ok()) return chain.status();
  const std::vector<uint64_t>& entries = chain->entries;
  rep.map_pages = chain->map_dblocks.size();
  rep.stream_pages = entries.size();
  rep.Q = FullMapPages(rep.stream_pages);
  AlignedPage info;
  if (Status st = ReadInfo(b, entries, info, rep); !st.ok()) return st;
  std::optional<SyntheticSnapshot> own;
  const SyntheticSnapshot* snap = nullptr;
  if (Status st = PickSnapshot(o, rep, info, entries.size(), own, &snap); !st.ok()) return st;
  rep.chain_seconds = since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  std::optional<ReaderScratch> own_scratch;  // freed after the stream's time is taken
  if (Status st = LoadStream(b, entries, info, o, rep, snap, own_scratch); !st.ok()) return st;
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
