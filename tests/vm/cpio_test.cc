// SPDX-License-Identifier: MIT
// The newc cpio writer of the guest's initramfs, checked by an independent
// reader: GNU cpio (a setup package) lists and extracts what we wrote —
// names of every length (the header + name is padded to 4 bytes), file
// sizes 0-5 (the data too), a directory, the trailer — byte for byte.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "swaplab/vm/initramfs.h"

namespace swaplab::vm {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Cpio, GnuCpioExtractsWhatWeWrote) {
  if (system("command -v cpio >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "cpio not installed (scripts/setup installs it)";
  char tmpl[] = "/var/tmp/swaplab-cpio-test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir(tmpl);
  std::string a;
  AppendCpioEntry(&a, "d", S_IFDIR | 0755, "", 1);
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t name_len = 1; name_len <= 6; ++name_len)
    for (size_t size = 0; size <= 5; ++size) {
      std::string name = "d/" + std::string(name_len, static_cast<char>('a' + size));
      std::string data;
      for (size_t i = 0; i < size; ++i)
        data += static_cast<char>(0xf0 + i + name_len);  // binary, no NUL
      files.emplace_back(name, data);
    }
  uint32_t ino = 2;
  for (const auto& [name, data] : files) AppendCpioEntry(&a, name, S_IFREG | 0640, data, ino++);
  AppendCpioTrailer(&a);
  EXPECT_EQ(a.size() % 4, 0u);
  {
    std::ofstream out(dir / "a.cpio", std::ios::binary);
    out.write(a.data(), static_cast<std::streamsize>(a.size()));
  }
  fs::create_directory(dir / "x");
  const std::string cmd =
      "cd '" + (dir / "x").string() + "' && cpio -id --quiet < ../a.cpio 2>../err";
  ASSERT_EQ(system(cmd.c_str()), 0) << Slurp(dir / "err");
  EXPECT_TRUE(fs::is_directory(dir / "x" / "d"));
  size_t regular = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir / "x")) regular += e.is_regular_file();
  EXPECT_EQ(regular, files.size());  // nothing more, nothing less
  for (const auto& [name, data] : files) {
    const fs::path p = dir / "x" / name;
    ASSERT_TRUE(fs::is_regular_file(p)) << name;
    EXPECT_EQ(Slurp(p), data) << name;
    struct stat st {};
    ASSERT_EQ(stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u) << name;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace swaplab::vm
