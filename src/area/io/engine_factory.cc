// SPDX-License-Identifier: MIT
// The engine chosen by name, and io_uring's fallback to pread/pwrite
// (io_engine_factory.h): the only place that decides it.
#include <fmt/core.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <utility>

#include "swaplab/alloc/printable.h"
#include "swaplab/area/io_engine_factory.h"

namespace swaplab::area {
namespace {

constexpr std::array<std::pair<std::string_view, EngineKind>, 4> kKinds{{
    {"auto", EngineKind::kAuto},
    {"uring", EngineKind::kUring},
    {"posix", EngineKind::kPosix},
    {"sim", EngineKind::kSim},
}};

std::atomic<bool> fallback_noticed{false};

// io_uring_setup's answers when io_uring is compiled out (ENOSYS), disabled
// by kernel.io_uring_disabled (EPERM) or refused by a seccomp filter or an
// LSM (EPERM, EACCES).
bool UringUnavailable(int code) { return code == -ENOSYS || code == -EPERM || code == -EACCES; }

Result<std::unique_ptr<IoEngine>> OpenUringOrPosix(const std::string& path, EngineOptions o) {
  auto uring = OpenUringEngine(path, o);
  if (uring.ok() || !UringUnavailable(uring.status().code())) return uring;
  if (!fallback_noticed.exchange(true))
    std::fprintf(stderr, "swaplab: io_uring unavailable (%s); using pread/pwrite (--io posix)\n",
                 uring.status().message().c_str());
  return OpenPosixEngine(path, o);
}

}  // namespace

std::string_view Name(EngineKind k) {
  for (const auto& [name, kind] : kKinds)
    if (kind == k) return name;
  return "?";
}

std::string EngineKindNames() {
  std::string s;
  for (const auto& [name, kind] : kKinds) s += (s.empty() ? "" : " | ") + std::string(name);
  return s;
}

Result<EngineKind> ParseEngineKind(std::string_view name) {
  for (const auto& [n, kind] : kKinds)
    if (n == name) return kind;
  // The name comes from a command line: cut and escaped before a terminal.
  return Status(-EINVAL, fmt::format("I/O engine '{}' unknown: expected {}",
                                     Printable(name, kMaxTokenInMessage), EngineKindNames()));
}

Result<std::unique_ptr<IoEngine>> OpenEngine(EngineKind kind, const std::string& path,
                                             EngineOptions o) {
  switch (kind) {
    case EngineKind::kUring:
      return OpenUringEngine(path, o);
    case EngineKind::kPosix:
      return OpenPosixEngine(path, o);
    case EngineKind::kSim:
      return OpenSimulatedFileEngine(path, o, SimModel{});
    case EngineKind::kAuto:
      break;
  }
  return OpenUringOrPosix(path, o);
}

void RearmUringFallbackNotice() { fallback_noticed.store(false); }

}  // namespace swaplab::area
