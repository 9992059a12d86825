// SPDX-License-Identifier: MIT
// The trace format: a streaming parser and the line writer.
#include "swaplab/workload/trace.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <iterator>
#include <span>
#include <string_view>

#include "swaplab/alloc/printable.h"
#include "swaplab/alloc/types.h"

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
    case TraceOp::kForeign:
      return "foreign";
    case TraceOp::kForeignFree:
      return "foreign-free";
    case TraceOp::kScanBase:
      return "scan-base";
    case TraceOp::kCpus:
      return "cpus";
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
    {TraceOp::kForeign, "dev offset cpu", "n"},
    {TraceOp::kForeignFree, "dev offset", "n"},
    {TraceOp::kScanBase, "dev cpu offset", ""},
    {TraceOp::kCpus, "n", ""},
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

// The first eight bytes of a word as one integer (zero-padded), so that a
// word is told from the format's names by integer compares instead of a
// memcmp call per name.
constexpr uint64_t Head8(std::string_view w) {
  uint64_t v = 0;
  for (size_t i = 0; i < w.size() && i < 8; ++i)
    v |= uint64_t{static_cast<unsigned char>(w[i])} << (8 * i);
  return v;
}

// Whether `w` equals a name whose Head8 is `head`.
inline bool SameWord(std::string_view w, uint64_t w_head, std::string_view name, uint64_t head) {
  return w_head == head && w.size() == name.size() &&
         (w.size() <= 8 || w.substr(8) == name.substr(8));
}

constexpr auto kKeyHeads = [] {
  std::array<uint64_t, std::size(kKeyNames)> a{};
  for (size_t i = 0; i < a.size(); ++i) a[i] = Head8(kKeyNames[i]);
  return a;
}();

constexpr bool AllKeysFitHead8() {
  for (std::string_view k : kKeyNames)
    if (k.size() > 8) return false;
  return true;
}
static_assert(AllKeysFitHead8(), "ParseCommon tells a key by its first eight bytes and length");

// A word's one candidate among a list of names, found in one step: its
// Head8 times a multiplier, chosen when the table is made, that sends the
// names' heads to distinct slots of 32 (the caller still compares the word
// with the candidate).
struct HeadHash {
  uint64_t mul = 0;
  std::array<int8_t, 32> slot{};
  constexpr int Candidate(uint64_t head) const { return slot[(head * mul) >> 59]; }
};

template <size_t N>
constexpr HeadHash MakeHeadHash(const std::array<uint64_t, N>& heads) {
  static_assert(N <= 16);
  HeadHash h;
  // Odd multipliers from a linear congruential sequence (Knuth's MMIX
  // constants), the first that separates the heads.
  for (uint64_t x = 1;; x = x * 6364136223846793005ull + 1442695040888963407ull) {
    const uint64_t mul = x | 1;
    h.slot.fill(-1);
    bool distinct = true;
    for (size_t i = 0; i < N && distinct; ++i) {
      int8_t& s = h.slot[(heads[i] * mul) >> 59];
      distinct = s < 0;
      s = static_cast<int8_t>(i);
    }
    if (distinct) {
      h.mul = mul;
      return h;
    }
  }
}

constexpr HeadHash kKeyHash = MakeHeadHash(kKeyHeads);

