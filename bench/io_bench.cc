// SPDX-License-Identifier: MIT
// One sequential pass over a file through a swaplab I/O engine, timed; the
// engine half of bench/io_vs_fio.sh (docs/performance.md, "I/O engines and
// the simulated device's calibration"). A plain main: Google Benchmark's
// library is linked by the build but unused, as each run is one timed pass,
// the way fio runs one.
//
//   io_bench --file F [--size-mib 1024] [--op write|read] [--req-kib 512]
//            [--qd 32] [--merge 0|1] [--engine uring|posix|sim] [--reps 1]
//
// Requests are --req-kib long (a multiple of 4; the last one is shorter if
// it does not divide --size-mib), contiguous, all handed to
// one Submit and then one Wait, so the engine keeps --qd requests in flight
// as fio does with --iodepth. Device limits come from the file's disk
// (ReadDeviceLimits). Prints one line per repetition:
//   io_bench op=write engine=io_uring req_kib=512 qd=32 merge=0 P=254
//     MiB/s=655.1 seconds=1.563 bios=2048 requests=2048 cpu_s=0.21
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "swaplab/area/io_engine.h"
#include "swaplab/area/io_engine_factory.h"

namespace {

using swaplab::area::DeviceLimits;
using swaplab::area::EngineOptions;
using swaplab::area::IoCompletion;
using swaplab::area::IoEngine;
using swaplab::area::IoRequest;

struct Args {
  std::string file;
  uint64_t size_mib = 1024;
  bool write = true;
  uint64_t req_kib = 512;
  unsigned qd = 32;
  bool merge = false;
  std::string engine = "uring";
  int reps = 1;
};

[[noreturn]] void Usage(const char* msg) {
  std::fprintf(stderr,
               "io_bench: %s\nusage: io_bench --file F [--size-mib 1024] [--op write|read] "
               "[--req-kib 512] [--qd 32] [--merge 0|1] [--engine uring|posix|sim] [--reps 1]\n",
               msg);
  std::exit(2);
}

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) Usage(("missing value for " + k).c_str());
    const std::string v = argv[++i];
    if (k == "--file")
      a.file = v;
    else if (k == "--size-mib")
      a.size_mib = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--op")
      a.write = v == "write" ? true : v == "read" ? false : (Usage("bad --op"), true);
    else if (k == "--req-kib")
      a.req_kib = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--qd")
      a.qd = static_cast<unsigned>(std::strtoul(v.c_str(), nullptr, 10));
    else if (k == "--merge")
      a.merge = v == "1";
    else if (k == "--engine")
      a.engine = v;
    else if (k == "--reps")
      a.reps = std::atoi(v.c_str());
    else
      Usage(("unknown option " + k).c_str());
  }
  if (a.file.empty() && a.engine != "sim") Usage("--file is required");
  if (a.req_kib == 0 || a.req_kib % 4 != 0) Usage("--req-kib must be a positive multiple of 4");
  if (a.size_mib == 0) Usage("--size-mib must be positive");
  return a;
}

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = Parse(argc, argv);
  constexpr uint64_t kPage = 4096;
  const uint64_t pages = a.size_mib * 256, per_req = a.req_kib / 4;
  const uint64_t nreq = (pages + per_req - 1) / per_req;  // the last one may be shorter

  EngineOptions o;
  o.queue_depth = a.qd;
  o.plug_merge = a.merge;
  if (a.engine != "sim") {
    auto l = swaplab::area::ReadDeviceLimits(a.file);
    if (l.ok())
      o.limits = *l;
    else
      std::fprintf(stderr, "io_bench: %s; using default limits\n", l.status().ToString().c_str());
    struct stat st {};
    if (stat(a.file.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_size) < pages * kPage) {
      std::fprintf(stderr, "io_bench: %s must exist and hold %llu MiB (lay it out first)\n",
                   a.file.c_str(), static_cast<unsigned long long>(a.size_mib));
      return 1;
    }
  }

  // A 64 MiB ring of aligned pages, reused: in flight at once are at most
  // qd x req_kib, far less (checked below).
  const uint64_t ring_pages = 16384;
  if (a.qd * per_req > ring_pages) {
    std::fprintf(stderr, "io_bench: qd x req-kib exceeds the 64 MiB buffer ring\n");
    return 2;
  }
  void* mem = nullptr;
  if (posix_memalign(&mem, kPage, ring_pages * kPage) != 0) return 1;
  auto* ring = static_cast<std::byte*>(mem);
  for (uint64_t i = 0; i < ring_pages * kPage; i += 8) {
    const uint64_t v = i * 0x9e3779b97f4a7c15ULL;
    std::memcpy(ring + i, &v, 8);
  }

  for (int rep = 0; rep < a.reps; ++rep) {
    std::unique_ptr<IoEngine> e;
    if (a.engine == "sim") {
      swaplab::area::SimModel m;
      m.pages = pages;
      m.store_checksums = false;
      e = swaplab::area::MakeSimulatedEngine(m, o);
    } else {
      using swaplab::area::EngineKind;
      auto r = swaplab::area::OpenEngine(
          a.engine == "posix" ? EngineKind::kPosix : EngineKind::kAuto, a.file, o);
      if (!r.ok()) {
        std::fprintf(stderr, "io_bench: %s\n", r.status().ToString().c_str());
        return 1;
      }
      e = std::move(r).value();
    }
    std::vector<IoRequest> reqs(nreq);
    for (uint64_t i = 0; i < nreq; ++i) {
      IoRequest& r = reqs[i];
      r.write = a.write;
      r.page = i * per_req;
      r.tag = i;
      r.bufs.resize(std::min(per_req, pages - r.page));
      for (uint64_t j = 0; j < r.bufs.size(); ++j)
        r.bufs[j] = ring + ((r.page + j) % ring_pages) * kPage;
    }
    std::vector<IoCompletion> done;
    done.reserve(nreq);

    const double cpu0 = CpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    swaplab::Status s = e->Submit(reqs);
    if (s.ok()) s = e->Wait(&done);
    const auto t1 = std::chrono::steady_clock::now();
    const double cpu = CpuSeconds() - cpu0;
    if (!s.ok() || done.size() != nreq) {
      std::fprintf(stderr, "io_bench: %s (%zu of %llu completions)\n", s.ToString().c_str(),
                   done.size(), static_cast<unsigned long long>(nreq));
      return 1;
    }
    double secs = std::chrono::duration<double>(t1 - t0).count();
    if (a.engine == "sim") secs = static_cast<double>(e->stats().modelled_ns) / 1e9;
    const auto st = e->stats();
    std::printf(
        "io_bench op=%s engine=%s req_kib=%llu qd=%u merge=%d P=%u MiB/s=%.1f seconds=%.3f "
        "bios=%llu requests=%llu cpu_s=%.2f\n",
        a.write ? "write" : "read", e->name().c_str(), static_cast<unsigned long long>(a.req_kib),
        a.qd, a.merge ? 1 : 0, e->limits().MaxPagesPerRequest(),
        static_cast<double>(a.size_mib) / secs, secs, static_cast<unsigned long long>(st.bios),
        static_cast<unsigned long long>(st.requests), cpu);
    std::fflush(stdout);
  }
  std::free(mem);
  return 0;
}
