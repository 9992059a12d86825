// SPDX-License-Identifier: MIT
// Device limits from sysfs: a fake tree (partition and whole disk, missing
// and malformed files) and this machine's real disk.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fstream>

#include "area/io_test_util.h"
#include "swaplab/area/io_engine.h"

namespace swaplab::area {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

void Put(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text << "\n";
}

// A fake sysfs whose /dev/block entry for `target`'s st_dev points at disk
// "vdz" (or its partition "vdz1").
class FakeSysfs {
 public:
  FakeSysfs(const ScratchDir& dir, const std::string& target, bool partition) {
    root_ = fs::path(dir.path()) / "sys";
    struct stat st {};
    ::stat(target.c_str(), &st);
    const fs::path disk = root_ / "devices/pci0000:00/virtio3/block/vdz";
    queue_ = disk / "queue";
    Put(queue_ / "max_segments", "254");
    Put(queue_ / "max_sectors_kb", "1280");
    Put(queue_ / "logical_block_size", "512");
    Put(queue_ / "rotational", "1");
    Put(queue_ / "discard_max_bytes", "2147483136");
    fs::path node = disk;
    if (partition) {
      node = disk / "vdz1";
      Put(node / "partition", "1");
    }
    fs::create_directories(root_ / "dev/block");
    fs::create_symlink(
        node, root_ / "dev/block" /
                  (std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev))));
  }
  std::string root() const { return root_.string(); }
  fs::path queue() const { return queue_; }

 private:
  fs::path root_, queue_;
};

TEST(LimitsTest, PartitionUsesItsDisksQueue) {
  ScratchDir dir;
  const std::string f = dir.File("area");
  ASSERT_TRUE(testing::MakeFile(f, 1));
  FakeSysfs sys(dir, f, /*partition=*/true);
  auto l = ReadDeviceLimits(f, sys.root());
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->max_segments, 254u);
  EXPECT_EQ(l->max_sectors_kb, 1280u);
  EXPECT_EQ(l->logical_block_size, 512u);
  EXPECT_TRUE(l->rotational);
  EXPECT_TRUE(l->discard);
  EXPECT_EQ(l->MaxPagesPerRequest(), 254u);
}

TEST(LimitsTest, WholeDiskAndOptionalFiles) {
  ScratchDir dir;
  const std::string f = dir.File("area");
  ASSERT_TRUE(testing::MakeFile(f, 1));
  FakeSysfs sys(dir, f, /*partition=*/false);
  Put(sys.queue() / "max_segments", "126");
  Put(sys.queue() / "discard_max_bytes", "0");
  fs::remove(sys.queue() / "rotational");
  auto l = ReadDeviceLimits(f, sys.root());
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->max_segments, 126u);
  EXPECT_FALSE(l->rotational);
  EXPECT_FALSE(l->discard);
  EXPECT_EQ(l->MaxPagesPerRequest(), 126u);
}

TEST(LimitsTest, MissingRequiredFileIsNamed) {
  ScratchDir dir;
  const std::string f = dir.File("area");
  ASSERT_TRUE(testing::MakeFile(f, 1));
  FakeSysfs sys(dir, f, true);
  fs::remove(sys.queue() / "max_sectors_kb");
  auto l = ReadDeviceLimits(f, sys.root());
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), -ENOENT);
  EXPECT_THAT(l.status().message(), ::testing::HasSubstr("queue/max_sectors_kb"));
}

TEST(LimitsTest, MalformedFileIsNamed) {
  ScratchDir dir;
  const std::string f = dir.File("area");
  ASSERT_TRUE(testing::MakeFile(f, 1));
  FakeSysfs sys(dir, f, true);
  Put(sys.queue() / "logical_block_size", "lots");
  auto l = ReadDeviceLimits(f, sys.root());
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), -EINVAL);
  EXPECT_THAT(l.status().message(), ::testing::HasSubstr("logical_block_size"));
  Put(sys.queue() / "logical_block_size", "1000");  // not a power of two
  EXPECT_EQ(ReadDeviceLimits(f, sys.root()).status().code(), -EINVAL);
  Put(sys.queue() / "logical_block_size", "4096");
  Put(sys.queue() / "max_segments", "0");
  EXPECT_EQ(ReadDeviceLimits(f, sys.root()).status().code(), -EINVAL);
}

TEST(LimitsTest, NoBlockDeviceIsENODEV) {
  ScratchDir dir;
  const std::string f = dir.File("area");
  ASSERT_TRUE(testing::MakeFile(f, 1));
  fs::create_directories(fs::path(dir.path()) / "emptysys/dev/block");
  auto l = ReadDeviceLimits(f, dir.path() + "/emptysys");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), -ENODEV);
  EXPECT_THAT(l.status().message(), ::testing::HasSubstr("dev/block/"));
}

TEST(LimitsTest, MissingPathIsAnError) {
  EXPECT_EQ(ReadDeviceLimits("/nonexistent/swaplab").status().code(), -ENOENT);
}

uint64_t SysNumber(const std::string& file) {
  uint64_t v = 0;
  std::ifstream(file) >> v;
  return v;
}

// This machine: a virtio-blk disk vda holds /var/tmp (max_segments 254).
TEST(LimitsTest, RealDiskOfThisMachine) {
  ScratchDir dir;
  const std::string f = dir.File("area");
  ASSERT_TRUE(testing::MakeFile(f, 1));
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  const std::string dev =
      "/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  std::error_code ec;
  const fs::path node = fs::canonical(dev, ec);
  if (ec) GTEST_SKIP() << "/var/tmp has no block device here (" << dev << ")";
  const fs::path queue = (fs::exists(node / "partition") ? node.parent_path() : node) / "queue";
  auto l = ReadDeviceLimits(f);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->max_segments, SysNumber(queue / "max_segments"));
  EXPECT_EQ(l->max_sectors_kb, SysNumber(queue / "max_sectors_kb"));
  EXPECT_EQ(l->logical_block_size, SysNumber(queue / "logical_block_size"));
  EXPECT_EQ(l->rotational, SysNumber(queue / "rotational") != 0);
  RecordProperty("device", node.filename().string());
  RecordProperty("max_segments", static_cast<int>(l->max_segments));
  if (node.filename() == "vda") {
    EXPECT_EQ(l->max_segments, 254u);  // virtio-blk, 256-entry queue
    // The block device node gives the same answer as a file on it.
    if (fs::exists("/dev/vda")) {
      auto d = ReadDeviceLimits("/dev/vda");
      ASSERT_TRUE(d.ok()) << d.status().ToString();
      EXPECT_EQ(d->max_segments, l->max_segments);
      EXPECT_EQ(d->max_sectors_kb, l->max_sectors_kb);
    }
  }
}

}  // namespace
}  // namespace swaplab::area
