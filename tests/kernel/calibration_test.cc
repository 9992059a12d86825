// SPDX-License-Identifier: MIT
// Calibration against the running kernel: each trace of
// tests/kernel/traces runs on a private swap area of each device kind, the
// kernel's placements (from pagemap) are replayed in the model with the
// linux-6.18 preset, and the agreement must be ≥ 99% with per-order fallback
// rates within 1 percentage point. Skipped (with the reason) when not root or
// when swap is unavailable. Also: the safety rules (crashed-run leftovers
// refused and cleaned up, settings restored, bad traces change nothing).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "swaplab/kernel/host.h"
#include "swaplab/kernel/kernel_area.h"
#include "swaplab/kernel/kernel_run.h"
#include "swaplab/kernel/worker.h"

namespace swaplab::kernel {
namespace {

const std::string kTraces = SWAPLAB_KERNEL_TRACES;

// Why the kernel tests cannot run here, or "".
std::string SkipReason(DeviceKind kind) {
  if (!IsRoot()) return "not root: swapon, /proc/PID/pagemap and sysfs need root";
  if (access("/proc/swaps", R_OK) != 0) return "no /proc/swaps: this kernel has no swap support";
  // swapon(2) on a path that is not a swap area: ENOSYS means no swap.
  if (swapon("/nonexistent-swaplab-probe", 0) != 0 && errno == ENOSYS)
    return "swapon(2) is not implemented";
  if (kind == DeviceKind::kZram && access("/sys/class/zram-control/hot_add", R_OK) != 0)
    return "zram is not available (no /sys/class/zram-control)";
  if ((kind == DeviceKind::kLoop || kind == DeviceKind::kLoopSsd) &&
      access("/dev/loop-control", R_OK) != 0)
    return "no /dev/loop-control";
  // A probe: a small area of this kind swapped on and removed again (a swap
  // file needs a file system that supports it under /var/tmp; a container's
  // overlayfs does not). Once per kind.
  static std::map<DeviceKind, std::string> probed;
  if (auto it = probed.find(kind); it != probed.end()) return it->second;
  if (!CheckNoLeftovers().ok()) return "";  // the test itself reports it
  AreaSpec spec;
  spec.kind = kind;
  spec.pages = 64;
  auto a = KernelArea::Create(spec);
  std::string why;
  if (!a.ok())
    why = std::string("cannot swap on a ") + Name(kind) + " area here: " + a.status().ToString();
  if (a.ok()) (void)(*a)->Remove();
  (void)StateFile::Remove();  // the probe's records only: no run was active
  return probed[kind] = why;
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "swaplab-kernel-" + std::to_string(getpid()) + "-" + name;
}

// Every mTHP enabled setting and page-cluster: must be the same after a run.
std::string SettingsSnapshot() {
  std::string s;
  for (int order = 1; order <= 9; ++order) {
    auto v = ReadSmallFile(MthpEnabledPath(order));
    if (v.ok()) s += SelectedChoice(*v) + ",";
  }
  auto pc = ReadSmallFile("/proc/sys/vm/page-cluster");
  if (pc.ok()) s += *pc;
  return s;
}

bool OurAreaActive() {
  auto swaps = ReadProcSwaps();
  if (!swaps.ok()) return false;
  for (const auto& s : *swaps)
    if (s.filename.find("swaplab-") != std::string::npos || s.filename.rfind("/dev/loop", 0) == 0)
      return true;
  return false;
}

struct Case {
  const char* trace;
  DeviceKind kind;
};

class Calibration : public ::testing::TestWithParam<Case> {};

TEST_P(Calibration, AgreesWithKernel) {
  const Case c = GetParam();
  if (auto why = SkipReason(c.kind); !why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(CheckNoLeftovers().ok()) << CheckNoLeftovers().ToString();
  const std::string before = SettingsSnapshot();
  RunOptions o;
  o.trace = kTraces + "/" + c.trace + ".trace";
  o.device = c.kind;
  o.out = TempPath(std::string(c.trace) + "-" + Name(c.kind) + ".trace");
  o.timeout_s = 60;
  // Other processes' pages swapped out into the run's area (this machine's
  // DAMON pageout scheme, reclaim) are accounted as `foreign` records; a
  // run with interference it could not account for is made again.
  auto rep = RunTraceAccounted(o, nullptr);
  if (rep.ok() && rep->interference_total)
    std::cerr << "kernel run of " << o.trace << " on " << Name(c.kind) << ": "
              << rep->interference_total << " points of interference, " << rep->foreign_slots
              << " foreign slots accounted, " << rep->runs << " runs\n";
  ASSERT_TRUE(rep.ok()) << rep.status().ToString();
  EXPECT_EQ(SettingsSnapshot(), before) << "a sysfs setting was not restored";
  EXPECT_FALSE(OurAreaActive()) << "a swaplab area is still on";
  EXPECT_TRUE(CheckNoLeftovers().ok()) << CheckNoLeftovers().ToString();

  // Nothing the kernel did on its own may hide in the comparison, and the
  // worker's own memory is locked: none of it goes to swap.
  EXPECT_EQ(rep->anomalies_total, 0u) << (rep->anomalies.empty() ? "" : rep->anomalies[0].what);
  EXPECT_EQ(rep->worker_pages_swapped, 0u);
  EXPECT_EQ(rep->unexplained_slots, 0u);
  EXPECT_EQ(rep->interference_unaccounted, 0u)
      << rep->runs << " runs; " << (rep->rerun_reasons.empty() ? "" : rep->rerun_reasons.back());
  EXPECT_EQ(rep->pages_not_swapped, 0u);
  EXPECT_GT(rep->expect_lines, 0u);
  // The record loop is timed on its own (bench/kernel_run_speed.sh's rate).
  EXPECT_GT(rep->records_seconds, 0);
  EXPECT_LT(rep->records_seconds, rep->seconds);

  auto m = CompareWithModel(o.out, "linux-6.18");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const auto& s = m->summary;
  EXPECT_EQ(s.foreign_expected, rep->foreign_slots);
  EXPECT_EQ(s.foreign_agree, s.foreign_expected) << "foreign slots placed elsewhere by the model";
  EXPECT_EQ(s.expected, rep->expect_lines);
  EXPECT_EQ(s.pages_unplaced, rep->pages_not_swapped) << "pages kept in memory: model vs kernel";
  const double agreement = static_cast<double>(s.agree) / static_cast<double>(s.expected);
  std::string first;
  if (!s.disagreements.empty()) {
    const auto& d = s.disagreements.front();
    first = "line " + std::to_string(d.line) + ": kernel dev " + std::to_string(d.expected_dev) +
            " offset " + std::to_string(d.expected_offset) + ", model " + d.got;
  }
  EXPECT_GE(agreement, 0.99) << s.agree << "/" << s.expected
                             << " agree; first disagreement: " << first;
  for (const auto& [order, n] : rep->folios_by_order) {
    if (order == 0) continue;
    const double k = FallbackRate(rep->swpout, rep->swpout_fallback, order);
    const double md = FallbackRate(m->swpout, m->swpout_fallback, order);
    EXPECT_LE(std::fabs(k - md), 0.01)
        << "order " << order << " (" << n << " folios): kernel fallback " << k << ", model " << md;
  }
  std::remove(o.out.c_str());
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string n = std::string(info.param.trace) + "_" + Name(info.param.kind);
  for (char& ch : n)
    if (ch == '-') ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Traces, Calibration, ::testing::ValuesIn([] {
                           std::vector<Case> v;
                           for (const char* t : {"seq", "holes", "shuffled", "mthp64", "twodev",
                                                 "frag", "mixed", "mixed0"})
                             for (DeviceKind k : {DeviceKind::kFile, DeviceKind::kLoop,
                                                  DeviceKind::kLoopSsd, DeviceKind::kZram})
                               v.push_back({t, k});
                           return v;
                         }()),
                         CaseName);

// Another process that swaps out its own pages on command, pinned to one
// CPU: interference at a chosen point of a trace.
class Interferer {
 public:
  Interferer(int cpu, uint64_t pages) : pages_(pages) {
    int to[2], from[2];
    if (pipe(to) != 0 || pipe(from) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(to[1]);
      close(from[0]);
      if (PinThread(cpu) != 0) _exit(2);
      auto* p = static_cast<char*>(
          mmap(nullptr, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      if (p == MAP_FAILED) _exit(3);
      for (uint64_t i = 0; i < pages; ++i)
        std::memset(p + i * 4096, static_cast<int>(0x5a + i), 4096);
      char c = 0;
      if (write(from[1], &c, 1) != 1) _exit(4);  // ready
      while (read(to[0], &c, 1) == 1) {
        c = madvise(p, pages * 4096, MADV_PAGEOUT) == 0 ? 'y' : 'n';
        if (write(from[1], &c, 1) != 1) _exit(5);
      }
      _exit(0);
    }
    close(to[0]);
    close(from[1]);
    to_ = to[1];
    from_ = from[0];
    char c;
    ok_ = pid_ > 0 && read(from_, &c, 1) == 1;
  }
  ~Interferer() {
    if (to_ >= 0) close(to_);
    if (from_ >= 0) close(from_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool ok() const { return ok_; }
  // Pages its memory out (MADV_PAGEOUT) and waits until it did.
  bool Pageout() {
    char c = 'p';
    return write(to_, &c, 1) == 1 && read(from_, &c, 1) == 1 && c == 'y';
  }

 private:
  uint64_t pages_;
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  bool ok_ = false;
};

// Interference on purpose: after line 400 of seq.trace (CPU 0 swapping out
// page by page; CPU 1 only from line 1754) another process pinned to CPU 0
// or CPU 1 swaps out 5 pages into the run's area. The run must report it
// at that line, on that CPU, written as `foreign` records, and the model
// must then agree on every placement of the trace (the later ones included,
// which the foreign slots moved: CPU 0's next slots, or the cluster CPU 1's
// pages go to).
class InterferenceOnPurpose : public ::testing::TestWithParam<int> {};

TEST_P(InterferenceOnPurpose, AtAChosenRecordIsReportedAndAccounted) {
  const int cpu = GetParam();
  if (auto why = SkipReason(DeviceKind::kLoopSsd); !why.empty()) GTEST_SKIP() << why;
  if (cpu >= sysconf(_SC_NPROCESSORS_ONLN)) GTEST_SKIP() << "no CPU " << cpu << " here";
  ASSERT_TRUE(CheckNoLeftovers().ok()) << CheckNoLeftovers().ToString();
  constexpr uint64_t kLine = 400, kPages = 5;
  Interferer other(cpu, kPages);
  ASSERT_TRUE(other.ok());
  RunOptions o;
  o.trace = kTraces + "/seq.trace";
  o.device = DeviceKind::kLoopSsd;
  o.out = TempPath("interference.trace");
  o.timeout_s = 60;
  bool paged_out = false;
  o.after_record = [&](uint64_t line) {
    if (line == kLine) paged_out = other.Pageout();
  };
  auto rep = RunTrace(o, nullptr);
  ASSERT_TRUE(rep.ok()) << rep.status().ToString();
  ASSERT_TRUE(paged_out);
  const Interference* at = nullptr;
  for (const auto& i : rep->interference)
    if (i.line == kLine) at = &i;
  ASSERT_NE(at, nullptr) << "no interference reported after line " << kLine << " ("
                         << rep->interference_total << " points elsewhere)";
  // Other processes (a DAMON pageout scheme) may add to the same point.
  EXPECT_GE(at->slots, static_cast<int64_t>(kPages));
  EXPECT_TRUE(at->accounted) << at->how;
  EXPECT_EQ(at->cpu, cpu) << at->how;
  std::cerr << "interference after line " << kLine << ": " << at->slots << " slots: " << at->how
            << "\n";
  EXPECT_GE(at->content_other, kPages) << at->how;
  EXPECT_EQ(rep->unexplained_slots, 0u);

  auto m = CompareWithModel(o.out, "linux-6.18");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->summary.agree, m->summary.expected)
      << "first disagreement: "
      << (m->summary.disagreements.empty() ? "" : m->summary.disagreements[0].got);
  EXPECT_EQ(m->summary.foreign_agree, rep->foreign_slots);
  EXPECT_GE(rep->foreign_slots, kPages);

  // Without the foreign records the model must disagree: the accounting is
  // what makes the comparison agree.
  const std::string bare = TempPath("interference-bare.trace");
  {
    std::ifstream in(o.out);
    std::ofstream out(bare);
    for (std::string l; std::getline(in, l);)
      if (l.rfind("foreign", 0) != 0) out << l << '\n';
  }
  auto b = CompareWithModel(bare, "linux-6.18");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_LT(b->summary.agree, b->summary.expected);
  std::remove(o.out.c_str());
  std::remove(bare.c_str());
}

INSTANTIATE_TEST_SUITE_P(OnCpu, InterferenceOnPurpose, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return "cpu" + std::to_string(i.param);
                         });

// A trace the kernel side cannot run is refused before anything is
// created, with FILE:LINE.
TEST(KernelRun, UnsupportedOpRefusedBeforeAnythingIsCreated) {
  if (auto why = SkipReason(DeviceKind::kFile); !why.empty()) GTEST_SKIP() << why;
  const std::string path = TempPath("dup.trace");
  std::ofstream(path)
      << "swaplab-trace 1\nswapon dev=0 pages=1024\nalloc folio=1 order=0 cpu=0\ndup folio=1\n";
  RunOptions o;
  o.trace = path;
  o.device = DeviceKind::kFile;
  auto rep = RunTrace(o, nullptr);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), -EINVAL);
  EXPECT_NE(rep.status().message().find(path + ":4"), std::string::npos) << rep.status().message();
  EXPECT_FALSE(OurAreaActive());
  EXPECT_TRUE(CheckNoLeftovers().ok()) << CheckNoLeftovers().ToString();
  std::remove(path.c_str());
}

// Ctrl-C between records: the run stops, and everything is removed.
TEST(KernelRun, InterruptCleansUp) {
  if (auto why = SkipReason(DeviceKind::kLoopSsd); !why.empty()) GTEST_SKIP() << why;
  const std::string before = SettingsSnapshot();
  RunOptions o;
  o.trace = kTraces + "/mthp64.trace";
  o.device = DeviceKind::kLoopSsd;
  volatile std::sig_atomic_t interrupted = 1;
  auto rep = RunTrace(o, &interrupted);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), -EINTR);
  EXPECT_FALSE(OurAreaActive());
  EXPECT_EQ(SettingsSnapshot(), before);
  EXPECT_TRUE(CheckNoLeftovers().ok()) << CheckNoLeftovers().ToString();
}

// A crashed run (the process died with its area on) is refused until
// cleanup, and cleanup removes exactly that.
TEST(KernelRun, CrashedRunRefusedUntilCleanup) {
  if (auto why = SkipReason(DeviceKind::kLoop); !why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(CheckNoLeftovers().ok());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    StateFile::Append({"pid", {std::to_string(getpid())}}).ok();
    AreaSpec spec;
    spec.kind = DeviceKind::kLoop;
    spec.pages = 1024;
    auto a = KernelArea::Create(spec);
    if (!a.ok()) _exit(1);
    _exit(0);  // "crash": no destructor, the area stays on
  }
  int st = 0;
  ASSERT_EQ(waitpid(child, &st, 0), child);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  EXPECT_TRUE(OurAreaActive());
  RunOptions o;
  o.trace = kTraces + "/seq.trace";
  o.device = DeviceKind::kFile;
  auto rep = RunTrace(o, nullptr);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), -EBUSY);
  EXPECT_NE(rep.status().message().find("swaplab kernel cleanup"), std::string::npos)
      << rep.status().message();
  // The refused run left the crashed run's record alone.
  auto state = StateFile::Load();
  ASSERT_TRUE(state.ok());
  bool has_swap = false;
  for (const auto& e : *state) has_swap |= e.kind == "swap";
  EXPECT_TRUE(has_swap) << "the refused run removed the crashed run's state file";
  std::vector<std::string> log;
  ASSERT_TRUE(Cleanup(&log).ok());
  EXPECT_FALSE(OurAreaActive());
  EXPECT_TRUE(CheckNoLeftovers().ok()) << CheckNoLeftovers().ToString();
  bool swapped_off = false;
  for (const auto& l : log) swapped_off |= l.rfind("swapoff /dev/loop", 0) == 0;
  EXPECT_TRUE(swapped_off) << "cleanup did not swap the loop device off";
}

