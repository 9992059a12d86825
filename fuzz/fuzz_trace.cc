// SPDX-License-Identifier: MIT
// libFuzzer: arbitrary text through the trace parser; what parses is
// replayed, record by record, on a small SwapSystem by the library's
// TraceRunner, with CheckInvariants() after each record (as `swaplab replay
// --check` does). The replay stops at the first error, as replay does. Every
// record read formats to a line that parses back to itself (checked at the
// end, all lines through one reader), and from its binary encoding
// (docs/formats.md §5.1). A second reader with its one-pass path off must
// give the same record or message for every line. An input that starts
// with the binary magic is read as a binary trace (the corpus has some).
// Swapons above kMaxFuzzPages are skipped (the parser's own limit, 2^32, is
// too large to run thousands of times a second).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "swaplab/alloc/swap_system.h"
#include "swaplab/workload/trace.h"
#include "swaplab/workload/trace_runner.h"

using namespace swaplab;

namespace {
constexpr uint64_t kMaxFuzzPages = uint64_t{1} << 16;
constexpr int kMaxRecords = 2000;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto in =
      std::make_unique<std::istringstream>(std::string(reinterpret_cast<const char*>(data), size));
  workload::TraceReader reader(std::move(in), "fuzz.trace");
  // The general parser alone reads every line the same way (the reader's
  // one-pass path for common lines must agree with it).
  workload::TraceReader general(
      std::make_unique<std::istringstream>(std::string(reinterpret_cast<const char*>(data), size)),
      "fuzz.trace");
  general.set_fast_path(false);
  workload::TraceRecord grec;
  alloc::SystemOptions so;
  so.nr_cpus = 8;
  alloc::SwapSystem sys(so);
  workload::TraceRunner runner(sys);
  workload::TraceRecord rec;
  // Every record read, formatted, one line each after the header: parsed
  // back at the end by one reader (not one reader and stream per record).
  std::string formatted(workload::kTraceHeader);
  std::vector<size_t> starts;
  for (int i = 0; i < kMaxRecords; ++i) {
    auto more = reader.Next(&rec);
    auto gmore = general.Next(&grec);
    if (more.ok() != gmore.ok() ||
        (more.ok() ? *more != *gmore || (*more && (FormatRecord(rec) != FormatRecord(grec) ||
                                                   rec.line != grec.line))
                   : more.status().ToString() != gmore.status().ToString())) {
      fprintf(stderr, "the one-pass path and the general parser disagree\n");
      __builtin_trap();
    }
    if (!more.ok()) {
      const Status err = more.status();
      const std::string& m = err.message();
      if (m.rfind("fuzz.trace:", 0) != 0 || m.size() > 1024)
        __builtin_trap();  // FILE:LINE, bounded
      break;
    }
    if (!*more) break;
    formatted += '\n';
    starts.push_back(formatted.size());
    formatted += workload::FormatRecord(rec);
    if (rec.op == workload::TraceOp::kSwapon && rec.pages > kMaxFuzzPages) continue;
    const Status st = runner.Apply(rec, "fuzz.trace");
    if (const auto inv = sys.CheckInvariants(); !inv.ok()) {
      fprintf(stderr, "invariant %s broken after line %llu '%s'\n", inv.ToString().c_str(),
              static_cast<unsigned long long>(rec.line), formatted.c_str() + starts.back());
      __builtin_trap();
    }
    if (!st.ok()) break;
  }
  // Each record formats to a line that parses back to itself.
  starts.push_back(formatted.size() + 1);
  workload::TraceReader again(std::make_unique<std::istringstream>(formatted), "again");
  workload::TraceRecord back;
  for (size_t i = 0; i + 1 < starts.size(); ++i) {
    const std::string_view line(formatted.data() + starts[i], starts[i + 1] - 1 - starts[i]);
    auto b = again.Next(&back);
    if (!b.ok() || !*b || workload::FormatRecord(back) != line) {
      fprintf(stderr, "record '%.*s' does not parse back to itself\n",
              static_cast<int>(line.size()), line.data());
      __builtin_trap();
    }
  }
  auto end = again.Next(&back);
  if (!end.ok() || *end) __builtin_trap();  // nothing more
  // The same records in the binary encoding read back as the same lines.
  workload::TraceReader text_again(std::make_unique<std::istringstream>(formatted), "again");
  std::string binary = workload::BinaryTraceHeader();
  for (auto more = text_again.Next(&back); more.ok() && *more; more = text_again.Next(&back))
    workload::AppendBinaryRecord(back, &binary);
  workload::TraceReader bin(std::make_unique<std::istringstream>(binary), "bin");
  for (size_t i = 0; i + 1 < starts.size(); ++i) {
    const std::string_view line(formatted.data() + starts[i], starts[i + 1] - 1 - starts[i]);
    auto b = bin.Next(&back);
    if (!b.ok() || !*b || workload::FormatRecord(back) != line || back.line != i + 2) {
      fprintf(stderr, "record '%.*s' does not read back from its binary encoding\n",
              static_cast<int>(line.size()), line.data());
      __builtin_trap();
    }
  }
  auto bin_end = bin.Next(&back);
  if (!bin_end.ok() || *bin_end) __builtin_trap();
  return 0;
}
