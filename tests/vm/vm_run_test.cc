// SPDX-License-Identifier: MIT
// `vm run`'s pieces that need no guest: the preset chosen for a guest
// kernel's release, --kernel naming a cached series, and the initramfs
// carrying this program and its libraries at their paths (checked by GNU
// cpio, an independent reader).
#include "swaplab/vm/vm_run.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "swaplab/alloc/policy.h"
#include "swaplab/alloc/preset_for_release.h"
#include "swaplab/vm/initramfs.h"
#include "swaplab/vm/qemu.h"

namespace swaplab::vm {
namespace {

namespace fs = std::filesystem;
using alloc::PresetForRelease;

bool HasPreset(const std::string& name) { return alloc::Policy::Preset(name).ok(); }

// The presets table's "linux-X.Y" row of the highest X.Y.
std::string NewestVersionedPreset() {
  std::string newest;
  std::pair<int, int> newest_v{0, 0};
  for (const std::string& p : alloc::Policy::PresetNames()) {
    std::pair<int, int> v{0, 0};
    if (std::sscanf(p.c_str(), "linux-%d.%d", &v.first, &v.second) == 2 && v > newest_v)
      newest = p, newest_v = v;
  }
  return newest;
}

TEST(VmRun, APresetOfTheReleasesVersionIsTakenWhenThereIsOne) {
  std::string why;
  EXPECT_EQ(PresetForRelease("6.18.44-fc-v1225", &why), "linux-6.18");
  EXPECT_TRUE(why.empty()) << why;
  EXPECT_EQ(PresetForRelease("6.15.2"), "linux-6.15");
}

TEST(VmRun, WithoutAnExactPresetTheNearestNewerOneIsTakenAndSaid) {
  // 6.16 and 6.17 have no preset of their own: linux-6.18 is the next one.
  std::string why;
  EXPECT_EQ(PresetForRelease("6.16.1", &why), "linux-6.18");
  EXPECT_NE(why.find("no preset for Linux 6.16"), std::string::npos) << why;
  EXPECT_NE(why.find("linux-6.18"), std::string::npos) << why;
  // Newer than every preset: the newest, whichever row of the table that is.
  EXPECT_EQ(PresetForRelease("7.3.0", &why), NewestVersionedPreset());
  // Debian's 6.12: its own preset once there is one, else linux-6.14.
  const std::string d612 = PresetForRelease("6.12.118+deb12-amd64");
  EXPECT_EQ(d612, HasPreset("linux-6.12") ? "linux-6.12" : "linux-6.14");
}

TEST(VmRun, KernelSeriesAreToldFromPaths) {
  EXPECT_TRUE(IsKernelSeries("6.12"));
  EXPECT_TRUE(IsKernelSeries("6.1"));
  EXPECT_FALSE(IsKernelSeries("6.12.118"));
  EXPECT_FALSE(IsKernelSeries("/boot/vmlinuz-6.1"));
  EXPECT_FALSE(IsKernelSeries("vmlinuz"));
  EXPECT_FALSE(IsKernelSeries(""));
}

TEST(VmRun, BuiltKernelsAreFoundByNameAndMissingOnesSayHowToBuildThem) {
  char tmpl[] = "/var/tmp/swaplab-built-kernel.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path cache(tmpl);
  // Nothing built: the error names the cache and the command.
  auto none = FindBuiltKernel("rfc-6.12", cache.string());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("none built"), std::string::npos);
  EXPECT_NE(none.status().message().find("vm kernel build --name rfc-6.12"), std::string::npos);
  // What scripts/vm-kernel-build leaves: builds/KEY, names/NAME -> it.
  const fs::path b = cache / "builds" / "0123abcd";
  fs::create_directories(b / "boot");
  fs::create_directories(b / "lib" / "modules" / "6.12.118-swaplab");
  std::ofstream(b / "boot" / "vmlinuz-6.12.118-swaplab") << "bzImage";
  std::ofstream(b / "release") << "6.12.118-swaplab\n";
  std::ofstream(b / "recipe.txt") << "source linux-source-6.12 6.12.118-1~deb12u1\n";
  fs::create_directories(cache / "names");
  fs::create_directory_symlink("../builds/0123abcd", cache / "names" / "rfc-6.12");
  // Not finished (.built missing): not found.
  EXPECT_FALSE(FindBuiltKernel("rfc-6.12", cache.string()).ok());
  std::ofstream(b / ".built") << "";
  auto k = FindBuiltKernel("rfc-6.12", cache.string());
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_EQ(k->release, "6.12.118-swaplab");
  EXPECT_EQ(k->name, "rfc-6.12");
  EXPECT_EQ(k->kernel,
            (cache / "names" / "rfc-6.12" / "boot" / "vmlinuz-6.12.118-swaplab").string());
  EXPECT_NE(k->recipe.find("linux-source-6.12"), std::string::npos);
  // Another name: the error lists the ones built.
  auto other = FindBuiltKernel("nonfull-6.12", cache.string());
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("built: rfc-6.12"), std::string::npos);
  // A release that is a path is refused.
  std::ofstream(b / "release") << "../../etc\n";
  EXPECT_FALSE(FindBuiltKernel("rfc-6.12", cache.string()).ok());
  fs::remove_all(cache);

