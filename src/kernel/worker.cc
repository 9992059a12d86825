// The worker process (worker.h).
#include "swaplab/kernel/worker.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "swaplab/alloc/types.h"
#include "swaplab/kernel/host.h"

namespace swaplab::kernel {

namespace {

using alloc::kPageSize;

enum Op : int32_t { kMap = 1, kTouch, kPageout, kFree, kReadIn, kMincore, kLock, kQuit };
constexpr uint64_t kMaxMincorePages = 512;
// The commands the worker runs pinned to the command's CPU.
bool Pins(int32_t op) { return op != kMap && op != kQuit && op != kMincore && op != kLock; }

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

// The child. Only the trace folios are charged to the run's memory cgroup:
// the worker joins it just while it faults them in (kTouch) and goes back to
// its home cgroup at once, so cgroup reclaim (drop-cache) never swaps out the
// worker's own pages (stack, heap, sanitizer shadow). Swapped-in pages are
// charged to the cgroup recorded with their swap entry: the run's.
[[noreturn]] void ChildMain(int in, int out, uint64_t reserve, const std::string& run_procs,
                            const std::string& home_procs) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  signal(SIGINT, SIG_IGN);  // the parent decides when the worker ends
  Reply rep;
  void* base =
      mmap(nullptr, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    rep.err = errno;
    WriteFull(out, &rep, sizeof rep);
    _exit(1);
  }
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
  if (syscall(SYS_mlockall, MCL_CURRENT | MCL_ONFAULT) != 0) {
    rep.err = errno;
    WriteFull(out, &rep, sizeof rep);
    _exit(1);
  }
  int run_fd = -1, home_fd = -1;
  char me[24];
  const int me_len = std::snprintf(me, sizeof me, "%d", static_cast<int>(getpid()));
  if (!run_procs.empty()) {
    run_fd = open(run_procs.c_str(), O_WRONLY | O_CLOEXEC);
    home_fd = open(home_procs.c_str(), O_WRONLY | O_CLOEXEC);
    if (run_fd < 0 || home_fd < 0) {
      rep.err = errno ? errno : EIO;
      WriteFull(out, &rep, sizeof rep);
      _exit(1);
    }
  }
  auto join = [&](int fd) {
    return fd < 0 || write(fd, me, static_cast<size_t>(me_len)) == me_len ? 0 : errno;
  };
  rep.value = reinterpret_cast<uint64_t>(base);
  WriteFull(out, &rep, sizeof rep);
  Cmd c;
  while (ReadFull(in, &c, sizeof c)) {
    rep = Reply{};
    auto* p = reinterpret_cast<char*>(c.addr);
    const size_t len = static_cast<size_t>(c.len);
    if (Pins(c.op)) rep.err = PinThread(c.cpu);
    if (rep.err == 0) {
      switch (c.op) {
        case kMap:
          if (mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
                   0) == MAP_FAILED)
            rep.err = errno;
          break;
        case kTouch:
          // Non-zero data: a zero-filled folio skips the write-out and
          // leaves the swap cache at once.
          if ((rep.err = join(run_fd)) != 0) break;
          for (size_t off = 0; off < len; off += kPageSize) {
            const uint64_t words[2] = {kTracePageMagic, c.addr + off};
            std::memcpy(p + off, words, sizeof words);
          }
          rep.err = join(home_fd);
          break;
        case kPageout:
          if (madvise(p, len, MADV_PAGEOUT) != 0) rep.err = errno;
          break;
        case kFree:
          Munlock(p, len);
          if (madvise(p, len, MADV_DONTNEED) != 0) rep.err = errno;
          break;
        case kReadIn: {
          uint64_t sum = 0;
          for (size_t off = 0; off < len; off += kPageSize)
            sum += static_cast<unsigned char>(*(volatile char*)(p + off));
          rep.value = sum;
          // Not locked here: the caller locks every page that came in with
          // one kLock per run of pages (Runner::DoCache), so that a large
          // folio swapped in whole lies inside one mlock call and is
          // mlocked as a folio. Locking the asked-for page first split the
          // mapping, left the folio evictable, and a later drop-cache's
          // reclaim could give it swap slots and take them back
          // (docs/fidelity.md, mixed on zram).
          break;
        }
        case kMincore: {
          // Sent after the reply: one byte per page.
          unsigned char vec[kMaxMincorePages];
          const size_t pages = len / kPageSize;
          if (pages > kMaxMincorePages) {
            rep.err = EINVAL;
          } else if (mincore(p, len, vec) != 0) {
            rep.err = errno;
          } else {
            rep.value = pages;
            if (!WriteFull(out, &rep, sizeof rep) || !WriteFull(out, vec, pages)) _exit(1);
            continue;
          }
          break;
        }
        case kLock:
          if (Mlock(p, len) != 0) rep.err = errno;
          break;
        case kQuit:
          _exit(0);
        default:
          rep.err = EINVAL;
      }
    }
    if (!WriteFull(out, &rep, sizeof rep)) break;
  }
  _exit(0);
}

}  // namespace