// Worker::DrainLru empties every CPU's folio batches: pages this process
// faults in on each CPU wait in that CPU's lru_add batch (not yet on the
// LRU: kpageflags LRU bit clear) until the worker's drain, pinned to each
// CPU in turn, moves them there. A drain of one CPU only, or none, fails.
// (Without it, a swap-cache folio a batch kept alive outlived a `free` and
// took a slot at the next drop-cache: docs/fidelity.md.)
TEST(KernelRun, DrainLruEmptiesTheBatchesOfEveryCpu) {
  if (!IsRoot()) GTEST_SKIP() << "not root: /proc/kpageflags and PFNs in pagemap need root";
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 2) GTEST_SKIP() << "one CPU: nothing to show across CPUs";
  auto w = Worker::Start(1 << 20, "");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  cpu_set_t was;
  ASSERT_EQ(sched_getaffinity(0, sizeof was, &was), 0);
  const int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(pagemap, 0);
  constexpr int kLru = 5;  // KPF_LRU (Documentation/admin-guide/mm/pagemap.rst)
  auto pfn_of = [&](const char* p) -> uint64_t {
    uint64_t e = 0;
    const off_t at = static_cast<off_t>(reinterpret_cast<uintptr_t>(p) / 4096 * 8);
    if (pread(pagemap, &e, 8, at) != 8 || !((e >> 63) & 1)) return 0;
    return e & ((uint64_t{1} << 55) - 1);
  };
  std::vector<std::pair<int, uint64_t>> batched;  // (CPU, PFN) not on the LRU yet
  std::vector<void*> maps;
  for (int cpu = 0; cpu < cpus && cpu < 8; ++cpu) {
    if (PinThread(cpu) != 0) continue;
    for (int i = 0; i < 4; ++i) {
      void* m = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      ASSERT_NE(m, MAP_FAILED);
      maps.push_back(m);
      static_cast<char*>(m)[0] = 1;
      const uint64_t pfn = pfn_of(static_cast<char*>(m));
      auto f = pfn ? Worker::PageFlags(pfn) : Result<uint64_t>(Status(-EIO, "no PFN"));
      ASSERT_TRUE(f.ok()) << f.status().ToString();
      if (!((*f >> kLru) & 1)) batched.emplace_back(cpu, pfn);
    }
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof was, &was), 0);
  std::set<int> cpus_batched;
  for (const auto& b : batched) cpus_batched.insert(b.first);
  if (cpus_batched.size() < 2) {
    for (void* m : maps) munmap(m, 4096);
    close(pagemap);
    GTEST_SKIP() << "fresh pages went straight to the LRU on " << cpus - cpus_batched.size()
                 << " CPUs (no per-CPU batch to drain)";
  }
  ASSERT_TRUE((*w)->DrainLru().ok());
  for (const auto& [cpu, pfn] : batched) {
    auto f = Worker::PageFlags(pfn);
    ASSERT_TRUE(f.ok());
    EXPECT_TRUE((*f >> kLru) & 1) << "a page faulted in on CPU " << cpu
                                  << " is still in that CPU's batch after the drain";
  }
  for (void* m : maps) munmap(m, 4096);
  close(pagemap);
}

