#include "size_arg.h"

#include <cctype>
#include <cstdint>

namespace swaplab::tools {

Result<uint64_t> ParseSize(const std::string& s, const std::string& opt) {
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0 || i > 19) return Status(-EINVAL, opt + ": \"" + s + "\" is not a size");
  const uint64_t n = std::stoull(s.substr(0, i));
  std::string unit = s.substr(i);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (unit.empty() || unit == "B")
    shift = 0;
  else if (unit == "K" || unit == "KB" || unit == "KIB")
    shift = 10;
  else if (unit == "M" || unit == "MB" || unit == "MIB")
    shift = 20;
  else if (unit == "G" || unit == "GB" || unit == "GIB")
    shift = 30;
  else if (unit == "T" || unit == "TB" || unit == "TIB")
    shift = 40;
  else
    return Status(-EINVAL, opt + ": unknown unit \"" + s.substr(i) + "\" (K, M, G, T)");
  if (shift > 0 && n > (UINT64_MAX >> shift))
    return Status(-EINVAL, opt + ": \"" + s + "\" is too large");
  return n << shift;
}

}  // namespace swaplab::tools
