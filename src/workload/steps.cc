// SPDX-License-Identifier: MIT
// The generator table (steps.h): one StepRow per alternative of Step, in
// the order of Step, then the generic functions over them. Adding a
// generator: its parameters and function (generators.h), an alternative of
// Step (scenario.h), its row here, its line in scenarios/README.md.
#include "workload/steps.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <thread>

#include "swaplab/alloc/printable.h"
#include "swaplab/workload/image_step.h"

namespace swaplab::workload {

using nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

// A row: the name in scenario files, and
//   Status Parse(r, j, path, cpus, T&)  reads and checks the step's keys
//   void Scale(T&, f)                   shrinks it by f (ScaleScenario)
//   Status Run(StepRun&, const T&)      runs it, adding its metrics
//   uint64_t WorkPages(const T&)        pages it swaps out in all, roughly
//                                       (a batch runs the longest jobs first)
// and, for steps that leave pages swapped out, PagesNeeded and kPagesKey.
template <class T>
struct StepRow;

struct NoPagesNeeded {
  static constexpr const char* kPagesKey = "";
  template <class T>
  static uint64_t PagesNeeded(const T&) {
    return 0;
  }
};

// The kernel's sysfs name of an mTHP size: hugepages-64kB → "64kB".
std::string SizeName(int order) { return std::to_string(4u << order) + "kB"; }

// Runs `step` (a swap-out of folios drawn from `mix`) and adds the swap-out
// counts per mTHP size over it (sysfs stats/swpout and swpout_fallback of
// each hugepages-<size> directory).
template <class F>
Status CountingMthpSwapouts(StepRun& run, const std::vector<SizeWeight>& mix, F step) {
  const alloc::SwapCounters before = run.sys.counters();
  if (Status st = step(); !st.ok()) return st;
  const alloc::SwapCounters after = run.sys.counters();
  std::vector<int> orders;
  for (const auto& s : mix) orders.push_back(OrderOfPages(s.pages));
  std::sort(orders.begin(), orders.end());
  orders.erase(std::unique(orders.begin(), orders.end()), orders.end());
  for (int o : orders) {
    const double sw = static_cast<double>(after.swpout[o] - before.swpout[o]);
    const double fb = static_cast<double>(after.swpout_fallback[o] - before.swpout_fallback[o]);
    run.out->Add(SizeName(o) + " swpout", sw, MetricKind::kCount);
    if (o == 0) continue;
    run.out->Add(SizeName(o) + " swpout_fallback", fb, MetricKind::kCount);
    run.out->Add(SizeName(o) + " failure rate %", sw + fb > 0 ? 100.0 * fb / (sw + fb) : 0,
                 MetricKind::kPercent);
  }
  return Status::Ok();
}

template <>
struct StepRow<FillFreeSpec> {
  static constexpr const char* kName = "fill-free";
  static Status Parse(const ScenarioReader& r, const json& j, const std::string& path, int cpus,
                      FillFreeSpec& s) {
    SL_TRY(r.Keys(j, path, {"generator", "region", "folio", "free_share", "shuffled", "cpus"}));
    SL_TRY(r.Pages(j, path, "region", &s.region_pages, true));
    SL_TRY(r.FolioOrder(j, path, &s.order));
    SL_TRY(r.Num(j, path, "free_share", &s.free_share, 0, 1));
    SL_TRY(r.Bool(j, path, "shuffled", &s.shuffled));
    SL_TRY(r.Int(j, path, "cpus", &s.cpus, 1, cpus));
    if (s.region_pages % (uint64_t{1} << s.order))
      return r.Error(path + ".region", "not a multiple of the folio");
    return Status::Ok();
  }
  static constexpr const char* kPagesKey = ".region";
  static uint64_t PagesNeeded(const FillFreeSpec& s) { return s.region_pages; }
  static uint64_t WorkPages(const FillFreeSpec& s) { return s.region_pages; }
  static void Scale(FillFreeSpec& s, double f) {
    s.region_pages = Scaled(s.region_pages, f, uint64_t{1} << s.order);
  }
  static Status Run(StepRun& run, const FillFreeSpec& s) { return FillFree(run.w, s).status(); }
};

template <>
struct StepRow<HolesSpec> {
  static constexpr const char* kName = "holes";
  static Status Parse(const ScenarioReader& r, const json& j, const std::string& path, int cpus,
                      HolesSpec& s) {
    SL_TRY(r.Keys(j, path, {"generator", "region", "folio", "hole", "cpus"}));
    SL_TRY(r.Pages(j, path, "region", &s.region_pages, true));
    SL_TRY(r.FolioOrder(j, path, &s.order));
    SL_TRY(r.Pages(j, path, "hole", &s.hole_pages, true));
    SL_TRY(r.Int(j, path, "cpus", &s.cpus, 1, cpus));
    if (s.hole_pages % (uint64_t{1} << s.order))
      return r.Error(path + ".hole", "not a multiple of the folio");
    if (s.region_pages % (uint64_t{1} << s.order))
      return r.Error(path + ".region", "not a multiple of the folio");
    return Status::Ok();
  }
  static constexpr const char* kPagesKey = ".region";
  static uint64_t PagesNeeded(const HolesSpec& s) { return s.region_pages; }
  static uint64_t WorkPages(const HolesSpec& s) { return s.region_pages; }
  static void Scale(HolesSpec& s, double f) {
    s.region_pages = Scaled(s.region_pages, f, 2 * s.hole_pages);
  }
  static Status Run(StepRun& run, const HolesSpec& s) { return Holes(run.w, s).status(); }
};

template <>
struct StepRow<MthpSpec> : NoPagesNeeded {
  static constexpr const char* kName = "mthp-mix";
  static Status Parse(const ScenarioReader& r, const json& j, const std::string& path, int cpus,
                      MthpSpec& s) {
    SL_TRY(r.Keys(j, path, {"generator", "total", "sizes", "cpus"}));
    SL_TRY(r.Pages(j, path, "total", &s.total_pages, true));
    SL_TRY(r.Mix(j, path, &s.mix));
    SL_TRY(r.Int(j, path, "cpus", &s.cpus, 1, cpus));
    return Status::Ok();
  }
  static void Scale(MthpSpec& s, double f) { s.total_pages = Scaled(s.total_pages, f, 1); }
  static uint64_t WorkPages(const MthpSpec& s) { return s.total_pages; }
  static Status Run(StepRun& run, const MthpSpec& s) {
    return CountingMthpSwapouts(run, s.mix, [&] { return MthpMix(run.w, s).status(); });
  }
};

template <>
struct StepRow<ChurnSpec> : NoPagesNeeded {
  static constexpr const char* kName = "build-churn";
  static Status Parse(const ScenarioReader& r, const json& j, const std::string& path, int cpus,
                      ChurnSpec& s) {
    SL_TRY(r.Keys(j, path,
                  {"generator", "processes", "concurrent", "min", "max", "sizes", "partial_free",
                   "cpus", "exit", "exit_at_end", "swapped", "growing", "batch"}));
    SL_TRY(r.Int(j, path, "processes", &s.processes, 1, int64_t{1} << 32, true));
    SL_TRY(r.Int(j, path, "concurrent", &s.concurrent, 1, int64_t{1} << 20, true));
    SL_TRY(r.Pages(j, path, "min", &s.min_pages, true));
    SL_TRY(r.Pages(j, path, "max", &s.max_pages, true));
    if (s.max_pages < s.min_pages) return r.Error(path + ".max", "smaller than min");
    SL_TRY(r.Mix(j, path, &s.mix));
    SL_TRY(r.Num(j, path, "partial_free", &s.partial_free_share, 0, 1));
    SL_TRY(r.Int(j, path, "cpus", &s.cpus, 1, cpus));
    std::string exit = "oldest";
    SL_TRY(r.Either(j, path, "exit", "oldest", "random", &exit));
    s.random_exit = exit == "random";
    SL_TRY(r.Bool(j, path, "exit_at_end", &s.exit_at_end));
    SL_TRY(r.Pages(j, path, "swapped", &s.swapped_pages, false));
    SL_TRY(r.Int(j, path, "growing", &s.growing, 1, int64_t{1} << 20));
    SL_TRY(r.Pages(j, path, "batch", &s.batch_pages, false));
    if (s.batch_pages == 0) return r.Error(path + ".batch", "at least one page");
    return Status::Ok();
  }
  static void Scale(ChurnSpec& s, double f) {
    // Fewer processes of the same size (a smaller machine): the share of
    // the device alive stays; process sizes keep their folio mix.
    s.processes = Scaled(s.processes, f, 1);
    s.concurrent = Scaled(s.concurrent, f, 1);
    if (s.swapped_pages) s.swapped_pages = Scaled(s.swapped_pages, f, 1);
    // Fewer jobs at once too; still interleaved (2 at least) if they were.
    if (s.growing > 1) s.growing = std::max<uint64_t>(2, Scaled(s.growing, f, 1));
  }
  static uint64_t WorkPages(const ChurnSpec& s) {
    return s.processes * ((s.min_pages + s.max_pages) / 2);
  }
  static Status Run(StepRun& run, const ChurnSpec& s) {
    return CountingMthpSwapouts(run, s.mix, [&] { return BuildChurn(run.w, s).status(); });
  }
};

template <>
struct StepRow<UsememStepSpec> : NoPagesNeeded {
  static constexpr const char* kName = "usemem";
  static Status Parse(const ScenarioReader& r, const json& j, const std::string& path, int /*cpus*/,
                      UsememStepSpec& s) {
    SL_TRY(
        r.Keys(j, path, {"generator", "processes", "size", "folio", "random", "passes", "limit"}));
    SL_TRY(r.Int(j, path, "processes", &s.spec.processes, 1, 1 << 16, true));
    SL_TRY(r.Pages(j, path, "size", &s.spec.pages_per_process, true));
    SL_TRY(r.FolioOrder(j, path, &s.spec.order));
    SL_TRY(r.Bool(j, path, "random", &s.spec.random));
    SL_TRY(r.Int(j, path, "passes", &s.spec.passes, 1, 1 << 20));
    SL_TRY(r.Pages(j, path, "limit", &s.spec.limit_pages, true));
    if (s.spec.pages_per_process % (uint64_t{1} << s.spec.order))
      return r.Error(path + ".size", "not a multiple of the folio");
    return Status::Ok();
  }
  static void Scale(UsememStepSpec& s, double f) {
    s.spec.pages_per_process = Scaled(s.spec.pages_per_process, f, uint64_t{1} << s.spec.order);
    s.spec.limit_pages = Scaled(s.spec.limit_pages, f, uint64_t{1} << s.spec.order);
  }
  // Every process's pages, once per pass (each touch may swap a page out).
  static uint64_t WorkPages(const UsememStepSpec& s) {
    return s.spec.processes * s.spec.pages_per_process * s.spec.passes;
  }
  // The variant's `threads` hammers at once, one per CPU, each its own
  // workload (seed 004's usemem throughput).
  static Status Run(StepRun& run, const UsememStepSpec& u) {
    const int threads = run.v.threads;
    std::vector<std::unique_ptr<Workload>> ws;
    for (int t = 0; t < threads; ++t)
      ws.push_back(std::make_unique<Workload>(
          run.sys, run.sc.seed * 1000 + static_cast<uint64_t>(run.rep * 16 + t)));
    std::vector<Result<UsememResult>> res(threads, Status(-EINTR, "not run"));
    const auto t0 = Clock::now();
    std::vector<std::thread> th;
    for (int t = 0; t < threads; ++t) {
      th.emplace_back([&, t] {
        UsememSpec s = u.spec;
        s.cpu = t;
        res[t] = Usemem(*ws[t], s);
      });
    }
    for (auto& x : th) x.join();
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    uint64_t ops = 0, outs = 0;
    for (auto& r : res) {
      if (!r.ok()) return r.status();
      ops += r->swapouts + r->swapins;
      outs += r->swapouts;
    }
    run.out->Add("throughput, allocator ops/s", secs > 0 ? static_cast<double>(ops) / secs : 0,
                 MetricKind::kMeasuredRate);
    run.out->Add("swap-outs", static_cast<double>(outs), MetricKind::kCount);
    return Status::Ok();
  }
};

template <>
struct StepRow<RotationStepSpec> : NoPagesNeeded {
  static constexpr const char* kName = "rotation";
  static Status Parse(const ScenarioReader& r, const json& j, const std::string& path, int cpus,
                      RotationStepSpec& s) {
    SL_TRY(r.Keys(j, path, {"generator", "allocations", "cpus"}));
    SL_TRY(r.Int(j, path, "allocations", &s.allocations, 1, int64_t{1} << 32, true));
    SL_TRY(r.Int(j, path, "cpus", &s.cpus, 1, cpus));
    return Status::Ok();
  }
  static void Scale(RotationStepSpec& s, double f) { s.allocations = Scaled(s.allocations, f, 1); }
  static uint64_t WorkPages(const RotationStepSpec& s) { return s.allocations; }
  // How long allocation stays on one device (seed 004).
  static Status Run(StepRun& run, const RotationStepSpec& s) {
    auto rot = Rotation(run.w, s.allocations, s.cpus);
    if (!rot.ok()) return rot.status();
    run.out->Add("allocations per device switch", rot->mean_stretch, MetricKind::kCount);
    uint64_t total = 0;
    for (uint64_t d : rot->per_device) total += d;
    run.out->Add(
        "share on device 0 %",
        total ? 100.0 * static_cast<double>(rot->per_device[0]) / static_cast<double>(total) : 0,
        MetricKind::kPercent);
    return Status::Ok();
  }
};

template <>
struct StepRow<ImageStepSpec> {
  static constexpr const char* kName = "image";
  static Status Parse(const ScenarioReader& r, const json& j, const std::string& path, int /*cpus*/,
                      ImageStepSpec& s) {
    SL_TRY(
        r.Keys(j, path, {"generator", "size", "source", "batch", "capacity", "max_pages", "read"}));
    SL_TRY(r.Pages(j, path, "size", &s.pages, true));
    SL_TRY(r.Named(j, path, "source", hibernate::ParseSlotSource, &s.source));
    SL_TRY(r.Named(j, path, "batch", hibernate::ParseBatchMode, &s.batch));
    std::string v = "exact";
    SL_TRY(r.Str(j, path, "capacity", &v));
    auto c = hibernate::ParseCapacityMode(v);
    if (!c.ok()) return r.Error(path + ".capacity", c.status().message());
    s.capacity = *c;
    SL_TRY(r.Int(j, path, "max_pages", &s.max_pages, 0, 4096));
    SL_TRY(r.Bool(j, path, "read", &s.read));
    return Status::Ok();
  }
  static constexpr const char* kPagesKey = ".size";
  static uint64_t PagesNeeded(const ImageStepSpec& s) { return ImageStepSlots(s); }
  // Written, and read back unless told not to.
  static uint64_t WorkPages(const ImageStepSpec& s) { return ImageStepSlots(s) * (s.read ? 2 : 1); }
  static void Scale(ImageStepSpec& s, double f) { s.pages = Scaled(s.pages, f, 1); }
  // Writes (and reads back) a hibernation image on the aged device 0: its
  // counts and seconds, and the host CPU rows when priced.
  static Status Run(StepRun& run, const ImageStepSpec& im) {
    ImageSpec is;
    is.pages = im.pages;
    is.source = im.source.value_or(run.v.source);
    is.batch.mode = im.batch.value_or(run.v.batch);
    is.batch.capacity = im.capacity;
    is.batch.max_pages = im.max_pages;
    is.read_back = im.read;
    is.seed = run.sc.seed + static_cast<uint64_t>(run.rep);
    is.structural = run.structural;
    auto r = WriteReadImage(run.sys, run.type0, *run.engine, is);
    if (!r.ok()) return r.status();
    Sample& out = *run.out;
    const MetricKind sec =
        r->modelled ? MetricKind::kModelledSeconds : MetricKind::kMeasuredSeconds;
    out.Add("write, s", r->write_s, sec);
    if (im.read) out.Add("read, s", r->read_s, sec);
    out.Add("runs", static_cast<double>(r->runs), MetricKind::kCount);
    out.Add("runs, write order", static_cast<double>(r->runs_alloc_order), MetricKind::kCount);
    out.Add("bios", static_cast<double>(r->write_bios), MetricKind::kCount);
    if (im.read) out.Add("read bios", static_cast<double>(r->read_bios), MetricKind::kCount);
    out.Add("single-slot fallbacks", static_cast<double>(r->fallback_slots), MetricKind::kCount);
    out.Add("allocator calls", static_cast<double>(r->alloc_calls), MetricKind::kCount);
    if (run.image_stream) *run.image_stream = std::move(r->stream_dblocks);
    if (run.image_map) *run.image_map = std::move(r->map_dblocks);
    if (run.sc.host_cpu && r->modelled) {
      out.Add("write + host CPU, s", r->WriteWithHostCpu(*run.sc.host_cpu),
              MetricKind::kModelledSeconds);
      if (im.read)
        out.Add("read + host CPU, s", r->ReadWithHostCpu(*run.sc.host_cpu),
                MetricKind::kModelledSeconds);
    }
    return Status::Ok();
  }
};

// The table over Step's alternatives, in Step's order.
using Parser = Result<Step> (*)(const ScenarioReader&, const json&, const std::string&, int);

template <class T>
Result<Step> ParseAs(const ScenarioReader& r, const json& j, const std::string& path, int cpus) {
  T s;
  SL_TRY(StepRow<T>::Parse(r, j, path, cpus, s));
  return Step(std::move(s));
}

template <class V>
struct Table;
template <class... T>
struct Table<std::variant<T...>> {
  static constexpr std::array<const char*, sizeof...(T)> kNames = {StepRow<T>::kName...};
  static constexpr std::array<Parser, sizeof...(T)> kParsers = {&ParseAs<T>...};
};
using StepTable = Table<Step>;

// Calls f(row, step) with the row of the step's alternative.
template <class S, class F>
decltype(auto) WithRow(S& s, F&& f) {
  return std::visit(
      [&](auto& x) -> decltype(auto) { return f(StepRow<std::decay_t<decltype(x)>>{}, x); }, s);
}

}  // namespace