// The written trace without its `# swaplab kernel run` line.
std::string WrittenTrace(const std::string& path) {
  std::ifstream in(path);
  std::string all, line;
  while (std::getline(in, line))
    if (line.rfind("# swaplab kernel run", 0) != 0) all += line + "\n";
  return all;
}

// Runs of order-0 allocs paged out by one MADV_PAGEOUT each
// (RunOptions::pageout_runs) are placed by the kernel exactly as with one
// call per folio: the same written trace, line for line, with fewer calls.
TEST(KernelRun, PageoutRunsPlaceAsOneCallPerFolio) {
  if (auto why = SkipReason(DeviceKind::kFile); !why.empty()) GTEST_SKIP() << why;
  for (const char* trace : {"shuffled", "latecpu"}) {
    std::string written[2];
    uint64_t calls[2] = {0, 0}, folios = 0;
    for (int together = 0; together < 2; ++together) {
      RunOptions o;
      o.trace = kTraces + "/" + trace + ".trace";
      o.device = DeviceKind::kFile;
      o.out = TempPath(std::string(trace) + "-runs" + std::to_string(together) + ".trace");
      o.timeout_s = 60;
      o.pageout_runs = together == 1;
      auto rep = RunTraceAccounted(o, nullptr);
      ASSERT_TRUE(rep.ok()) << rep.status().ToString();
      if (rep->interference_total)
        GTEST_SKIP() << "another process swapped into the run's area: the traces differ by it";
      written[together] = WrittenTrace(o.out);
      calls[together] = rep->pageout_calls;
      folios = rep->folios;
      std::remove(o.out.c_str());
    }
    EXPECT_EQ(calls[0], folios) << trace << ": one call per folio without runs";
    // Runs only while the areas stay under half full: shuffled never gets
    // there (785 calls for 3548 folios), latecpu does (5148 for 8991).
    EXPECT_LT(calls[1] * 10, calls[0] * 9) << trace << ": the runs did not share calls";
    EXPECT_EQ(written[1], written[0]) << trace << ": placements differ with runs";
  }
}