  EXPECT_TRUE(IsKernelName("rfc-6.12"));
  EXPECT_FALSE(IsKernelName("6.12"));           // a series
  EXPECT_FALSE(IsKernelName("/boot/vmlinuz"));  // a path
  EXPECT_FALSE(IsKernelName(""));
}

TEST(VmRun, AKernelWithoutModulesNeedsNone) {
  if (access("/bin/busybox", X_OK) != 0 && access("/usr/bin/busybox", X_OK) != 0)
    GTEST_SKIP() << "no busybox (scripts/setup installs busybox-static)";
  char tmpl[] = "/var/tmp/swaplab-nomod-test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir(tmpl);
  fs::create_directories(dir / "modules");
  InitramfsSpec is;
  is.modules_dir = (dir / "modules").string();
  is.modules = {"virtio_blk", "zram"};
  // A modules dir with neither modules.order nor modules.none: refused.
  auto bad = WriteInitramfs((dir / "a.cpio").string(), is, dir.string());
  if (!bad.ok() && bad.status().message().find("static busybox") != std::string::npos)
    GTEST_SKIP() << bad.status().message();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("modules.order"), std::string::npos);
  // scripts/vm-kernel-build's kernels say they have none: nothing to add.
  std::ofstream(dir / "modules" / "modules.none") << "built without modules\n";
  auto ok = WriteInitramfs((dir / "b.cpio").string(), is, dir.string());
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_TRUE(ok->modules.empty());
  fs::remove_all(dir);
}

TEST(VmRun, TheInitramfsCarriesFilesAtTheirPathsWithTheirDirectories) {
  if (system("command -v cpio >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "cpio not installed (scripts/setup installs it)";
  if (access("/bin/busybox", X_OK) != 0 && access("/usr/bin/busybox", X_OK) != 0)
    GTEST_SKIP() << "no busybox (scripts/setup installs busybox-static)";
  char tmpl[] = "/var/tmp/swaplab-vmrun-test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir(tmpl);
  fs::create_directories(dir / "modules");
  std::ofstream(dir / "modules" / "modules.order") << "";
  std::ofstream(dir / "libfoo.so.1") << "library bytes";
  std::ofstream(dir / "prog") << "program bytes";
  InitramfsSpec is;
  is.modules_dir = (dir / "modules").string();
  is.modules = {};
  is.files = {{"/bin/swaplab", (dir / "prog").string(), 0755},
              {"/lib/x86_64-linux-gnu/libfoo.so.1", (dir / "libfoo.so.1").string(), 0644}};
  auto rep = WriteInitramfs((dir / "i.cpio").string(), is, dir.string());
  if (!rep.ok() && rep.status().message().find("static busybox") != std::string::npos)
    GTEST_SKIP() << rep.status().message();
  ASSERT_TRUE(rep.ok()) << rep.status().ToString();
  fs::create_directory(dir / "x");
  const std::string cmd = "cd '" + (dir / "x").string() + "' && cpio -id --quiet < ../i.cpio";
  ASSERT_EQ(system(cmd.c_str()), 0);
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  EXPECT_EQ(slurp(dir / "x" / "bin" / "swaplab"), "program bytes");
  EXPECT_EQ(slurp(dir / "x" / "lib" / "x86_64-linux-gnu" / "libfoo.so.1"), "library bytes");
  EXPECT_FALSE(fs::exists(dir / "x" / "bin" / "swaplab_guest_agent"));  // none asked for
  // A path that is not absolute is refused, naming it.
  is.files = {{"lib/x", (dir / "prog").string(), 0644}};
  auto bad = WriteInitramfs((dir / "j.cpio").string(), is, dir.string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("lib/x"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace swaplab::vm
