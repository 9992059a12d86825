// Runs scenarios (scenario_runner.h).
#include "swaplab/workload/scenario_runner.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "swaplab/area/io_engine.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/workload/image_step.h"
#include "swaplab/workload/temp_files.h"

namespace swaplab::workload {

const char* Name(MetricKind k) {
  switch (k) {
    case MetricKind::kCount:
      return "count";
    case MetricKind::kModelledSeconds:
      return "modelled";
    case MetricKind::kMeasuredSeconds:
      return "measured";
    case MetricKind::kMeasuredRate:
      return "measured";
    case MetricKind::kPercent:
      return "percent";
  }
  return "?";
}

double VariantResult::Median(const std::string& metric) const {
  auto it = samples.find(metric);
  if (it == samples.end() || it->second.empty()) return std::nan("");
  std::vector<double> v = it->second;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

namespace {

using Clock = std::chrono::steady_clock;

// Metrics of one job, in the order produced.
struct Sample {
  std::vector<std::pair<std::string, double>> values;
  std::map<std::string, MetricKind> kinds;
  void Add(const std::string& name, double v, MetricKind k) {
    values.emplace_back(name, v);
    kinds[name] = k;
  }
};

// The kernel's sysfs name of an mTHP size: hugepages-64kB → "64kB".
std::string SizeName(int order) { return std::to_string(4u << order) + "kB"; }

class Job {
 public:
  // `file`: the scenario's real swap file for device 0 (formatted once by
  // RunScenario; the reader restores its signature after every image).
  Job(const Scenario& sc, const VariantSpec& v, int rep, const std::string& file, bool structural)
      : sc_(sc),
        v_(v),
        rep_(rep),
        file_(file),
        structural_(structural && !sc.devices[0].real_file) {}

  Result<Sample> Run() {
    alloc::SystemOptions so;
    so.policy = v_.policy;
    so.nr_cpus = sc_.cpus;
    sys_ = std::make_unique<alloc::SwapSystem>(so);
    for (size_t i = 0; i < sc_.devices.size(); ++i) {
      if (Status st = Swapon(i); !st.ok()) return st;
    }
    Workload w(*sys_, sc_.seed + static_cast<uint64_t>(rep_));
    Sample unused;
    for (size_t i = 0; i < sc_.aging.size(); ++i) {
      if (Status st = RunStep(w, sc_.aging[i], "$.aging[" + std::to_string(i) + "]", &unused);
          !st.ok())
        return st;
    }
    Sample out;
    for (size_t i = 0; i < sc_.measured.size(); ++i) {
      if (Status st = RunStep(w, sc_.measured[i], "$.measured[" + std::to_string(i) + "]", &out);
          !st.ok())
        return st;
    }
    return out;
  }

 private:
  // Swapon of device i; device 0 gets the engine the image step uses.
  Status Swapon(size_t i) {
    const DeviceSpec& d = sc_.devices[i];
    alloc::SwaponOptions o;
    o.name = d.name;
    o.pages = d.pages;
    o.ssd = d.ssd;
    o.blkdev = d.blkdev;
    o.discard = d.discard ? alloc::DiscardMode::kBoth : alloc::DiscardMode::kNone;
    o.prio = d.prio;
    // A block device id of its own (the reservation and the hibernation
    // lookups need one); slot s is block s (§10.1 "the area is a partition").
    o.bdev = 0x800 + i;
    if (i == 0 && v_.source == hibernate::SlotSourceKind::kReserve) {
      for (const Step& s : sc_.measured) {
        if (auto* im = std::get_if<ImageStepSpec>(&s))
          o.hibernation_reserve_pages = ImageStepSlots(*im);
      }
    }
    if (i == 0) {
      if (d.real_file) {
        area::EngineOptions eo;
        auto lim = area::ReadDeviceLimits(file_);
        if (lim.ok()) eo.limits = *lim;
        auto e = area::OpenUringEngine(file_, eo);
        if (!e.ok()) return e.status();
        engine_ = std::move(e).value();
      } else {
        engine_ = MakeSimulatedSwapDevice(d.pages, structural_);
      }
    }
    auto t = sys_->Swapon(o);
    if (!t.ok()) return Status(t.status().code(), "swapon " + d.name + ": " + t.status().message());
    if (i == 0) type0_ = *t;
    return Status::Ok();
  }

  static std::string Where(const std::string& path, const Step& s, const Status& st) {
    return path + " (" + GeneratorName(s) + "): " + st.message();
  }

  // Swap-out counts per mTHP size over one step (sysfs stats/swpout and
  // swpout_fallback of each hugepages-<size> directory).
  void MthpCounters(const alloc::SwapCounters& before, const std::vector<SizeWeight>& mix,
                    Sample* out) {
    const alloc::SwapCounters after = sys_->counters();
    std::vector<int> orders;
    for (const auto& s : mix) orders.push_back(OrderOfPages(s.pages));
    std::sort(orders.begin(), orders.end());
    orders.erase(std::unique(orders.begin(), orders.end()), orders.end());
    for (int o : orders) {
      const double sw = static_cast<double>(after.swpout[o] - before.swpout[o]);
      const double fb = static_cast<double>(after.swpout_fallback[o] - before.swpout_fallback[o]);
      out->Add(SizeName(o) + " swpout", sw, MetricKind::kCount);
      if (o == 0) continue;
      out->Add(SizeName(o) + " swpout_fallback", fb, MetricKind::kCount);
      out->Add(SizeName(o) + " failure rate %", sw + fb > 0 ? 100.0 * fb / (sw + fb) : 0,
               MetricKind::kPercent);
    }
  }

  Status RunUsemem(const UsememStepSpec& u, Sample* out) {
    const int threads = v_.threads;
    std::vector<std::unique_ptr<Workload>> ws;
    for (int t = 0; t < threads; ++t)
      ws.push_back(std::make_unique<Workload>(
          *sys_, sc_.seed * 1000 + static_cast<uint64_t>(rep_ * 16 + t)));
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
    out->Add("throughput, allocator ops/s", secs > 0 ? static_cast<double>(ops) / secs : 0,
             MetricKind::kMeasuredRate);
    out->Add("swap-outs", static_cast<double>(outs), MetricKind::kCount);
    return Status::Ok();
  }

  // The rotation step: how long allocation stays on one device (seed 004).
  Status RunRotation(Workload& w, const RotationStepSpec& r, Sample* out) {
    auto rot = Rotation(w, r.allocations, r.cpus);
    if (rot.ok()) {
      out->Add("allocations per device switch", rot->mean_stretch, MetricKind::kCount);
      uint64_t total = 0;
      for (uint64_t d : rot->per_device) total += d;
      out->Add(
          "share on device 0 %",
          total ? 100.0 * static_cast<double>(rot->per_device[0]) / static_cast<double>(total) : 0,
          MetricKind::kPercent);
    }
    return rot.status();
  }

  // The image step: write (and read back) a hibernation image on the aged
  // device; its counts and seconds, and the host CPU rows when priced.
  Status RunImage(const ImageStepSpec& im, Sample* out) {
    ImageSpec is;
    is.pages = im.pages;
    is.source = im.source.value_or(v_.source);
    is.batch.mode = im.batch.value_or(v_.batch);
    is.batch.capacity = im.capacity;
    is.batch.max_pages = im.max_pages;
    is.read_back = im.read;
    is.seed = sc_.seed + static_cast<uint64_t>(rep_);
    is.structural = structural_;
    auto r = WriteReadImage(*sys_, type0_, *engine_, is);
    if (r.ok()) {
      const MetricKind sec =
          r->modelled ? MetricKind::kModelledSeconds : MetricKind::kMeasuredSeconds;
      out->Add("write, s", r->write_s, sec);
      if (im.read) out->Add("read, s", r->read_s, sec);
      out->Add("runs", static_cast<double>(r->runs), MetricKind::kCount);
      out->Add("runs, write order", static_cast<double>(r->runs_alloc_order), MetricKind::kCount);
      out->Add("bios", static_cast<double>(r->write_bios), MetricKind::kCount);
      if (im.read) out->Add("read bios", static_cast<double>(r->read_bios), MetricKind::kCount);
      out->Add("single-slot fallbacks", static_cast<double>(r->fallback_slots), MetricKind::kCount);
      out->Add("allocator calls", static_cast<double>(r->alloc_calls), MetricKind::kCount);
      if (sc_.host_cpu && r->modelled) {
        out->Add("write + host CPU, s", r->WriteWithHostCpu(*sc_.host_cpu),
                 MetricKind::kModelledSeconds);
        if (im.read)
          out->Add("read + host CPU, s", r->ReadWithHostCpu(*sc_.host_cpu),
                   MetricKind::kModelledSeconds);
      }
    }
    return r.status();
  }

  Status RunStep(Workload& w, const Step& step, const std::string& path, Sample* out) {
    const alloc::SwapCounters before = sys_->counters();
    const Status st =
        std::visit(Overloaded{
                       [&](const FillFreeSpec& f) { return FillFree(w, f).status(); },
                       [&](const HolesSpec& h) { return Holes(w, h).status(); },
                       [&](const MthpSpec& m) {
                         Status s = MthpMix(w, m).status();
                         if (s.ok()) MthpCounters(before, m.mix, out);
                         return s;
                       },
                       [&](const ChurnSpec& c) {
                         Status s = BuildChurn(w, c).status();
                         if (s.ok()) MthpCounters(before, c.mix, out);
                         return s;
                       },
                       [&](const UsememStepSpec& u) { return RunUsemem(u, out); },
                       [&](const RotationStepSpec& r) { return RunRotation(w, r, out); },
                       [&](const ImageStepSpec& im) { return RunImage(im, out); },
                   },
                   step);
    if (!st.ok())
      return Status(st.code(),
                    v_.label + " rep " + std::to_string(rep_) + ": " + Where(path, step, st));
    return Status::Ok();
  }

  const Scenario& sc_;
  const VariantSpec& v_;
  int rep_;
  std::unique_ptr<alloc::SwapSystem> sys_;
  std::unique_ptr<area::IoEngine> engine_;
  const std::string& file_;
  bool structural_ = false;
  int type0_ = -1;
};

}  // namespace

Result<ScenarioResult> RunScenario(const Scenario& sc, const RunOptions& o) {
  const auto t0 = Clock::now();
  struct Slot {
    size_t variant;
    int rep;
    Status status = Status(-EINTR, "not run");
    Sample sample;
  };
  std::vector<Slot> jobs;
  for (int r = 0; r < sc.repetitions; ++r)  // interleaved: rep-major
    for (size_t v = 0; v < sc.variants.size(); ++v)
      jobs.push_back(Slot{v, r, Status(-EINTR, "not run"), Sample{}});
  // A real swap file for the jobs: labelled, and removed on every exit
  // path but SIGKILL (then `swaplab kernel cleanup` finds it).
  std::optional<TempFile> temp;
  if (sc.devices[0].real_file) temp.emplace(TempAreaPath(sc.devices[0].dir, sc.name));
  const std::string& file_path = temp ? temp->path() : std::string();
  if (temp) {
    area::FormatOptions fo;
    fo.size_bytes = sc.devices[0].pages * alloc::kPageSize;
    fo.label = TempAreaLabel();
    if (Status st = area::FormatArea(file_path, fo); !st.ok())
      return Status(st.code(), sc.file + ": $.devices[0]: " + st.message());
  }
  std::atomic<size_t> next{0};
  std::mutex mu;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < jobs.size();) {
      Slot& s = jobs[i];
      if (o.progress) {
        std::lock_guard<std::mutex> g(mu);
        o.progress(sc.name + ": " + sc.variants[s.variant].label + " rep " +
                   std::to_string(s.rep + 1) + "/" + std::to_string(sc.repetitions));
      }
      auto r = Job(sc, sc.variants[s.variant], s.rep, file_path, o.structural).Run();
      s.status = r.status();
      if (r.ok()) s.sample = std::move(r).value();
    }
  };
  // One real swap file is shared by the jobs: never two at once.
  const int n = sc.parallel && !sc.devices[0].real_file
                    ? std::max(1, std::min<int>(o.jobs, static_cast<int>(jobs.size())))
                    : 1;
  std::vector<std::thread> th;
  for (int t = 1; t < n; ++t) th.emplace_back(worker);
  worker();
  for (auto& t : th) t.join();

  ScenarioResult res;
  res.scenario = &sc;
  for (const Step& st : sc.measured) res.has_image |= std::holds_alternative<ImageStepSpec>(st);
  res.structural_image = res.has_image && o.structural && !sc.devices[0].real_file;
  for (const auto& v : sc.variants) {
    VariantResult vr;
    vr.label = v.label;
    vr.policy = v.policy.name;
    vr.effective_policy = v.policy;
    res.variants.push_back(vr);
  }
  for (Slot& s : jobs) {
    if (!s.status.ok()) return Status(s.status.code(), sc.file + ": " + s.status.message());
    VariantResult& vr = res.variants[s.variant];
    for (const auto& [name, value] : s.sample.values) {
      if (!vr.samples.count(name)) vr.order.push_back(name);
      vr.samples[name].push_back(value);
      vr.kinds[name] = s.sample.kinds.at(name);
    }
  }
  res.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return res;
}

}  // namespace swaplab::workload
