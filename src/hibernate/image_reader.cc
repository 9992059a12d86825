// swsusp_check(), get_swap_reader(), load_image() (spec §1.4, §4.8, §8).
#include "swaplab/hibernate/image_reader.h"

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace swaplab::hibernate {
namespace {

std::string S(uint64_t v) { return std::to_string(v); }

Status ComparePage(const std::byte* got, const std::byte* want, uint64_t p, uint64_t dblock) {
  if (std::memcmp(got, want, kPageSize) == 0) return Status::Ok();
  size_t i = 0;
  while (got[i] == want[i]) ++i;
  return Status(-ENODATA, "image: stream page " + S(p) + " (dblock " + S(dblock) + ") differs from the snapshot at byte " + S(i));
}

// Mirrors swsusp_check(): read, check, restore orig_sig at once.
Result<area::SwsuspHeader> CheckAndRestore(RequestBatcher& b, uint64_t resume_block, uint32_t hw_sig) {
  AlignedPage hdr;
  Status st = b.SyncRead(resume_block, hdr.data());
  if (!st.ok()) return st;
  auto h = ParseSwsuspHeader(hdr.b);
  if (!h.ok()) return h.status();
  if (std::memcmp(h->orig_sig.data(), kSwapSpace2Sig.data(), 10) != 0 &&
      std::memcmp(h->orig_sig.data(), kSwapSpaceV0Sig.data(), 10) != 0)
    return Status(-EINVAL, "swsusp_check: orig_sig is not a swap signature; page 0 left as it is");
  std::memcpy(hdr.data() + kHdrSig, hdr.data() + kHdrOrigSig, 10);
  st = b.SyncWrite(resume_block, hdr.data());
  if (!st.ok()) return st;
  if ((h->flags & kSfHwSig) && h->hw_sig != hw_sig)
    return Status(-EINVAL, "swsusp_check: hardware signature " + S(h->hw_sig) + " differs from " + S(hw_sig));
  return h;
}


// Where a compressed unit sits, for error messages.
struct UnitPlace {
  uint64_t index = 0;        // unit number in the stream
  uint64_t first_entry = 0;  // its first stream page on disk
  uint64_t pages = 0;        // stream pages on disk it takes
  uint64_t first_page = 0;   // its first uncompressed stream page
};

std::string Where(const UnitPlace& u, const std::vector<uint64_t>& entries) {
  const uint64_t last = u.first_entry + (u.pages ? u.pages - 1 : 0);
  return "compressed unit " + S(u.index) + " (stream pages " + S(u.first_entry) + "-" + S(last) + " on disk, dblocks " +
         S(entries[u.first_entry]) + ".." + S(entries[std::min<uint64_t>(last, entries.size() - 1)]) + ")";
}

struct DecUnit {
  std::unique_ptr<AlignedPage[]> in{new AlignedPage[kCmpPages]};
  std::unique_ptr<AlignedPage[]> out{new AlignedPage[kUncPages]};
  size_t in_len = 0, out_len = 0;
  Status st;
  UnitPlace place;
};

// load_compressed_image() (§7.6, with RFC patch 8's submit of the current
// bio after each readahead pass).
Status LoadCompressedBody(RequestBatcher& b, const std::vector<uint64_t>& entries, const SyntheticSnapshot& snap,
                          const ReaderOptions& o, uint32_t header_crc, ReadReport& rep) {
  const uint64_t ring_size = o.read_ring_pages != 0 ? o.read_ring_pages : kCmpMaxRdPages;
  rep.ring_pages = ring_size;
  std::unique_ptr<AlignedPage[]> ring(new AlignedPage[ring_size]);
  std::vector<uint64_t> ring_entry(ring_size, 0);
  struct DrainOnExit {  // reads in flight land in the ring: drain before it goes
    RequestBatcher& b;
    ~DrainOnExit() { (void)b.Wait(); }
  } drain_on_exit{b};
  std::vector<DecUnit> units(o.threads != 0 ? o.threads : DefaultCompressionThreads());
  ImageThreads th(static_cast<unsigned>(units.size()));
  const unsigned nr = th.nr();
  uint32_t crc = 0;
  const Compressor c = rep.compress;
  uint64_t want = ring_size, have = 0, asked = 0, issue = 0, consume = 0, next_entry = 1, page = 1;
  int eof = 0;
  AlignedPage expect;
  auto drain = [&]() -> Status {
    Status st = b.Wait();
    have += asked;
    asked = 0;
    if (eof) eof = 2;
    return st;
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
    Status st = b.Flush();  // 2. patch 8
    if (!st.ok()) return st;
    if (have == 0) {  // 3.
      if (asked == 0) break;
      st = drain();
      if (!st.ok()) return st;
    }
    th.crc.Wait();  // 4.
    unsigned thr = 0;   // 5. dispatch
    for (; thr < nr && have > 0; ++thr) {
      DecUnit& u = units[thr];
      u.place = UnitPlace{rep.units + thr, ring_entry[consume], 1, 0};
      const uint64_t L = LoadU64(ring[consume].data());
      if (L == 0 || L > WorstCompress(kUncSize))
        return Status(-EINVAL, "image corrupted: " + Where(u.place, entries) + ": length header " + S(L) +
                                   " outside (0, " + S(WorstCompress(kUncSize)) + "]");
      const uint64_t need = (L + kCmpHeader + kPageSize - 1) / kPageSize;
      u.place.pages = need;
      if (need > have) {
        if (eof == 2)
          return Status(-ENODATA, "image truncated: " + Where(u.place, entries) + " needs " + S(need) +
                                      " pages, the stream has " + S(have) + " left");
        break;
      }
      for (uint64_t i = 0; i < need; ++i) {
        std::memcpy(u.in[i].data(), ring[consume].data(), kPageSize);
        consume = (consume + 1) % ring_size;
      }
      have -= need;
      want += need;
      u.in_len = L;
      th.workers[thr]->Go([&u, c] {
        auto n = DecompressBlock(c, {u.in[0].data() + kCmpHeader, u.in_len}, {u.out[0].data(), kUncSize});
        u.st = n.status();
        u.out_len = n.ok() ? *n : 0;
      });
    }
    if (have < kCmpPages && asked > 0) {  // 6. overlap the drain with decompression
      st = drain();
      if (!st.ok()) return st;
    }
    bool done = false;  // 7. collect, in worker order
    unsigned folded = thr;
    for (unsigned i = 0; i < thr && st.ok(); ++i) {
      th.workers[i]->Wait();
      DecUnit& u = units[i];
      u.place.first_page = page;
      if (!u.st.ok()) {
        st = Status(-EINVAL, "image corrupted: " + Where(u.place, entries) + ": " + u.st.message());
        break;
      }
      if (u.out_len == 0 || u.out_len > kUncSize || u.out_len % kPageSize != 0) {
        st = Status(-EINVAL, "image corrupted: " + Where(u.place, entries) + " decompresses to " + S(u.out_len) +
                                 " bytes, not 1-32 whole pages");
        break;
      }
      ++rep.units;
      for (uint64_t k = 0; k < u.out_len / kPageSize; ++k, ++page) {
        if (page >= rep.T) {
          st = Status(-EINVAL, "image corrupted: " + Where(u.place, entries) + " holds more pages than the image's " + S(rep.T));
          break;
        }
        if (o.verify_pages) {
          snap.StreamPage(page, expect.data());
          if (std::memcmp(u.out[k].data(), expect.data(), kPageSize) != 0) {
            size_t at = 0;
            while (u.out[k].b[at] == expect.b[at]) ++at;
            st = Status(-ENODATA, "image corrupted: " + Where(u.place, entries) + " decompresses to stream page " +
                                      S(page) + " (page " + S(k) + " of the unit), which differs from the snapshot at byte " + S(at));
            break;
          }
          ++rep.pages_verified;
        }
      }
      if (st.ok() && page == rep.T) {  // snapshot complete: fold units 0 … i
        folded = i + 1;
        done = true;
        break;
      }
    }
    for (unsigned i = 0; i < thr; ++i) th.workers[i]->Wait();
    if (!st.ok()) return st;
    th.crc.Go([&units, &crc, folded] {  // 8. (or 7.4 at the end)
      for (unsigned i = 0; i < folded; ++i) crc = Crc32Le(crc, units[i].out[0].data(), units[i].out_len);
    });
    if (done) break;
  }
  th.crc.Wait();
  rep.crc32 = crc;
  if (page != rep.T)
    return Status(-ENODATA, "image truncated: the compressed stream gave " + S(page) + " of " + S(rep.T) + " stream pages");
  if (crc != header_crc)
    return Status(-ENODATA, "image corrupted: CRC32 of the decompressed stream is " + S(crc) + ", the header says " +
                                S(header_crc) + " (" + S(rep.units) + " units, stream pages 1-" + S(rep.T - 1) + ")");
  return Status::Ok();
}

Status LoadCompressed(RequestBatcher& b, const std::vector<uint64_t>& entries, const SyntheticSnapshot& snap,
                      const ReaderOptions& o, uint32_t header_crc, ReadReport& rep) {
  if (o.read_ring_pages != 0 && (o.read_ring_pages < kCmpPages || o.read_ring_pages > kCmpMaxRdPages))
    return Status(-EINVAL, "read ring of " + S(o.read_ring_pages) + " pages: expected " + S(kCmpPages) + "-" + S(kCmpMaxRdPages));
  return LoadCompressedBody(b, entries, snap, o, header_crc, rep);
}

}  // namespace

Result<ReadReport> ReadImage(area::IoEngine& engine, uint64_t resume_block, const ReaderOptions& o) {
  RequestBatcher b(engine, o.batch);
  ReadReport rep;
  auto hr = CheckAndRestore(b, resume_block, o.hw_sig);
  if (!hr.ok()) return hr.status();
  const area::SwsuspHeader& h = *hr;
  rep.flags = h.flags;
  rep.compress = CompressorFromFlags(h.flags);
  if (rep.compress == Compressor::kNone && (h.flags & (kSfCrc32Mode | kSfCompressionAlgLz4)))
    return Status(-EINVAL, "swsusp_header: flags " + S(h.flags) + " mix SF_NOCOMPRESS_MODE with compression bits");
  if (h.image == 0) return Status(-EINVAL, "get_swap_reader: swsusp_header.image is 0");

  // get_swap_reader(): every map page, sync, up front.
  std::vector<uint64_t> entries;
  std::unordered_set<uint64_t> seen;
  AlignedPage map;
  bool ended = false;
  for (uint64_t at = h.image; at != 0;) {
    if (o.device_pages != 0 && at >= o.device_pages)
      return Status(-EINVAL, "swap map: page at dblock " + S(at) + " is past the device end " + S(o.device_pages));
    if (!seen.insert(at).second) return Status(-EINVAL, "swap map: chain loops back to dblock " + S(at));
    Status st = b.SyncRead(at, map.data());
    if (!st.ok()) return st;
    ++rep.map_pages;
    for (uint64_t k = 0; k < kMapEntries; ++k) {
      const uint64_t e = MapEntry(map.data(), k);
      if (e == 0) {
        ended = true;
      } else if (ended) {
        return Status(-EINVAL, "swap map: entry after the end of the image in map page at dblock " + S(at));
      } else {
        entries.push_back(e);
      }
    }
    at = MapNext(map.data());
    if (ended && at != 0) return Status(-EINVAL, "swap map: a partly filled map page has a next pointer");
  }
  if (entries.empty()) return Status(-EFAULT, "swap_read_page: the map chain has no entries");

  // swsusp_info, sync.
  AlignedPage info;
  Status st = b.SyncRead(entries[0], info.data());
  if (!st.ok()) return st;
  rep.T = LoadU64(info.data() + kInfoPages);
  rep.N = LoadU64(info.data() + kInfoImagePages);
  if (rep.T == 0 || rep.N >= rep.T || LoadU64(info.data() + kInfoSize) != rep.T * kPageSize)
    return Status(-EINVAL, "swsusp_info: inconsistent counts (pages " + S(rep.T) + ", image_pages " + S(rep.N) + ")");
  rep.M = rep.T - rep.N - 1;
  rep.stream_pages = entries.size();
  rep.Q = rep.stream_pages / kMapEntries;
  if (rep.map_pages != rep.Q + 1)
    return Status(-EINVAL, "swap map: " + S(entries.size()) + " entries in " + S(rep.map_pages) + " map pages");
  if (rep.compress == Compressor::kNone && entries.size() != rep.T)
    return Status(entries.size() < rep.T ? -EFAULT : -EINVAL,
                  "swap map: " + S(entries.size()) + " entries in " + S(rep.map_pages) + " map pages for an image of " + S(rep.T) + " pages");
  std::optional<SyntheticSnapshot> own;
  const SyntheticSnapshot* snap = o.expect;
  if (snap == nullptr) {
    auto s = SyntheticSnapshot::FromInfoPage(info.data());
    if (!s.ok()) return s.status();
    own.emplace(std::move(s).value());
    snap = &*own;
  }
  if (snap->image_pages() != rep.T || snap->nr_copy_pages() != rep.N)
    return Status(-ENODATA, "swsusp_info: counts do not match the snapshot");
  AlignedPage want;
  snap->StreamPage(0, want.data());
  st = ComparePage(info.data(), want.data(), 0, entries[0]);
  if (!st.ok()) return st;
  rep.pages_verified = 1;
  if (rep.compress != Compressor::kNone) {
    st = LoadCompressed(b, entries, *snap, o, h.crc32, rep);
    if (!st.ok()) return st;
    rep.batch = b.stats();
    return rep;
  }

  // load_image(): metadata pages are sync_read (drain after each).
  AlignedPage scratch;
  for (uint64_t p = 1; p <= rep.M; ++p) {
    b.QueueRead(entries[p], scratch.data());
    st = b.Wait();
    if (!st.ok()) return st;
    if (!o.verify_pages) continue;
    snap->StreamPage(p, want.data());
    st = ComparePage(scratch.data(), want.data(), p, entries[p]);
    if (!st.ok()) return st;
    ++rep.pages_verified;
  }
  // Data pages straight into their frames; a window bounds memory.
  const uint64_t window = o.window_pages == 0 ? rep.N : o.window_pages;
  std::vector<AlignedPage> frames(std::min<uint64_t>(window, rep.N));
  for (uint64_t p = rep.M + 1; p < rep.T;) {
    const uint64_t n = std::min<uint64_t>(frames.size(), rep.T - p);
    for (uint64_t i = 0; i < n; ++i) b.QueueRead(entries[p + i], frames[i].data());
    st = b.Wait();
    if (!st.ok()) return st;
    for (uint64_t i = 0; i < n && o.verify_pages; ++i) {
      snap->StreamPage(p + i, want.data());
      st = ComparePage(frames[i].data(), want.data(), p + i, entries[p + i]);
      if (!st.ok()) return st;
    }
    if (o.verify_pages) rep.pages_verified += n;
    p += n;
  }
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
