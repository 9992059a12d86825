// SPDX-License-Identifier: MIT
// Temporary files and work directories (workload/temp_files.h).
#include "swaplab/workload/temp_files.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace swaplab::workload {
namespace {

namespace fs = std::filesystem;

// A fresh $TMPDIR for the test, restored after.
class TmpDir {
 public:
  TmpDir() {
    char tmpl[] = "/var/tmp/swaplab-test-XXXXXX";
    path_ = mkdtemp(tmpl);
    if (const char* t = std::getenv("TMPDIR")) old_ = t;
    setenv("TMPDIR", path_.c_str(), 1);
  }
  ~TmpDir() {
    if (old_.empty())
      unsetenv("TMPDIR");
    else
      setenv("TMPDIR", old_.c_str(), 1);
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_, old_;
};

TEST(WorkDir, CreatedUnderTmpdirAndRemovedUnlessKept) {
  TmpDir tmp;
  std::string kept;
  {
    auto wd = WorkDir::Create();
    ASSERT_TRUE(wd.ok()) << wd.status().ToString();
    const std::string p = wd->path();
    EXPECT_EQ(p.rfind(tmp.path() + "/" + kWorkDirPrefix + std::to_string(getpid()) + ".", 0), 0u)
        << p;
    std::ofstream(p + "/f") << "x";
    auto wd2 = WorkDir::Create();
    ASSERT_TRUE(wd2.ok());
    WorkDir second = std::move(wd2).value();
    kept = second.path();
    second.keep();
    ASSERT_TRUE(fs::exists(p + "/f"));
  }
  EXPECT_TRUE(fs::exists(kept));
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()), 1);
}

// A work directory is removed only once the pid in its name no longer
// runs; names that only look alike are left alone.
TEST(WorkDir, RemoveDeadWorkDirsTakesOnlyDeadRunsDirectories) {
  TmpDir tmp;
  // A pid that does not run: a child that has exited and been reaped.
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  const std::string dead = tmp.path() + "/" + kWorkDirPrefix + std::to_string(child) + ".abc";
  const std::string alive = tmp.path() + "/" + kWorkDirPrefix + std::to_string(getpid()) + ".abc";
  const std::string odd = tmp.path() + "/" + kWorkDirPrefix + "12x.abc";
  const std::string file = tmp.path() + "/" + kWorkDirPrefix + std::to_string(child) + ".f";
  for (const auto& d : {dead, alive, odd}) fs::create_directory(d);
  std::ofstream(dead + "/inside") << "x";
  std::ofstream(file) << "x";
  const auto removed = RemoveDeadWorkDirs();
  EXPECT_NE(std::find(removed.begin(), removed.end(), dead), removed.end());
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(alive));
  EXPECT_TRUE(fs::exists(odd));
  EXPECT_TRUE(fs::exists(file));
}

}  // namespace
}  // namespace swaplab::workload
