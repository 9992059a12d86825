// SPDX-License-Identifier: MIT
// Helpers for the area tests: unique scratch files on a real filesystem
// (/var/tmp; FIEMAP and swapon need one, tmpfs would not do), raw page
// access, shell commands.
#pragma once

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "swaplab/area/swap_header.h"

namespace swaplab::area::test {

// A path under /var/tmp unique to this process and call; removed at scope
// exit.
class TempPath {
 public:
  explicit TempPath(const std::string& tag = "area") {
    static std::atomic<int> n{0};
    path_ = "/var/tmp/swaplab-test-" + std::to_string(::getpid()) + "-" + tag + "-" +
            std::to_string(n.fetch_add(1));
    ::unlink(path_.c_str());
  }
  ~TempPath() { ::unlink(path_.c_str()); }
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;
  const std::string& str() const { return path_; }
  const char* c_str() const { return path_.c_str(); }

 private:
  std::string path_;
};

inline void WriteAt(const std::string& path, uint64_t off, const void* data, size_t n) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
  ASSERT_EQ(::pwrite(fd, data, n, static_cast<off_t>(off)), static_cast<ssize_t>(n));
  ASSERT_EQ(::fsync(fd), 0);
  ::close(fd);
}

// A file of `bytes` written zero bytes (every block allocated).
inline void WriteZeroFile(const std::string& path, uint64_t bytes) {
  std::vector<char> z(bytes, 0);
  WriteAt(path, 0, z.data(), z.size());
}

inline std::vector<std::byte> ReadBytes(const std::string& path, uint64_t off, size_t n) {
  std::vector<std::byte> b(n);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << path;
  if (fd < 0) return {};
  EXPECT_EQ(::pread(fd, b.data(), n, static_cast<off_t>(off)), static_cast<ssize_t>(n));
  ::close(fd);
  return b;
}

inline std::array<std::byte, kPageSize> ReadPage0(const std::string& path) {
  std::array<std::byte, kPageSize> p{};
  const auto b = ReadBytes(path, 0, kPageSize);
  if (b.size() == kPageSize) std::memcpy(p.data(), b.data(), kPageSize);
  return p;
}

inline void WritePage0(const std::string& path, const std::array<std::byte, kPageSize>& p) {
  WriteAt(path, 0, p.data(), p.size());
}

struct CmdResult {
  int rc = -1;
  std::string out;  // stdout and stderr
};
// Runs `cmd` with /bin/sh, stderr folded into stdout.
inline CmdResult Shell(const std::string& cmd) {
  CmdResult r;
  FILE* f = ::popen((cmd + " 2>&1").c_str(), "r");
  if (f == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) r.out.append(buf, n);
  const int st = ::pclose(f);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// The refusal is −EINVAL and its message contains every one of `parts`.
inline void ExpectRefused(const Status& s, std::initializer_list<const char*> parts) {
  ASSERT_FALSE(s.ok()) << "accepted, expected a refusal naming " << *parts.begin();
  EXPECT_EQ(s.code(), -EINVAL) << s.ToString();
  for (const char* p : parts) EXPECT_THAT(s.message(), ::testing::HasSubstr(p));
}

constexpr std::array<uint8_t, 16> kTestUuid = {0x2f, 0x0c, 0x5e, 0x8a, 0x11, 0x6b, 0x4d, 0x2e,
                                               0x9a, 0x01, 0x7c, 0x33, 0xd4, 0x5b, 0x60, 0xe7};
constexpr const char* kTestUuidText = "2f0c5e8a-116b-4d2e-9a01-7c33d45b60e7";

}  // namespace swaplab::area::test
