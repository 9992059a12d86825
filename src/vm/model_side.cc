// The model's half of `vm hibernate`: trace replay, then the image step.
#include "model_side.h"

#include <chrono>

#include "swaplab/alloc/policy.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/workload/image_step.h"
#include "swaplab/workload/trace.h"
#include "swaplab/workload/trace_runner.h"

namespace swaplab::vm {

namespace {

struct Replayed {
  std::unique_ptr<alloc::SwapSystem> sys;
  std::unique_ptr<workload::TraceRunner> runner;
  int type = 0;
  uint64_t pages = 0;
};

Result<Replayed> Replay(const std::string& trace_path, const std::string& policy, int cpus,
                        uint64_t* records) {
  auto pol = alloc::Policy::Preset(policy);
  if (!pol.ok()) return pol.status();
  alloc::SystemOptions so;
  so.policy = *pol;
  so.nr_cpus = cpus;
  Replayed r;
  r.sys = std::make_unique<alloc::SwapSystem>(so);
  r.runner = std::make_unique<workload::TraceRunner>(*r.sys);
  auto reader = workload::TraceReader::Open(trace_path);
  if (!reader.ok()) return reader.status();
  *records = 0;
  for (workload::TraceRecord rec;;) {
    auto more = (*reader)->Next(&rec);
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (rec.op == workload::TraceOp::kSwapon && rec.dev == 0) r.pages = rec.pages;
    if (Status st = r.runner->Apply(rec, trace_path); !st.ok()) return st;
    ++*records;
  }
  auto it = r.runner->devices().find(0);
  if (it == r.runner->devices().end()) return Status(-EINVAL, trace_path + ": no `swapon dev=0`");
  r.type = it->second;
  return r;
}

Result<workload::ImageResult> WriteImage(const Replayed& r, uint64_t pages,
                                         hibernate::BatchMode mode) {
  auto engine = workload::MakeSimulatedSwapDevice(r.pages, true);
  workload::ImageSpec spec;
  spec.pages = pages;
  spec.source = hibernate::SlotSourceKind::kBase;
  spec.batch.mode = mode;
  spec.structural = true;
  return workload::WriteReadImage(*r.sys, r.type, *engine, spec);
}

}  // namespace

Status RunModelSide(const std::string& trace_path, const std::string& policy, int cpus,
                    uint64_t stream_pages, SideMetrics* m, ModelSideInfo* info) {
  const auto t0 = std::chrono::steady_clock::now();
  info->policy = policy;
  // The image step changes the system, so each image gets a fresh replay:
  // first to learn how many snapshot pages give the kernel's stream pages,
  // then per page and per run.
  // First guess: the stream is the pages, swsusp_info and one map page per
  // 511 slots (about one per 512 stream pages); the loop corrects it when
  // the map pages come out one more or less.
  const uint64_t overhead = 1 + (stream_pages + 511) / 512;
  uint64_t pages = stream_pages > overhead + 1 ? stream_pages - overhead : 1;
  workload::ImageResult per_page, per_run;
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto r = Replay(trace_path, policy, cpus, &info->records);
    if (!r.ok()) return r.status();
    if (attempt == 0) {
      const auto& s = r->runner->summary();
      info->expected = s.expected;
      info->agree = s.agree;
      for (const auto& d : s.disagreements)
        info->disagreements.push_back("line " + std::to_string(d.line) + ": folio " +
                                      std::to_string(d.folio) + " kernel offset " +
                                      std::to_string(d.expected_offset) + ", model " + d.got);
    }
    auto img = WriteImage(*r, pages, hibernate::BatchMode::kPerPage);
    if (!img.ok()) return Status(img.status().code(), "model image: " + img.status().message());
    per_page = *img;
    if (per_page.stream_pages == stream_pages) break;
    const int64_t diff =
        static_cast<int64_t>(per_page.stream_pages) - static_cast<int64_t>(stream_pages);
    if (static_cast<int64_t>(pages) - diff < 1) break;
    pages = static_cast<uint64_t>(static_cast<int64_t>(pages) - diff);
  }
  auto r = Replay(trace_path, policy, cpus, &info->records);
  if (!r.ok()) return r.status();
  auto img = WriteImage(*r, pages, hibernate::BatchMode::kPerRun);
  if (!img.ok()) return Status(img.status().code(), "model image: " + img.status().message());
  per_run = *img;
  m->snapshot_pages = pages;
  m->stream_pages = per_page.stream_pages;
  m->map_pages = per_page.map_pages;
  m->slots = per_page.slots;
  m->runs_disk_order = per_page.runs;
  m->runs_alloc_order = per_page.runs_alloc_order;
  m->bios_per_page = per_page.write_bios;
  m->alloc_calls = per_page.alloc_calls;
  m->bios_per_run = per_run.write_bios;
  m->write_s = per_page.write_s;
  m->read_s = per_page.read_s;
  if (m->write_s > 0)
    m->write_mbps = static_cast<double>(m->stream_pages * alloc::kPageSize) / 1e6 / m->write_s;
  info->model_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return Status::Ok();
}

}  // namespace swaplab::vm
