// SPDX-License-Identifier: MIT
// `kernel run`'s session (run_session.h): setup and teardown.
#include "run_session.h"

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

namespace swaplab::kernel {

using workload::TraceOp;
using workload::TraceRecord;

namespace {

Status At(const std::string& where, const std::string& msg) {
  return Status(-EINVAL, where + ": " + msg);
}

}  // namespace

Status Session::Close() {
  if (closed_) return Status::Ok();
  closed_ = true;
  Status first;
  auto keep = [&first](Status st) {
    if (first.ok() && !st.ok()) first = st;
  };
  worker.reset();
  for (auto it = areas.rbegin(); it != areas.rend(); ++it) keep((*it)->Remove());
  areas.clear();
  if (!cgroup.empty() && rmdir(cgroup.c_str()) != 0 && errno != ENOENT)
    keep(Status(-errno, "rmdir " + cgroup + ": " + std::strerror(errno)));
  for (auto it = settings.rbegin(); it != settings.rend(); ++it) keep(it->Restore());
  settings.clear();
  // The state file stays when something could not be undone, so that
  // `swaplab kernel cleanup` can finish the job.
  if (first.ok() && owns_state) keep(StateFile::Remove());
  return first;
}

Status Session::DropCache() {
  if (cgroup.empty()) return Status(-ENOTSUP, "no memory cgroup");
  cpu_set_t was;
  CPU_ZERO(&was);
  const bool pinned = worker != nullptr && sched_getaffinity(0, sizeof was, &was) == 0;
  if (pinned) {
    if (const int err = PinThread(worker->last_cpu()); err != 0)
      return Status(-err, "drop-cache: pinning to CPU " + std::to_string(worker->last_cpu()) +
                              ": " + std::strerror(err));
  }
  Status st = cgroup_v1 ? WriteSmallFile(cgroup + "/memory.force_empty", "0")
                        : WriteSmallFile(cgroup + "/memory.reclaim", "1G");
  if (st.code() == -EAGAIN && !cgroup_v1) st = Status::Ok();
  if (pinned) (void)sched_setaffinity(0, sizeof was, &was);
  return st;
}

uint64_t Session::UsedSlots() const {
  uint64_t used = 0;
  if (auto swaps = ReadProcSwaps(); swaps.ok()) {
    for (const auto& sw : *swaps)
      for (const auto& a : areas)
        if (a->on() && a->swap_path() == sw.filename) used += sw.used_kb / 4;
  }
  return used;
}

namespace {

// What the trace asks of the machine, gathered while it is checked.
struct TraceNeeds {
  uint64_t reserve = 0, area_bytes = 0;  // the worker's memory, the areas' bytes
  bool drops = false;                    // a drop-cache record: a memory cgroup is needed
  std::set<int> orders;                  // folio orders of the allocs
  std::vector<int> prios;                // the swapons' priorities
};

// An alloc record this machine can run: its CPU online, its order one
// the kernel has an mTHP size for.
Status CheckAlloc(const std::string& where, const TraceRecord& r, long ncpu) {
  if (r.cpu >= ncpu)
    return At(where, "cpu " + std::to_string(r.cpu) + " but this machine has " +
                         std::to_string(ncpu) + " CPUs");
  if (r.order > alloc::kMaxFolioOrder)
    return At(where, "order " + std::to_string(r.order) + " (at most " +
                         std::to_string(alloc::kMaxFolioOrder) + " on this kernel)");
  if (r.order > 0 && access(MthpEnabledPath(r.order).c_str(), W_OK) != 0)
    return At(where, "order " + std::to_string(r.order) + ": no " + MthpEnabledPath(r.order));
  return Status::Ok();
}

Status CheckTrace(const RunOptions& o, const std::vector<TraceRecord>& recs, TraceNeeds* need) {
  const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  for (const auto& r : recs) {
    const std::string where = o.trace + ":" + std::to_string(r.line);
    switch (r.op) {
      case TraceOp::kDup:
      case TraceOp::kSuspendStorage:
      case TraceOp::kResumeStorage:
        return At(where,
                  std::string("'") + workload::Name(r.op) + "' is not supported by `kernel run`");
      case TraceOp::kSwapon:
        need->area_bytes += o.size_pages.value_or(r.pages) * kRunPage;
        need->prios.push_back(r.prio.value_or(o.prio));
        break;
      case TraceOp::kAlloc:
        if (Status st = CheckAlloc(where, r, ncpu); !st.ok()) return st;
        need->orders.insert(r.order);
        need->reserve += (kRunPage << r.order) * 2 + kRunPage;
        break;
      case TraceOp::kDropCache:
        need->drops = true;
        break;
      default:
        break;
    }
  }
  if (need->area_bytes > o.max_area_bytes)
    return Status(-EINVAL, o.trace + ": the trace's swap areas need " +
                               std::to_string(need->area_bytes >> 20) +
                               " MiB, more than the limit of " +
                               std::to_string(o.max_area_bytes >> 20) + " MiB");
  return Status::Ok();
}

// Our areas must come first: a foreign area of equal or higher priority
// would take (or share) the allocations.
Status CheckMachinePrios(const std::vector<int>& prios) {
  auto swaps = ReadProcSwaps();
  if (!swaps.ok()) return swaps.status();
  for (const auto& a : *swaps) {
    for (int p : prios)
      if (a.prio >= p)
        return Status(-EBUSY, "the machine's swap area " + a.filename + " has priority " +
                                  std::to_string(a.prio) + ", not below swaplab's " +
                                  std::to_string(p) + " (use prio= in the trace)");
  }
  return Status::Ok();
}

// Each setting changed is kept in the session at once, to be restored by
// Close whatever fails after it.
Status ChangeSettings(const std::set<int>& orders, Session* s) {
  // Only the folio sizes the trace uses are enabled ("always": no
  // MADV_HUGEPAGE, which would also allow 2 MiB); every other size "never".
  for (int order = 1; order <= alloc::kMaxFolioOrder; ++order) {
    const std::string path = MthpEnabledPath(order);
    auto cur = ReadSmallFile(path);
    if (!cur.ok()) continue;
    const std::string want = orders.count(order) ? "always" : "never";
    if (SelectedChoice(*cur) == want) continue;
    auto set = SavedSetting::Change(path, want);
    if (!set.ok()) return set.status();
    s->settings.push_back(std::move(set).value());
  }
  // No swap readahead: `cache` reads exactly the pages it names.
  auto set = SavedSetting::Change("/proc/sys/vm/page-cluster", "0");
  if (!set.ok()) return set.status();
  s->settings.push_back(std::move(set).value());
  return Status::Ok();
}

// The worker's own memory cgroup: `drop-cache` reclaims its clean swap
// cache (memory.force_empty). Recorded in the state file before it is made.
Status MakeCgroup(const RunOptions& o, bool drops, Session* s) {
  const std::string name = "swaplab-" + std::to_string(getpid());
  std::string dir;
  if (access("/sys/fs/cgroup/memory/memory.force_empty", F_OK) == 0) {
    dir = "/sys/fs/cgroup/memory/" + name;
  } else if (auto c = ReadSmallFile("/sys/fs/cgroup/cgroup.controllers");
             c.ok() && c->find("memory") != std::string::npos) {
    dir = "/sys/fs/cgroup/" + name;
    s->cgroup_v1 = false;
  } else if (drops) {
    return Status(-ENOTSUP,
                  o.trace + ": the trace drops the swap cache but no memory cgroup is available");
  }
  if (dir.empty()) return Status::Ok();
  if (Status st = StateFile::Append({"cgroup", {dir}}); !st.ok()) return st;
  if (mkdir(dir.c_str(), 0755) != 0)
    return Status(-errno, "mkdir " + dir + ": " + std::strerror(errno));
  s->cgroup = dir;
  // Clean swap cache sits on the anon LRU: cgroup reclaim must scan it.
  if (s->cgroup_v1) (void)WriteSmallFile(dir + "/memory.swappiness", "100");
  return Status::Ok();
}

}  // namespace

Status PrepareSession(const RunOptions& o, const std::vector<TraceRecord>& recs, Session* s) {
  TraceNeeds need;
  if (Status st = CheckTrace(o, recs, &need); !st.ok()) return st;
  // The trace is valid: now the machine. Nothing is created while an
  // earlier run's leftovers (or another run) are there.
  if (Status st = CheckNoLeftovers(); !st.ok()) return st;
  if (Status st = CheckMachinePrios(need.prios); !st.ok()) return st;
  s->owns_state = true;
  if (Status st = StateFile::Append({"pid", {std::to_string(getpid())}}); !st.ok()) return st;
  if (Status st = ChangeSettings(need.orders, s); !st.ok()) return st;
  if (Status st = MakeCgroup(o, need.drops, s); !st.ok()) return st;
  auto w = Worker::Start(need.reserve + (kRunPage << 10), s->cgroup);
  if (!w.ok()) return w.status();
  s->worker = std::move(w).value();
  return Status::Ok();
}

}  // namespace swaplab::kernel
