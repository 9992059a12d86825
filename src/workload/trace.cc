// The trace format: a streaming parser and the line writer.
#include "swaplab/workload/trace.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <iterator>
#include <string_view>

#include "swaplab/alloc/printable.h"

namespace swaplab::workload {

const char* Name(TraceOp op) {
  switch (op) {
    case TraceOp::kSwapon:
      return "swapon";
    case TraceOp::kSwapoff:
      return "swapoff";
    case TraceOp::kAlloc:
      return "alloc";
    case TraceOp::kFree:
      return "free";
    case TraceOp::kCache:
      return "cache";
    case TraceOp::kDropCache:
      return "drop-cache";
    case TraceOp::kDup:
      return "dup";
    case TraceOp::kSuspendStorage:
      return "suspend-storage";
    case TraceOp::kResumeStorage:
      return "resume-storage";
    case TraceOp::kExpect:
      return "expect";
  }
  return "?";
}

namespace {

struct OpSpec {
  TraceOp op;
  const char* required;  // space-separated keys
  const char* optional;
};

const OpSpec kSpecs[] = {
    {TraceOp::kSwapon, "dev pages", "ssd blkdev discard prio"},
    {TraceOp::kSwapoff, "dev", ""},
    {TraceOp::kAlloc, "folio order cpu", ""},
    {TraceOp::kFree, "folio", "page n"},
    {TraceOp::kCache, "folio", "page n"},
    {TraceOp::kDropCache, "", "folio"},
    {TraceOp::kDup, "folio", ""},
    {TraceOp::kSuspendStorage, "", ""},
    {TraceOp::kResumeStorage, "", ""},
    {TraceOp::kExpect, "folio dev offset", "page"},
};

// The field keys of the format, as bits of a mask.
enum Key : int {
  kDev,
  kPages,
  kSsd,
  kBlkdev,
  kDiscard,
  kPrio,
  kFolio,
  kOrder,
  kCpu,
  kPage,
  kN,
  kOffset
};
constexpr std::string_view kKeyNames[] = {"dev",   "pages", "ssd", "blkdev", "discard", "prio",
                                          "folio", "order", "cpu", "page",   "n",       "offset"};

// The key `k` names, or -1.
int KeyOf(std::string_view k) {
  for (int i = 0; i < static_cast<int>(std::size(kKeyNames)); ++i) {
    if (kKeyNames[i] == k) return i;
  }
  return -1;
}

// Calls f on each word of a space-separated key list (OpSpec).
template <typename F>
constexpr void ForEachKey(std::string_view list, F f) {
  while (!list.empty()) {
    const size_t sp = std::min(list.find(' '), list.size());
    if (sp > 0) f(list.substr(0, sp));
    list.remove_prefix(std::min(sp + 1, list.size()));
  }
}

// The keys of a space-separated key list (OpSpec) as a mask.
unsigned KeyMask(std::string_view list) {
  unsigned m = 0;
  ForEachKey(list, [&m](std::string_view k) {
    for (size_t i = 0; i < std::size(kKeyNames); ++i) {
      if (kKeyNames[i] == k) m |= 1u << i;
    }
  });
  return m;
}

struct OpMasks {
  unsigned required, allowed;
};
std::array<OpMasks, std::size(kSpecs)> MakeMasks() {
  std::array<OpMasks, std::size(kSpecs)> m{};
  for (size_t i = 0; i < std::size(kSpecs); ++i) {
    m[i].required = KeyMask(kSpecs[i].required);
    m[i].allowed = m[i].required | KeyMask(kSpecs[i].optional);
  }
  return m;
}
// Built once at start-up (clang 14 cannot evaluate it as a constant).
const std::array<OpMasks, std::size(kSpecs)> kMasks = MakeMasks();

constexpr bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The next word of *s (separated by spaces, tabs, CRs), removed from it;
// empty when none is left.
std::string_view NextWord(std::string_view* s) {
  size_t i = 0;
  while (i < s->size() && IsSpace((*s)[i])) ++i;
  size_t j = i;
  while (j < s->size() && !IsSpace((*s)[j])) ++j;
  const std::string_view w = s->substr(i, j - i);
  s->remove_prefix(j);
  return w;
}

// Input is read in chunks of this size (at least).
constexpr size_t kReadChunk = size_t{1} << 18;

}  // namespace

TraceReader::TraceReader(std::unique_ptr<std::istream> in, std::string name)
    : in_(std::move(in)), name_(std::move(name)) {}

TraceReader::TraceReader(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}

TraceReader::~TraceReader() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(-ENOENT, path + ": cannot open the trace");
  return std::unique_ptr<TraceReader>(new TraceReader(fd, path));
}

