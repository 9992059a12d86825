// SPDX-License-Identifier: MIT
// swsusp_write(), uncompressed (spec §4.3-§4.7).
#include "swaplab/hibernate/image_writer.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "swaplab/hibernate/image_reader.h"  // kProgressPages

namespace swaplab::hibernate {

uint64_t CountRuns(std::vector<uint64_t> d) {
  if (d.empty()) return 0;
  std::sort(d.begin(), d.end());
  uint64_t runs = 1;
  for (size_t i = 1; i < d.size(); ++i) runs += d[i] != d[i - 1] + 1;
  return runs;
}

namespace {

// CountRuns of the dblocks of every slot the session took, kept as runs of
// consecutive dblocks (a swap file's extents may put consecutive slots
// apart) rather than one entry per slot.
uint64_t DeviceRuns(const ImageSession& session) {
  std::vector<std::pair<uint64_t, uint64_t>> runs;  // [first, last] dblock
  for (const auto& [a, b] : session.extents().ranges()) {
    for (uint64_t s = a; s <= b; ++s) {
      const uint64_t d = session.Dblock(s);
      if (!runs.empty() && runs.back().second + 1 == d)
        runs.back().second = d;
      else
        runs.emplace_back(d, d);
    }
  }
  std::sort(runs.begin(), runs.end());
  uint64_t n = 0;
  for (size_t i = 0; i < runs.size(); ++i) n += i == 0 || runs[i].first != runs[i - 1].second + 1;
  return n;
}

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
    if (off == 0)
      return Status(
          -ENOSPC, "swap_write_page: out of swap slots at stream page " + std::to_string(k_total_));
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
  uint64_t pages_written() const { return k_total_; }

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

// save_image() (§4.5): stream pages 1 … T−1, one async page each. A
// materialised snapshot is the kernel's case: snapshot_read_next points
// into memory and write_page copies each page into a fresh page (§4.3),
// which QueueWrite does. Otherwise the page is generated straight into the
// write copy (no second copy).
Status SaveImage(SwapWriter& w, RequestBatcher& batch, const SyntheticSnapshot& snap,
                 const WriterOptions& o, WriteReport& rep) {
  for (uint64_t p = 1; p < rep.T; ++p) {
    if (o.progress && p % kProgressPages == 0) o.progress(p, rep.T);
    const std::byte* page = snap.PageInMemory(p);
    if (page == nullptr) {
      std::byte* copy = batch.CopyBuffer();
      // Model only: the bio carries the batcher's shared scratch page, so
      // the page is never generated (structural runs at full scale).
      if (!batch.model_only()) snap.StreamPage(p, copy);
      page = copy;
    }
    Status st = w.WritePage(page, /*async=*/true);
    if (!st.ok()) {
      (void)batch.Wait();  // let queued writes finish before the slots go back
      return st;
    }
  }
  return Status::Ok();
}

// One worker's buffers (§7.2): the uncompressed unit and the output with
// its 8-byte length header.
struct CmpUnit {
  std::unique_ptr<AlignedPage[]> unc{new AlignedPage[kUncPages]};
  std::unique_ptr<AlignedPage[]> cmp{new AlignedPage[kCmpPages]};
  size_t unc_len = 0, cmp_len = 0;
  Status st;
  std::byte* unc_data() { return unc[0].data(); }
  std::byte* cmp_data() { return cmp[0].data(); }
};

// save_compressed_image() (§7.3): rounds of up to `nr` units; the workers
// compress while the CRC thread folds the uncompressed bytes; outputs are
// written in worker order; the current bio is submitted at the round end
// (RFC patch 7, §6.3), then the CRC thread is waited for.
Status SaveCompressed(SwapWriter& w, RequestBatcher& batch, const SyntheticSnapshot& snap,
                      const WriterOptions& o, WriteReport& rep) {
  std::vector<CmpUnit> units(o.threads != 0 ? o.threads : DefaultCompressionThreads());
  ImageThreads th(static_cast<unsigned>(units.size()));
  const unsigned nr = th.nr();
  uint32_t crc = 0;
  const Compressor c = o.compress;
  Status st;
  for (uint64_t next = 1;;) {
    unsigned filled = 0;
    for (; filled < nr && next < rep.T; ++filled) {  // fill
      CmpUnit& u = units[filled];
      const uint64_t n = std::min<uint64_t>(kUncPages, rep.T - next);
      for (uint64_t i = 0; i < n; ++i) snap.StreamPage(next + i, u.unc[i].data());
      next += n;
      if (o.progress && next / kProgressPages != (next - n) / kProgressPages)
        o.progress(next, rep.T);
      u.unc_len = n * kPageSize;
      th.workers[filled]->Go([&u, c] {
        auto l = CompressBlock(c, {u.unc_data(), u.unc_len},
                               {u.cmp_data() + kCmpHeader, kCmpSize - kCmpHeader});
        u.st = l.status();
        u.cmp_len = l.ok() ? *l : 0;
      });
    }
    if (filled == 0) break;
    th.crc.Go([&units, &crc, filled] {
      for (unsigned i = 0; i < filled; ++i)
        crc = Crc32Le(crc, units[i].unc_data(), units[i].unc_len);
    });
    for (unsigned i = 0; i < filled; ++i) {  // collect, in worker order
      th.workers[i]->Wait();
      if (!st.ok()) continue;
      CmpUnit& u = units[i];
      if (!u.st.ok()) {
        st = u.st;
      } else if (u.cmp_len == 0 || u.cmp_len > WorstCompress(u.unc_len)) {
        st = Status(-EINVAL, "compressed unit " + std::to_string(rep.units) + ": length " +
                                 std::to_string(u.cmp_len) + " outside (0, worst case]");
      } else {
        StoreU64(u.cmp_data(), u.cmp_len);
        for (size_t off = 0; off < kCmpHeader + u.cmp_len && st.ok(); off += kPageSize)
          st = w.WritePage(u.cmp_data() + off, /*async=*/true);
        ++rep.units;
        rep.compressed_bytes += u.cmp_len;
      }
    }
    Status fl = batch.Flush();  // §6.3
    th.crc.Wait();
    if (st.ok()) st = fl;
    if (!st.ok()) {
      (void)batch.Wait();
      return st;
    }
  }
  rep.crc32 = crc;
  return Status::Ok();
}

Status WriteBody(ImageSession& session, RequestBatcher& batch, const SyntheticSnapshot& snap,
                 const WriterOptions& o, WriteReport& rep) {
  SwapWriter w(session, batch, rep, o.record_placement, o.memory_budget_pages);
  Status st = w.Start();
  if (!st.ok()) return st;
  // enough_swap() (§4.7): uncompressed only, after map page 0 is
  // allocated, before any write.
  const uint64_t free_slots = session.FreeSlots();
  if (o.compress == Compressor::kNone && free_slots <= kPagesForIo + rep.T)
    return Status(-ENOSPC, "enough_swap: image of " + std::to_string(rep.T) +
                               " pages needs more than " + std::to_string(kPagesForIo + rep.T) +
                               " free slots, device has " + std::to_string(free_slots));
  AlignedPage page;
  snap.StreamPage(0, page.data());
  st = w.WritePage(page.data(), /*async=*/false);  // swsusp_info, sync
  if (!st.ok()) return st;
  st = o.compress == Compressor::kNone ? SaveImage(w, batch, snap, o, rep)
                                       : SaveCompressed(w, batch, snap, o, rep);
  if (!st.ok()) return st;
  st = batch.Wait();
  if (!st.ok()) return st;
  rep.stream_pages = w.pages_written();
  // mark_swapfiles() (§1.4).
  AlignedPage hdr;
  st = batch.SyncRead(rep.resume_block, hdr.data());
  if (!st.ok()) return st;
  AlignedPage orig = hdr;
  st = MarkSwapHeader(hdr.b, rep.image, rep.flags, o.hw_sig, rep.crc32);
  if (!st.ok()) return st;
  st = batch.SyncWrite(rep.resume_block, hdr.data());
  if (!st.ok()) {
    // A device may report a write failed that it did in part or in whole:
    // put the page back as it was (best effort), so that no signature is
    // left pointing at slots the caller is about to free. The kernel leaves
    // page 0 as the device left it (docs/fidelity.md).
    (void)batch.SyncWrite(rep.resume_block, orig.data());
    return st;
  }
  w.FlushLast();
  if (o.progress) o.progress(rep.T, rep.T);
  return Status::Ok();
}

}  // namespace

Result<WriteReport> WriteImage(ImageSession& session, area::IoEngine& engine,
                               const SyntheticSnapshot& snap, const WriterOptions& o) {
  if (o.flags & (kSfCrc32Mode | kSfCompressionAlgLz4))
    return Status(
        -EINVAL, "image writer: compression flags are set from WriterOptions::compress, not given");
  if (o.compress != Compressor::kNone && o.threads > 64)
    return Status(
        -EINVAL, "image writer: " + std::to_string(o.threads) + " compressor threads (at most 64)");
  Status st = session.Begin();
  if (!st.ok()) return st;
  WriteReport rep;
  rep.T = snap.image_pages();
  rep.M = snap.nr_meta_pages();
  rep.N = snap.nr_copy_pages();
  rep.flags = o.compress == Compressor::kNone
                  ? o.flags
                  : (o.flags & ~kSfNocompressMode) | FlagsFor(o.compress);
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
  rep.Q = FullMapPages(rep.stream_pages);
  rep.r = rep.stream_pages - kMapEntries * rep.Q;
  rep.slots = session.stats().slots;
  rep.device_runs = DeviceRuns(session);
  rep.extents = session.extents().ranges().size();
  session.End();
  return rep;
}

}  // namespace swaplab::hibernate
