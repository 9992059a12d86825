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

}  // namespace

Result<ReadReport> ReadImage(area::IoEngine& engine, uint64_t resume_block, const ReaderOptions& o) {
  RequestBatcher b(engine, o.batch);
  ReadReport rep;
  auto hr = CheckAndRestore(b, resume_block, o.hw_sig);
  if (!hr.ok()) return hr.status();
  const area::SwsuspHeader& h = *hr;
  rep.flags = h.flags;
  if (!(h.flags & kSfNocompressMode) || (h.flags & (kSfCrc32Mode | kSfCompressionAlgLz4)))
    return Status(-EOPNOTSUPP, "swsusp_read: compressed image (flags " + S(h.flags) + "); only the uncompressed reader exists");
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
  rep.Q = rep.T / kMapEntries;
  if (entries.size() != rep.T || rep.map_pages != rep.Q + 1)
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

  // load_image(): metadata pages are sync_read (drain after each).
  AlignedPage scratch;
  for (uint64_t p = 1; p <= rep.M; ++p) {
    b.QueueRead(entries[p], scratch.data());
    st = b.Wait();
    if (!st.ok()) return st;
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
    for (uint64_t i = 0; i < n; ++i) {
      snap->StreamPage(p + i, want.data());
      st = ComparePage(frames[i].data(), want.data(), p + i, entries[p + i]);
      if (!st.ok()) return st;
    }
    rep.pages_verified += n;
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