// The key `k` names, or -1.
int KeyOf(std::string_view k) {
  const uint64_t head = Head8(k);
  const int i = kKeyHash.Candidate(head);
  return i >= 0 && SameWord(k, head, kKeyNames[i], kKeyHeads[i]) ? i : -1;
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

// Whether value u is allowed for key k (beyond being a non-negative
// integer below 2^63).
inline bool InRange(int k, uint64_t u) {
  switch (k) {
    case kPages:
      return u <= kMaxTracePages;
    case kSsd:
    case kBlkdev:
    case kDiscard:
      return u <= 1;
    case kPrio:
      return u <= alloc::kMaxSwapPrio;
    case kOrder:
      return u <= alloc::kMaxOrder;
    case kCpu:
      return u <= 1023;
    case kN:
      return u >= 1;
    default:
      return true;
  }
}

// What is wrong with key k's value u when !InRange(k, u).
std::string RangeError(int k, uint64_t u) {
  const std::string v = std::to_string(u);
  switch (k) {
    case kPages:
      return "pages " + v + " is above the limit of 2^32 (" + std::to_string(kMaxTracePages) +
             ") pages, the largest swap area";
    case kPrio:
      return "prio " + v + " is outside 0.." + std::to_string(alloc::kMaxSwapPrio);
    case kOrder:
      return "order " + v + " is outside 0.." + std::to_string(alloc::kMaxOrder);
    case kCpu:
      return "cpu " + v + " is outside 0..1023";
    case kN:
      return "n must be at least 1";
    default:  // the flags
      return "field '" + std::string(kKeyNames[k]) + "' is 0 or 1, got " + v;
  }
}

// Stores key k's value u (InRange) in r.
inline void Store(int k, uint64_t u, TraceRecord* r) {
  switch (k) {
    case kDev:
      r->dev = u;
      break;
    case kPages:
      r->pages = u;
      break;
    case kSsd:
      r->ssd = u == 1;
      break;
    case kBlkdev:
      r->blkdev = u == 1;
      break;
    case kDiscard:
      r->discard = u == 1;
      break;
    case kPrio:
      r->prio = static_cast<int>(u);
      break;
    case kFolio:
      r->folio = u;
      break;
    case kOrder:
      r->order = static_cast<int>(u);
      break;
    case kCpu:
      r->cpu = static_cast<int>(u);
      break;
    case kPage:
      r->page = u;
      break;
    case kN:
      r->n = u;
      break;
    case kOffset:
      r->offset = u;
      break;
  }
}

// The operation names with their Head8, in kSpecs order.
const auto kOpNames = [] {
  std::array<std::pair<std::string_view, uint64_t>, std::size(kSpecs)> a;
  for (size_t i = 0; i < a.size(); ++i) a[i] = {Name(kSpecs[i].op), Head8(Name(kSpecs[i].op))};
  return a;
}();

const HeadHash kOpHash = [] {
  std::array<uint64_t, std::size(kSpecs)> heads{};
  for (size_t i = 0; i < heads.size(); ++i) heads[i] = kOpNames[i].second;
  return MakeHeadHash(heads);
}();

// kSpecs' index of operation word w, or std::size(kSpecs).
size_t OpIndex(std::string_view w) {
  const uint64_t head = Head8(w);
  const int i = kOpHash.Candidate(head);
  return i >= 0 && SameWord(w, head, kOpNames[i].first, kOpNames[i].second) ? static_cast<size_t>(i)
                                                                            : std::size(kSpecs);
}

// *r as a record of `op` at `line` with every other field at its
// default, set field by field: `*r = TraceRecord{}` compiles to a `rep
// stos` (GCC 12, -O2) whose start-up cost was ~12 % of reading a line.
inline void ResetRecord(TraceRecord* r, TraceOp op, uint64_t line) {
  static_assert(sizeof(TraceRecord) == 104, "a field of TraceRecord not reset here");
  r->op = op;
  r->line = line;
  r->dev = 0;
  r->pages = 0;
  r->ssd = true;
  r->blkdev = true;
  r->discard = false;
  r->prio.reset();
  r->folio.reset();
  r->order = 0;
  r->cpu = 0;
  r->page = 0;
  r->n.reset();
  r->offset = 0;
}

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

// Binary traces: unsigned LEB128 varints of at most 9 bytes (63 bits: every
// value below 2^63, the text format's limit too).
constexpr size_t kMaxVarintBytes = 9;
// The op byte, a mask of up to 12 keys (2 bytes) and 12 values.
constexpr size_t kMaxBinaryRecordBytes = 1 + 2 + std::size(kKeyNames) * kMaxVarintBytes;

enum class VarintRead { kOk, kTruncated, kTooLong };

inline VarintRead ReadVarint(const unsigned char** p, const unsigned char* end, uint64_t* v) {
  const unsigned char* q = *p;
  if (q != end && *q < 0x80) {  // most values fit one byte
    *v = *q;
    *p = q + 1;
    return VarintRead::kOk;
  }
  uint64_t u = 0;
  for (size_t i = 0; i < kMaxVarintBytes; ++i, ++q) {
    if (q == end) return VarintRead::kTruncated;
    u |= uint64_t{*q & 0x7fu} << (7 * i);
    if (*q < 0x80) {
      *v = u;
      *p = q + 1;
      return VarintRead::kOk;
    }
  }
  return VarintRead::kTooLong;
}

void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// The keys a record of each op may carry, in the order the text format
// writes them (FormatRecord); the binary encoding writes the same ones, as
// a mask (AppendBinaryRecord).
std::span<const Key> KeyOrder(TraceOp op) {
  static constexpr Key kSwapon[] = {kDev, kPages, kSsd, kBlkdev, kDiscard, kPrio};
  static constexpr Key kDevOnly[] = {kDev};
  static constexpr Key kAllocKeys[] = {kFolio, kOrder, kCpu};
  static constexpr Key kPartKeys[] = {kFolio, kPage, kN};
  static constexpr Key kFolioOnly[] = {kFolio};
  static constexpr Key kExpectKeys[] = {kFolio, kPage, kDev, kOffset};
  static constexpr Key kForeignKeys[] = {kDev, kOffset, kN, kCpu};
  static constexpr Key kForeignFreeKeys[] = {kDev, kOffset, kN};
  static constexpr Key kScanBaseKeys[] = {kDev, kCpu, kOffset};
  static constexpr Key kNOnly[] = {kN};
  switch (op) {
    case TraceOp::kSwapon:
      return kSwapon;
    case TraceOp::kSwapoff:
      return kDevOnly;
    case TraceOp::kAlloc:
      return kAllocKeys;
    case TraceOp::kFree:
    case TraceOp::kCache:
      return kPartKeys;
    case TraceOp::kDropCache:
    case TraceOp::kDup:
      return kFolioOnly;
    case TraceOp::kSuspendStorage:
    case TraceOp::kResumeStorage:
      return {};
    case TraceOp::kExpect:
      return kExpectKeys;
    case TraceOp::kForeign:
      return kForeignKeys;
    case TraceOp::kForeignFree:
      return kForeignFreeKeys;
    case TraceOp::kScanBase:
      return kScanBaseKeys;
    case TraceOp::kCpus:
      return kNOnly;
  }
  return {};
}

// Whether r carries key k of its op's KeyOrder: the optional ones only
// when set (and not at their default), every other one always.
bool Written(Key k, const TraceRecord& r) {
  switch (k) {
    case kPrio:
      return r.prio.has_value();
    case kFolio:
      return r.op != TraceOp::kDropCache || r.folio.has_value();
    case kPage:  // a part's first page, or an expect line's page in its folio
      return r.page != 0 || (r.op != TraceOp::kExpect && r.n.has_value());
    case kN:
      if (r.op == TraceOp::kCpus) return true;
      if (r.op == TraceOp::kForeign || r.op == TraceOp::kForeignFree)
        return r.n.has_value() && *r.n != 1;
      return r.n.has_value();
    default:
      return true;
  }
}

// The keys FormatRecord writes for r, as a mask.
unsigned WrittenKeys(const TraceRecord& r) {
  unsigned m = 0;
  for (Key k : KeyOrder(r.op))
    if (Written(k, r)) m |= 1u << k;
  return m;
}

// Key k's value in r, as written (the reverse of Store).
uint64_t KeyValue(int k, const TraceRecord& r) {
  switch (k) {
    case kDev:
      return r.dev;
    case kPages:
      return r.pages;
    case kSsd:
      return r.ssd;
    case kBlkdev:
      return r.blkdev;
    case kDiscard:
      return r.discard;
    case kPrio:
      return static_cast<uint64_t>(r.prio.value_or(0));
    case kFolio:
      return r.folio.value_or(0);
    case kOrder:
      return static_cast<uint64_t>(r.order);
    case kCpu:
      return static_cast<uint64_t>(r.cpu);
    case kPage:
      return r.page;
    case kN:
      return r.n.value_or(0);
    case kOffset:
      return r.offset;
  }
  return 0;
}

size_t SpecIndex(TraceOp op) {
  for (size_t i = 0; i < std::size(kSpecs); ++i)
    if (kSpecs[i].op == op) return i;
  return 0;
}

// " key=" of each key as the first bytes of a little-endian word, told from
// eight input bytes by one masked compare; len 0 for a key whose " key="
// is longer than eight bytes (discard: such a line takes the other paths).
struct KeyPattern {
  uint64_t word = 0, mask = 0;
  size_t len = 0;
};
constexpr auto kKeyPatterns = [] {
  std::array<KeyPattern, std::size(kKeyNames)> a{};
  for (size_t k = 0; k < a.size(); ++k) {
    const std::string_view name = kKeyNames[k];
    if (name.size() + 2 > 8) continue;
    a[k].len = name.size() + 2;
    a[k].word = uint64_t{' '} | Head8(name) << 8 | uint64_t{'='} << (8 * (name.size() + 1));
    a[k].mask = a[k].len == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * a[k].len)) - 1;
  }
  return a;
}();

