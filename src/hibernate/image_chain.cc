// SPDX-License-Identifier: MIT
// The swsusp header, the map chain and the layout of an image, read-only
// (spec §1.4, §4.1, §4.8, §10.4, §10.5).
#include "swaplab/hibernate/image_chain.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "swaplab/hibernate/image_format.h"

namespace swaplab::hibernate {
namespace {

std::string S(uint64_t v) { return std::to_string(v); }

constexpr uint32_t kKnownFlags =
    kSfPlatformMode | kSfNocompressMode | kSfCrc32Mode | kSfHwSig | kSfCompressionAlgLz4;

// One bit per device page, to find a slot used twice; sized by the device,
// never by a field of the image.
class SlotSet {
 public:
  explicit SlotSet(uint64_t pages) : bits_(pages) {}
  bool Insert(uint64_t d) {  // false if already there
    if (bits_[d]) return false;
    bits_[d] = true;
    return true;
  }

 private:
  std::vector<bool> bits_;
};

// An engine that completes every request at once and moves no data: the
// batcher in model-only mode counts bios against it.
class CountingEngine : public area::IoEngine {
 public:
  explicit CountingEngine(const area::DeviceLimits& l) : limits_(l) {}
  std::string name() const override { return "count"; }
  Status Submit(std::span<area::IoRequest> batch) override {
    for (const auto& r : batch)
      done_.push_back({r.tag, 0, 0, static_cast<uint32_t>(r.bufs.size())});
    return Status::Ok();
  }
  Status Wait(std::vector<area::IoCompletion>* done) override {
    done->insert(done->end(), done_.begin(), done_.end());
    done_.clear();
    return Status::Ok();
  }
  Status Discard(uint64_t, uint64_t) override { return Status::Ok(); }
  area::IoStats stats() const override { return {}; }
  const area::DeviceLimits& limits() const override { return limits_; }

 private:
  area::DeviceLimits limits_;
  std::vector<area::IoCompletion> done_;
};

// The submission order of swsusp_write() (§4.3): stream page 0 sync; stream
// pages 1 … as async writes, map page j after its 511th entry; the last map
// page sync after the final hib_wait_io. Calls f(dblock, sync) per slot.
template <typename F>
void ForEachWrite(const ImageChain& c, F f) {
  for (uint64_t p = 0; p < c.entries.size(); ++p) {
    f(c.entries[p], p == 0);
    if ((p + 1) % kMapEntries == 0 && (p + 1) / kMapEntries < c.map_dblocks.size())
      f(c.map_dblocks[(p + 1) / kMapEntries - 1], false);
  }
  f(c.map_dblocks.back(), true);
}

uint64_t ReplayBios(const ImageChain& c, const area::DeviceLimits& limits, BatchOptions o) {
  CountingEngine e(limits);
  o.model_only = true;
  RequestBatcher b(e, o);
  static const AlignedPage kZero;
  ForEachWrite(c, [&](uint64_t d, bool sync) {
    if (!sync) {
      b.QueueWrite(d, kZero.data());
      return;
    }
    (void)b.Wait();
    (void)b.SyncWrite(d, kZero.data());
  });
  return b.stats().bios;
}

// Reads the map pages of a chain one at a time. lookahead 0: a sync read
// each, as get_swap_reader() issues them. lookahead > 0: the pages that
// follow are guessed along the chain's last stride (a writer on a
// contiguous area puts each map page 511 data slots after the one before)
// and read with it in one batch of up to `lookahead` bios, the batch
// doubling while guesses hold and falling back to one page when one fails;
// a guessed page is used only when the chain really leads to it, and a
// batch that fails is retried as one sync read of the page asked for.
class MapPageReader {
 public:
  MapPageReader(RequestBatcher& b, uint64_t resume_block, uint64_t device_pages, uint32_t lookahead)
      : b_(b),
        resume_(resume_block),
        device_pages_(device_pages),
        lookahead_(device_pages == 0 ? 0 : std::min<uint32_t>(lookahead, kMaxLookahead)),
        bufs_(1),
        dblocks_(1) {}

  // The page at dblock `at`, valid until the next call.
  Result<const std::byte*> Read(uint64_t at) {
    const uint64_t prev = prev_;
    prev_ = at;
    if (next_ < have_ && dblocks_[next_] == at) return bufs_[next_++].data();
    const bool guessed_wrong = next_ < have_;
    have_ = next_ = 0;
    if (lookahead_ == 0 || prev == 0) return SyncRead(at);
    window_ = guessed_wrong ? 1 : std::min<uint32_t>(window_ * 2, lookahead_);
    if (bufs_.size() < window_) {  // grown with the window: a short chain needs a page or two
      bufs_.resize(window_);
      dblocks_.resize(window_);
    }
    const auto stride = static_cast<int64_t>(at - prev);
    for (uint32_t i = 0; i < window_; ++i) {
      const auto d =
          static_cast<uint64_t>(static_cast<int64_t>(at) + stride * static_cast<int64_t>(i));
      if (i > 0 && (d == 0 || d >= device_pages_ || d == resume_ || stride == 0)) break;
      b_.QueueRead(d, bufs_[i].data());
      dblocks_[i] = d;
      have_ = i + 1;
    }
    if (!b_.Wait().ok()) {  // a guess may have failed: ask for `at` alone
      have_ = 0;
      return SyncRead(at);
    }
    next_ = 1;
    return bufs_[0].data();
  }

