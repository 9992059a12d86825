// SPDX-License-Identifier: MIT
// The model's half of `vm hibernate`: trace replay, then the image step,
// and both against the kernel's placements.
#include <charconv>
#include <chrono>
#include <sstream>

#include "swaplab/alloc/policy.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/hibernate/image_format.h"
#include "swaplab/vm/vm_hibernate.h"
#include "swaplab/workload/image_step.h"
#include "swaplab/workload/replay.h"

namespace swaplab::vm {

namespace {

struct Replayed {
  workload::ReplayState state;
  int type = 0;
  uint64_t pages = 0;
};

// The pages of the trace's `swapon dev=0` (the last one): the size of the
// simulated device the model's image is written on.
class Dev0Pages final : public workload::ReplayObserver {
 public:
  bool AfterRecord(const workload::TraceRecord& rec, const workload::ReplayState&) override {
    if (rec.op == workload::TraceOp::kSwapon && rec.dev == 0) pages_ = rec.pages;
    return true;
  }
  uint64_t pages() const { return pages_; }

 private:
  uint64_t pages_ = 0;
};

Result<Replayed> Replay(const std::string& trace_path, const alloc::Policy& policy, int cpus,
                        uint64_t* records) {
  const workload::ReplayOptions o{.trace = trace_path, .policy = policy, .cpus = cpus};
  Replayed r;
  Dev0Pages dev0;
  const Status st = workload::ReplayTrace(o, &r.state, &dev0);
  *records = r.state.records;
  if (!st.ok()) return st;
  r.pages = dev0.pages();
  auto it = r.state.runner->devices().find(0);
  if (it == r.state.runner->devices().end())
    return Status(-EINVAL, trace_path + ": no `swapon dev=0`");
  r.type = it->second;
  return r;
}

Result<workload::ImageResult> WriteImage(const Replayed& r, uint64_t pages,
                                         hibernate::BatchMode mode,
                                         hibernate::SlotSourceKind source) {
  auto engine = workload::MakeSimulatedSwapDevice(r.pages, true);
  workload::ImageSpec spec;
  spec.pages = pages;
  spec.source = source;
  spec.batch.mode = mode;
  // As bio_alloc() sizes the bios of hibernate_bio=runs (kernel-patches/
  // rfc-6.12, spec §6.2): a bio asked for P = 254 pages holds 256.
  spec.batch.capacity = hibernate::CapacityMode::kSlab;
  spec.structural = true;
  return workload::WriteReadImage(*r.state.sys, r.type, *engine, spec);
}

// Slot for slot, in allocation order; the first differences named.
void CompareImageSlots(const std::vector<uint64_t>& kernel, const workload::ImageResult& model,
                       ModelSideInfo* info) {
  const std::vector<uint64_t> mine = ImageSlotOrder(model.stream_dblocks, model.map_dblocks);
  info->image_expected = kernel.size();
  info->image_agree = 0;
  info->image_disagreements.clear();
  for (size_t i = 0; i < kernel.size(); ++i) {
    if (i < mine.size() && mine[i] == kernel[i]) {
      ++info->image_agree;
    } else if (info->image_disagreements.size() < 20) {
      info->image_disagreements.push_back(
          "image slot " + std::to_string(i) + ": kernel " + std::to_string(kernel[i]) + ", model " +
          (i < mine.size() ? std::to_string(mine[i]) : std::string("none")));
    }
  }
}

}  // namespace

std::vector<uint64_t> ImageSlotOrder(const std::vector<uint64_t>& stream,
                                     const std::vector<uint64_t>& map) {
  std::vector<uint64_t> v;
  if (map.empty()) return v;
  v.reserve(stream.size() + map.size());
  v.push_back(map[0]);
  for (size_t p = 0; p < stream.size(); ++p) {
    v.push_back(stream[p]);
    const size_t j = (p + 1) / hibernate::kMapEntries;
    if ((p + 1) % hibernate::kMapEntries == 0 && j < map.size()) v.push_back(map[j]);
  }
  return v;
}

std::string FormatImageSlots(const std::vector<uint64_t>& slots, uint64_t stream_pages) {
  std::string s = "swaplab-image-slots 1 stream_pages=" + std::to_string(stream_pages) + "\n";
  for (size_t i = 0; i < slots.size();) {
    size_t j = i + 1;
    while (j < slots.size() && slots[j] == slots[j - 1] + 1) ++j;
    s += std::to_string(slots[i]) + " " + std::to_string(j - i) + "\n";
    i = j;
  }
  return s;
}

Result<std::vector<uint64_t>> ParseImageSlots(const std::string& text, uint64_t* stream_pages) {
  std::istringstream in(text);
  std::string line;
  auto bad = [](int n, const std::string& why) {
    return Status(-EINVAL, "image slots line " + std::to_string(n) + ": " + why);
  };
  auto number = [](std::string_view t, uint64_t* v) {
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), *v);
    return ec == std::errc() && end == t.data() + t.size() && !t.empty();
  };
  constexpr std::string_view kHead = "swaplab-image-slots 1 stream_pages=";
  if (!std::getline(in, line) || line.rfind(kHead, 0) != 0 ||
      !number(std::string_view(line).substr(kHead.size()), stream_pages))
    return bad(1, "expected \"swaplab-image-slots 1 stream_pages=N\"");
  std::vector<uint64_t> v;
  for (int n = 2; std::getline(in, line); ++n) {
    const size_t sp = line.find(' ');
    uint64_t first = 0, count = 0;
    if (sp == std::string::npos || !number(std::string_view(line).substr(0, sp), &first) ||
        !number(std::string_view(line).substr(sp + 1), &count) || count == 0 ||
        count > (uint64_t{1} << 32))
      return bad(n, "expected FIRST COUNT");
    for (uint64_t k = 0; k < count; ++k) v.push_back(first + k);
  }
  return v;
}