// Consecutive frees go to the worker in one step (Runner::DoFrees): the
// kernel places everything as when each record is its own step (a hook
// after every record turns batches off), on a file and an SSD whose freed
// clusters are discarded.
TEST(KernelRun, BatchedFreesPlaceAsOneAtATime) {
  for (DeviceKind kind : {DeviceKind::kFile, DeviceKind::kLoopSsd}) {
    if (auto why = SkipReason(kind); !why.empty()) GTEST_SKIP() << why;
    std::string written[2];
    uint64_t steps[2] = {0, 0};
    for (int batched = 0; batched < 2; ++batched) {
      RunOptions o;
      o.trace = kTraces + "/frag.trace";
      o.device = kind;
      o.out = TempPath("frag-frees" + std::to_string(batched) + ".trace");
      o.timeout_s = 60;
      if (batched == 0) o.after_record = [](uint64_t) {};
      auto rep = RunTraceAccounted(o, nullptr);
      ASSERT_TRUE(rep.ok()) << rep.status().ToString();
      if (rep->interference_total)
        GTEST_SKIP() << "another process swapped into the run's area: the traces differ by it";
      written[batched] = WrittenTrace(o.out);
      steps[batched] = rep->steps;
      std::remove(o.out.c_str());
    }
    // frag: a swapon, 6000 allocs, 1920 frees in a row, 270 allocs. One
    // step per free alone would be 1920 steps.
    EXPECT_EQ(steps[0], 8191u) << Name(kind) << ": one step per record without batches";
    EXPECT_LT(steps[1], 1920u) << Name(kind) << ": the frees were not batched";
    EXPECT_EQ(written[1], written[0]) << Name(kind) << ": placements differ with batched frees";
  }
}

