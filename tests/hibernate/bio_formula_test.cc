// SPDX-License-Identifier: MIT
// §10.5-§10.6 bio-count formulas and the bio capacity rule of §6.2.
#include <gtest/gtest.h>

#include "swaplab/hibernate/request_batcher.h"

namespace swaplab::hibernate {
namespace {

TEST(BioFormula, RfcFiveGibNumbers) {
  const uint64_t T = 1310720;  // 5.0 GiB
  EXPECT_EQ(BiosPerRunFormula(T, 126), 17957u);
  EXPECT_EQ(BiosPerRunFormula(T, 128), 15392u);
  EXPECT_EQ(BiosPerRunFormula(T, 254), 12827u);
  EXPECT_EQ(BiosPerRunFormula(T, 256), 10262u);
  EXPECT_EQ(BiosPerPageFormula(T), 1313284u);
  EXPECT_EQ(BiosSimpleFormula(T, 126), 15391u);
  EXPECT_EQ(BiosSimpleFormula(T, 128), 12826u);
  EXPECT_EQ(BiosSimpleFormula(T, 254), 10261u);
  EXPECT_EQ(BiosSimpleFormula(T, 256), 7696u);
}

TEST(BioFormula, RfcSlightlySmallerImage) {
  const uint64_t T = 1300000;
  EXPECT_EQ(BiosPerRunFormula(T, 126), 17810u);
  EXPECT_EQ(BiosPerRunFormula(T, 128), 15266u);
  EXPECT_EQ(BiosPerRunFormula(T, 254), 12722u);
  EXPECT_EQ(BiosPerRunFormula(T, 256), 10178u);
  EXPECT_EQ(BiosPerPageFormula(T), 1302543u);
}

TEST(BioFormula, SmallInstance) {
  EXPECT_EQ(BiosPerRunFormula(1204, 254), 12u);
  EXPECT_EQ(BiosPerRunFormula(1204, 256), 10u);
  EXPECT_EQ(BiosPerRunFormula(1204, 128), 15u);
  EXPECT_EQ(BiosPerRunFormula(1204, 126), 17u);
  EXPECT_EQ(BiosPerPageFormula(1204), 1205u);
}

TEST(BioCapacity, ExactAndSlabRounded) {
  EXPECT_EQ(BioCapacity(254, CapacityMode::kExact), 254u);
  EXPECT_EQ(BioCapacity(254, CapacityMode::kSlab), 256u);
  EXPECT_EQ(BioCapacity(126, CapacityMode::kSlab), 128u);
  EXPECT_EQ(BioCapacity(128, CapacityMode::kSlab), 128u);
  EXPECT_EQ(BioCapacity(4, CapacityMode::kSlab), 4u);
  EXPECT_EQ(BioCapacity(5, CapacityMode::kSlab), 16u);
  EXPECT_EQ(BioCapacity(17, CapacityMode::kSlab), 64u);
  EXPECT_EQ(BioCapacity(1, CapacityMode::kSlab), 1u);
}

TEST(HibBioMaxPages, VirtioDefaults) {
  area::DeviceLimits l;  // seg_max 254, max_sectors_kb 1280
  EXPECT_EQ(HibBioMaxPages(l), 254u);
  l.max_segments = 126;
  EXPECT_EQ(HibBioMaxPages(l), 126u);
  l.max_segments = 1000;
  EXPECT_EQ(HibBioMaxPages(l), 256u);  // bio_max_segs
  l.max_sectors_kb = 0;
  EXPECT_EQ(HibBioMaxPages(l), 1u);
}

TEST(ParseNames, BatchAndCapacity) {
  EXPECT_EQ(*ParseBatchMode("per-run"), BatchMode::kPerRun);
  EXPECT_EQ(*ParseBatchMode("per-page"), BatchMode::kPerPage);
  EXPECT_FALSE(ParseBatchMode("run").ok());
  EXPECT_EQ(*ParseCapacityMode("slab"), CapacityMode::kSlab);
  EXPECT_FALSE(ParseCapacityMode("x").ok());
}

}  // namespace
}  // namespace swaplab::hibernate
