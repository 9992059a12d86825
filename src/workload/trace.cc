// The trace format: a streaming parser and the line writer.
#include "swaplab/workload/trace.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <string_view>
#include <vector>

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

// The words of s (separated by spaces, tabs, CRs) into *out, which keeps
// its capacity from line to line.
void Split(std::string_view s, std::vector<std::string_view>* out) {
  out->clear();
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != '\r') ++j;
    if (j > i) out->push_back(s.substr(i, j - i));
    i = j;
  }
}

// Reads one line (without its '\n') into *out, keeping at most `max`
// bytes; the rest of a longer line is read and dropped, and *too_long set.
// false at the end of the input.
bool ReadLine(std::istream& in, std::string* out, size_t max, bool* too_long) {
  out->clear();
  *too_long = false;
  std::streambuf* sb = in.rdbuf();
  bool any = false;
  for (;;) {
    const int c = sb->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return any;
    }
    any = true;
    if (c == '\n') return true;
    if (out->size() < max)
      out->push_back(static_cast<char>(c));
    else
      *too_long = true;
  }
}

// Calls f on each word of a space-separated key list (OpSpec).
template <typename F>
void ForEachKey(std::string_view list, F f) {
  while (!list.empty()) {
    const size_t sp = std::min(list.find(' '), list.size());
    if (sp > 0) f(list.substr(0, sp));
    list.remove_prefix(std::min(sp + 1, list.size()));
  }
}

bool Has(std::string_view list, std::string_view key) {
  bool found = false;
  ForEachKey(list, [&](std::string_view k) { found |= k == key; });
  return found;
}

}  // namespace

TraceReader::TraceReader(std::unique_ptr<std::istream> in, std::string name)
    : in_(std::move(in)), name_(std::move(name)) {}

Result<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path) {
  auto f = std::make_unique<std::ifstream>(path);
  if (!*f) return Status(-ENOENT, path + ": cannot open the trace");
  return std::make_unique<TraceReader>(std::move(f), path);
}

Result<bool> TraceReader::Next(TraceRecord* rec) {
  std::string& raw = line_buf_;
  std::vector<std::string_view>& words = words_;
  bool too_long = false;
  while (ReadLine(*in_, &raw, kMaxTraceLineBytes, &too_long)) {
    ++line_;
    auto where = [&](const std::string& what) {
      return Status(-EINVAL, name_ + ":" + std::to_string(line_) + ": " + what);
    };
    // Untrusted text in a message: cut and escaped.
    auto q = [](std::string_view t) { return "'" + Printable(t, kMaxTokenInMessage) + "'"; };
    if (too_long)
      return where("line longer than the limit of " + std::to_string(kMaxTraceLineBytes) +
                   " bytes, starting " + q(raw));
    std::string_view text(raw);
    if (auto hash = text.find('#'); hash != std::string_view::npos) text = text.substr(0, hash);
    Split(text, &words);
    if (words.empty()) continue;
    if (!header_seen_) {
      if (words.size() != 2 || words[0] != "swaplab-trace")
        return where("expected the header line 'swaplab-trace 1'");
      if (words[1] != "1")
        return where("unsupported trace version " + q(words[1]) + " (this swaplab reads 1)");
      header_seen_ = true;
      continue;
    }
    const OpSpec* spec = nullptr;
    for (const OpSpec& s : kSpecs) {
      if (words[0] == Name(s.op)) spec = &s;
    }
    if (spec == nullptr)
      return where("unknown operation " + q(words[0]) +
                   " (expected swapon, swapoff, alloc, free, cache, drop-cache, dup, "
                   "suspend-storage, resume-storage or expect)");
    TraceRecord r;
    r.op = spec->op;
    r.line = line_;
    // Keys given so far: each is one of the op's keys (at most 6), once.
    std::array<std::string_view, 8> seen;
    size_t nr_seen = 0;
    for (size_t i = 1; i < words.size(); ++i) {
      const auto eq = words[i].find('=');
      if (eq == std::string_view::npos || eq == 0)
        return where("expected key=value, got " + q(words[i]));
      const auto key = words[i].substr(0, eq);
      const auto val = words[i].substr(eq + 1);
      if (!Has(spec->required, key) && !Has(spec->optional, key))
        return where("'" + std::string(words[0]) + "' takes no field " + q(key));
      for (size_t k = 0; k < nr_seen; ++k) {
        if (seen[k] == key) return where("field '" + std::string(key) + "' given twice");
      }
      seen[nr_seen++] = key;
      int64_t v = 0;
      const auto [p, ec] = std::from_chars(val.data(), val.data() + val.size(), v);
      if (ec == std::errc::result_out_of_range && !val.empty() && val[0] != '-')
        return where("field '" + std::string(key) + "' " + q(val) +
                     " is above the limit of 2^63-1");
      if (ec != std::errc() || p != val.data() + val.size() || v < 0)
        return where("field '" + std::string(key) + "' needs a non-negative integer, got " +
                     q(val));
      const auto u = static_cast<uint64_t>(v);
      auto flag = [&](bool* b) -> Status {
        if (u > 1)
          return where("field '" + std::string(key) + "' is 0 or 1, got " + std::to_string(u));
        *b = u == 1;
        return Status::Ok();
      };
      Status st;
      if (key == "dev")
        r.dev = u;
      else if (key == "pages") {
        if (u > kMaxTracePages)
          return where("pages " + std::to_string(u) + " is above the limit of 2^32 (" +
                       std::to_string(kMaxTracePages) + ") pages, the largest swap area");
        r.pages = u;
      } else if (key == "ssd")
        st = flag(&r.ssd);
      else if (key == "blkdev")
        st = flag(&r.blkdev);
      else if (key == "discard")
        st = flag(&r.discard);
      else if (key == "prio") {
        if (u > 32767) return where("prio " + std::to_string(u) + " is outside 0..32767");
        r.prio = static_cast<int>(u);
      } else if (key == "folio")
        r.folio = u;
      else if (key == "order") {
        if (u > 15) return where("order " + std::to_string(u) + " is outside 0..15");
        r.order = static_cast<int>(u);
      } else if (key == "cpu") {
        if (u > 1023) return where("cpu " + std::to_string(u) + " is outside 0..1023");
        r.cpu = static_cast<int>(u);
      } else if (key == "page")
        r.page = u;
      else if (key == "n") {
        if (u == 0) return where("n must be at least 1");
        r.n = u;
      } else if (key == "offset")
        r.offset = u;
      if (!st.ok()) return st;
    }
    std::string_view missing;
    ForEachKey(spec->required, [&](std::string_view k) {
      if (missing.empty() &&
          std::find(seen.begin(), seen.begin() + nr_seen, k) == seen.begin() + nr_seen)
        missing = k;
    });
    if (!missing.empty())
      return where("'" + std::string(words[0]) + "' needs field '" + std::string(missing) + "'");
    *rec = r;
    return true;
  }
  if (!header_seen_) return Status(-EINVAL, name_ + ":1: empty trace, expected 'swaplab-trace 1'");
  return false;
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
