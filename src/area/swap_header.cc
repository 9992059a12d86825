// SPDX-License-Identifier: MIT
// The v1 swap header ("SWAPSPACE2") and the hibernation overlay: encoding,
// decoding, and the checks swapon makes. Layout: hibernation spec §1.1, §1.4
// and docs/formats.md. Fields are native-endian (x86-64: little-endian).
#include "swaplab/area/swap_header.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

namespace swaplab::area {
namespace {

// Byte offsets inside page 0 (hibernation spec §1.1, §1.4).
constexpr size_t kOffVersion = 1024;
constexpr size_t kOffLastPage = 1028;
constexpr size_t kOffNrBadpages = 1032;
constexpr size_t kOffUuid = 1036;
constexpr size_t kOffVolume = 1052;
constexpr size_t kVolumeLen = 16;
constexpr size_t kOffBadpages = 1536;
constexpr size_t kOffMagic = kHdrSig;  // the last 10 bytes

static_assert((kOffMagic - kOffBadpages) / 4 == kMaxSwapBadpages);

template <class T>
T Load(std::span<const std::byte, kPageSize> p, size_t off) {
  T v;
  std::memcpy(&v, p.data() + off, sizeof v);
  return v;
}
template <class T>
void Store(std::array<std::byte, kPageSize>& p, size_t off, T v) {
  std::memcpy(p.data() + off, &v, sizeof v);
}

uint32_t Swab32(uint32_t x) {
  return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
}

Signature Classify(const std::array<char, 10>& m) {
  if (m == kSwapSpace2Sig) return Signature::kSwapSpace2;
  if (m == kSwapSpaceV0Sig) return Signature::kSwapSpaceV0;
  if (m == kSuspendSig) return Signature::kSuspend;
  if (std::all_of(m.begin(), m.end(), [](char c) { return c == 0; })) return Signature::kZeros;
  return Signature::kUnknown;
}

// The ten signature bytes as a C-like literal: printable bytes as is,
// others as \xNN.
std::string Escape(const std::array<char, 10>& m) {
  std::string s;
  for (char c : m) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && u != '"' && u != '\\')
      s += c;
    else
      s += fmt::format("\\x{:02x}", u);
  }
  return s;
}

Status Invalid(std::string msg) { return Status(-EINVAL, std::move(msg)); }

}  // namespace

