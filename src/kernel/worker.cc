// SPDX-License-Identifier: MIT
// The worker process (worker.h).
#include "swaplab/kernel/worker.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <span>
#include <utility>

#include "swaplab/alloc/types.h"
#include "swaplab/kernel/host.h"

namespace swaplab::kernel {

namespace {

using alloc::kPageSize;

enum Op : int32_t {
  kSwapOut = 1,
  kFree,
  kReadIn,
  kMincore,
  kLock,
  kDrainLru,
  kQuit,
  kSwapOutRun,
  kFloor
};
constexpr uint64_t kMaxMincorePages = 512;
// Commands the parent sends in one write at most, and the worker's reply
// buffer (Put): a command's reply, written at once (the largest, a
// page-out run's, is kSwapOutRunBytes; a larger one is written directly).
constexpr size_t kCmdBatch = 64, kReplyBuffer = 32 * 1024;
// The commands the worker runs pinned to the command's CPU.
// (kDrainLru pins to every CPU in turn.)
bool Pins(int32_t op) { return op != kQuit && op != kMincore && op != kLock && op != kDrainLru; }

using Cmd = Worker::Cmd;
struct Reply {
  int32_t err = 0;
  uint64_t value = 0;
};

bool ReadFull(int fd, void* p, size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}
bool WriteFull(int fd, const void* p, size_t n) {
  const auto* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t r = write(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// mlock / munlock through the system call: the sanitizer runtimes intercept
// the libc functions and turn them into no-ops.
int Mlock(const void* p, size_t len) { return static_cast<int>(syscall(SYS_mlock, p, len)); }
int Munlock(const void* p, size_t len) { return static_cast<int>(syscall(SYS_munlock, p, len)); }

// pagemap (Documentation/admin-guide/mm/pagemap.rst): bit 63 present,
// bit 62 swapped; swapped: bits 0-4 type, 5-54 offset; present: 0-54 PFN.
PageState DecodePagemap(uint64_t e) {
  PageState s;
  s.present = (e >> 63) & 1;
  s.swapped = (e >> 62) & 1;
  if (s.present) s.pfn = e & ((uint64_t{1} << 55) - 1);
  if (s.swapped) {
    s.swap_type = static_cast<int>(e & 0x1f);
    s.swap_offset = (e >> 5) & ((uint64_t{1} << 50) - 1);
  }
  return s;
}

bool PreadFull(int fd, void* p, size_t n, uint64_t off) {
  return pread(fd, p, n, static_cast<off_t>(off)) == static_cast<ssize_t>(n);
}

// kSwapOut's reply data, per page: pagemap before, kpageflags before,
// pagemap after (8 bytes each), then mincore after (1 byte each).
constexpr size_t kSwapOutBytesPerPage = 8 + 8 + 8 + 1;
// kSwapOutRun's reply: one Reply and its data per folio, written at once.
constexpr size_t kSwapOutRunBytes =
    Worker::kMaxSwapOutPages * (sizeof(Reply) + kSwapOutBytesPerPage);
static_assert(kSwapOutRunBytes <= kReplyBuffer, "a run's replies fit the reply buffer");

// A folio's kSwapOut reply data at `data` (kSwapOutBytesPerPage a page):
// pagemap before, kpageflags before, pagemap after, mincore after.
struct SwapOutData {
  SwapOutData(unsigned char* data, size_t pages)
      : n(pages),
        before(reinterpret_cast<uint64_t*>(data)),
        flags(before + n),
        after(flags + n),
        resident(reinterpret_cast<unsigned char*>(after + n)) {}
  size_t n;
  uint64_t *before, *flags, *after;
  unsigned char* resident;
};

// A run of consecutive PFNs among a command's pagemap entries: `n` pages
// from `pfn`, entries [at, at + n).
struct PfnRun {
  uint64_t pfn = 0, n = 0, at = 0;
};
constexpr uint64_t kFlagsWindow = Worker::kFlagsWindow;

// kpageflags of the present pages among `n` pagemap entries, into flags
// (0 for a page not present): the runs of consecutive PFNs (a folio's
// pages are one), sorted by PFN, read a window of neighbours at a time.
// `runs` holds n entries and `window` kFlagsWindow: the caller's, made
// before the worker joined the run's cgroup (the worker allocates nothing
// after). 0 or an errno.
struct FlagsScratch {
  std::span<PfnRun> runs;
  std::span<uint64_t> window;
};
int ReadFlags(int kpageflags_fd, const uint64_t* entries, uint64_t* flags, size_t n,
              const FlagsScratch& scratch) {
  const std::span<PfnRun> runs = scratch.runs;
  const std::span<uint64_t> window = scratch.window;
  size_t nruns = 0;
  for (size_t i = 0; i < n;) {
    flags[i] = 0;
    const PageState s = DecodePagemap(entries[i]);
    size_t run = 1;
    while (s.present && i + run < n) {
      const PageState next = DecodePagemap(entries[i + run]);
      if (!next.present || next.pfn != s.pfn + run) break;
      ++run;
    }
    if (s.present) runs[nruns++] = {s.pfn, run, i};
    i += run;
  }
  std::sort(runs.begin(), runs.begin() + static_cast<ptrdiff_t>(nruns),
            [](const PfnRun& a, const PfnRun& b) { return a.pfn < b.pfn; });
  for (size_t r = 0; r < nruns;) {
    const uint64_t lo = runs[r].pfn;
    uint64_t hi = 0;
    const size_t end = Worker::FlagsWindowEnd(
        r, nruns, [&](size_t k) { return runs[k].pfn; }, [&](size_t k) { return runs[k].n; }, &hi);
    if (!PreadFull(kpageflags_fd, window.data(), (hi - lo) * 8, lo * 8)) return errno ? errno : EIO;
    for (; r < end; ++r) std::memcpy(&flags[runs[r].at], &window[runs[r].pfn - lo], runs[r].n * 8);
  }
  return 0;
}

// Before the page-out (the caller mapped, pinned and wrote the pages): the
// pages' PFNs and kpageflags into `d`. 0 or an errno.
int ReadBeforePageout(int pagemap_fd, int kpageflags_fd, const char* p, const SwapOutData& d,
                      const FlagsScratch& scratch) {
  const uint64_t at = reinterpret_cast<uint64_t>(p) / kPageSize * 8;
  if (!PreadFull(pagemap_fd, d.before, d.n * 8, at)) return errno ? errno : EIO;
  return ReadFlags(kpageflags_fd, d.before, d.flags, d.n, scratch);
}

// After the page-out: what it left of the pages (mincore, pagemap) into `d`.
int ReadAfterPageout(int pagemap_fd, char* p, const SwapOutData& d) {
  if (mincore(p, d.n * kPageSize, d.resident) != 0) return errno;
  const uint64_t at = reinterpret_cast<uint64_t>(p) / kPageSize * 8;
  if (!PreadFull(pagemap_fd, d.after, d.n * 8, at)) return errno ? errno : EIO;
  return 0;
}

// The worker's side of kSwapOut from the fault on: fills `data` and
// returns 0 or an errno.
int SwapOutInWorker(int pagemap_fd, int kpageflags_fd, char* p, size_t len, unsigned char* data,
                    const FlagsScratch& scratch) {
  const SwapOutData d(data, len / kPageSize);
  if (int err = ReadBeforePageout(pagemap_fd, kpageflags_fd, p, d, scratch)) return err;
  if (madvise(p, len, MADV_PAGEOUT) != 0) return errno;
  return ReadAfterPageout(pagemap_fd, p, d);
}

// The child. Only the trace folios are charged to the run's memory cgroup:
// the worker joins it once its own memory (stack, heap, buffers, sanitizer
// shadow) is faulted in, and that memory is locked, so cgroup reclaim
// (drop-cache) never swaps it out. Swapped-in pages are charged to the
// cgroup recorded with their swap entry: the run's.
class WorkerChild {
 public:
  WorkerChild(int in, int out) : in_(in), out_(out) {}

  // Everything before the command loop; the first reply (the reservation's
  // address, or the error) goes to the parent. Exits on an error.
  void Setup(uint64_t reserve, const std::string& run_procs) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    signal(SIGINT, SIG_IGN);  // the parent decides when the worker ends
    void* base =
        mmap(nullptr, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) Fail(errno);
    LockWhatIsMapped();
    // The reservation itself unlocked (it is never faulted): a
    // kSwapOutRun's MADV_PAGEOUT crosses the guard pages between its
    // folios, and madvise refuses a locked VMA (can_madv_lru_vma()).
    if (Munlock(base, reserve) != 0) Fail(errno);
    PrepareDrain();
    // kSwapOut's buffer, faulted in now; the worker's own pagemap and
    // /proc/kpageflags (root) it reads.
    swap_out_.resize(kSwapOutRunBytes);
    run_data_.resize(Worker::kMaxSwapOutPages * 4);  // 32 bytes a page hold its 25
    span_map_.resize(kMaxRunSpanPages);
    span_resident_.resize(kMaxRunSpanPages);
    run_pages_.resize(Worker::kMaxSwapOutPages);
    run_flags_.resize(Worker::kMaxSwapOutPages);
    flag_runs_.resize(Worker::kMaxSwapOutPages);
    flags_window_.resize(kFlagsWindow);
    in_buf_.resize(kCmdBatch * sizeof(Cmd));
    out_buf_.resize(kReplyBuffer);
    LockBuffers();
    pagemap_fd_ = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    kpageflags_fd_ = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
    JoinRunCgroup(run_procs);
    Reply rep;
    rep.value = reinterpret_cast<uint64_t>(base);
    WriteFull(out_, &rep, sizeof rep);
  }

  // One command at a time until kQuit or the parent's end.
  [[noreturn]] void Loop() {
    Cmd c;
    while (NextCmd(&c)) {
      Reply rep;
      if (Pins(c.op)) rep.err = Pin(c.cpu);
      const bool replied = rep.err == 0 && Handle(c, &rep);
      if ((!replied && !Put(&rep, sizeof rep)) || !Flush()) break;
    }
    _exit(0);
  }

 private:
  // A command's reply (its Reply and data) gathers in out_buf_ and leaves
  // in one write when the command is done (Loop), so that the parent
  // reads it while the worker runs the next; the commands the parent sent
  // together are read together (NextCmd). Holding the replies of a whole
  // batch until the worker ran out of commands made fewer writes but let
  // the parent wait while the worker worked (seq and mthp64 8-11 % slower,
  // measured).
  bool Put(const void* p, size_t n) {
    if (out_len_ + n > out_buf_.size() && !Flush()) return false;
    if (n > out_buf_.size()) return WriteFull(out_, p, n);
    std::memcpy(out_buf_.data() + out_len_, p, n);
    out_len_ += n;
    return true;
  }
  bool Flush() {
    const bool ok = out_len_ == 0 || WriteFull(out_, out_buf_.data(), out_len_);
    out_len_ = 0;
    return ok;
  }
  // The next command from in_buf_; when it does not hold a whole one, the
  // worker reads what the parent has sent.
  bool NextCmd(Cmd* c) {
    while (in_end_ - in_pos_ < sizeof *c) {
      std::memmove(in_buf_.data(), in_buf_.data() + in_pos_, in_end_ - in_pos_);
      in_end_ -= in_pos_;
      in_pos_ = 0;
      const ssize_t r = read(in_, in_buf_.data() + in_end_, in_buf_.size() - in_end_);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      in_end_ += static_cast<size_t>(r);
    }
    std::memcpy(c, in_buf_.data() + in_pos_, sizeof *c);
    in_pos_ += sizeof *c;
    return true;
  }

  // Pins the worker to `cpu` unless it is pinned there already: a
  // sched_setaffinity() to the mask the thread has changes nothing the
  // kernel does (__set_cpus_allowed_ptr() returns early), and one per
  // record cost a system call.
  int Pin(int cpu) {
    if (cpu == pinned_cpu_) return 0;
    const int err = PinThread(cpu);
    pinned_cpu_ = err == 0 ? cpu : -1;
    return err;
  }

  // The first reply says what failed; the worker ends.
  [[noreturn]] void Fail(int err) {
    Reply rep;
    rep.err = err;
    WriteFull(out_, &rep, sizeof rep);
    _exit(1);
  }

  void LockWhatIsMapped() {
    // Grow and lock the stack the command loop will use.
    {
      volatile char pad[64 * 1024];
      std::memset(const_cast<char*>(pad), 1, sizeof pad);
      const auto lo = reinterpret_cast<uintptr_t>(pad) & ~(kPageSize - 1);
      Mlock(reinterpret_cast<void*>(lo), sizeof pad + 2 * kPageSize);
    }
    // Everything mapped now (the binary, heap, stack, the reservation, a
    // sanitizer's shadow) is locked as it faults in, so nothing of the
    // worker but the trace folios mapped later (MAP_FIXED: new mappings, not
    // locked without MCL_FUTURE) goes to swap: not by the run's drop-cache,
    // nor by another agent's reclaim (a DAMON pageout scheme).
    if (syscall(SYS_mlockall, MCL_CURRENT | MCL_ONFAULT) != 0) Fail(errno);
  }

  // The buffers made after LockWhatIsMapped (its MCL_CURRENT does not
  // cover memory mapped later, and the heap grows by new mappings) locked
  // like the rest of the worker: only trace folios go to swap.
  void LockBuffers() {
    const std::pair<const void*, size_t> buffers[] = {
        {swap_out_.data(), swap_out_.size()},
        {run_data_.data(), run_data_.size() * sizeof(uint64_t)},
        {span_map_.data(), span_map_.size() * sizeof(uint64_t)},
        {span_resident_.data(), span_resident_.size()},
        {run_pages_.data(), run_pages_.size() * sizeof(uint64_t)},
        {run_flags_.data(), run_flags_.size() * sizeof(uint64_t)},
        {flag_runs_.data(), flag_runs_.size() * sizeof(PfnRun)},
        {flags_window_.data(), flags_window_.size() * sizeof(uint64_t)},
        {in_buf_.data(), in_buf_.size()},
        {out_buf_.data(), out_buf_.size()}};
    for (const auto& [p, n] : buffers)
      if (Mlock(p, n) != 0) Fail(errno);
  }

  // kDrainLru: the CPUs the worker may run on (its mask before any pin),
  // and a page it never touches in a mapping that is not locked, for
  // MADV_COLD (which drains the calling CPU's folio batches first and then
  // finds nothing to deactivate).
  void PrepareDrain() {
    CPU_ZERO(&cpus_);
    drain_page_ =
        mmap(nullptr, kPageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (sched_getaffinity(0, sizeof cpus_, &cpus_) != 0 || drain_page_ == MAP_FAILED)
      Fail(errno ? errno : EIO);
  }

  // Moves the worker into the run's memory cgroup (its cgroup.procs file,
  // "" for none) once, after everything of its own is faulted in: what it
  // faults from now on, the trace folios, is charged there. Its own pages
  // stay charged to the cgroup it came from, and they are locked, so the
  // run's cgroup reclaim (drop-cache) can take only trace folios.
  void JoinRunCgroup(const std::string& run_procs) {
    if (run_procs.empty()) return;
    const int fd = open(run_procs.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) Fail(errno);
    char me[24];
    const int n = std::snprintf(me, sizeof me, "%d", static_cast<int>(getpid()));
    const bool ok = write(fd, me, static_cast<size_t>(n)) == n;
    const int err = errno;
    close(fd);
    if (!ok) Fail(err ? err : EIO);
  }

  // Runs c; true when it sent its reply itself (with data after it).
  bool Handle(const Cmd& c, Reply* rep) {
    auto* p = reinterpret_cast<char*>(c.addr);
    const size_t len = static_cast<size_t>(c.len);
    switch (c.op) {
      case kSwapOut:
        return SwapOut(p, len, rep);
      case kSwapOutRun:
        return SwapOutRun(c, rep);
      case kFloor:
        return Floor(c, rep);
      case kFree:
        Munlock(p, len);
        if (madvise(p, len, MADV_DONTNEED) != 0) rep->err = errno;
        return false;
      case kReadIn:
        rep->value = ReadIn(p, len);
        return false;
      case kMincore:
        return Mincore(p, len, rep);
      case kLock:
        if (Mlock(p, len) != 0) rep->err = errno;
        return false;
      case kDrainLru:
        rep->err = DrainLru();
        return false;
      case kQuit:
        _exit(0);
      default:
        rep->err = EINVAL;
        return false;
    }
  }

  // A new mapping, then every page written: non-zero data (a zero-filled
  // folio skips the write-out and leaves the swap cache at once). 0 or an
  // errno.
  static int MapAndWrite(char* p, size_t len, bool map = true) {
    if (map && mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
                    0) == MAP_FAILED)
      return errno;
    for (size_t off = 0; off < len; off += kPageSize) {
      const uint64_t words[2] = {kTracePageMagic, reinterpret_cast<uint64_t>(p) + off};
      std::memcpy(p + off, words, sizeof words);
    }
    errno = 0;
    return 0;
  }

  bool SwapOut(char* p, size_t len, Reply* rep) {
    if (len > Worker::kMaxSwapOutPages * kPageSize) {
      rep->err = EINVAL;
      return false;
    }
    if ((rep->err = MapAndWrite(p, len)) != 0) return false;
    if ((rep->err = SwapOutInWorker(pagemap_fd_, kpageflags_fd_, p, len, swap_out_.data(),
                                    Scratch())) != 0)
      return false;
    rep->value = len / kPageSize * kSwapOutBytesPerPage;
    if (!Put(rep, sizeof *rep) || !Put(swap_out_.data(), rep->value)) _exit(1);
    return true;
  }

  // `count` folios of `len` bytes, `stride` apart from c.addr, each
  // mapped and written as by kSwapOut, then paged out by one MADV_PAGEOUT
  // over all of them (the guard pages between them are PROT_NONE, which
  // the page-out walks past). Each folio is its own VMA, and the kernel
  // reclaims the folios of one VMA before it walks the next
  // (madvise_pageout(), 6.1-6.18), so they are asked for slots in the same
  // order as by one call each; what changes is that the writes of all of
  // them leave in one plug. Replies: one per folio, as for kSwapOut, in
  // one write; on an error every folio's reply carries it.
  bool SwapOutRun(const Cmd& c, Reply* rep) {
    const size_t pages = c.len / kPageSize;
    if (c.count == 0 || c.len == 0 || c.len % kPageSize || c.stride < c.len ||
        c.stride % kPageSize || c.count * pages > Worker::kMaxSwapOutPages ||
        c.stride > kMaxRunSpanPages * kPageSize || RunSpanPages(c) > kMaxRunSpanPages) {
      rep->err = EINVAL;
      return SendRunError(c.count, rep);
    }
    auto* first = reinterpret_cast<char*>(c.addr);
    for (uint64_t k = 0; k < c.count; ++k)
      if ((rep->err = MapAndWrite(first + k * c.stride, c.len)) != 0)
        return SendRunError(c.count, rep);
    if ((rep->err = ReadRunBefore(c)) != 0) return SendRunError(c.count, rep);
    if (madvise(first, RunSpanPages(c) * kPageSize, MADV_PAGEOUT) != 0) {
      rep->err = errno;
      return SendRunError(c.count, rep);
    }
    if ((rep->err = ReadRunAfter(c)) != 0) return SendRunError(c.count, rep);
    const size_t per = sizeof(Reply) + pages * kSwapOutBytesPerPage;
    for (uint64_t k = 0; k < c.count; ++k) {
      Reply ok;
      ok.value = pages * kSwapOutBytesPerPage;
      std::memcpy(swap_out_.data() + k * per, &ok, sizeof ok);
      std::memcpy(swap_out_.data() + k * per + sizeof ok, FolioData(k, pages).before, ok.value);
    }
    if (!Put(swap_out_.data(), c.count * per)) _exit(1);
    return true;
  }

  // The pages from a kSwapOutRun's first folio to the end of its last
  // (count and stride checked first: count ≤ 512, stride ≤ the span's bound).
  static uint64_t RunSpanPages(const Cmd& c) {
    return ((c.count - 1) * c.stride + c.len) / kPageSize;
  }
  static constexpr uint64_t kMaxRunSpanPages = 2 * Worker::kMaxSwapOutPages;

  // A run's reads before its page-out, for all its folios at once: one
  // pagemap read over the span (guard pages included), and kpageflags per
  // run of consecutive PFNs across the folios' pages, into FolioData.
  int ReadRunBefore(const Cmd& c) {
    const size_t pages = c.len / kPageSize, step = c.stride / kPageSize, n = c.count * pages;
    const uint64_t at = c.addr / kPageSize * 8;
    if (!PreadFull(pagemap_fd_, span_map_.data(), RunSpanPages(c) * 8, at))
      return errno ? errno : EIO;
    for (uint64_t k = 0; k < c.count; ++k)
      std::memcpy(&run_pages_[k * pages], &span_map_[k * step], pages * 8);
    if (int err = ReadFlags(kpageflags_fd_, run_pages_.data(), run_flags_.data(), n, Scratch()))
      return err;
    for (uint64_t k = 0; k < c.count; ++k) {
      const SwapOutData d = FolioData(k, pages);
      std::memcpy(d.before, &run_pages_[k * pages], pages * 8);
      std::memcpy(d.flags, &run_flags_[k * pages], pages * 8);
    }
    return 0;
  }

  // After the page-out: one mincore and one pagemap read over the span.
  int ReadRunAfter(const Cmd& c) {
    const size_t pages = c.len / kPageSize, step = c.stride / kPageSize;
    auto* first = reinterpret_cast<char*>(c.addr);
    if (mincore(first, RunSpanPages(c) * kPageSize, span_resident_.data()) != 0) return errno;
    if (!PreadFull(pagemap_fd_, span_map_.data(), RunSpanPages(c) * 8, c.addr / kPageSize * 8))
      return errno ? errno : EIO;
    for (uint64_t k = 0; k < c.count; ++k) {
      const SwapOutData d = FolioData(k, pages);
      std::memcpy(d.after, &span_map_[k * step], pages * 8);
      std::memcpy(d.resident, &span_resident_[k * step], pages);
    }
    return 0;
  }

  // Folio k's data of a kSwapOutRun, 8-byte aligned: copied into the
  // reply after its Reply.
  SwapOutData FolioData(uint64_t k, size_t pages) {
    return SwapOutData(reinterpret_cast<unsigned char*>(run_data_.data() + k * pages * 4), pages);
  }

  // The same error reply for each of a run's `count` folios.
  bool SendRunError(uint64_t count, Reply* rep) {
    for (uint64_t k = 0; k < count; ++k)
      if (!Put(rep, sizeof *rep)) _exit(1);
    return true;
  }

  // kFloor: `len` bytes of trace pages swapped out by the kernel alone,
  // as bench/pageout_floor.c does, twice: (1) one new anonymous mapping
  // (no huge pages), every page written, one MADV_PAGEOUT of them all;
  // (2) with `folios` (c.addr) > 1, the same number of pages as that many
  // mappings as even as can be, each mapped into a PROT_NONE reservation
  // with a guard page after it (its own VMA, as the run maps each folio),
  // in `calls` (c.stride) groups of consecutive mappings, each group
  // written and paged out by one call over its span, one after the other.
  // Each phase's mappings, writes (faults) and page-outs are timed, its
  // pages on swap counted from pagemap, and its mappings removed (their
  // slots freed) before the next. Replies with four numbers: nanoseconds
  // and pages swapped of each.
  bool Floor(const Cmd& c, Reply* rep) {
    uint64_t out[4] = {};
    rep->err = FloorPhase(c.len, 1, 1, &out[0], &out[1]);
    if (rep->err == 0 && c.addr > 1)
      rep->err = FloorPhase(c.len, c.addr, c.stride, &out[2], &out[3]);
    if (rep->err != 0) return false;
    rep->value = sizeof out;
    if (!Put(rep, sizeof *rep) || !Put(out, sizeof out)) _exit(1);
    return true;
  }

  // One phase of Floor; 0 or the errno.
  int FloorPhase(size_t len, uint64_t folios, uint64_t calls, uint64_t* ns, uint64_t* swapped) {
    const size_t pages = len / kPageSize, guard = folios > 1 ? kPageSize : 0;
    const size_t span = len + folios * guard;
    void* m = mmap(nullptr, span, folios > 1 ? PROT_NONE : PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (folios > 1 ? MAP_NORESERVE : 0), -1, 0);
    if (m == MAP_FAILED) return errno;
    auto* const base = static_cast<char*>(m);
    timespec t0{}, t1{};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int err = 0;
    char* cursor = base;
    for (uint64_t g = 0, f = 0; err == 0 && g < calls; ++g) {
      char* const group = cursor;
      const uint64_t in_group = folios / calls + (g < folios % calls);
      for (uint64_t end = f + in_group; err == 0 && f < end; ++f) {
        const size_t part = (pages / folios + (f < pages % folios)) * kPageSize;
        if (folios > 1 && mmap(cursor, part, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
          err = errno;
          break;
        }
        (void)madvise(cursor, part, MADV_NOHUGEPAGE);
        err = MapAndWrite(cursor, part, /*map=*/false);
        cursor += part + guard;
      }
      if (err == 0 &&
          madvise(group, static_cast<size_t>(cursor - group) - guard, MADV_PAGEOUT) != 0)
        err = errno;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *ns = static_cast<uint64_t>((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec));
    uint64_t entries[512];  // pagemap, a chunk at a time (on the locked stack)
    const size_t first = reinterpret_cast<uint64_t>(base) / kPageSize, all = span / kPageSize;
    for (size_t i = 0; err == 0 && i < all; i += std::size(entries)) {
      const size_t n = std::min(std::size(entries), all - i);
      if (!PreadFull(pagemap_fd_, entries, n * 8, (first + i) * 8)) err = errno ? errno : EIO;
      for (size_t k = 0; err == 0 && k < n; ++k) *swapped += DecodePagemap(entries[k]).swapped;
    }
    munmap(base, span);
    return err;
  }

  // Touches every page (a swap-in where it is not resident). Not locked
  // here: the caller locks every page that came in with one kLock per run
  // of pages (Runner::DoCache), so that a large folio swapped in whole lies
  // inside one mlock call and is mlocked as a folio. Locking the asked-for
  // page first split the mapping, left the folio evictable, and a later
  // drop-cache's reclaim could give it swap slots and take them back
  // (docs/fidelity.md, mixed on zram).
  static uint64_t ReadIn(const char* p, size_t len) {
    uint64_t sum = 0;
    for (size_t off = 0; off < len; off += kPageSize)
      sum += static_cast<unsigned char>(*(const volatile char*)(p + off));
    return sum;
  }

  // Sent after the reply: one byte per page.
  bool Mincore(char* p, size_t len, Reply* rep) {
    unsigned char vec[kMaxMincorePages];
    const size_t pages = len / kPageSize;
    if (pages > kMaxMincorePages) {
      rep->err = EINVAL;
    } else if (mincore(p, len, vec) != 0) {
      rep->err = errno;
    } else {
      rep->value = pages;
      if (!Put(rep, sizeof *rep) || !Put(vec, pages)) _exit(1);
      return true;
    }
    return false;
  }

  int DrainLru() {
    int err = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && err == 0; ++cpu) {
      if (!CPU_ISSET(cpu, &cpus_)) continue;
      if ((err = Pin(cpu)) == 0 && madvise(drain_page_, kPageSize, MADV_COLD) != 0) err = errno;
    }
    return err;
  }

  int in_, out_;
  int pinned_cpu_ = -1;  // the one CPU of the worker's mask, -1: not pinned (yet)
  cpu_set_t cpus_;
  void* drain_page_ = nullptr;
  std::vector<unsigned char> swap_out_;  // a kSwapOut's data, a kSwapOutRun's replies
  std::vector<uint64_t> run_data_;       // a kSwapOutRun's data, folio by folio
  // A kSwapOutRun's reads over its whole span (guard pages too), and its
  // folios' pagemap entries and kpageflags in a row.
  std::vector<uint64_t> span_map_, run_pages_, run_flags_;
  std::vector<unsigned char> span_resident_;
  // ReadFlags' runs and window.
  std::vector<PfnRun> flag_runs_;
  std::vector<uint64_t> flags_window_;
  FlagsScratch Scratch() { return {flag_runs_, flags_window_}; }
  // Commands read ahead [in_pos_, in_end_), replies not written yet.
  std::vector<unsigned char> in_buf_, out_buf_;
  size_t in_pos_ = 0, in_end_ = 0, out_len_ = 0;
  int pagemap_fd_ = -1, kpageflags_fd_ = -1;
};

[[noreturn]] void ChildMain(int in, int out, uint64_t reserve, const std::string& run_procs) {
  WorkerChild child(in, out);
  child.Setup(reserve, run_procs);
  child.Loop();
}

}  // namespace

Result<std::unique_ptr<Worker>> Worker::Start(uint64_t reserve_bytes,
                                              const std::string& cgroup_dir) {
  int to[2], from[2];
  if (pipe2(to, O_CLOEXEC) != 0)
    return Status(-errno, std::string("pipe: ") + std::strerror(errno));
  if (pipe2(from, O_CLOEXEC) != 0) {
    const int err = errno;
    close(to[0]);
    close(to[1]);
    return Status(-err, std::string("pipe: ") + std::strerror(err));
  }
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    for (int fd : {to[0], to[1], from[0], from[1]}) close(fd);
    return Status(-err, std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    close(to[1]);
    close(from[0]);
    ChildMain(to[0], from[1], reserve_bytes,
              cgroup_dir.empty() ? "" : cgroup_dir + "/cgroup.procs");
  }
  close(to[0]);
  close(from[1]);
  std::unique_ptr<Worker> w(new Worker());
  w->pid_ = pid;
  w->to_ = to[1];
  w->from_ = from[0];
  Reply rep;
  if (!ReadFull(w->from_, &rep, sizeof rep))
    return Status(-EIO, "the worker process died while starting");
  if (rep.err != 0)
    return Status(-rep.err, "worker start (reserve address space, join the cgroup " + cgroup_dir +
                                "): " + std::strerror(rep.err));
  w->base_ = rep.value;
  const std::string pagemap = "/proc/" + std::to_string(pid) + "/pagemap";
  w->pagemap_fd_ = open(pagemap.c_str(), O_RDONLY | O_CLOEXEC);
  if (w->pagemap_fd_ < 0) return Status(-errno, "open " + pagemap + ": " + std::strerror(errno));
  return w;
}

Worker::~Worker() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int st = 0;
    while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
  }
  for (int fd : {to_, from_, pagemap_fd_})
    if (fd >= 0) close(fd);
}

Status Worker::Command(int op, int cpu, uint64_t addr, uint64_t len, std::vector<uint8_t>* data) {
  if (Status st = Send(op, cpu, addr, len); !st.ok()) return st;
  return Receive(op, cpu, data);
}

namespace {
const char* OpName(int op) {
  static const char* const kNames[] = {"",     "swap-out",  "free", "read-in",  "mincore",
                                       "lock", "drain-lru", "quit", "swap-out", "floor"};
  return op > 0 && op <= kFloor ? kNames[op] : "?";
}
}  // namespace

Status Worker::Send(int op, int cpu, uint64_t addr, uint64_t len, uint64_t stride, uint64_t count) {
  Cmd c;
  c.op = op;
  c.cpu = cpu;
  c.addr = addr;
  c.len = len;
  c.stride = stride;
  c.count = count;
  if (Pins(op)) last_cpu_ = cpu;
  out_.push_back(c);
  return out_.size() < kCmdBatch ? Status::Ok() : FlushCommands();
}

// The commands sent so far, in one write: the worker runs them as they
// come, and replies once none is left to read.
Status Worker::FlushCommands() {
  if (out_.empty()) return Status::Ok();
  const int op = out_.front().op;
  const bool ok = WriteFull(to_, out_.data(), out_.size() * sizeof(Cmd));
  out_.clear();
  if (!ok) return Status(-EIO, std::string("the worker process died before ") + OpName(op));
  return Status::Ok();
}

// What the worker wrote is read through in_: one read(2) takes all it has
// written so far (a page-out run's replies, one write for all its folios),
// not two calls per reply. A part larger than the buffer is read whole.
bool Worker::ReadReply(void* p, size_t n) {
  auto* c = static_cast<unsigned char*>(p);
  while (n > 0) {
    if (in_pos_ == in_end_) {
      if (in_.empty()) in_.resize(kReplyReadAhead);
      if (n >= in_.size()) return ReadFull(from_, c, n);
      const ssize_t r = read(from_, in_.data(), in_.size());
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      in_pos_ = 0;
      in_end_ = static_cast<size_t>(r);
    }
    const size_t k = std::min(n, in_end_ - in_pos_);
    std::memcpy(c, in_.data() + in_pos_, k);
    in_pos_ += k;
    c += k;
    n -= k;
  }
  return true;
}

Status Worker::Receive(int op, int cpu, std::vector<uint8_t>* data) {
  if (Status st = FlushCommands(); !st.ok()) return st;
  const char* const name = OpName(op);
  Reply rep;
  if (!ReadReply(&rep, sizeof rep))
    return Status(-EIO, std::string("the worker process died during ") + name);
  if (rep.err == 0 && data != nullptr) {
    if (rep.value > std::max(kMaxMincorePages, kMaxSwapOutPages * kSwapOutBytesPerPage))
      return Status(-EIO, std::string("the worker's reply to ") + name + " is too long");
    data->resize(rep.value);
    if (!ReadReply(data->data(), data->size()))
      return Status(-EIO, std::string("the worker process died during ") + name);
  }
  if (rep.err != 0)
    return Status(-rep.err, std::string("worker ") + name + " on CPU " + std::to_string(cpu) +
                                ": " + std::strerror(rep.err));
  return Status::Ok();
}

Status Worker::SendSwapOut(int cpu, uint64_t addr, uint64_t len) {
  if (len == 0 || len % kPageSize || len > kMaxSwapOutPages * kPageSize)
    return Status(-EINVAL, "a swap-out of " + std::to_string(len) + " bytes");
  return Send(kSwapOut, cpu, addr, len);
}

Status Worker::SendSwapOutRun(int cpu, uint64_t addr, uint64_t len, uint64_t stride,
                              uint64_t count) {
  if (len == 0 || len % kPageSize || stride < len || stride % kPageSize || count == 0 ||
      count * (len / kPageSize) > kMaxSwapOutPages)
    return Status(-EINVAL, "a swap-out of " + std::to_string(count) + " folios of " +
                               std::to_string(len) + " bytes, " + std::to_string(stride) +
                               " apart");
  return Send(kSwapOutRun, cpu, addr, len, stride, count);
}

Result<SwapOutPages> Worker::ReceiveSwapOut() {
  std::vector<uint8_t> data;
  if (Status st = Receive(kSwapOut, last_cpu_, &data); !st.ok()) return st;
  if (data.size() % kSwapOutBytesPerPage) return Status(-EIO, "a swap-out reply of a part page");
  const size_t n = data.size() / kSwapOutBytesPerPage;
  std::vector<uint64_t> words(3 * n);
  std::memcpy(words.data(), data.data(), words.size() * 8);
  SwapOutPages s;
  for (size_t i = 0; i < n; ++i) {
    s.before.push_back(DecodePagemap(words[i]));
    s.flags.push_back(words[n + i]);
    s.after.push_back(DecodePagemap(words[2 * n + i]));
  }
  s.resident.assign(data.begin() + static_cast<ptrdiff_t>(24 * n), data.end());
  return s;
}

Status Worker::Free(int cpu, uint64_t addr, uint64_t len) { return Command(kFree, cpu, addr, len); }
Status Worker::SendFree(int cpu, uint64_t addr, uint64_t len) {
  return Send(kFree, cpu, addr, len);
}
Status Worker::ReceiveFree(int cpu) { return Receive(kFree, cpu, nullptr); }

Result<Worker::FloorResult> Worker::Floor(uint64_t pages, uint64_t folios, uint64_t calls) {
  if (pages == 0 || pages > kMaxFloorPages || folios > pages || calls > folios ||
      (folios > 1 && calls == 0))
    return Status(-EINVAL, "a floor of " + std::to_string(pages) + " pages, " +
                               std::to_string(folios) + " folios, " + std::to_string(calls) +
                               " calls");
  if (Status st = Send(kFloor, 0, folios, pages * kPageSize, calls); !st.ok()) return st;
  std::vector<uint8_t> data;
  if (Status st = Receive(kFloor, 0, &data); !st.ok()) return st;
  uint64_t v[4];
  if (data.size() != sizeof v)
    return Status(-EIO, "a floor reply of " + std::to_string(data.size()) + " bytes");
  std::memcpy(v, data.data(), sizeof v);
  FloorResult f;
  f.seconds = static_cast<double>(v[0]) / 1e9;
  f.swapped = v[1];
  if (folios > 1) {
    f.folios = folios;
    f.calls = calls;
    f.calls_seconds = static_cast<double>(v[2]) / 1e9;
    f.calls_swapped = v[3];
  }
  return f;
}
Status Worker::ReadIn(int cpu, uint64_t addr, uint64_t len) {
  return Command(kReadIn, cpu, addr, len);
}
Status Worker::Lock(uint64_t addr, uint64_t len) { return Command(kLock, 0, addr, len); }
Status Worker::DrainLru() { return Command(kDrainLru, 0, 0, 0); }

Result<std::vector<uint8_t>> Worker::Mincore(uint64_t addr, uint64_t len) {
  std::vector<uint8_t> v;
  if (Status st = Command(kMincore, 0, addr, len, &v); !st.ok()) return st;
  return v;
}

Result<std::vector<PageState>> Worker::Pages(uint64_t addr, uint64_t pages) const {
  std::vector<uint64_t> raw(pages);
  const ssize_t n =
      pread(pagemap_fd_, raw.data(), pages * 8, static_cast<off_t>(addr / kPageSize * 8));
  if (n != static_cast<ssize_t>(pages * 8))
    return Status(n < 0 ? -errno : -EIO, "read /proc/" + std::to_string(pid_) +
                                             "/pagemap: " + std::strerror(n < 0 ? errno : EIO));
  std::vector<PageState> out(pages);
  for (uint64_t i = 0; i < pages; ++i) out[i] = DecodePagemap(raw[i]);
  return out;
}

// /proc/kpageflags, opened once for the process (a run reads it for every
// folio it pages out and every wait for writeback).
int KpageflagsFd() {
  static const int fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
  return fd;
}

Result<std::vector<uint64_t>> Worker::PageFlags(uint64_t pfn, uint64_t n) {
  const int fd = KpageflagsFd();
  if (fd < 0) return Status(-EACCES, "open /proc/kpageflags: cannot (root only)");
  std::vector<uint64_t> v(n);
  const ssize_t got = pread(fd, v.data(), n * 8, static_cast<off_t>(pfn * 8));
  if (got != static_cast<ssize_t>(n * 8)) return Status(-EIO, "read /proc/kpageflags");
  return v;
}

Result<uint64_t> Worker::PageFlags(uint64_t pfn) {
  auto v = PageFlags(pfn, 1);
  if (!v.ok()) return v.status();
  return (*v)[0];
}

}  // namespace swaplab::kernel