bool TraceReader::Fill() {
  if (eof_) return false;
  if (!buf_) {
    // A line of the limit, its newline, and a chunk after it.
    cap_ = kMaxTraceLineBytes + 1 + kReadChunk;
    buf_ = std::make_unique_for_overwrite<char[]>(cap_);
  }
  char* at = buf_.get() + end_;
  const size_t room = cap_ - end_;
  ssize_t n = 0;
  if (fd_ >= 0) {
    do {
      n = ::read(fd_, at, room);
    } while (n < 0 && errno == EINTR);
  } else {
    in_->read(at, static_cast<std::streamsize>(room));
    n = in_->gcount();
  }
  if (n <= 0) {  // the end, or a read error (which ends the input too)
    eof_ = true;
    return false;
  }
  end_ += static_cast<size_t>(n);
  return true;
}

bool TraceReader::NextLine(std::string_view* line, bool* too_long) {
  *too_long = false;
  size_t scanned = pos_;  // [pos_, scanned) holds no newline
  for (;;) {
    char* b = buf_.get();
    if (scanned < end_) {
      if (const void* nl = std::memchr(b + scanned, '\n', end_ - scanned)) {
        const size_t len = static_cast<size_t>(static_cast<const char*>(nl) - (b + pos_));
        *line = std::string_view(b + pos_, len);
        pos_ += len + 1;
        break;
      }
    }
    scanned = end_;
    if (end_ - pos_ > kMaxTraceLineBytes) {  // too long: keep its start, drop the rest
      long_line_.assign(b + pos_, kMaxTraceLineBytes);
      pos_ = end_ = 0;
      while (Fill()) {
        if (const void* nl = std::memchr(b, '\n', end_)) {
          pos_ = static_cast<size_t>(static_cast<const char*>(nl) - b) + 1;
          break;
        }
        end_ = 0;
      }
      *line = long_line_;
      *too_long = true;
      return true;
    }
    if (pos_ > 0) {  // keep the unfinished line at the start of the buffer
      std::memmove(b, b + pos_, end_ - pos_);
      end_ -= pos_;
      scanned -= pos_;
      pos_ = 0;
    }
    if (!Fill()) {  // a last line without a newline
      if (pos_ == end_) return false;
      *line = std::string_view(buf_.get() + pos_, end_ - pos_);
      pos_ = end_;
      break;
    }
  }
  if (line->size() > kMaxTraceLineBytes) {
    long_line_.assign(line->data(), kMaxTraceLineBytes);
    *line = long_line_;
    *too_long = true;
  }
  return true;
}

Result<bool> TraceReader::Next(TraceRecord* rec) {
  std::string_view raw;
  bool too_long = false;
  while (NextLine(&raw, &too_long)) {
    ++line_;
    Result<bool> r = Parse(raw, too_long, rec);
    if (!r.ok() || *r) return r;
  }
  if (!header_seen_) return Status(-EINVAL, name_ + ":1: empty trace, expected 'swaplab-trace 1'");
  return false;
}

