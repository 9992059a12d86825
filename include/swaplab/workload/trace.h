// SPDX-License-Identifier: MIT
// The swaplab trace format (../shared/docs/design.md, "The trace format"):
// text, one operation per line, `#` comments, key=value fields, first line
// `swaplab-trace 1`. A streaming reader (a trace is never held in memory)
// and a writer.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <fstream>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "swaplab/alloc/status.h"

namespace swaplab::workload {

enum class TraceOp {
  kSwapon,
  kSwapoff,
  kAlloc,
  kFree,
  kCache,
  kDropCache,
  kDup,
  kSuspendStorage,
  kResumeStorage,
  kExpect,
  // Slots taken / given back by someone outside the trace (another
  // process's swap-out on a real kernel, `kernel run`'s interference).
  kForeign,
  kForeignFree,
  // The kernel's per-CPU scan base on an SSD (6.1's cluster_next_cpu,
  // drawn at random by the kernel): the model's is set to it.
  kScanBase,
  // The CPUs online where the trace was recorded (`kernel run` writes it
  // first): the model's CPU count when a replay is not given one. Only
  // before every other record.
  kCpus,
};
const char* Name(TraceOp op);

struct TraceRecord {
  TraceOp op = TraceOp::kAlloc;
  uint64_t line = 0;  // 1-based line number in the trace
  // Fields; which ones apply depends on op (design.md).
  uint64_t dev = 0, pages = 0;
  bool ssd = true, blkdev = true, discard = false;
  std::optional<int> prio;
  std::optional<uint64_t> folio;  // optional only for drop-cache
  int order = 0;
  int cpu = 0;
  uint64_t page = 0;          // first page (free / cache / expect)
  std::optional<uint64_t> n;  // page count (free / cache); default: all; cpus: CPUs
  uint64_t offset = 0;        // expect, foreign, foreign-free, scan-base
};

// The pages [first, first + count) of a folio of `folio_pages` pages that a
// free or cache record names: from `page`, `n` of them or every one to the
// folio's end. False when `page` or the range is outside the folio. The
// model's runner and the kernel's both take a record's pages from here.
bool RecordPageRange(const TraceRecord& r, uint64_t folio_pages, uint64_t* first, uint64_t* count);

// Limits a trace is checked against before anything is allocated: a
// swapon's `pages` (the largest swap area: SystemOptions'
// max_swapfile_pages, which would otherwise cut a larger area silently),
// and the length of one line, comment included.
inline constexpr uint64_t kMaxTracePages = uint64_t{1} << 32;
inline constexpr size_t kMaxTraceLineBytes = 65536;
// The most CPUs a `cpus` record may name (SystemOptions::nr_cpus' limit).
inline constexpr uint64_t kMaxTraceCpus = 1024;

// Reads a trace one record at a time. Errors say "FILE:LINE: what was
// expected"; text from the trace in a message is cut to 64 bytes ("…")
// with control and non-ASCII bytes written as \xNN (swaplab/alloc/printable.h).
// Lines are cut out of one read buffer (a file is read with read(2) in large
// chunks), so reading a record allocates nothing. A binary trace
// (kBinaryTraceMagic) is read through the same buffer with the same checks
// (the op's keys, each value's range); a record's `line` is then the line
// it has in the text `trace convert` writes (the header line 1, record i
// line i + 1), and messages add the record's byte offset.
class TraceReader {
 public:
  static Result<std::unique_ptr<TraceReader>> Open(const std::string& path);
  // Reads from a stream (tests); `name` is used in messages.
  TraceReader(std::unique_ptr<std::istream> in, std::string name);
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;
  // true and a record, false at the end, or an error; *rec is unspecified
  // after false or an error.
  Result<bool> Next(TraceRecord* rec);
  const std::string& name() const { return name_; }  // for messages: Printable(path)
  // Whether the input is a binary trace (known after the first Next).
  bool binary() const { return format_ == Format::kBinary; }
  // Off, every line goes through the general parser; tests compare the two
  // (the one-pass reader of common lines must read each line the same way).
  void set_fast_path(bool on) { fast_path_ = on; }

 private:
  TraceReader(int fd, std::string name);
  // The next line without its '\n' (a view valid until the next call), or
  // false at the end. A line over kMaxTraceLineBytes is read to its end and
  // dropped; *line is then its first kMaxTraceLineBytes bytes.
  bool NextLine(std::string_view* line, bool* too_long);
  // Tells a binary trace from a text one by its first bytes (once).
  Status ReadFormat();
  // The next record of a binary trace.
  Result<bool> NextBinary(TraceRecord* rec);
  // Appends input at buf_ + end_; false (and eof_) at the end of the input.
  bool Fill();
  Result<bool> Parse(std::string_view raw, bool too_long, TraceRecord* rec);
  bool ParseCommon(std::string_view line, TraceRecord* rec) const;
  // The next line when it is one as FormatRecord writes it, read from the
  // buffer in one pass; false (nothing consumed) for any other.
  bool ReadWrittenLine(TraceRecord* rec);

  std::unique_ptr<std::istream> in_;  // the input: a stream, or
  int fd_ = -1;                       // a file
  std::string name_;
  uint64_t line_ = 0;
  bool header_seen_ = false;
  std::unique_ptr<char[]> buf_;  // input bytes [pos_, end_) not yet cut into lines
  size_t cap_ = 0, pos_ = 0, end_ = 0;
  bool eof_ = false;
  uint64_t consumed_ = 0;  // binary: input bytes moved out of the buffer (for offsets)
  std::string long_line_;  // the start of a line over the limit
  bool fast_path_ = true;
  enum class Format { kUnknown, kText, kBinary } format_ = Format::kUnknown;
};

// One line of the trace format, without a newline.
std::string FormatRecord(const TraceRecord& r);
inline constexpr const char* kTraceHeader = "swaplab-trace 1";

// The binary encoding of the same records (docs/formats.md §5.1): text
// stays the interchange format; a binary trace is what `trace convert`
// writes for replays that should not pay for parsing text. It starts with
// these 8 bytes (0x89 first so that no text file does, CR LF and ^Z so that
// a transfer that rewrites line ends is caught), then the version as a
// varint. TraceReader reads either, told apart by the first bytes.
inline constexpr unsigned char kBinaryTraceMagic[8] = {0x89, 'S', 'W', 'T', 'R', '\r', '\n', 0x1a};
inline constexpr unsigned kBinaryTraceVersion = 1;
// The magic and the version.
std::string BinaryTraceHeader();
// Appends record `r` as it is encoded in a binary trace: the fields
// FormatRecord writes, the same values.
void AppendBinaryRecord(const TraceRecord& r, std::string* out);
// Whether `head` (a file's first bytes) starts a binary trace.
bool IsBinaryTrace(std::string_view head);

}  // namespace swaplab::workload
#pragma GCC visibility pop