Result<std::unique_ptr<Worker>> Worker::Start(uint64_t reserve_bytes, const std::string& cgroup_dir,
                                              const std::string& home_cgroup_dir) {
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
    ChildMain(to[0], from[1], reserve_bytes, cgroup_dir.empty() ? "" : cgroup_dir + "/cgroup.procs",
              home_cgroup_dir + "/cgroup.procs");
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
    return Status(-rep.err, "worker start (reserve address space, open cgroup.procs of " +
                                cgroup_dir + " and " + home_cgroup_dir +
                                "): " + std::strerror(rep.err));
  w->base_ = rep.value;
  return w;
}

Worker::~Worker() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int st = 0;
    while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
  }
  if (to_ >= 0) close(to_);
  if (from_ >= 0) close(from_);
}

Status Worker::Command(int op, int cpu, uint64_t addr, uint64_t len, std::vector<uint8_t>* data) {
  static const char* const kNames[] = {"",        "map",     "touch", "pageout", "free",
                                       "read-in", "mincore", "lock",  "quit"};
  Cmd c;
  c.op = op;
  c.cpu = cpu;
  c.addr = addr;
  c.len = len;
  if (Pins(op)) last_cpu_ = cpu;
  Reply rep;
  if (!WriteFull(to_, &c, sizeof c) || !ReadFull(from_, &rep, sizeof rep))
    return Status(-EIO, std::string("the worker process died during ") + kNames[op]);
  if (rep.err == 0 && data != nullptr) {
    data->resize(rep.value);
    if (!ReadFull(from_, data->data(), data->size()))
      return Status(-EIO, std::string("the worker process died during ") + kNames[op]);
  }
  if (rep.err != 0)
    return Status(-rep.err, std::string("worker ") + kNames[op] + " on CPU " + std::to_string(cpu) +
                                ": " + std::strerror(rep.err));
  return Status::Ok();
}

Status Worker::Map(uint64_t addr, uint64_t len) { return Command(kMap, 0, addr, len); }
Status Worker::Touch(int cpu, uint64_t addr, uint64_t len) {
  return Command(kTouch, cpu, addr, len);
}
Status Worker::Pageout(int cpu, uint64_t addr, uint64_t len) {
  return Command(kPageout, cpu, addr, len);
}
Status Worker::Free(int cpu, uint64_t addr, uint64_t len) { return Command(kFree, cpu, addr, len); }
Status Worker::ReadIn(int cpu, uint64_t addr, uint64_t len) {
  return Command(kReadIn, cpu, addr, len);
}
Status Worker::Lock(uint64_t addr, uint64_t len) { return Command(kLock, 0, addr, len); }

Result<std::vector<uint8_t>> Worker::Mincore(uint64_t addr, uint64_t len) {
  std::vector<uint8_t> v;
  if (Status st = Command(kMincore, 0, addr, len, &v); !st.ok()) return st;
  return v;
}

Result<std::vector<PageState>> Worker::Pages(uint64_t addr, uint64_t pages) const {
  const std::string path = "/proc/" + std::to_string(pid_) + "/pagemap";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(-errno, "open " + path + ": " + std::strerror(errno));
  std::vector<uint64_t> raw(pages);
  const ssize_t n = pread(fd, raw.data(), pages * 8, static_cast<off_t>(addr / kPageSize * 8));
  const int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(pages * 8))
    return Status(-EIO, "read " + path + ": " + std::strerror(err));
  std::vector<PageState> out(pages);
  // pagemap (Documentation/admin-guide/mm/pagemap.rst): bit 63 present,
  // bit 62 swapped; swapped: bits 0-4 type, 5-54 offset; present: 0-54 PFN.
  for (uint64_t i = 0; i < pages; ++i) {
    const uint64_t e = raw[i];
    PageState& s = out[i];
    s.present = (e >> 63) & 1;
    s.swapped = (e >> 62) & 1;
    if (s.present) s.pfn = e & ((uint64_t{1} << 55) - 1);
    if (s.swapped) {
      s.swap_type = static_cast<int>(e & 0x1f);
      s.swap_offset = (e >> 5) & ((uint64_t{1} << 50) - 1);
    }
  }
  return out;
}

Result<std::vector<uint64_t>> Worker::PageFlags(uint64_t pfn, uint64_t n) {
  const int fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(-errno, std::string("open /proc/kpageflags: ") + std::strerror(errno));
  std::vector<uint64_t> v(n);
  const ssize_t got = pread(fd, v.data(), n * 8, static_cast<off_t>(pfn * 8));
  close(fd);
  if (got != static_cast<ssize_t>(n * 8)) return Status(-EIO, "read /proc/kpageflags");
  return v;
}

Result<uint64_t> Worker::PageFlags(uint64_t pfn) {
  const int fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(-errno, std::string("open /proc/kpageflags: ") + std::strerror(errno));
  uint64_t v = 0;
  const ssize_t n = pread(fd, &v, 8, static_cast<off_t>(pfn * 8));
  close(fd);
  if (n != 8) return Status(-EIO, "read /proc/kpageflags");
  return v;
}

}  // namespace swaplab::kernel
