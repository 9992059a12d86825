// swsusp_write(), uncompressed (spec §4.3-§4.7).
#include "swaplab/hibernate/image_writer.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace swaplab::hibernate {

uint64_t CountRuns(std::vector<uint64_t> d) {
  if (d.empty()) return 0;
  std::sort(d.begin(), d.end());
  uint64_t runs = 1;
  for (size_t i = 1; i < d.size(); ++i) runs += d[i] != d[i - 1] + 1;
  return runs;
}

namespace {

// struct swap_map_handle (§4.2) plus the batch.
class SwapWriter {
 public:
  SwapWriter(ImageSession& s, RequestBatcher& b, WriteReport& rep, bool record, uint64_t budget)
      : s_(s), b_(b), rep_(rep), record_(record), budget_(budget), reqd_free_pages_(budget / 2) {}

  // Mirrors get_swap_writer(): the slot for map page 0.
  Status Start() {
    cur_swap_ = AllocBlock();
    if (cur_swap_ == 0) return Status(-ENOSPC, "get_swap_writer: no slot for map page 0");
    rep_.image = cur_swap_;
    return Status::Ok();
  }

  // Mirrors swap_write_page(); sync when `async` is false.
  Status WritePage(const std::byte* buf, bool async) {
    const uint64_t off = AllocBlock();
    if (off == 0) return Status(-ENOSPC, "swap_write_page: out of swap slots at stream page " + std::to_string(k_total_));
    if (async) {
      b_.QueueWrite(off, buf);
    } else {
      Status st = b_.SyncWrite(off, buf);
      if (!st.ok()) return st;
    }
    if (record_) rep_.stream_dblocks.push_back(off);
    StoreU64(cur_.data() + 8 * k_, off);
    ++k_;
    ++k_total_;
    if (k_ == kMapEntries) {
      const uint64_t next = AllocBlock();
      if (next == 0) return Status(-ENOSPC, "swap_write_page: no slot for the next map page");
      StoreU64(cur_.data() + 8 * kMapEntries, next);
      if (record_) rep_.map_dblocks.push_back(cur_swap_);
      if (async) {
        b_.QueueWrite(cur_swap_, cur_.data());
      } else {
        Status st = b_.SyncWrite(cur_swap_, cur_.data());
        if (!st.ok()) return st;
      }
      cur_.b.fill(std::byte{0});
      cur_swap_ = next;
      k_ = 0;
      if (async && budget_ != 0 && LowmemFree() <= reqd_free_pages_) {
        Status st = b_.Wait();  // hib_wait_io
        if (!st.ok()) return st;
        reqd_free_pages_ = LowmemFree() / 2;
      }
    }
    return Status::Ok();
  }

  // The tail of swap_writer_finish() after mark_swapfiles: flush_swap_writer,
  // whose error is ignored (§4.3, §12 U9).
  void FlushLast() {
    if (record_) rep_.map_dblocks.push_back(cur_swap_);
    (void)b_.SyncWrite(cur_swap_, cur_.data());
  }

 private:
  uint64_t AllocBlock() {
    const uint64_t slot = s_.AllocSlot();
    if (slot == 0) return 0;
    return s_.Dblock(slot);  // 0 if the area is not writable: write_page turns it into ENOSPC
  }
  uint64_t LowmemFree() const {
    const uint64_t used = b_.queued_copies();
    return used >= budget_ ? 0 : budget_ - used;
  }
  ImageSession& s_;
  RequestBatcher& b_;
  WriteReport& rep_;
  bool record_;
  uint64_t budget_, reqd_free_pages_;
  AlignedPage cur_;
  uint64_t cur_swap_ = 0, k_ = 0, k_total_ = 0;
};

Status WriteBody(ImageSession& session, RequestBatcher& batch,
                 const SyntheticSnapshot& snap, const WriterOptions& o, WriteReport& rep) {
  SwapWriter w(session, batch, rep, o.record_placement, o.memory_budget_pages);
  Status st = w.Start();
  if (!st.ok()) return st;
  // enough_swap() (§4.7): after map page 0 is allocated, before any write.
  const uint64_t free_slots = session.FreeSlots();
  if (free_slots <= kPagesForIo + rep.T)
    return Status(-ENOSPC, "enough_swap: image of " + std::to_string(rep.T) + " pages needs more than " +
                               std::to_string(kPagesForIo + rep.T) + " free slots, device has " +
                               std::to_string(free_slots));
  AlignedPage page;
  snap.StreamPage(0, page.data());
  st = w.WritePage(page.data(), /*async=*/false);  // swsusp_info, sync
  if (!st.ok()) return st;
  for (uint64_t p = 1; p < rep.T; ++p) {  // save_image()
    snap.StreamPage(p, page.data());
    st = w.WritePage(page.data(), /*async=*/true);
    if (!st.ok()) {
      (void)batch.Wait();  // let queued writes finish before the slots go back
      return st;
    }
  }
  st = batch.Wait();
  if (!st.ok()) return st;
  // mark_swapfiles() (§1.4).
  AlignedPage hdr;
  st = batch.SyncRead(rep.resume_block, hdr.data());
  if (!st.ok()) return st;
  st = MarkSwapHeader(hdr.b, rep.image, o.flags, o.hw_sig, 0);
  if (!st.ok()) return st;
  st = batch.SyncWrite(rep.resume_block, hdr.data());
  if (!st.ok()) return st;
  w.FlushLast();
  return Status::Ok();
}

}  // namespace

Result<WriteReport> WriteImage(ImageSession& session, area::IoEngine& engine,
                               const SyntheticSnapshot& snap, const WriterOptions& o) {
  if (o.flags & (kSfCrc32Mode | kSfCompressionAlgLz4))
    return Status(-EINVAL, "image writer: compression flags given, but this writer is the uncompressed path");
  Status st = session.Begin();
  if (!st.ok()) return st;
  WriteReport rep;
  rep.T = snap.image_pages();
  rep.M = snap.nr_meta_pages();
  rep.N = snap.nr_copy_pages();
  rep.Q = rep.T / kMapEntries;
  rep.r = rep.T - kMapEntries * rep.Q;
  rep.resume_block = session.Dblock(0);
  {
    RequestBatcher batch(engine, o.batch);
    if (o.record_placement) rep.stream_dblocks.reserve(rep.T);
    st = WriteBody(session, batch, snap, o, rep);
    rep.batch = batch.stats();
  }
  rep.session = session.stats();
  if (!st.ok()) {
    (void)session.FreeAll();  // swap_writer_finish() on error (§4.6)
    session.End();
    return st;
  }
  rep.slots = session.stats().slots;
  std::vector<uint64_t> all;
  for (const auto& [a, b] : session.extents().ranges())
    for (uint64_t s = a; s <= b; ++s) all.push_back(session.Dblock(s));
  rep.device_runs = CountRuns(std::move(all));
  session.End();
  return rep;
}

}  // namespace swaplab::hibernate
