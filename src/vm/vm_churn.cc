// SPDX-License-Identifier: MIT
// Seed 003's build-like load in a qemu guest, and its table (vm_churn.h).
#include "swaplab/vm/vm_churn.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "swaplab/vm/initramfs.h"
#include "swaplab/vm/vm_hibernate.h"
#include "swaplab/vm/vm_reproduce.h"
#include "swaplab/workload/scenario_runner.h"
#include "swaplab/workload/temp_files.h"

namespace swaplab::vm {

namespace {

constexpr char kPrefix[] = "swaplab-churn: ";

// The words of `line` after `prefix`, or empty when it does not start so.
std::vector<std::string> WordsAfter(const std::string& line, const std::string& prefix) {
  std::vector<std::string> w;
  if (line.rfind(prefix, 0) != 0) return w;
  std::istringstream in(line.substr(prefix.size()));
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

// "KEY VALUE KEY VALUE ..." from word `from` on; false if a value is not a
// number.
bool Pairs(const std::vector<std::string>& w, size_t from, std::map<std::string, double>* out) {
  for (size_t i = from; i + 1 < w.size(); i += 2) {
    char* end = nullptr;
    const double v = std::strtod(w[i + 1].c_str(), &end);
    if (end == w[i + 1].c_str() || *end != '\0') return false;
    (*out)[w[i]] = v;
  }
  return true;
}

uint64_t U(const std::map<std::string, double>& m, const char* k) {
  auto it = m.find(k);
  return it == m.end() || it->second < 0 ? 0 : static_cast<uint64_t>(it->second);
}

// The mTHP sizes (KiB) of a mix's folios above one page.
std::vector<unsigned> MthpSizes(const std::vector<workload::SizeWeight>& mix) {
  std::vector<unsigned> kb;
  for (const auto& m : mix)
    if (m.pages > 1) kb.push_back(static_cast<unsigned>(m.pages * 4));
  std::sort(kb.begin(), kb.end());
  kb.erase(std::unique(kb.begin(), kb.end()), kb.end());
  return kb;
}

std::string Join(const std::vector<unsigned>& v, const char* sep) {
  std::string s;
  for (unsigned x : v) s += (s.empty() ? "" : sep) + std::to_string(x);
  return s;
}

}  // namespace

std::string ChurnLoad::MixArg() const {
  std::string s;
  for (const auto& m : mix) {
    std::ostringstream w;
    w << m.weight;
    s += (s.empty() ? "" : "/") + std::to_string(m.pages) + ":" + w.str();
  }
  return s;
}

Result<ChurnLoad> ChurnLoadOf(const workload::ChurnSpec& s, uint64_t seed) {
  ChurnLoad l;
  l.processes = s.processes;
  l.concurrent = s.concurrent;
  l.growing = s.growing;
  l.min_pages = s.min_pages;
  l.max_pages = s.max_pages;
  l.zap_permille = static_cast<uint64_t>(std::lround(s.partial_free_share * 1000));
  l.swapped_pages = s.swapped_pages;
  l.seed = seed;
  l.mix = s.mix;
  if (l.mix.empty()) l.mix.push_back({1, 1});
  for (const auto& m : l.mix)
    if (m.pages == 0 || m.pages > 512 || (m.pages & (m.pages - 1)) || !(m.weight > 0))
      return Status(-EINVAL,
                    "the guest's churn makes folios of a power of two up to 512 pages "
                    "with a positive weight, not " +
                        std::to_string(m.pages) + " pages");
  if (l.max_pages > (uint64_t{1} << 20))
    return Status(-EINVAL, "the guest's churn makes processes of at most 4 GiB");
  return l;
}

const MthpStat* ChurnVmResult::Stat(unsigned kb) const {
  for (const auto& s : stats)
    if (s.kb == kb) return &s;
  return nullptr;
}

Result<ChurnVmResult> ParseChurnConsole(const std::string& console) {
  ChurnVmResult r;
  bool done = false, vmstat = false;
  const ConsoleFacts cf = ParseConsole(console);
  r.release = cf.release;
  r.prefer_nonfull = cf.prefer_nonfull;
  std::istringstream in(console);
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find(kPrefix);
    if (at == std::string::npos) continue;
    const auto w = WordsAfter(line.substr(at), kPrefix);
    if (w.empty()) continue;
    std::map<std::string, double> kv;
    if (w[0] == "done" && Pairs(w, 1, &kv)) {
      r.processes = U(kv, "processes");
      r.pages = U(kv, "pages");
      r.zapped = U(kv, "zapped");
      r.kills = U(kv, "kills");
      r.died = U(kv, "died");
      r.held = U(kv, "held");
      r.max_swap_used = U(kv, "max_used");
      r.guest_s = kv.count("seconds") ? kv["seconds"] : 0;
      done = true;
    } else if (w[0] == "stat" && w.size() >= 2 && Pairs(w, 2, &kv)) {
      unsigned kb = 0;
      if (std::sscanf(w[1].c_str(), "%ukB", &kb) != 1 || kb == 0) continue;
      MthpStat s;
      s.kb = kb;
      s.swpout = U(kv, "swpout");
      s.swpout_fallback = U(kv, "swpout_fallback");
      if (kv.count("anon_fault_alloc") && kv.count("anon_fault_fallback")) {
        s.anon_fault_alloc = static_cast<int64_t>(U(kv, "anon_fault_alloc"));
        s.anon_fault_fallback = static_cast<int64_t>(U(kv, "anon_fault_fallback"));
      }
      r.stats.push_back(s);
    } else if (w[0] == "vmstat" && Pairs(w, 1, &kv)) {
      r.pswpout = U(kv, "pswpout");
      r.thp_swpout = U(kv, "thp_swpout");
      r.thp_swpout_fallback = U(kv, "thp_swpout_fallback");
      vmstat = true;
    }
  }
  if (!done || !vmstat)
    return Status(-EIO, std::string("the guest's churn did not finish (no \"") + kPrefix +
                            (done ? "vmstat" : "done") + "\" line); console tail:\n" +
                            ConsoleTail(console, 25));
  return r;
}

Result<ChurnVmResult> RunChurnInVm(const ChurnVmOptions& o,
                                   const volatile std::sig_atomic_t* interrupted) {
  const ChurnLoad& l = o.load;
  if (l.processes == 0 || l.concurrent == 0 || l.growing == 0 || l.min_pages == 0 ||
      l.max_pages < l.min_pages || l.zap_permille > 1000 || l.mix.empty())
    return Status(-EINVAL, "churn load: processes, concurrent, growing and sizes of at least one");
  if (o.zram_bytes < (1u << 20) || o.zram_bytes % alloc::kPageSize)
    return Status(-EINVAL, "zram size: a whole number of pages, at least 1 MiB");
  if (o.memcg_bytes < (4u << 20) || o.memcg_bytes >= uint64_t(o.vm.mem_mib) << 20)
    return Status(-EINVAL, "memory cgroup limit: at least 4 MiB and below the guest's memory (" +
                               std::to_string(o.vm.mem_mib) + " MiB)");
  for (unsigned kb : o.mthp_kb)
    if (kb < 8 || kb > 2048 || (kb & (kb - 1)))
      return Status(-EINVAL, "mTHP size " + std::to_string(kb) + " kB: a power of two, 8..2048");
  auto resolved = ResolveGuestKernel(o.vm);
  if (!resolved.ok()) return resolved.status();
  const GuestKernel gk = *resolved;
  auto agent = FindGuestAgent(o.vm);
  if (!agent.ok()) return agent.status();
  auto wd = workload::WorkDir::Create();
  if (!wd.ok()) return wd.status();
  const std::string dir = wd->path();
  InitramfsSpec is;
  is.agent = *agent;
  is.modules_dir = gk.modules;
  is.modules = {"zram"};  // a module in Debian's kernels, built into vm-kernel-build's
  const std::string initrd = dir + "/initramfs.cpio";
  if (auto ir = WriteInitramfs(initrd, is, dir); !ir.ok()) return ir.status();
  if (interrupted && *interrupted) return Status(-EINTR, "interrupted");
  std::string accel_why;
  auto accel = ResolveAccel(o.vm, gk.kernel, initrd, dir, interrupted, &accel_why);
  if (!accel.ok()) return accel.status();

  BootSpec b = BootOf("churn", gk, initrd, *accel, o.vm);
  // Commas in the kernel's command line: init.sh turns them into spaces.
  b.append = "swaplab.mode=churn swaplab.churn=" + std::to_string(l.processes) + "," +
             std::to_string(l.concurrent) + "," + std::to_string(l.growing) + "," +
             std::to_string(l.min_pages) + "," + std::to_string(l.max_pages) + "," +
             std::to_string(l.zap_permille) + "," + std::to_string(l.swapped_pages) + "," +
             std::to_string(l.seed) + " swaplab.mix=" + l.MixArg() +
             " swaplab.zram=" + std::to_string(o.zram_bytes) +
             " swaplab.memcg=" + std::to_string(o.memcg_bytes) +
             " swaplab.mthp=" + (o.mthp_kb.empty() ? std::string("none") : Join(o.mthp_kb, ",")) +
             (o.vm.append.empty() ? "" : " " + o.vm.append);
  b.milestones = {"swaplab-churn: start", "swaplab-churn: done"};
  if (o.vm.stage) b.on_milestone = [&](size_t k) { o.vm.stage(k + 1, k ? "done" : "churn"); };
  if (o.vm.stage) o.vm.stage(0, "boot");
  // A guest whose block I/O hangs or whose kernel fails before init is
  // booted again, once (BootRetrying).
  auto boot = BootRetrying(o.vm, b, dir, interrupted, nullptr);
  if (!boot.ok()) return boot.status();
  KeepText(o.keep_dir, "churn.log", boot->console);
  const ConsoleFacts cf = ParseConsole(boot->console);
  if (!cf.unknown_params.empty())
    return Status(-EINVAL,
                  "the guest kernel (" + gk.release + ") does not know " + cf.unknown_params);
  auto parsed = ParseChurnConsole(boot->console);
  if (!parsed.ok())
    return Status(
        -EIO, (boot->timed_out || boot->stopped || boot->kernel_failed ? WhyBootFailed(*boot) + ": "
                                                                       : std::string()) +
                  parsed.status().message() + ConsoleTail(boot->qemu_stderr, 5));
  ChurnVmResult r = std::move(*parsed);
  if (r.release.empty()) r.release = gk.release;
  r.accel = Name(*accel);
  r.accel_why = accel_why;
  r.boot_wall_s = boot->wall_s;
  for (unsigned kb : o.mthp_kb)
    if (!r.Stat(kb))
      return Status(-EINVAL, "the guest kernel (" + r.release + ") has no " + std::to_string(kb) +
                                 " kB mTHP swap-out counters (hugepages-" + std::to_string(kb) +
                                 "kB/stats: 6.10 or later)");
  return r;
}

std::vector<NonfullColumn> NonfullColumns(const workload::Scenario& sc) {
  const std::string before = sc.variants.size() == 2 ? sc.variants[0].label : "Before";
  const std::string after = sc.variants.size() == 2 ? sc.variants[1].label : "After";
  return {{before, "swapfile.prefer_nonfull=0", {}},
          {after, kNonfullFirstParam, {kNonfullFirstSearchKnob}}};
}

std::map<std::string, double> KernelRows(const ChurnVmResult& r) {
  std::map<std::string, double> rows;
  for (const auto& s : r.stats) {
    const std::string k = std::to_string(s.kb) + "kB ";
    rows[k + "swpout"] = static_cast<double>(s.swpout);
    rows[k + "swpout_fallback"] = static_cast<double>(s.swpout_fallback);
    const uint64_t tries = s.swpout + s.swpout_fallback;
    rows[k + "failure rate %"] =
        tries ? 100.0 * static_cast<double>(s.swpout_fallback) / static_cast<double>(tries) : NAN;
  }
  return rows;
}

Result<NonfullTableReport> RunNonfullTable(const NonfullTableOptions& o,
                                           const volatile std::sig_atomic_t* interrupted,
                                           const std::function<void(size_t, size_t)>& done) {
  NonfullTableReport rep;
  rep.options = o;
  const workload::Scenario& sc = o.scenario;
  if (o.runs < 1 || o.runs > kMaxChurnRuns)
    return Status(-EINVAL, "--runs: 1.." + std::to_string(kMaxChurnRuns));
  const workload::ChurnSpec* churn = nullptr;
  size_t churns = 0;
  for (const auto& st : sc.measured)
    if (const auto* c = std::get_if<workload::ChurnSpec>(&st)) churn = c, ++churns;
  if (churns != 1 || sc.measured.size() != 1 || !sc.aging.empty() || sc.variants.size() != 2 ||
      sc.devices.size() != 1)
    return Status(-EINVAL, sc.name +
                               ": the guest runs scenarios of one device, no aging, one "
                               "build-churn step and two variants (seed 003's)");
  if (sc.devices[0].discard)
    return Status(-EINVAL,
                  sc.name + ": the guest's zram does not discard; the scenario's device does");
  auto load = ChurnLoadOf(*churn, sc.seed);
  if (!load.ok()) return load.status();
  rep.load = *load;
  rep.zram_bytes = sc.devices[0].pages * alloc::kPageSize;
  rep.mthp_kb = MthpSizes(load->mix);
  rep.columns = NonfullColumns(sc);
  rep.rows = sc.rows;

  // The model first (seconds): the same scenario, its variants the kernel's
  // two settings, the guest's CPUs.
  workload::Scenario msc = sc;
  const int cpus = std::max(1, o.vm.smp);
  msc.cpus = cpus;
  for (auto& st : msc.measured)
    if (auto* c = std::get_if<workload::ChurnSpec>(&st)) c->cpus = cpus;
  msc.repetitions = o.runs;
  msc.variants.clear();
  for (const auto& col : rep.columns) {
    auto p = ModelPolicy(std::string(kGuestPreset), col.model_knobs);
    if (!p.ok()) return p.status();
    workload::VariantSpec v;
    v.label = col.label;
    v.policy = *p;
    msc.variants.push_back(v);
  }
  workload::RunOptions ro;
  auto model = workload::RunScenario(msc, ro);
  if (!model.ok()) return Status(model.status().code(), "model: " + model.status().message());
  for (const auto& v : model->variants)
    for (const auto& [row, samples] : v.samples) rep.model[row][v.label] = v.Median(row);

  const size_t total = rep.columns.size() * static_cast<size_t>(o.runs);
  size_t k = 0;
  rep.kernel.resize(rep.columns.size());
  for (int run = 0; run < o.runs; ++run)
    for (size_t c = 0; c < rep.columns.size(); ++c) {  // columns interleaved: drift hits both
      ChurnVmOptions co;
      co.vm = o.vm;
      co.vm.append = rep.columns[c].append + (o.vm.append.empty() ? "" : " " + o.vm.append);
      co.load = *load;
      co.load.seed = sc.seed + static_cast<uint64_t>(run);
      co.zram_bytes = rep.zram_bytes;
      co.memcg_bytes = o.memcg_bytes;
      co.mthp_kb = rep.mthp_kb;
      if (!o.keep_dir.empty())
        co.keep_dir = o.keep_dir + "/" + rep.columns[c].label + "-" + std::to_string(run + 1);
      auto r = RunChurnInVm(co, interrupted);
      if (!r.ok())
        return Status(r.status().code(), rep.columns[c].label + " run " + std::to_string(run + 1) +
                                             ": " + r.status().message());
      const int want = rep.columns[c].model_knobs.empty() ? 0 : 1;
      if (r->prefer_nonfull != want)
        return Status(-EINVAL, "the guest kernel (" + r->release +
                                   ") has no swapfile.prefer_nonfull (kernel-patches/"
                                   "nonfull-6.12; swaplab vm kernel build --name rfc-6.12)");
      rep.kernel[c].push_back(std::move(*r));
      if (done) done(++k, total);
    }
  return rep;
}

}  // namespace swaplab::vm