// One line: true and *rec for a record, false for a line without one
// (blank, comment, header), or an error.
Result<bool> TraceReader::Parse(std::string_view raw, bool too_long, TraceRecord* rec) {
  auto where = [&](const std::string& what) {
    return Status(-EINVAL, name_ + ":" + std::to_string(line_) + ": " + what);
  };
  // Untrusted text in a message: cut and escaped.
  auto q = [](std::string_view t) { return "'" + Printable(t, kMaxTokenInMessage) + "'"; };
  if (too_long)
    return where("line longer than the limit of " + std::to_string(kMaxTraceLineBytes) +
                 " bytes, starting " + q(raw));
  std::string_view text = raw;
  if (const void* hash = std::memchr(text.data(), '#', text.size()))
    text = text.substr(0, static_cast<size_t>(static_cast<const char*>(hash) - text.data()));
  const std::string_view op_word = NextWord(&text);
  if (op_word.empty()) return false;
  if (!header_seen_) {
    const std::string_view version = NextWord(&text);
    if (version.empty() || !NextWord(&text).empty() || op_word != "swaplab-trace")
      return where("expected the header line 'swaplab-trace 1'");
    if (version != "1")
      return where("unsupported trace version " + q(version) + " (this swaplab reads 1)");
    header_seen_ = true;
    return false;
  }
  static const auto kOpNames = [] {
    std::array<std::string_view, std::size(kSpecs)> a;
    for (size_t i = 0; i < a.size(); ++i) a[i] = Name(kSpecs[i].op);
    return a;
  }();
  size_t spec_index = 0;
  while (spec_index < kOpNames.size() && kOpNames[spec_index] != op_word) ++spec_index;
  if (spec_index == std::size(kSpecs))
    return where("unknown operation " + q(op_word) +
                 " (expected swapon, swapoff, alloc, free, cache, drop-cache, dup, "
                 "suspend-storage, resume-storage or expect)");
  const OpSpec& spec = kSpecs[spec_index];
  const OpMasks& masks = kMasks[spec_index];
  TraceRecord r;
  r.op = spec.op;
  r.line = line_;
  unsigned seen = 0;  // keys given so far: each one of the op's keys, once
  for (std::string_view word = NextWord(&text); !word.empty(); word = NextWord(&text)) {
    const auto eq = word.find('=');
    if (eq == std::string_view::npos || eq == 0) return where("expected key=value, got " + q(word));
    const auto key = word.substr(0, eq);
    const auto val = word.substr(eq + 1);
    const int k = KeyOf(key);
    if (k < 0 || !(masks.allowed & (1u << k)))
      return where("'" + std::string(op_word) + "' takes no field " + q(key));
    if (seen & (1u << k)) return where("field '" + std::string(key) + "' given twice");
    seen |= 1u << k;
    int64_t v = 0;
    const auto [p, ec] = std::from_chars(val.data(), val.data() + val.size(), v);
    if (ec == std::errc::result_out_of_range && !val.empty() && val[0] != '-')
      return where("field '" + std::string(key) + "' " + q(val) + " is above the limit of 2^63-1");
    if (ec != std::errc() || p != val.data() + val.size() || v < 0)
      return where("field '" + std::string(key) + "' needs a non-negative integer, got " + q(val));
    const auto u = static_cast<uint64_t>(v);
    auto flag = [&](bool* b) -> Status {
      if (u > 1)
        return where("field '" + std::string(key) + "' is 0 or 1, got " + std::to_string(u));
      *b = u == 1;
      return Status::Ok();
    };
    Status st;
    switch (k) {
      case kDev:
        r.dev = u;
        break;
      case kPages:
        if (u > kMaxTracePages)
          return where("pages " + std::to_string(u) + " is above the limit of 2^32 (" +
                       std::to_string(kMaxTracePages) + ") pages, the largest swap area");
        r.pages = u;
        break;
      case kSsd:
        st = flag(&r.ssd);
        break;
      case kBlkdev:
        st = flag(&r.blkdev);
        break;
      case kDiscard:
        st = flag(&r.discard);
        break;
      case kPrio:
        if (u > 32767) return where("prio " + std::to_string(u) + " is outside 0..32767");
        r.prio = static_cast<int>(u);
        break;
      case kFolio:
        r.folio = u;
        break;
      case kOrder:
        if (u > 15) return where("order " + std::to_string(u) + " is outside 0..15");
        r.order = static_cast<int>(u);
        break;
      case kCpu:
        if (u > 1023) return where("cpu " + std::to_string(u) + " is outside 0..1023");
        r.cpu = static_cast<int>(u);
        break;
      case kPage:
        r.page = u;
        break;
      case kN:
        if (u == 0) return where("n must be at least 1");
        r.n = u;
        break;
      case kOffset:
        r.offset = u;
        break;
    }
    if (!st.ok()) return st;
  }
  if ((seen & masks.required) != masks.required) {
    std::string_view missing;
    ForEachKey(spec.required, [&](std::string_view k) {
      if (missing.empty() && !(seen & (1u << KeyOf(k)))) missing = k;
    });
    return where("'" + std::string(op_word) + "' needs field '" + std::string(missing) + "'");
  }
  *rec = r;
  return true;
}

bool RecordPageRange(const TraceRecord& r, uint64_t folio_pages, uint64_t* first, uint64_t* count) {
  *first = r.page;
  *count = r.n ? *r.n : (r.page < folio_pages ? folio_pages - r.page : 0);
  return r.page < folio_pages && *count <= folio_pages - r.page;
}

std::string FormatRecord(const TraceRecord& r) {
  std::string o = Name(r.op);  // appended to in place: no stream per record
  auto field = [&o](const char* key, auto v) {
    o += ' ';
    o += key;
    o += '=';
    o += std::to_string(v);
  };
  switch (r.op) {
    case TraceOp::kSwapon:
      field("dev", r.dev);
      field("pages", r.pages);
      field("ssd", int{r.ssd});
      field("blkdev", int{r.blkdev});
      field("discard", int{r.discard});
      if (r.prio) field("prio", *r.prio);
      break;
    case TraceOp::kSwapoff:
      field("dev", r.dev);
      break;
    case TraceOp::kAlloc:
      field("folio", *r.folio);
      field("order", r.order);
      field("cpu", r.cpu);
      break;
    case TraceOp::kFree:
    case TraceOp::kCache:
      field("folio", *r.folio);
      if (r.page != 0 || r.n) field("page", r.page);
      if (r.n) field("n", *r.n);
      break;
    case TraceOp::kDropCache:
      if (r.folio) field("folio", *r.folio);
      break;
    case TraceOp::kDup:
      field("folio", *r.folio);
      break;
    case TraceOp::kSuspendStorage:
    case TraceOp::kResumeStorage:
      break;
    case TraceOp::kExpect:
      field("folio", *r.folio);
      if (r.page != 0) field("page", r.page);
      field("dev", r.dev);
      field("offset", r.offset);
      break;
  }
  return o;
}

}  // namespace swaplab::workload