const char* GeneratorName(const Step& s) { return StepTable::kNames[s.index()]; }

Result<Step> ParseStep(const ScenarioReader& r, const json& j, const std::string& path, int cpus) {
  if (!j.is_object()) return r.Error(path, "expected an object with a \"generator\"");
  std::string gen;
  SL_TRY(r.Str(j, path, "generator", &gen, true));
  std::string known;
  for (size_t i = 0; i < StepTable::kNames.size(); ++i) {
    if (gen == StepTable::kNames[i]) return StepTable::kParsers[i](r, j, path, cpus);
    known += std::string(i ? ", " : "") + StepTable::kNames[i];
  }
  return r.Error(path + ".generator", "unknown generator '" + Printable(gen, kMaxTokenInMessage) +
                                          "' (known: " + known + ")");
}

uint64_t PagesNeeded(const Step& s) {
  return WithRow(s, [](auto row, const auto& x) { return row.PagesNeeded(x); });
}

uint64_t WorkPages(const Step& s) {
  return WithRow(s, [](auto row, const auto& x) { return row.WorkPages(x); });
}

const char* PagesKey(const Step& s) {
  return WithRow(s, [](auto row, const auto&) { return row.kPagesKey; });
}

void ScaleStep(Step& s, double f) {
  WithRow(s, [f](auto row, auto& x) { row.Scale(x, f); });
}

Status RunStep(const Step& s, StepRun& run) {
  return WithRow(s, [&run](auto row, const auto& x) { return row.Run(run, x); });
}

}  // namespace swaplab::workload