// RunOptions::floor: after the records, as many fresh pages as the trace
// swapped out go to swap in one MADV_PAGEOUT on an area of their own,
// timed, and again as the run's folios in its calls; the run's written
// trace is the same as without it, and nothing of the floor's area is left.
TEST(KernelRun, FloorSwapsOutAsManyPagesInOneCall) {
  if (auto why = SkipReason(DeviceKind::kFile); !why.empty()) GTEST_SKIP() << why;
  std::string written[2];
  for (int floor = 0; floor < 2; ++floor) {
    RunOptions o;
    o.trace = kTraces + "/seq.trace";
    o.device = DeviceKind::kFile;
    o.out = TempPath("seq-floor" + std::to_string(floor) + ".trace");
    o.timeout_s = 60;
    o.floor = floor == 1;
    auto rep = RunTraceAccounted(o, nullptr);
    ASSERT_TRUE(rep.ok()) << rep.status().ToString();
    written[floor] = WrittenTrace(o.out);
    std::remove(o.out.c_str());
    EXPECT_FALSE(OurAreaActive()) << "a swaplab area is still on";
    EXPECT_TRUE(CheckNoLeftovers().ok()) << CheckNoLeftovers().ToString();
    if (floor == 0) {
      EXPECT_EQ(rep->floor_pages_swapped, 0u);
      EXPECT_EQ(rep->floor_seconds, 0);
      EXPECT_EQ(rep->floor_calls, 0u);
      EXPECT_EQ(rep->floor_folios, 0u);
    } else {
      ASSERT_GT(rep->folios, 1u);
      EXPECT_EQ(rep->floor_folios, rep->folios);  // seq: order-0 folios, every one swapped
      EXPECT_EQ(rep->floor_calls, rep->pageout_calls);
      EXPECT_EQ(rep->floor_calls_pages_swapped, rep->pages_swapped);
      EXPECT_GT(rep->floor_calls_seconds, 0);
      EXPECT_GT(rep->pages_swapped, 0u);
      EXPECT_EQ(rep->floor_pages_swapped, rep->pages_swapped);
      EXPECT_GT(rep->floor_seconds, 0);
      EXPECT_LT(rep->floor_seconds, rep->records_seconds) << "one call slower than the run";
    }
  }
  EXPECT_EQ(written[1], written[0]) << "the floor changed the run's written trace";
}

// Not root: a clear error, nothing created.
TEST(KernelRun, NotRootRefused) {
  if (!IsRoot()) {
    RunOptions o;
    o.trace = kTraces + "/seq.trace";
    auto rep = RunTrace(o, nullptr);
    ASSERT_FALSE(rep.ok());
    EXPECT_EQ(rep.status().code(), -EPERM);
    return;
  }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setresuid(65534, 65534, 0) != 0) _exit(3);
    RunOptions o;
    o.trace = kTraces + "/seq.trace";
    auto rep = RunTrace(o, nullptr);
    _exit(!rep.ok() && rep.status().code() == -EPERM ? 0 : 1);
  }
  int st = 0;
  ASSERT_EQ(waitpid(child, &st, 0), child);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0);
}

}  // namespace
}  // namespace swaplab::kernel
