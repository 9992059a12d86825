// SPDX-License-Identifier: MIT
// Internal to swaplab doctor: reading the files of a running system (or a
// recorded copy of one) without trusting them — bounded reads of regular
// files only, numbers parsed whole.
#pragma once

#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace swaplab::kernel::internal {

// `s` without leading and trailing spaces, tabs, CRs and LFs.
std::string_view Trim(std::string_view s);

// A whole number in `base`, the trimmed text and nothing else; none when
// it does not parse or does not fit T.
template <typename T>
std::optional<T> ParseNumber(std::string_view s, int base = 10) {
  s = Trim(s);
  T v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// A regular file of at most `cap` bytes (never a FIFO waited on, never a
// device read); none, with why in *why, else.
std::optional<std::string> ReadRegularFile(const std::string& path, size_t cap, std::string* why);

// "Key: N kB" lines (/proc/meminfo, /proc/PID/status, a smaps entry): key →
// N, the lines whose value is not a number left out.
std::map<std::string, uint64_t> ParseKibFields(const std::string& text);

}  // namespace swaplab::kernel::internal
