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
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "swaplab/alloc/types.h"
#include "swaplab/kernel/host.h"

namespace swaplab::kernel {

namespace {

using alloc::kPageSize;

enum Op : int32_t { kSwapOut = 1, kFree, kReadIn, kMincore, kLock, kDrainLru, kQuit };
constexpr uint64_t kMaxMincorePages = 512;
// The commands the worker runs pinned to the command's CPU.
// (kDrainLru pins to every CPU in turn.)
bool Pins(int32_t op) { return op != kQuit && op != kMincore && op != kLock && op != kDrainLru; }

struct Cmd {
  int32_t op = 0, cpu = 0;
  uint64_t addr = 0, len = 0;
};
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

// The worker's side of kSwapOut from the fault on (the caller mapped,
// pinned and wrote the pages): fills `data` (kSwapOutBytesPerPage a page)
// and returns 0 or an errno.
int SwapOutInWorker(int pagemap_fd, int kpageflags_fd, char* p, size_t len,
                    std::vector<unsigned char>& data) {
  const size_t n = len / kPageSize;
  auto* before = reinterpret_cast<uint64_t*>(data.data());
  uint64_t* flags = before + n;
  uint64_t* after = flags + n;
  auto* resident = reinterpret_cast<unsigned char*>(after + n);
  const uint64_t at = reinterpret_cast<uint64_t>(p) / kPageSize * 8;
  if (!PreadFull(pagemap_fd, before, n * 8, at)) return errno ? errno : EIO;
  // kpageflags: one read per run of present pages at consecutive PFNs (a
  // folio's pages are one run).
  for (size_t i = 0; i < n;) {
    flags[i] = 0;
    const PageState s = DecodePagemap(before[i]);
    size_t run = 1;
    while (s.present && i + run < n) {
      const PageState next = DecodePagemap(before[i + run]);
      if (!next.present || next.pfn != s.pfn + run) break;
      ++run;
    }
    if (s.present && !PreadFull(kpageflags_fd, &flags[i], run * 8, s.pfn * 8))
      return errno ? errno : EIO;
    i += run;
  }
  if (madvise(p, len, MADV_PAGEOUT) != 0) return errno;
  if (mincore(p, len, resident) != 0) return errno;
  if (!PreadFull(pagemap_fd, after, n * 8, at)) return errno ? errno : EIO;
  return 0;
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
    PrepareDrain();
    // kSwapOut's buffer, faulted in now; the worker's own pagemap and
    // /proc/kpageflags (root) it reads.
    swap_out_.resize(Worker::kMaxSwapOutPages * kSwapOutBytesPerPage);
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
    while (ReadFull(in_, &c, sizeof c)) {
      Reply rep;
      if (Pins(c.op)) rep.err = Pin(c.cpu);
      if (rep.err == 0 && Handle(c, &rep)) continue;  // the handler replied
      if (!WriteFull(out_, &rep, sizeof rep)) break;
    }
    _exit(0);
  }

 private:
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
        return SwapOut(c, p, len, rep);
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
  // folio skips the write-out and leaves the swap cache at once).
  bool SwapOut(const Cmd& c, char* p, size_t len, Reply* rep) {
    if (len > Worker::kMaxSwapOutPages * kPageSize) {
      rep->err = EINVAL;
      return false;
    }
    if (mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
        MAP_FAILED) {
      rep->err = errno;
      return false;
    }
    for (size_t off = 0; off < len; off += kPageSize) {
      const uint64_t words[2] = {kTracePageMagic, c.addr + off};
      std::memcpy(p + off, words, sizeof words);
    }
    errno = 0;
    if ((rep->err = SwapOutInWorker(pagemap_fd_, kpageflags_fd_, p, len, swap_out_)) != 0)
      return false;
    rep->value = len / kPageSize * kSwapOutBytesPerPage;
    if (!WriteFull(out_, rep, sizeof *rep) || !WriteFull(out_, swap_out_.data(), rep->value))
      _exit(1);
    return true;
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
      if (!WriteFull(out_, rep, sizeof *rep) || !WriteFull(out_, vec, pages)) _exit(1);
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
  std::vector<unsigned char> swap_out_;
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
  static const char* const kNames[] = {"",        "swap-out", "free",      "read-in",
                                       "mincore", "lock",     "drain-lru", "quit"};
  return op > 0 && op <= kQuit ? kNames[op] : "?";
}
}  // namespace

Status Worker::Send(int op, int cpu, uint64_t addr, uint64_t len) {
  Cmd c;
  c.op = op;
  c.cpu = cpu;
  c.addr = addr;
  c.len = len;
  if (Pins(op)) last_cpu_ = cpu;
  if (!WriteFull(to_, &c, sizeof c))
    return Status(-EIO, std::string("the worker process died before ") + OpName(op));
  return Status::Ok();
}

Status Worker::Receive(int op, int cpu, std::vector<uint8_t>* data) {
  const char* const name = OpName(op);
  Reply rep;
  if (!ReadFull(from_, &rep, sizeof rep))
    return Status(-EIO, std::string("the worker process died during ") + name);
  if (rep.err == 0 && data != nullptr) {
    if (rep.value > std::max(kMaxMincorePages, kMaxSwapOutPages * kSwapOutBytesPerPage))
      return Status(-EIO, std::string("the worker's reply to ") + name + " is too long");
    data->resize(rep.value);
    if (!ReadFull(from_, data->data(), data->size()))
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
