// SPDX-License-Identifier: MIT
// `swaplab trace convert IN -o OUT`: a trace from text to binary or back
// (docs/formats.md §5.1), streamed record by record.
#include "trace_cmd.h"

#include <fmt/core.h>

#include <cerrno>

#include "swaplab/alloc/printable.h"
#include "swaplab/area/output_file.h"
#include "swaplab/workload/temp_files.h"
#include "swaplab/workload/trace.h"

namespace swaplab::tools {

namespace {

int Fail(const Status& s) {
  fmt::print(stderr, "swaplab trace convert: {}\n", Printable(s.message(), kPathMax));
  // the input's or the output path's fault: 2; the disk's: 1
  return s.code() == -EIO || s.code() == -ENOSPC || s.code() == -ENOMEM ? 1 : 2;
}

// Output is written in pieces of about this size.
constexpr size_t kFlushBytes = size_t{1} << 20;

int Convert(const TraceCmdOptions& o) {
  auto reader = workload::TraceReader::Open(o.in);
  if (!reader.ok()) return Fail(reader.status());
  workload::TraceRecord rec;
  auto more = (*reader)->Next(&rec);  // tells the input's format
  if (!more.ok()) return Fail(more.status());
  const bool in_binary = (*reader)->binary();
  const bool binary = o.to.empty() ? !in_binary : o.to == "binary";
  area::OutputOptions oo;
  oo.force = o.force;
  oo.inputs = {o.in};
  auto w = area::OutputFileWriter::Open(o.out, oo);
  if (!w.ok()) return Fail(Status(w.status().code(), "-o " + w.status().message()));
  // Ctrl-C: the temporary goes (the output path is untouched until the rename).
  workload::InstallTempFileCleanup();
  workload::TempFile partial((*w)->temp_path());
  std::string buf =
      binary ? workload::BinaryTraceHeader() : std::string(workload::kTraceHeader) + "\n";
  uint64_t records = 0, bytes = 0;
  for (; *more; more = (*reader)->Next(&rec)) {
    if (binary) {
      workload::AppendBinaryRecord(rec, &buf);
    } else {
      buf += workload::FormatRecord(rec);
      buf += '\n';
    }
    ++records;
    if (buf.size() >= kFlushBytes) {
      if (Status s = (*w)->Write(buf); !s.ok()) return Fail(s);
      bytes += buf.size();
      buf.clear();
    }
  }
  if (!more.ok()) return Fail(more.status());
  if (Status s = (*w)->Write(buf); !s.ok()) return Fail(s);
  bytes += buf.size();
  if (Status s = (*w)->Commit(); !s.ok()) return Fail(s);
  partial.keep();
  fmt::print("{}: {} records, {} bytes ({}; the input was {})\n", Printable(o.out, kPathMax),
             records, bytes, binary ? "binary" : "text", in_binary ? "binary" : "text");
  return 0;
}

}  // namespace

TraceCommands AddTrace(CLI::App& app, TraceCmdOptions& o) {
  TraceCommands c;
  c.trace = app.add_subcommand("trace", "trace files: convert between text and binary");
  c.trace->require_subcommand(1, 1);
  c.convert = c.trace->add_subcommand(
      "convert",
      "write a trace in the other encoding: text (the interchange format) or binary (read "
      "faster by replay, map and kernel run; docs/formats.md)");
  c.convert->add_option("trace", o.in, "the trace to read (text or binary)")->required();
  c.convert->add_option("-o,--output", o.out, "the trace to write")->required();
  c.convert->add_option("--to", o.to, "text or binary (default: the other one than the input's)")
      ->check(CLI::IsMember({"text", "binary"}));
  c.convert->add_flag("--force", o.force,
                      "-o may replace an existing file (never the input, a swap area or a device)");
  return c;
}

int RunTrace(const TraceCommands& c, const TraceCmdOptions& o) {
  if (c.convert->parsed()) return Convert(o);
  return 2;
}

}  // namespace swaplab::tools