 private:
  static constexpr uint32_t kMaxLookahead = 256;
  Result<const std::byte*> SyncRead(uint64_t at) {
    Status st = b_.SyncRead(at, bufs_[0].data());
    if (!st.ok()) return st;
    return bufs_[0].data();
  }
  RequestBatcher& b_;
  uint64_t resume_, device_pages_;
  uint32_t lookahead_;
  std::vector<AlignedPage> bufs_;
  std::vector<uint64_t> dblocks_;
  size_t have_ = 0, next_ = 0;  // bufs_[next_, have_) hold guesses not yet asked for
  uint64_t prev_ = 0;           // the page asked for last
  uint32_t window_ = 1;
};

}  // namespace

Result<area::SwsuspHeader> CheckSignature(std::span<const std::byte, kPageSize> page0) {
  auto h = ParseSwsuspHeader(page0);
  if (!h.ok()) return h.status();
  if (std::memcmp(h->orig_sig.data(), kSwapSpace2Sig.data(), 10) != 0 &&
      std::memcmp(h->orig_sig.data(), kSwapSpaceV0Sig.data(), 10) != 0)
    return Status(-EINVAL, "swsusp_header: orig_sig (byte 4076) is not a swap signature");
  return h;
}

Status CheckHeaderFields(const area::SwsuspHeader& h, uint64_t resume_block,
                         uint64_t device_pages) {
  if (h.flags & ~kKnownFlags)
    return Status(-EINVAL, "swsusp_header: flags " + S(h.flags) + " (byte 4072) has unknown bits " +
                               S(h.flags & ~kKnownFlags));
  if ((h.flags & kSfNocompressMode) && (h.flags & (kSfCrc32Mode | kSfCompressionAlgLz4)))
    return Status(-EINVAL, "swsusp_header: flags " + S(h.flags) +
                               " mix SF_NOCOMPRESS_MODE with compression bits");
  if (h.image == 0 || h.image == resume_block)
    return Status(-EINVAL, "swsusp_header: image (byte 4064) is " + S(h.image) +
                               ", the swap header itself: no map chain");
  if (device_pages != 0 && h.image >= device_pages)
    return Status(-EINVAL, "swsusp_header: image (byte 4064) is dblock " + S(h.image) +
                               ", past the device end " + S(device_pages));
  return Status::Ok();
}

Result<ImageChain> ReadImageChain(RequestBatcher& b, uint64_t resume_block, uint64_t device_pages,
                                  uint32_t lookahead) {
  AlignedPage page;
  Status st = b.SyncRead(resume_block, page.data());
  if (!st.ok()) return st;
  auto h = CheckSignature(page.b);
  if (!h.ok()) return h.status();
  st = CheckHeaderFields(*h, resume_block, device_pages);
  if (!st.ok()) return st;
  return WalkMapChain(b, *h, resume_block, device_pages, lookahead);
}

Result<ImageChain> WalkMapChain(RequestBatcher& b, const area::SwsuspHeader& h,
                                uint64_t resume_block, uint64_t device_pages, uint32_t lookahead,
                                uint64_t expected_entries) {
  ImageChain c;
  c.header = h;
  c.entries.reserve(device_pages != 0 ? std::min(expected_entries, device_pages)
                                      : expected_entries);
  MapPageReader reader(b, resume_block, device_pages, lookahead);
  // get_swap_reader(): every map page, in chain order.
  SlotSet used(device_pages);
  if (device_pages != 0) (void)used.Insert(resume_block < device_pages ? resume_block : 0);
  bool ended = false;
  for (uint64_t at = h.image; at != 0;) {
    const std::string where = "map page " + S(c.map_dblocks.size()) + " (dblock " + S(at) + ")";
    if (at == resume_block) return Status(-EINVAL, "swap map: " + where + " is the swap header");
    if (device_pages != 0 && at >= device_pages)
      return Status(-EINVAL, "swap map: " + where + " is past the device end " + S(device_pages));
    if (device_pages != 0 && !used.Insert(at))
      return Status(-EINVAL, "swap map: the chain loops back to dblock " + S(at) + " at " + where);
    if (device_pages == 0 &&
        std::find(c.map_dblocks.begin(), c.map_dblocks.end(), at) != c.map_dblocks.end())
      return Status(-EINVAL, "swap map: the chain loops back to dblock " + S(at) + " at " + where);
    auto read = reader.Read(at);
    if (!read.ok()) return read.status();
    const std::byte* page = *read;
    c.map_dblocks.push_back(at);
    for (uint64_t k = 0; k < kMapEntries; ++k) {
      const uint64_t e = MapEntry(page, k);
      if (e == 0) {
        ended = true;
        continue;
      }
      if (ended)
        return Status(-EINVAL, "swap map: entry " + S(k) + " of " + where +
                                   " comes after the end of the image");
      if (e == resume_block)
        return Status(-EINVAL,
                      "swap map: entry " + S(k) + " of " + where + " points at the swap header");
      if (device_pages != 0 && e >= device_pages)
        return Status(-EINVAL, "swap map: entry " + S(k) + " of " + where + " is dblock " + S(e) +
                                   ", past the device end " + S(device_pages));
      if (device_pages != 0 && !used.Insert(e))
        return Status(-EINVAL, "swap map: entry " + S(k) + " of " + where + " is dblock " + S(e) +
                                   ", which holds another page of the image");
      c.entries.push_back(e);
    }
    at = MapNext(page);
    if (ended && at != 0)
      return Status(-EINVAL, "swap map: " + where +
                                 " is partly filled but has a next pointer (dblock " + S(at) + ")");
  }
  if (c.entries.empty()) return Status(-EFAULT, "swap_read_page: the map chain has no entries");
  // §4.3: a map page per 511 entries, plus one (empty when they divide)
  if (c.map_dblocks.size() != MapPages(c.entries.size()))
    return Status(-EINVAL, "swap map: " + S(c.entries.size()) + " entries in " +
                               S(c.map_dblocks.size()) + " map pages (the writer makes " +
                               S(MapPages(c.entries.size())) + ")");
  return c;
}

ImageLayout AnalyzeLayout(const ImageChain& c, const area::DeviceLimits& limits,
                          CapacityMode capacity) {
  ImageLayout l;
  std::vector<uint64_t> all;
  all.reserve(c.entries.size() + c.map_dblocks.size());
  uint64_t prev = 0;
  ForEachWrite(c, [&](uint64_t d, bool) {
    l.runs_write_order += all.empty() || d != prev + 1;
    prev = d;
    all.push_back(d);
  });
  l.slots = all.size();
  std::sort(all.begin(), all.end());
  l.first_dblock = all.front();
  l.last_dblock = all.back();
  uint64_t run = 1, last_cluster = UINT64_MAX;
  for (size_t i = 0; i < all.size(); ++i) {
    const uint64_t cluster = all[i] >> alloc::kDefaultClusterShift;
    if (cluster != last_cluster) ++l.clusters_touched;
    last_cluster = cluster;
    if (i + 1 < all.size() && all[i + 1] == all[i] + 1) {
      ++run;
      continue;
    }
    ++l.runs_disk_order;
    l.largest_run = std::max(l.largest_run, run);
    l.smallest_run = l.smallest_run == 0 ? run : std::min(l.smallest_run, run);
    run = 1;
  }
  l.max_pages = HibBioMaxPages(limits);
  l.bios_per_page = ReplayBios(c, limits, {BatchMode::kPerPage, capacity, 0});
  l.bios_per_run = ReplayBios(c, limits, {BatchMode::kPerRun, capacity, 0});
  ImageChain one;  // the same slots as one run, in the writer's order
  const uint64_t S0 = l.first_dblock;
  for (uint64_t p = 0; p < c.entries.size(); ++p) one.entries.push_back(StreamSlot(S0, p));
  for (uint64_t j = 0; j < c.map_dblocks.size(); ++j) one.map_dblocks.push_back(MapSlot(S0, j));
  l.bios_one_run = ReplayBios(one, limits, {BatchMode::kPerRun, capacity, 0});
  return l;
}

Status CheckInfoAgainstChain(const SwsuspInfo& info, Compressor compress, uint64_t stream_pages) {
  Status st = CheckInfoCounts(info);
  if (!st.ok()) return st;
  if (compress == Compressor::kNone && stream_pages != info.pages)
    return Status(stream_pages < info.pages ? -EFAULT : -EINVAL,
                  "swap map: " + S(stream_pages) + " entries for an image of " + S(info.pages) +
                      " pages (swsusp_info.pages)");
  // A compressed unit takes at least one stream page and gives at most 32.
  if (compress != Compressor::kNone && info.pages - 1 > kUncPages * (stream_pages - 1))
    return Status(-EINVAL, "swsusp_info: pages " + S(info.pages) + " cannot come from " +
                               S(stream_pages - 1) +
                               " compressed stream pages (at most 32 pages each)");
  return Status::Ok();
}

Result<ImageInspection> InspectImage(area::IoEngine& engine, uint64_t resume_block,
                                     uint64_t device_pages, CapacityMode capacity) {
  RequestBatcher b(engine, {});
  auto chain = ReadImageChain(b, resume_block, device_pages, kChainLookahead);
  if (!chain.ok()) return chain.status();
  ImageInspection r;
  r.chain = std::move(chain).value();
  r.compress = CompressorFromFlags(r.chain.header.flags);
  AlignedPage info;
  Status st = b.SyncRead(r.chain.entries[0], info.data());
  if (!st.ok()) return st;
  r.info = DecodeSwsuspInfo(info.data());
  st = CheckInfoAgainstChain(r.info, r.compress, r.chain.entries.size());
  if (!st.ok()) return st;
  r.layout = AnalyzeLayout(r.chain, engine.limits(), capacity);
  return r;
}

}  // namespace swaplab::hibernate
