// SPDX-License-Identifier: MIT
// swaplab doctor's readers (doctor_read.h).
#include "doctor_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

namespace swaplab::kernel::internal {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::strchr(" \t\r\n", s.front()) != nullptr) s.remove_prefix(1);
  while (!s.empty() && std::strchr(" \t\r\n", s.back()) != nullptr) s.remove_suffix(1);
  return s;
}

std::optional<std::string> ReadRegularFile(const std::string& path, size_t cap, std::string* why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    *why = std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    *why = "not a regular file";
    return std::nullopt;
  }
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      *why = std::strerror(errno);
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > cap) {
      ::close(fd);
      *why = "larger than " + std::to_string(cap >> 20) + " MiB";
      return std::nullopt;
    }
  }
  ::close(fd);
  return out;
}

std::map<std::string, uint64_t> ParseKibFields(const std::string& text) {
  std::map<std::string, uint64_t> m;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string_view v = Trim(std::string_view(line).substr(colon + 1));
    if (v.size() > 3 && v.substr(v.size() - 3) == " kB") v.remove_suffix(3);
    if (auto n = ParseNumber<uint64_t>(v)) m[line.substr(0, colon)] = *n;
  }
  return m;
}

}  // namespace swaplab::kernel::internal
