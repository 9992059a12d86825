// `swaplab kernel run|cleanup`: a trace against the running kernel's swap,
// the placements compared with the model (issue 6).
#include "policy_arg.h"
#include "kernel.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cctype>
#include <csignal>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "swaplab/kernel/host.h"
#include "swaplab/kernel/kernel_run.h"
#include "swaplab/vm/qemu.h"
#include "swaplab/alloc/printable.h"
#include "size_arg.h"

namespace swaplab::tools {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
void OnSignal(int) { g_interrupted = 1; }

// "1000" pages, or bytes with a unit (a whole number of pages).
bool ParseSizePages(const std::string& s, uint64_t* pages) {
  auto bytes = ParseSize(s, "--size");
  if (!bytes.ok()) return false;
  const bool unit = !s.empty() && !std::isdigit(static_cast<unsigned char>(s.back()));
  if (!unit) {
    *pages = *bytes;
    return true;
  }
  if (*bytes % 4096 != 0) return false;
  *pages = *bytes / 4096;
  return true;
}

int ExitCode(const Status& st) { return st.code() == -EINVAL ? 2 : 1; }

int RunCleanup(const KernelOptions& o) {
  if (!kernel::IsRoot()) {
    fmt::print(stderr, "swaplab kernel cleanup: needs root\n");
    return 1;
  }
  std::vector<std::string> log;
  const Status st = kernel::Cleanup(&log);
  // `vm hibernate` work directories of runs that were SIGKILLed (their
  // qemu died with them: PR_SET_PDEATHSIG)
  std::vector<std::string> dirs = {"/var/tmp"};
  if (const char* t = std::getenv("TMPDIR"); t && *t && std::string(t) != "/var/tmp") dirs.emplace_back(t);
  for (const auto& d : dirs)
    for (const auto& p : vm::RemoveDeadWorkDirs(d)) log.push_back("remove " + Printable(p, 4096));
  if (o.json) {
    nlohmann::ordered_json j;
    j["actions"] = log;
    j["ok"] = st.ok();
    if (!st.ok()) j["error"] = st.ToString();
    fmt::print("{}\n", j.dump(2));
  } else {
    for (const auto& l : log) fmt::print("{}\n", l);
    if (log.empty()) fmt::print("nothing to clean up\n");
  }
  if (!st.ok()) fmt::print(stderr, "swaplab kernel cleanup: {}\n", st.ToString());
  return st.ok() ? 0 : 1;
}

int RunRun(const KernelOptions& o) {
  kernel::RunOptions ro;
  ro.trace = o.trace;
  if (access(o.trace.c_str(), R_OK) != 0) {
    fmt::print(stderr, "swaplab kernel run: {}: cannot read the trace: {}\n", o.trace, std::strerror(errno));
    return 2;
  }
  auto dev = kernel::ParseDeviceKind(o.device);
  if (!dev.ok()) {
    fmt::print(stderr, "swaplab kernel run: --device: {}\n", dev.status().message());
    return 2;
  }
  auto policy = PolicyFromArgs(o.policy, o.knobs);
  if (!policy.ok()) {
    fmt::print(stderr, "swaplab kernel run: {}\n", policy.status().message());
    return 2;
  }
  ro.device = *dev;
  if (!o.size.empty()) {
    uint64_t pages = 0;
    if (!ParseSizePages(o.size, &pages)) {
      fmt::print(stderr, "swaplab kernel run: --size '{}': pages, or bytes with K/M/G (a whole number of pages)\n",
                 o.size);
      return 2;
    }
    ro.size_pages = pages;
  }
  ro.prio = o.prio;
  ro.annotate_inuse = o.annotate;
  ro.timeout_s = o.timeout_s;
  // Without --out the written trace still goes somewhere, for the replay.
  char tmpl[] = "/tmp/swaplab-kernel-XXXXXX";
  std::string tmp;
  ro.out = o.out;
  if (ro.out.empty()) {
    const int fd = mkstemp(tmpl);
    if (fd < 0) {
      fmt::print(stderr, "swaplab kernel run: mkstemp: {}\n", std::strerror(errno));
      return 1;
    }
    close(fd);
    tmp = ro.out = tmpl;
  }
  if (!kernel::IsRoot()) {
    fmt::print(stderr, "swaplab kernel run: needs root (swapon, /proc/PID/pagemap, sysfs); run as root\n");
    if (!tmp.empty()) unlink(tmp.c_str());
    return 1;
  }
  struct sigaction sa {}, old_int{}, old_term{};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  auto rep = kernel::RunTrace(ro, &g_interrupted);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (!rep.ok()) {
    const Status& st = rep.status();
    fmt::print(stderr, "swaplab kernel run: {}\n", st.ToString());
    if (!tmp.empty()) unlink(tmp.c_str());
    return ExitCode(rep.status());
  }
  auto model = kernel::CompareWithModel(ro.out, *policy);
  if (!tmp.empty()) unlink(tmp.c_str());
  if (!model.ok()) {
    fmt::print(stderr, "swaplab kernel run: replay in the model: {}\n", model.status().ToString());
    return 1;
  }
  const auto& r = *rep;
  const auto& s = model->summary;
  nlohmann::ordered_json j;
  j["trace"] = o.trace;
  j["device"] = o.device;
  j["policy"] = policy->name;
  j["knobs"] = KnobsJson(*policy);
  if (!o.out.empty()) j["out"] = o.out;
  nlohmann::ordered_json aj = nlohmann::ordered_json::array();
  for (const auto& a : r.areas)
    aj.push_back({{"dev", a.dev}, {"path", a.path}, {"kind", kernel::Name(a.kind)}, {"pages", a.pages},
                  {"prio", a.prio}, {"ssd", a.ssd}, {"blkdev", a.blkdev}, {"swap_type", a.swap_type},
                  {"note", a.note}});
  j["areas"] = aj;
  j["records"] = r.records;
  j["folios"] = r.folios;
  j["pages_swapped"] = r.pages_swapped;
  j["pages_not_swapped"] = r.pages_not_swapped;
  j["expected"] = s.expected;
  j["agree"] = s.agree;
  j["agreement"] = s.expected ? static_cast<double>(s.agree) / static_cast<double>(s.expected) : 1.0;
  nlohmann::ordered_json fj = nlohmann::ordered_json::object();
  std::set<int> orders;
  for (const auto& [k, v] : r.folios_by_order)
    if (k > 0) orders.insert(k);
  for (int k : orders) {
    const std::string size = std::to_string(4 << k) + "kB";
    auto get = [](const std::map<int, uint64_t>& m, int k) { return m.count(k) ? m.at(k) : uint64_t{0}; };
    fj[size] = {{"kernel_swpout", get(r.swpout, k)},
                {"kernel_swpout_fallback", get(r.swpout_fallback, k)},
                {"model_swpout", get(model->swpout, k)},
                {"model_swpout_fallback", get(model->swpout_fallback, k)},
                {"kernel_rate", kernel::FallbackRate(r.swpout, r.swpout_fallback, k)},
                {"model_rate", kernel::FallbackRate(model->swpout, model->swpout_fallback, k)}};
  }
  j["fallback"] = fj;
  j["kernel_pswpout"] = r.pswpout;
  j["model_pswpout"] = model->pswpout;
  j["kernel_pgdeactivate"] = r.lru_deactivated;
  nlohmann::ordered_json dj = nlohmann::ordered_json::array();
  for (const auto& d : s.disagreements)
    dj.push_back({{"line", d.line}, {"folio", d.folio}, {"page", d.page}, {"kernel_dev", d.expected_dev},
                  {"kernel_offset", d.expected_offset}, {"model", d.got}});
  j["disagreements"] = dj;
  nlohmann::ordered_json nj = nlohmann::ordered_json::array();
  for (const auto& a : r.anomalies) nj.push_back({{"line", a.line}, {"folio", a.folio}, {"what", a.what}});
  j["kernel_on_its_own"] = nj;
  j["kernel_on_its_own_total"] = r.anomalies_total;
  j["unexplained_slots"] = r.unexplained_slots;
  j["worker_pages_swapped"] = r.worker_pages_swapped;
  j["drop_cache_made_global"] = r.drop_cache_global;
  j["uncached_at_pageout"] = r.uncached_at_pageout;
  j["swapin_bypassed_cache"] = r.swapin_bypassed_cache;
  j["swapin_extra_pages"] = r.swapin_extra_pages;
  j["model_pages_unplaced"] = s.pages_unplaced;
  j["seconds"] = r.seconds;
  if (o.json) {
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("kernel run {} on {} ({} records, {} folios, {:.2f} s)\n", o.trace, o.device, r.records, r.folios,
             r.seconds);
  for (const auto& a : r.areas)
    fmt::print("  dev {}: {} ({}, {} pages, prio {}, {}, {}) = swap type {}\n", a.dev, a.path,
               kernel::Name(a.kind), a.pages, a.prio, a.ssd ? "ssd" : "rotational", a.blkdev ? "blkdev" : "file",
               a.swap_type);
  fmt::print("pages swapped {}  kept in memory {}  pswpout kernel {} model {}\n", r.pages_swapped,
             r.pages_not_swapped, r.pswpout, model->pswpout);
  if (r.lru_deactivated)
    fmt::print("the kernel's LRU balancing deactivated {} folios during the run (system-wide pgdeactivate)\n",
               r.lru_deactivated);
  fmt::print("model: {}\n", policy->Describe());
  fmt::print("placement agreement with {}: {}/{} ({:.2f}%)\n", policy->name, s.agree, s.expected,
             100.0 * j["agreement"].get<double>());
  for (auto it = fj.begin(); it != fj.end(); ++it)
    fmt::print("  {} fallback: kernel {:.2f}% ({}/{})  model {:.2f}%\n", it.key(),
               100 * it.value()["kernel_rate"].get<double>(), it.value()["kernel_swpout_fallback"].get<uint64_t>(),
               it.value()["kernel_swpout"].get<uint64_t>() + it.value()["kernel_swpout_fallback"].get<uint64_t>(),
               100 * it.value()["model_rate"].get<double>());
  for (const auto& d : s.disagreements)
    fmt::print("  line {}: folio {} page {}: kernel dev {} offset {}, model {}\n", d.line, d.folio, d.page,
               d.expected_dev, d.expected_offset, d.got);
  if (r.anomalies_total) {
    fmt::print("the kernel on its own ({}):\n", r.anomalies_total);
    for (const auto& a : r.anomalies) fmt::print("  line {}: folio {}: {}\n", a.line, a.folio, a.what);
  }
  return 0;
}

}  // namespace

KernelCommands AddKernel(CLI::App& app, KernelOptions& o) {
  KernelCommands c;
  c.kernel = app.add_subcommand("kernel", "run traces against the running kernel's swap (root)");
  c.kernel->require_subcommand(1);
  c.run = c.kernel->add_subcommand("run", "run a trace on a private swap area, record placements, compare with the model");
  c.run->add_option("trace", o.trace, "trace file (swaplab-trace 1)")->required();
  c.run->add_option("--device", o.device, "file | loop | loop-ssd | zram");
  c.run->add_option("--size", o.size, "area size: pages, or bytes with K/M/G (default: the trace's pages=)");
  c.run->add_option("--out", o.out, "write the trace with the kernel's placements as expect lines");
  c.run->add_option("--policy", o.policy, "model preset to compare with")->capture_default_str();
  AddKnobOption(c.run, &o.knobs);
  c.run->add_option("--prio", o.prio, "swapon priority when the trace gives none")->check(CLI::Range(0, 32767));
  c.run->add_option("--timeout", o.timeout_s, "seconds before the run gives up")->check(CLI::Range(1, 3600));
  c.run->add_flag("--json", o.json, "one JSON document on stdout");
  c.run->add_flag("--annotate-inuse", o.annotate, "write '# kernel inuse N' (slots in use) after each record of --out");
  c.cleanup = c.kernel->add_subcommand("cleanup", "remove swap areas and settings left by a crashed run (only swaplab's)");
  c.cleanup->add_flag("--json", o.json, "one JSON document on stdout");
  return c;
}

int RunKernel(const KernelCommands& c, const KernelOptions& o) {
  if (c.cleanup->parsed()) return RunCleanup(o);
  return RunRun(o);
}

}  // namespace swaplab::tools
