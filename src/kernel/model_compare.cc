// SPDX-License-Identifier: MIT
// The kernel's placements compared with the model's (kernel_run.h).
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "swaplab/kernel/kernel_run.h"
#include "swaplab/workload/replay.h"

namespace swaplab::kernel {

double FallbackRate(const std::map<int, uint64_t>& swpout, const std::map<int, uint64_t>& fallback,
                    int order) {
  const uint64_t a = swpout.count(order) ? swpout.at(order) : 0;
  const uint64_t b = fallback.count(order) ? fallback.at(order) : 0;
  return a + b ? static_cast<double>(b) / static_cast<double>(a + b) : 0.0;
}

Result<ModelComparison> CompareWithModel(const std::string& trace, const std::string& policy,
                                         int cpus) {
  auto pol = alloc::Policy::Preset(policy);
  if (!pol.ok()) return pol.status();
  return CompareWithModel(trace, *pol, cpus);
}

Result<ModelComparison> CompareWithModel(const std::string& trace, const alloc::Policy& policy,
                                         int cpus) {
  workload::ReplayOptions ro;
  ro.trace = trace;
  ro.policy = policy;
  ro.cpus = cpus;
  auto r = workload::Replay(ro);
  if (!r.ok()) return r.status();
  ModelComparison m;
  m.summary = r->summary;
  const auto& c = r->counters;
  m.pswpout = c.pswpout;
  for (int k = 1; k < alloc::kMaxOrders; ++k) {
    if (c.swpout[k] || c.swpout_fallback[k]) {
      m.swpout[k] = c.swpout[k];
      m.swpout_fallback[k] = c.swpout_fallback[k];
    }
  }
  return m;
}

Result<KernelComparison> RunAndCompare(const RunOptions& o, const std::string& device_name,
                                       const alloc::Policy& policy,
                                       const volatile std::sig_atomic_t* interrupted) {
  RunOptions ro = o;
  // Without an --out the written trace still goes somewhere, for the replay.
  std::string tmp;
  if (ro.out.empty()) {
    char tmpl[] = "/tmp/swaplab-kernel-XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd < 0) return Status(-errno, std::string("mkstemp: ") + std::strerror(errno));
    close(fd);
    tmp = ro.out = tmpl;
  }
  auto rep = RunTraceAccounted(ro, interrupted);
  if (!rep.ok()) {
    if (!tmp.empty()) unlink(tmp.c_str());
    return rep.status();
  }
  KernelComparison k{o.trace, device_name, o.out, policy, std::move(rep).value(), {}, {}};
  auto model = CompareWithModel(ro.out, policy);
  if (!tmp.empty()) unlink(tmp.c_str());
  if (!model.ok()) {
    k.model_error = model.status().ToString();
  } else {
    k.model = std::move(model).value();
  }
  return k;
}

}  // namespace swaplab::kernel
