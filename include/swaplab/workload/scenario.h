// SPDX-License-Identifier: MIT
// Scenario files (scenarios/README.md has the schema): devices, a policy
// preset and knobs, an aging phase of generators, a measured phase, the
// variants compared side by side, seeds and repetitions, and what the seed
// document reported for the same cells. Parsing checks everything before
// anything runs; an error names the JSON path ("$.aging[1].hole").
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "swaplab/alloc/policy.h"
#include "swaplab/alloc/status.h"
#include "swaplab/hibernate/image_format.h"
#include "swaplab/hibernate/image_session.h"
#include "swaplab/hibernate/request_batcher.h"
#include "swaplab/workload/generators.h"
#include "swaplab/workload/image_step.h"

namespace swaplab::workload {

struct DeviceSpec {
  std::string name;
  uint64_t pages = 0;  // whole area, header included
  bool ssd = true, blkdev = true, discard = false;
  std::optional<int> prio;
  bool real_file = false;        // "backing": "file" (else "simulated")
  std::string dir = "/var/tmp";  // where a real file is created
};

struct ImageStepSpec {
  uint64_t pages = 0;
  std::optional<hibernate::SlotSourceKind> source;  // else the variant's
  std::optional<hibernate::BatchMode> batch;
  hibernate::CapacityMode capacity = hibernate::CapacityMode::kExact;
  uint32_t max_pages = 0;
  bool read = true;
};
// The slots an image step takes at most: the stream and map pages of its
// `pages` (SlotsUsed) and swsusp_info's.
inline uint64_t ImageStepSlots(const ImageStepSpec& s) { return hibernate::SlotsUsed(s.pages) + 1; }
struct UsememStepSpec {
  UsememSpec spec;  // cpu is set per thread
};
struct RotationStepSpec {
  uint64_t allocations = 0;
  int cpus = 1;
};
// One generator with its parameters, checked: the generator table. Each
// alternative has its row (name, keys, scaling, size check, run) in
// src/workload/steps.cc; an alternative without one does not compile.
using Step = std::variant<FillFreeSpec, HolesSpec, MthpSpec, ChurnSpec, UsememStepSpec,
                          RotationStepSpec, ImageStepSpec>;
const char* GeneratorName(const Step& s);
// One lambda per generator for std::visit on a Step: a generator added to
// Step and not handled is a compile error, not a step that does nothing.
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// What a variant overrides (the columns of a table).
struct VariantSpec {
  std::string label;
  alloc::Policy policy;
  hibernate::SlotSourceKind source = hibernate::SlotSourceKind::kBase;
  hibernate::BatchMode batch = hibernate::BatchMode::kPerPage;
  int threads = 1;  // usemem: hammers running at once, one per CPU
};

// The numbers the seed reported: row -> column -> text as printed there.
struct SeedReported {
  std::string source;  // "seed 001, Results, shuffled free list"
  std::vector<std::string> setup;
  std::map<std::string, std::map<std::string, std::string>> cells;
};

struct Scenario {
  std::string file;  // where it came from, for messages
  std::string name, group, title;
  std::vector<std::string> setup;  // the setup header, as an mm developer writes it
  uint64_t seed = 1;
  int repetitions = 1;
  int cpus = 4;
  bool parallel = true;  // variants may run at once (off for throughput)
  // `swaplab reproduce` runs the scenario at this share of its sizes
  // (1: as written); `scale` is the factor actually applied.
  double reproduce_scale = 1.0;
  double scale = 1.0;
  std::vector<DeviceSpec> devices;
  std::vector<Step> aging, measured;
  std::vector<VariantSpec> variants;
  std::vector<std::string> rows;      // metrics shown, in order (empty: all)
  std::vector<std::string> pct_rows;  // rows with "% vs the first column"
  SeedReported seed_reported;
  std::string answers;  // what the table answers (free text)
  // Host CPU costs: image steps add the rows "write + host CPU, s" and
  // "read + host CPU, s" (simulated devices only).
  std::optional<HostCpuCost> host_cpu;
};

// Parses and checks a scenario. `file` names it in messages. Errors are
// -EINVAL "FILE: $.path: what was wrong".
Result<Scenario> ParseScenario(const std::string& text, const std::string& file);
Result<Scenario> LoadScenario(const std::string& path);

// A command line's host CPU prices: "none" (no "+ host CPU" rows), a
// profile's name (host_cpu.h) or "W,R,A", microseconds per write bio, per
// read bio and per allocator call.
// -EINVAL with what was wrong otherwise.
Result<std::optional<HostCpuCost>> ParseHostCpuArg(const std::string& s);
// Replaces sc's host CPU prices (none: drops them and their rows) when
// every device is simulated and a measured step writes an image; returns
// false, changing nothing, otherwise. New prices add the "+ host CPU" rows
// to `rows` (after "read, s", else "write, s") and to `pct_rows` if they
// hold "write, s".
bool SetHostCpu(Scenario& sc, const std::optional<HostCpuCost>& c);

}  // namespace swaplab::workload
#pragma GCC visibility pop