// Each op's keys in the order the text format writes them (KeyOrder), by
// kSpecs index: the order a written line is read in one pass.
struct KeyList {
  std::array<Key, 6> keys{};
  size_t size = 0;
};
const std::array<KeyList, std::size(kSpecs)> kWrittenOrder = [] {
  std::array<KeyList, std::size(kSpecs)> a{};
  for (size_t i = 0; i < a.size(); ++i) {
    for (Key k : KeyOrder(kSpecs[i].op)) a[i].keys[a[i].size++] = k;
  }
  return a;
}();

}  // namespace

TraceReader::TraceReader(std::unique_ptr<std::istream> in, std::string name)
    : in_(std::move(in)), name_(Printable(name, kPathMax)) {}

TraceReader::TraceReader(int fd, std::string name) : fd_(fd), name_(Printable(name, kPathMax)) {}

TraceReader::~TraceReader() {
  if (fd_ >= 0) ::close(fd_);
}

// A trace is a regular file: a FIFO would block the open, /dev/zero is an
// endless line. Checked before the open and again on the descriptor (opened
// without blocking), so a path swapped in between is refused too.
Result<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path) {
  const std::string shown = Printable(path, kPathMax);
  auto refuse = [&shown](const struct stat& st) {
    const char* what = S_ISFIFO(st.st_mode)  ? "a FIFO"
                       : S_ISCHR(st.st_mode) ? "a character device"
                       : S_ISBLK(st.st_mode) ? "a block device"
                       : S_ISDIR(st.st_mode) ? "a directory"
                                             : "not a regular file";
    return Status(-EINVAL, shown + ": is " + what + "; a trace must be a regular file");
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) < 0) return Status(-ENOENT, shown + ": cannot open the trace");
  if (!S_ISREG(st.st_mode)) return refuse(st);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Status(-ENOENT, shown + ": cannot open the trace");
  if (::fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return refuse(st);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
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

Status TraceReader::ReadFormat() {
  while (end_ - pos_ < sizeof(kBinaryTraceMagic) && Fill()) {
  }
  const std::string_view head(buf_ ? buf_.get() + pos_ : "", end_ - pos_);
  if (!IsBinaryTrace(head)) {
    format_ = Format::kText;
    return Status::Ok();
  }
  format_ = Format::kBinary;
  pos_ += sizeof(kBinaryTraceMagic);
  while (end_ - pos_ < kMaxVarintBytes && Fill()) {
  }
  const auto* p = reinterpret_cast<const unsigned char*>(buf_.get() + pos_);
  const auto* const end = reinterpret_cast<const unsigned char*>(buf_.get() + end_);
  uint64_t version = 0;
  const VarintRead got = ReadVarint(&p, end, &version);
  line_ = 1;
  if (got != VarintRead::kOk)
    return Status(-EINVAL, name_ + ":1: a binary trace's header ends before its version");
  if (version != kBinaryTraceVersion)
    return Status(-EINVAL, name_ + ":1: unsupported binary trace version " +
                               std::to_string(version) + " (this swaplab reads " +
                               std::to_string(kBinaryTraceVersion) + ")");
  pos_ = static_cast<size_t>(reinterpret_cast<const char*>(p) - buf_.get());
  header_seen_ = true;
  return Status::Ok();
}

// A record: the op byte (kSpecs' index; bit 7 set when a key mask
// follows, else the op's required keys are the ones given), the mask as a
// varint when given, then one varint per key in the mask, lowest key first.
Result<bool> TraceReader::NextBinary(TraceRecord* rec) {
  if (end_ - pos_ < kMaxBinaryRecordBytes && !eof_) {
    if (pos_ > 0) {  // the record's start to the front of the buffer
      std::memmove(buf_.get(), buf_.get() + pos_, end_ - pos_);
      consumed_ += pos_;
      end_ -= pos_;
      pos_ = 0;
    }
    while (end_ < kMaxBinaryRecordBytes && Fill()) {
    }
  }
  if (pos_ == end_) return false;
  ++line_;
  const auto* const start = reinterpret_cast<const unsigned char*>(buf_.get() + pos_);
  const auto* const end = reinterpret_cast<const unsigned char*>(buf_.get() + end_);
  const auto* p = start;
  auto where = [&](const std::string& what) {
    return Status(-EINVAL, name_ + ":" + std::to_string(line_) + " (byte " +
                               std::to_string(consumed_ + pos_) + "): " + what);
  };
  auto value_error = [&](VarintRead got, std::string_view key) {
    return where(got == VarintRead::kTruncated
                     ? "the file ends inside the record"
                     : "field '" + std::string(key) + "' is above the limit of 2^63-1");
  };
  const unsigned op_byte = *p++;
  const size_t spec_index = op_byte & 0x7fu;
  if (spec_index >= std::size(kSpecs))
    return where(fmt::format("unknown operation byte 0x{:02x} (0..0x{:02x}, bit 7 for a key mask)",
                             op_byte, std::size(kSpecs) - 1));
  const OpMasks& masks = kMasks[spec_index];
  const char* op_name = Name(kSpecs[spec_index].op);
  uint64_t mask = masks.required;
  if (op_byte & 0x80u) {
    if (VarintRead got = ReadVarint(&p, end, &mask); got != VarintRead::kOk)
      return value_error(got, "key mask");
    if (mask >> std::size(kKeyNames))
      return where(fmt::format("key mask 0x{:x} names a key the format does not have", mask));
    if (const uint64_t extra = mask & ~uint64_t{masks.allowed})
      return where(
          fmt::format("'{}' takes no field '{}'", op_name, kKeyNames[std::countr_zero(extra)]));
    if (const uint64_t missing = masks.required & ~mask)
      return where(
          fmt::format("'{}' needs field '{}'", op_name, kKeyNames[std::countr_zero(missing)]));
  }
  TraceRecord& r = *rec;  // written in place, as ParseCommon does
  ResetRecord(&r, kSpecs[spec_index].op, line_);
  for (uint64_t keys = mask; keys != 0; keys &= keys - 1) {
    const int k = std::countr_zero(keys);
    uint64_t u = 0;
    if (VarintRead got = ReadVarint(&p, end, &u); got != VarintRead::kOk)
      return value_error(got, kKeyNames[k]);
    if (!InRange(k, u)) return where(RangeError(k, u));
    Store(k, u, &r);
  }
  pos_ += static_cast<size_t>(p - start);
  return true;
}

Result<bool> TraceReader::Next(TraceRecord* rec) {
  if (format_ == Format::kUnknown)
    if (Status st = ReadFormat(); !st.ok()) return st;
  if (format_ == Format::kBinary) return NextBinary(rec);
  if (fast_path_ && header_seen_ && ReadWrittenLine(rec)) return true;
  std::string_view raw;
  bool too_long = false;
  while (NextLine(&raw, &too_long)) {
    ++line_;
    if (fast_path_ && header_seen_ && !too_long && ParseCommon(raw, rec)) return true;
    Result<bool> r = Parse(raw, too_long, rec);
    if (!r.ok() || *r) return r;
  }
  if (!header_seen_) return Status(-EINVAL, name_ + ":1: empty trace, expected 'swaplab-trace 1'");
  return false;
}

// A line as FormatRecord writes it, read straight from the buffer in one
// pass (no search for its newline first): a known operation, then its
// keys in the written order (KeyOrder; an optional one may be left out),
// each ` key=digits` (at most 18 digits, in range), and the newline right
// after. Any other line, or one the buffer does not hold whole, is left to
// NextLine and ParseCommon (nothing is consumed; *rec is then overwritten
// there). Reads each line it takes as ParseCommon does.
bool TraceReader::ReadWrittenLine(TraceRecord* rec) {
  const char* const start = buf_.get() + pos_;
  const char* const limit = buf_.get() + end_;
  const char* p = start;
  uint64_t head = 0;  // the operation word's Head8, made as it is scanned
  for (; p != limit && *p != ' ' && *p != '\n'; ++p) {
    if (p - start < 8) head |= uint64_t{static_cast<unsigned char>(*p)} << (8 * (p - start));
  }
  if (p == limit) return false;
  const std::string_view op_word(start, static_cast<size_t>(p - start));
  const int spec_index = kOpHash.Candidate(head);
  if (spec_index < 0 ||
      !SameWord(op_word, head, kOpNames[spec_index].first, kOpNames[spec_index].second))
    return false;
  TraceRecord& r = *rec;  // in place, as ParseCommon
  ResetRecord(&r, kSpecs[spec_index].op, line_ + 1);
  unsigned seen = 0;
  const KeyList& order = kWrittenOrder[static_cast<size_t>(spec_index)];
  for (size_t i = 0; i < order.size && *p == ' '; ++i) {
    if (limit - p < 8) return false;
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    const Key k = order.keys[i];
    const KeyPattern& pattern = kKeyPatterns[k];
    if (pattern.len == 0) return false;
    if ((word & pattern.mask) != pattern.word) continue;  // left out (or not in order)
    p += pattern.len;
    uint64_t u = 0;
    const char* const digits = p;
    for (; p != limit && static_cast<unsigned char>(*p - '0') <= 9; ++p) {
      if (p - digits == 18) return false;
      u = u * 10 + static_cast<unsigned>(*p - '0');
    }
    if (p == digits || p == limit || !InRange(k, u)) return false;
    Store(k, u, &r);
    seen |= 1u << k;
  }
  const unsigned required = kMasks[static_cast<size_t>(spec_index)].required;
  if (*p != '\n' || (seen & required) != required) return false;
  pos_ = static_cast<size_t>(p + 1 - buf_.get());
  ++line_;
  return true;
}

// The common line in one pass: a known operation and its fields, each
// `key=digits` after one space, every key allowed, none twice, the
// required ones present, each value in range (and below 10^18), and
// nothing else on the line (no comment, tab, CR or other spacing). Anything
// else is left to Parse, which reads it the same way or says what is wrong
// (*rec is then overwritten or unspecified, as after an error).
bool TraceReader::ParseCommon(std::string_view line, TraceRecord* rec) const {
  const char* p = line.data();
  const char* const end = p + line.size();
  const char* w = p;
  while (p != end && *p != ' ') ++p;
  const size_t spec_index = OpIndex(std::string_view(w, static_cast<size_t>(p - w)));
  if (spec_index == std::size(kSpecs)) return false;
  const OpMasks& masks = kMasks[spec_index];
  // Written in place (a record built aside and copied would be read back
  // right after its narrow stores: a store-forwarding stall per line).
  TraceRecord& r = *rec;
  ResetRecord(&r, kSpecs[spec_index].op, line_);
  unsigned seen = 0;
  while (p != end) {
    ++p;  // the space
    uint64_t head = 0;
    int len = 0;
    for (; p != end && *p != '='; ++p, ++len) {
      if (len == 8 || *p == ' ' || *p == '#' || *p == '\t' || *p == '\r') return false;
      head |= uint64_t{static_cast<unsigned char>(*p)} << (8 * len);
    }
    if (p == end || len == 0) return false;
    // Every key is at most 8 bytes: its Head8 and length name it.
    const int k = kKeyHash.Candidate(head);
    if (k < 0 || kKeyHeads[k] != head || kKeyNames[k].size() != static_cast<size_t>(len) ||
        !(masks.allowed & (1u << k)) || (seen & (1u << k)))
      return false;
    seen |= 1u << k;
    ++p;  // the '='
    uint64_t u = 0;
    int digits = 0;
    for (; p != end && *p != ' '; ++p, ++digits) {
      const unsigned d = static_cast<unsigned char>(*p) - unsigned{'0'};
      if (d > 9 || digits == 18) return false;
      u = u * 10 + d;
    }
    if (digits == 0 || !InRange(k, u)) return false;
    Store(k, u, &r);
  }
  return (seen & masks.required) == masks.required;
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
  const size_t spec_index = OpIndex(op_word);
  if (spec_index == std::size(kSpecs))
    return where(
        "unknown operation " + q(op_word) +
        " (expected swapon, swapoff, alloc, free, cache, drop-cache, dup, "
        "suspend-storage, resume-storage, expect, foreign, foreign-free, scan-base or cpus)");
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
    if (!InRange(k, u)) return where(RangeError(k, u));
    Store(k, u, &r);
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
  for (Key k : KeyOrder(r.op)) {
    if (!Written(k, r)) continue;
    o += ' ';
    o += kKeyNames[k];
    o += '=';
    o += std::to_string(KeyValue(k, r));
  }
  return o;
}

std::string BinaryTraceHeader() {
  std::string h(reinterpret_cast<const char*>(kBinaryTraceMagic), sizeof(kBinaryTraceMagic));
  AppendVarint(kBinaryTraceVersion, &h);
  return h;
}

bool IsBinaryTrace(std::string_view head) {
  return head.size() >= sizeof(kBinaryTraceMagic) &&
         std::memcmp(head.data(), kBinaryTraceMagic, sizeof(kBinaryTraceMagic)) == 0;
}

void AppendBinaryRecord(const TraceRecord& r, std::string* out) {
  const size_t index = SpecIndex(r.op);
  const unsigned keys = WrittenKeys(r);
  if (keys == kMasks[index].required) {
    out->push_back(static_cast<char>(index));
  } else {
    out->push_back(static_cast<char>(index | 0x80u));
    AppendVarint(keys, out);
  }
  for (unsigned k = keys; k != 0; k &= k - 1) AppendVarint(KeyValue(std::countr_zero(k), r), out);
}

}  // namespace swaplab::workload
