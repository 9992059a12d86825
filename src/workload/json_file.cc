// SPDX-License-Identifier: MIT
// The checked JSON reader (swaplab/workload/json_file.h).
#include "swaplab/workload/json_file.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "swaplab/alloc/printable.h"

namespace swaplab::workload {

using json = nlohmann::json;

namespace {

Status Refused(const std::string& path, const std::string& what) {
  return Status(-EINVAL, Printable(path) + ": " + what);
}

// Reads the open regular file `fd` up to limit + 1 bytes (a file that grew
// since fstat is still bounded).
Result<std::string> ReadBounded(int fd, const std::string& path, size_t limit) {
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status(-errno, Printable(path) + ": read: " + std::strerror(errno));
    if (n == 0) return text;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > limit)
      return Refused(path, fmt::format("larger than {} bytes; not a file swaplab reads", limit));
  }
}

// `e.what()` without nlohmann's "[json.exception...] parse error at line
// L, column C: " prefix (the line and column are computed from the byte).
std::string SyntaxWhat(const std::string& what) {
  const auto col = what.find("column ");
  const auto colon = what.find(": ", col == std::string::npos ? 0 : col);
  return Printable(colon == std::string::npos ? what : what.substr(colon + 2), 160);
}

std::string Shown(const json& v) { return Printable(v.dump(), kMaxTokenInMessage); }

}  // namespace

Result<std::string> ReadTextFile(const std::string& path, size_t limit) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int e = errno;
    return Status(e == EACCES ? -EACCES : -ENOENT,
                  Printable(path) + ": cannot read: " + std::strerror(e));
  }
  struct stat st;
  Result<std::string> r = Status(-EINVAL, "");
  if (::fstat(fd, &st) != 0) {
    r = Status(-errno, Printable(path) + ": stat: " + std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    r = Refused(path, "not a regular file");
  } else if (static_cast<uint64_t>(st.st_size) > limit) {
    r = Refused(path, fmt::format("{} bytes, at most {}", st.st_size, limit));
  } else {
    r = ReadBounded(fd, path, limit);
  }
  ::close(fd);
  return r;
}

Result<json> ParseJson(const std::string& text, const std::string& name) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // e.byte: 1-based position of the last byte read.
    const size_t end = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    size_t line = 1, col = 1;
    for (size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return Status(-EINVAL,
                  fmt::format("{}:{}:{}: {}", Printable(name), line, col, SyntaxWhat(e.what())));
  } catch (const json::exception& e) {
    return Status(-EINVAL, Printable(name) + ": not JSON: " + SyntaxWhat(e.what()));
  }
}

Result<json> ReadJsonFile(const std::string& path, size_t limit) {
  auto text = ReadTextFile(path, limit);
  if (!text.ok()) return text.status();
  return ParseJson(*text, path);
}

JsonAt::JsonAt(const json& root, std::string file)
    : v_(&root), path_("$"), file_(std::move(file)) {}

JsonAt JsonAt::operator[](const std::string& key) const {
  const json* c = nullptr;
  if (v_ && v_->is_object()) {
    const auto it = v_->find(key);
    if (it != v_->end()) c = &*it;
  }
  return JsonAt(c, path_ + "." + Printable(key, kMaxTokenInMessage), file_);
}

JsonAt JsonAt::operator[](size_t i) const {
  const json* c = v_ && v_->is_array() && i < v_->size() ? &(*v_)[i] : nullptr;
  return JsonAt(c, fmt::format("{}[{}]", path_, i), file_);
}

const json& JsonAt::value() const { return *v_; }

size_t JsonAt::size() const { return v_ && (v_->is_array() || v_->is_object()) ? v_->size() : 0; }

Status JsonAt::Error(const std::string& what) const {
  return Status(-EINVAL, Printable(file_) + ": " + path_ + ": " + what);
}

Status JsonAt::Object() const {
  if (!v_) return Error("required (an object)");
  if (!v_->is_object()) return Error("expected an object, not " + Shown(*v_));
  return Status::Ok();
}

Status JsonAt::Array(size_t max_size) const {
  if (!v_) return Error("required (a list)");
  if (!v_->is_array()) return Error("expected a list, not " + Shown(*v_));
  if (v_->size() > max_size)
    return Error(fmt::format("{} elements, at most {}", v_->size(), max_size));
  return Status::Ok();
}

Result<std::string> JsonAt::Str() const {
  if (!v_) return Error("required (a string)");
  if (!v_->is_string()) return Error("expected a string, not " + Shown(*v_));
  return v_->get<std::string>();
}

Result<bool> JsonAt::Bool() const {
  if (!v_) return Error("required (true or false)");
  if (!v_->is_boolean()) return Error("expected true or false, not " + Shown(*v_));
  return v_->get<bool>();
}

Result<double> JsonAt::Num(double lo, double hi) const {
  const std::string range = fmt::format("a number in [{:g}, {:g}]", lo, hi);
  if (!v_) return Error("required (" + range + ")");
  if (!v_->is_number()) return Error("expected " + range + ", not " + Shown(*v_));
  const double x = v_->get<double>();
  if (!std::isfinite(x) || x < lo || x > hi)
    return Error("expected " + range + ", not " + Shown(*v_));
  return x;
}

}  // namespace swaplab::workload
