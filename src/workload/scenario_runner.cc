// SPDX-License-Identifier: MIT
// Runs scenarios (scenario_runner.h).
#include "swaplab/workload/scenario_runner.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include "swaplab/area/io_engine_factory.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/workload/image_step.h"
#include "swaplab/workload/temp_files.h"
#include "workload/scenario_run.h"
#include "workload/steps.h"
#include "workload/workers.h"

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

class Job {
 public:
  // `file`: the scenario's real swap file for device 0 (formatted once by
  // RunScenario; the reader restores its signature after every image),
  // opened with the engine o.io names.
  Job(const Scenario& sc, const VariantSpec& v, int rep, const std::string& file,
      const RunOptions& o)
      : sc_(sc),
        v_(v),
        rep_(rep),
        file_(file),
        io_(o.io),
        structural_(o.structural && !sc.devices[0].real_file),
        observe_(o.observe) {}

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
      if (Status st = RunAt(w, sc_.aging[i], "$.aging[" + std::to_string(i) + "]", &unused);
          !st.ok())
        return st;
    }
    Observe("aging");
    Sample out;
    if (sc_.devices[0].real_file)
      out.image_io = engine_->description() +
                     (engine_->modelled() ? " (seconds modelled)" : " (seconds measured, wall)");
    for (size_t i = 0; i < sc_.measured.size(); ++i) {
      const bool image = std::holds_alternative<ImageStepSpec>(sc_.measured[i]);
      if (image) Observe("before");
      if (Status st = RunAt(w, sc_.measured[i], "$.measured[" + std::to_string(i) + "]", &out);
          !st.ok())
        return st;
      if (image) Observe("after");
      image_stream_.clear();  // held only until the observer has seen it
      image_map_.clear();
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
        auto e = area::OpenEngine(io_, file_, eo);
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

  void Observe(const char* phase) {
    if (observe_)
      observe_(JobPhase{&sc_, &v_, rep_, phase, sys_.get(), type0_, &image_stream_, &image_map_});
  }

  static std::string Where(const std::string& path, const Step& s, const Status& st) {
    return path + " (" + GeneratorName(s) + "): " + st.message();
  }

  Status RunAt(Workload& w, const Step& step, const std::string& path, Sample* out) {
    StepRun run{w,
                *sys_,
                sc_,
                v_,
                rep_,
                engine_.get(),
                type0_,
                structural_,
                out,
                observe_ ? &image_stream_ : nullptr,
                observe_ ? &image_map_ : nullptr};
    if (Status st = RunStep(step, run); !st.ok())
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
  area::EngineKind io_;
  bool structural_ = false;
  int type0_ = -1;
  const std::function<void(const JobPhase&)>& observe_;
  std::vector<uint64_t> image_stream_, image_map_;  // the last image step's placement
};

}  // namespace

Result<std::unique_ptr<ScenarioRun>> ScenarioRun::Prepare(const Scenario& sc, const RunOptions& o) {
  std::unique_ptr<ScenarioRun> run(new ScenarioRun(sc, o));
  for (int r = 0; r < sc.repetitions; ++r)
    for (size_t v = 0; v < sc.variants.size(); ++v) {
      Slot s;
      s.variant = v;
      s.rep = r;
      run->jobs_.push_back(std::move(s));
    }
  if (sc.devices[0].real_file) {
    auto path = CreateTempArea(sc.devices[0].dir, sc.name);
    if (!path.ok())
      return Status(path.status().code(), sc.file + ": $.devices[0]: " + path.status().message());
    run->temp_.emplace(*path);
    area::FormatOptions fo;
    fo.size_bytes = sc.devices[0].pages * alloc::kPageSize;
    fo.label = TempAreaLabel();
    if (Status st = area::FormatArea(run->temp_->path(), fo); !st.ok())
      return Status(st.code(), sc.file + ": $.devices[0]: " + st.message());
  }
  return run;
}

void ScenarioRun::RunJob(size_t i) {
  Slot& s = jobs_[i];
  if (o_.progress)
    o_.progress(sc_.name + ": " + sc_.variants[s.variant].label + " rep " +
                std::to_string(s.rep + 1) + "/" + std::to_string(sc_.repetitions));
  const auto t0 = Clock::now();
  static const std::string kNoFile;
  auto r = Job(sc_, sc_.variants[s.variant], s.rep, temp_ ? temp_->path() : kNoFile, o_).Run();
  s.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  s.status = r.status();
  if (r.ok()) s.sample = std::move(r).value();
  s.ran = true;
}

bool ScenarioRun::Settled() const {
  bool all = true;
  for (const Slot& s : jobs_) {
    if (s.ran && !s.status.ok()) return true;
    all = all && s.ran;
  }
  return all;
}

Result<ScenarioResult> ScenarioRun::Finish() {
  const Scenario& sc = sc_;
  ScenarioResult res;
  res.scenario = &sc;
  for (const Step& st : sc.measured) res.has_image |= std::holds_alternative<ImageStepSpec>(st);
  res.structural_image = res.has_image && o_.structural && !sc.devices[0].real_file;
  for (const auto& v : sc.variants) {
    VariantResult vr;
    vr.label = v.label;
    vr.policy = v.policy.name;
    vr.effective_policy = v.policy;
    res.variants.push_back(vr);
  }
  for (const Slot& s : jobs_)  // a job that failed before one that did not run
    if (s.ran && !s.status.ok())
      return Status(s.status.code(), sc.file + ": " + s.status.message());
  for (Slot& s : jobs_) {
    if (!s.status.ok()) return Status(s.status.code(), sc.file + ": " + s.status.message());
    VariantResult& vr = res.variants[s.variant];
    for (const auto& [name, value] : s.sample.values) {
      if (!vr.samples.count(name)) vr.order.push_back(name);
      vr.samples[name].push_back(value);
      vr.kinds[name] = s.sample.kinds.at(name);
    }
    if (res.image_io.empty()) res.image_io = s.sample.image_io;
    res.wall_seconds += s.seconds;
  }
  return res;
}

Result<ScenarioResult> RunScenario(const Scenario& sc, const RunOptions& o) {
  auto run = ScenarioRun::Prepare(sc, o);
  if (!run.ok()) return run.status();
  ScenarioRun& r = **run;
  const auto t0 = Clock::now();
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < r.jobs();) r.RunJob(i);
  };
  const int n = sc.parallel && !r.Serial()
                    ? std::max(1, std::min<int>(o.jobs, static_cast<int>(r.jobs())))
                    : 1;
  RunWorkers(n, worker);
  auto res = r.Finish();
  if (!res.ok()) return res.status();
  ScenarioResult out = std::move(res).value();
  out.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

}  // namespace swaplab::workload