const char* Name(Signature s) {
  switch (s) {
    case Signature::kSwapSpace2:
      return "SWAPSPACE2";
    case Signature::kSwapSpaceV0:
      return "SWAP-SPACE";
    case Signature::kSuspend:
      return "S1SUSPEND";
    case Signature::kZeros:
      return "zeros";
    case Signature::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::array<std::byte, kPageSize> EncodeHeader(const SwapHeaderV1& h) {
  std::array<std::byte, kPageSize> p{};
  Store<uint32_t>(p, kOffVersion, h.version);
  Store<uint32_t>(p, kOffLastPage, h.last_page);
  // nr_badpages is the list's length; only kMaxSwapBadpages entries fit
  // before the signature (a longer list is for crafting refused headers).
  Store<uint32_t>(p, kOffNrBadpages, static_cast<uint32_t>(h.bad_pages.size()));
  std::memcpy(p.data() + kOffUuid, h.uuid.data(), h.uuid.size());
  // mkswap and swaplabel keep a terminating NUL: at most 15 label bytes.
  std::memcpy(p.data() + kOffVolume, h.label.data(), std::min(h.label.size(), kMaxLabelBytes));
  const size_t n = std::min<size_t>(h.bad_pages.size(), kMaxSwapBadpages);
  for (size_t i = 0; i < n; ++i) Store<uint32_t>(p, kOffBadpages + 4 * i, h.bad_pages[i]);
  std::memcpy(p.data() + kOffMagic, kSwapSpace2Sig.data(), 10);
  return p;
}

DecodedHeader DecodeHeader(std::span<const std::byte, kPageSize> page) {
  DecodedHeader d;
  std::memcpy(d.magic.data(), page.data() + kOffMagic, 10);
  d.signature = Classify(d.magic);

  uint32_t version = Load<uint32_t>(page, kOffVersion);
  uint32_t last_page = Load<uint32_t>(page, kOffLastPage);
  uint32_t nr_bad = Load<uint32_t>(page, kOffNrBadpages);
  // Byte-order fix-up as swapon does it (§1.1): only when the version is
  // not 1 as stored but is 1 with its bytes swapped.
  if (version != 1 && Swab32(version) == 1) {
    d.byte_swapped = true;
    version = Swab32(version);
    last_page = Swab32(last_page);
    nr_bad = Swab32(nr_bad);
  }
  d.v1.version = version;
  d.v1.last_page = last_page;
  d.nr_badpages = nr_bad;
  const uint32_t n = std::min(nr_bad, kMaxSwapBadpages);
  d.v1.bad_pages.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t b = Load<uint32_t>(page, kOffBadpages + 4 * size_t{i});
    d.v1.bad_pages[i] = d.byte_swapped ? Swab32(b) : b;
  }
  std::memcpy(d.v1.uuid.data(), page.data() + kOffUuid, d.v1.uuid.size());
  const char* vol = reinterpret_cast<const char*>(page.data() + kOffVolume);
  d.v1.label.assign(vol, strnlen(vol, kVolumeLen));

  d.hibernation = DecodeSwsuspHeader(page);
  return d;
}

// The fields swsusp_check() (kernel/power/swap.c) reads once it has found
// HIBERNATE_SIG.
std::optional<SwsuspHeader> DecodeSwsuspHeader(std::span<const std::byte, kPageSize> page) {
  std::array<char, 10> sig;
  std::memcpy(sig.data(), page.data() + kHdrSig, sig.size());
  if (sig != kSuspendSig) return std::nullopt;
  SwsuspHeader s;
  s.hw_sig = Load<uint32_t>(page, kHdrHwSig);
  s.crc32 = Load<uint32_t>(page, kHdrCrc32);
  s.image = Load<uint64_t>(page, kHdrImage);
  s.flags = Load<uint32_t>(page, kHdrFlags);
  std::memcpy(s.orig_sig.data(), page.data() + kHdrOrigSig, 10);
  return s;
}

std::string SwsuspFlagNames(uint32_t f) {
  static const std::pair<uint32_t, const char*> kBits[] = {
      {kSfPlatformMode, "PLATFORM_MODE"},
      {kSfNocompressMode, "NOCOMPRESS_MODE"},
      {kSfCrc32Mode, "CRC32_MODE"},
      {kSfHwSig, "HW_SIG"},
      {kSfCompressionAlgLz4, "COMPRESSION_ALG_LZ4"}};
  std::string s;
  for (auto [bit, name] : kBits) {
    if (f & bit) s += std::string(s.empty() ? "" : "|") + name;
    f &= ~bit;
  }
  if (f != 0) s += fmt::format("{}0x{:x}", s.empty() ? "" : "|", f);
  return s.empty() ? "none" : s;
}

// Mirrors mm/swapfile.c: read_swap_header() and the bad-page part of
// setup_swap_map() (hibernation spec §1.3, allocator spec §5.1 step 3, 5).
Status ValidateForSwapon(const DecodedHeader& h, uint64_t size_bytes, bool regular_file) {
  switch (h.signature) {
    case Signature::kSwapSpace2:
      break;
    case Signature::kSwapSpaceV0:
      return Invalid(
          "signature: found \"SWAP-SPACE\", the obsolete v0 swap format; "
          "only \"SWAPSPACE2\" (v1) is accepted (run swaplab area format or mkswap)");
    case Signature::kSuspend:
      return Invalid(fmt::format(
          "signature: found \"S1SUSPEND\", a hibernation image is stored here (original "
          "signature \"{}\"); resume from it or reformat the area",
          h.hibernation ? Escape(h.hibernation->orig_sig) : std::string("?")));
    case Signature::kZeros:
      return Invalid("signature: found zeros where \"SWAPSPACE2\" should be; not a swap area");
    case Signature::kUnknown:
      return Invalid(
          fmt::format("signature: found \"{}\" where \"SWAPSPACE2\" should be; "
                      "not a swap area",
                      Escape(h.magic)));
  }
  if (h.v1.version != 1)
    return Invalid(fmt::format("version: {} is not supported (only version 1)", h.v1.version));
  if (h.v1.last_page == 0) return Invalid("last_page: 0, the area is empty");
  if (regular_file && size_bytes % kPageSize != 0)
    return Invalid(fmt::format("size: {} bytes is not a whole number of {}-byte pages", size_bytes,
                               kPageSize));
  const uint64_t need = uint64_t{h.v1.last_page} + 1;
  const uint64_t have = size_bytes / kPageSize;
  if (have < need)
    return Invalid(fmt::format("last_page: {} needs {} pages but the {} has only {} ({} bytes)",
                               h.v1.last_page, need, regular_file ? "file" : "device", have,
                               size_bytes));
  if (regular_file && h.nr_badpages != 0)
    return Invalid(
        fmt::format("nr_badpages: {}; a swap file may not list bad pages", h.nr_badpages));
  if (h.nr_badpages > kMaxSwapBadpages)
    return Invalid(
        fmt::format("nr_badpages: {} exceeds the maximum of {}", h.nr_badpages, kMaxSwapBadpages));
  std::map<uint32_t, size_t> seen;  // bad page → first index
  for (size_t i = 0; i < h.v1.bad_pages.size(); ++i) {
    const uint32_t b = h.v1.bad_pages[i];
    if (b == 0 || b > h.v1.last_page)
      return Invalid(
          fmt::format("badpages[{}]: {} is outside [1, last_page = {}]", i, b, h.v1.last_page));
    auto [it, fresh] = seen.emplace(b, i);
    if (!fresh)
      return Invalid(
          fmt::format("badpages[{}]: {} is listed twice (also badpages[{}])", i, b, it->second));
  }
  if (seen.size() >= need - 1)
    return Invalid(
        fmt::format("nr_badpages: {} bad pages leave no usable page of {}", seen.size(), need - 1));
  return Status::Ok();
}

std::string UuidToString(const std::array<uint8_t, 16>& u) {
  std::string s;
  for (size_t i = 0; i < u.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += fmt::format("{:02x}", u[i]);
  }
  return s;
}

Result<std::array<uint8_t, 16>> ParseUuid(const std::string& s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  // 8-4-4-4-12 with dashes (as libuuid parses it), or 32 bare hex digits.
  const bool dashed = s.size() == 36;
  if (!dashed && s.size() != 32)
    return Status(-EINVAL, fmt::format("uuid: \"{}\" is not 32 hex digits in the form "
                                       "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx",
                                       s));
  std::array<uint8_t, 16> u{};
  size_t k = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (dashed && (i == 8 || i == 13 || i == 18 || i == 23)) {
      if (s[i] != '-')
        return Status(
            -EINVAL, fmt::format("uuid: \"{}\" has '{}' at position {}, expected '-'", s, s[i], i));
      continue;
    }
    const int v = hex(s[i]);
    if (v < 0)
      return Status(-EINVAL, fmt::format("uuid: \"{}\" has '{}' at position {}, not a hex digit", s,
                                         s[i], i));
    u[k / 2] = static_cast<uint8_t>(u[k / 2] << 4 | v);
    ++k;
  }
  return u;
}

}  // namespace swaplab::area
