// SPDX-License-Identifier: MIT
// The one size parser (size.h).
#include "swaplab/workload/size.h"

#include <cctype>
#include <cmath>
#include <string>

#include "swaplab/alloc/printable.h"
#include "swaplab/alloc/types.h"

namespace swaplab::workload {

namespace {

constexpr size_t kMaxInMessage = 64;

std::string Quoted(std::string_view s) {
  return "\"" + Printable(std::string(s), kMaxInMessage) + "\"";
}

// The shift of a unit (K → 10), -1 if it is not one.
int UnitShift(std::string_view unit) {
  std::string u(unit);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (u.empty() || u == "B") return 0;
  static constexpr std::string_view kPrefixes = "KMGT";
  const size_t p = kPrefixes.find(u[0]);
  if (p == std::string_view::npos) return -1;
  const std::string_view rest = std::string_view(u).substr(1);
  if (!rest.empty() && rest != "B" && rest != "IB") return -1;
  return 10 * static_cast<int>(p + 1);
}

}  // namespace

Result<uint64_t> ParseSize(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  const size_t whole_digits = i;
  const bool point = i < s.size() && s[i] == '.';
  size_t frac_digits = 0;
  if (point) {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++frac_digits;
  }
  if (whole_digits == 0 && frac_digits == 0)
    return Status(-EINVAL, Quoted(s) + " is not a size (e.g. 4096, 64K, 6G, 7.5G)");
  const int shift = UnitShift(s.substr(i));
  if (shift < 0)
    return Status(-EINVAL, "unknown unit " + Quoted(s.substr(i)) + " in " + Quoted(s) +
                               " (K, M, G, T, alone or with B or iB)");
  const Status too_large(-EINVAL, Quoted(s) + " is too large");
  if (!point) {
    if (whole_digits > 20) return too_large;
    uint64_t n = 0;
    try {
      n = std::stoull(std::string(s.substr(0, whole_digits)));
    } catch (...) {
      return too_large;
    }
    if (shift > 0 && n > (UINT64_MAX >> shift)) return too_large;
    return n << shift;
  }
  // With a point: a fractional size is rounded to the nearest page, a
  // whole one ("6.0G") taken as written.
  const double v = std::stod(std::string(s.substr(0, i)));
  const double bytes = v * static_cast<double>(uint64_t{1} << shift) + 0.5;
  if (bytes >= 0x1p63) return too_large;
  const auto b = static_cast<uint64_t>(bytes);
  return v != std::floor(v) ? (b + alloc::kPageSize / 2) / alloc::kPageSize * alloc::kPageSize : b;
}

Result<uint64_t> ParseSizeOrPages(std::string_view s) {
  auto n = ParseSize(s);
  if (!n.ok()) return n.status();
  const bool unit = !s.empty() && !std::isdigit(static_cast<unsigned char>(s.back()));
  if (!unit) return *n;
  if (*n % alloc::kPageSize != 0)
    return Status(-EINVAL, Quoted(s) + " is not a whole number of 4 KiB pages");
  return *n / alloc::kPageSize;
}

}  // namespace swaplab::workload
