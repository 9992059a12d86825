// SPDX-License-Identifier: MIT
// load_compressed_image() (spec §7.5, §7.6): the readahead ring, the
// decompressor rounds and the CRC of the compressed stream.
#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "image_load.h"

namespace swaplab::hibernate {
namespace {

std::string Where(const UnitPlace& u, const std::vector<uint64_t>& entries) {
  const uint64_t last = u.first_entry + (u.pages ? u.pages - 1 : 0);
  return "compressed unit " + S(u.index) + " (stream pages " + S(u.first_entry) + "-" + S(last) +
         " on disk, dblocks " + S(entries[u.first_entry]) + ".." +
         S(entries[std::min<uint64_t>(last, entries.size() - 1)]) + ")";
}

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

}  // namespace

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

}  // namespace swaplab::hibernate
