// SPDX-License-Identifier: MIT
// swsusp_check(), get_swap_reader() and the stream's start and end (spec
// §1.4, §4.8); its load paths, load_image() and load_compressed_image(), are
// image_load_uncompressed.cc and image_load_compressed.cc (§7.6, §8).
#include "swaplab/hibernate/image_reader.h"

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "image_load.h"
#include "swaplab/hibernate/image_chain.h"

namespace swaplab::hibernate {

ReaderScratch::ReaderScratch(unsigned threads) : impl_(std::make_unique<Impl>(threads)) {}
ReaderScratch::~ReaderScratch() = default;

namespace {

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