Result<alloc::Policy> ModelPolicy(const std::string& preset,
                                  const std::vector<std::string>& knobs) {
  auto p = alloc::Policy::Preset(preset);
  if (!p.ok()) return p.status();
  alloc::Policy policy = *p;
  for (const std::string& k : knobs) {
    if (Status st = policy.SetAssignment(k); !st.ok()) return st;
  }
  if (Status st = policy.Validate(); !st.ok()) return st;
  return policy;
}

Status RunModelSide(const std::string& trace_path, const alloc::Policy& policy, int cpus,
                    uint64_t stream_pages, const std::vector<uint64_t>& kernel_image_slots,
                    SideMetrics* m, ModelSideInfo* info, hibernate::SlotSourceKind source) {
  const auto t0 = std::chrono::steady_clock::now();
  info->policy = policy.name;
  // The image step changes the system, so each image gets a fresh replay:
  // first to learn how many snapshot pages give the kernel's stream pages,
  // then per page and per run.
  // First guess: the stream is the pages, swsusp_info and the metadata
  // pages (counted as if the stream were all data); the loop corrects it
  // when they come out one more or less.
  const uint64_t overhead = 1 + hibernate::MetaPages(stream_pages);
  uint64_t pages = stream_pages > overhead + 1 ? stream_pages - overhead : 1;
  workload::ImageResult per_page, per_run;
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto r = Replay(trace_path, policy, cpus, &info->records);
    if (!r.ok()) return r.status();
    if (attempt == 0) {
      const auto& s = r->state.runner->summary();
      info->expected = s.expected;
      info->agree = s.agree;
      for (const auto& d : s.disagreements)
        info->disagreements.push_back("line " + std::to_string(d.line) + ": folio " +
                                      std::to_string(d.folio) + " kernel offset " +
                                      std::to_string(d.expected_offset) + ", model " + d.got);
    }
    auto img = WriteImage(*r, pages, hibernate::BatchMode::kPerPage, source);
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
  auto img = WriteImage(*r, pages, hibernate::BatchMode::kPerRun, source);
  if (!img.ok()) return Status(img.status().code(), "model image: " + img.status().message());
  per_run = *img;
  if (!kernel_image_slots.empty()) CompareImageSlots(kernel_image_slots, per_page, info);
  m->snapshot_pages = pages;
  m->stream_pages = per_page.stream_pages;
  m->map_pages = per_page.map_pages;
  m->slots = per_page.slots;
  m->runs_disk_order = per_page.runs;
  m->runs_alloc_order = per_page.runs_alloc_order;
  m->bios_per_page = per_page.write_bios;
  m->alloc_calls = per_page.alloc_calls;
  m->bios_per_run = per_run.write_bios;
  m->write_s_per_run = per_run.write_s;
  m->read_s_per_run = per_run.read_s;
  m->write_s = per_page.write_s;
  m->read_s = per_page.read_s;
  if (m->write_s > 0)
    m->write_mbps = static_cast<double>(m->stream_pages * alloc::kPageSize) / 1e6 / m->write_s;
  info->model_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return Status::Ok();
}

}  // namespace swaplab::vm
